"""The dialect's saved views and share links (api.md §17) are dms's saved searches and share links
(§10a, §5b), on both engines: Paperless-ngx's shapes in versions 9 and 10, a change on one side
seen on the other at once, the apps' settings given back as written, `GET /share/{slug}` leading
to the file, and the refusals in Django REST framework's shape."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.harness import samples
from tests.harness.paperless import API, JSON, dialect, make
from tests.harness.waiting import wait_processed
from tests.paperless.test_documents import uploaded

# What Paperless-ngx's web app writes (the recorded exchange's body).
VIEW = {"name": "Inbox invoices", "show_on_dashboard": True, "show_in_sidebar": True,
        "sort_field": "created", "sort_reverse": True,
        "filter_rules": [{"rule_type": 6, "value": "1"}, {"rule_type": 4, "value": "1"},
                         {"rule_type": 20, "value": "invoice"}],
        "display_mode": "table", "display_fields": ["title", "created", "correspondent"],
        "page_size": 25}


def owner_number(client) -> int:
    return client.get(f"{API}/ui_settings/").json()["user"]["id"]


def test_saved_views_are_saved_searches(alice):
    v9, v10 = dialect(alice, 9), dialect(alice, 10)
    owner = owner_number(v10)
    made = make(v9, "saved_views", **VIEW)
    expected9 = {"id": made["id"], **VIEW, "owner": owner, "user_can_change": True}
    assert made == expected9
    expected10 = {key: value for key, value in expected9.items()
                  if key not in ("show_on_dashboard", "show_in_sidebar")}
    assert v10.get(f"{API}/saved_views/{made['id']}/").json() == expected10
    listed9 = v9.get(f"{API}/saved_views/").json()
    assert listed9 == {"count": 1, "next": None, "previous": None, "all": [made["id"]],
                       "results": [expected9]}
    assert v10.get(f"{API}/saved_views/").json()["results"] == [expected10]
    assert v10.get(f"{API}/search/?query=inbox&db_only=true").json()["saved_views"] == \
        [expected10]
    # dms's side: the same row, with the full-text rule as its query and the sort in its words.
    searches = alice.get("/api/saved-searches/").json()["data"]
    assert [item["attributes"] for item in searches] == [{
        "name": "Inbox invoices", "query": "invoice", "sort": "-document_date",
        "show_in_sidebar": True, "created_at": searches[0]["attributes"]["created_at"]}]
    search_id = searches[0]["id"]
    # Changed there (its query): the view shows it as one full-text rule.
    patched = alice.patch(f"/api/saved-searches/{search_id}/", {"data": {
        "type": "saved-searches", "attributes": {"query": "electricity", "sort": "title"}}})
    assert patched.status_code == 200, patched.text
    shown = v9.get(f"{API}/saved_views/{made['id']}/").json()
    assert (shown["filter_rules"], shown["sort_field"], shown["sort_reverse"]) == \
        ([{"rule_type": 20, "value": "electricity"}], "title", False)
    assert shown["display_fields"] == VIEW["display_fields"]  # the apps' settings stay
    # Changed here: a PATCH changes what it names.
    changed = v9.patch(f"{API}/saved_views/{made['id']}/",
                       {"name": "Invoices", "show_in_sidebar": False}, media=JSON)
    assert changed.status_code == 200, changed.text
    assert (changed.json()["name"], changed.json()["show_in_sidebar"]) == ("Invoices", False)
    assert alice.get(f"/api/saved-searches/{search_id}/").json()["data"]["attributes"][
        "show_in_sidebar"] is False
    # Made on dms's side: a view with its query as a full-text rule.
    alice.post("/api/saved-searches/", {"data": {"type": "saved-searches", "attributes": {
        "name": "All letters", "query": "letter", "sort": "-created_at"}}})
    views = {view["name"]: view for view in v9.get(f"{API}/saved_views/").json()["results"]}
    assert {key: views["All letters"][key] for key in
            ("filter_rules", "sort_field", "sort_reverse", "show_on_dashboard",
             "page_size", "display_mode", "display_fields")} == {
        "filter_rules": [{"rule_type": 20, "value": "letter"}], "sort_field": "added",
        "sort_reverse": True, "show_on_dashboard": False, "page_size": None,
        "display_mode": None, "display_fields": None}
    assert v9.delete(f"{API}/saved_views/{made['id']}/").status_code == 204
    assert alice.get(f"/api/saved-searches/{search_id}/").status_code == 404
    assert v9.get(f"{API}/saved_views/{made['id']}/").json() == {"detail": "No Saved View "
                                                                           "matches the given "
                                                                           "query."}


def test_saved_view_refusals(alice):
    v9 = dialect(alice, 9)
    make(v9, "saved_views", name="Taken", filter_rules=[])
    for body, field, sentence in (
            ({"filter_rules": []}, "name", "This field is required."),
            ({"name": "", "filter_rules": []}, "name", "This field may not be blank."),
            ({"name": "TAKEN", "filter_rules": []}, "name",
             "A saved search with this name already exists."),
            ({"name": "x", "filter_rules": [{"value": "1"}]}, "filter_rules",
             "Each rule needs a rule_type, a whole number."),
            ({"name": "x", "filter_rules": "all"}, "filter_rules",
             'Expected a list of items but got type "str".'),
            ({"name": "x", "filter_rules": [{"rule_type": 0, "value": "a"}] * 101},
             "filter_rules", "Ensure this field has no more than 100 elements.")):
        response = v9.post(f"{API}/saved_views/", body, media=JSON)
        assert (response.status_code, response.json()) == (400, {field: [sentence]}), body
    assert [view["name"] for view in v9.get(f"{API}/saved_views/").json()["results"]] == \
        ["Taken"]


@pytest.fixture
def letter(alice) -> int:
    client = dialect(alice, 10)
    task = uploaded(client, "letter.txt", samples.text("Dear landlord\n"))
    number = task["related_document_ids"][0]
    dms_id = client.get(f"{API}/documents/{number}/").json()["dms_id"]
    assert wait_processed(alice, dms_id)[-1] == "succeeded"
    return number


def test_share_links_are_dms_share_links(alice, bob, letter):
    client = dialect(alice, 10)
    before = dt.datetime.now(dt.UTC)
    made = make(client, "share_links", document=letter, expiration=None,
                file_version="original")
    assert set(made) == {"id", "created", "expiration", "slug", "document", "file_version"}
    assert (made["document"], made["file_version"]) == (letter, "original")
    expiration = dt.datetime.fromisoformat(made["expiration"].replace("Z", "+00:00"))
    assert dt.timedelta(days=89, hours=23) < expiration - before <= dt.timedelta(days=90)
    assert client.get(f"{API}/share_links/").json()["results"] == [made]
    assert client.get(f"{API}/share_links/{made['id']}/").json() == made
    assert client.get(f"{API}/documents/{letter}/share_links/").json() == [made]
    # dms's side: the same link, its URL ending in the same slug.
    links = alice.get("/api/share-links/").json()["data"]
    assert [link["attributes"]["url"].rsplit("/", 1)[1] for link in links] == [made["slug"]]
    assert links[0]["attributes"]["file_version"] == "original"
    # The apps' public URL leads to the file.
    public = client.get(f"/paperless/share/{made['slug']}", allow_redirects=False)
    assert public.status_code == 302
    assert public.headers["Location"] == f"{alice.base_url}/s/{made['slug']}/download/"
    assert client.as_anonymous().get(public.headers["Location"]).content == b"Dear landlord\n"
    # Another user sees none of them.
    assert dialect(bob, 10).get(f"{API}/share_links/").json()["results"] == []
    assert client.delete(f"{API}/share_links/{made['id']}/").status_code == 204
    assert client.get(f"{API}/share_links/").json()["results"] == []
    gone = client.get(f"/paperless/share/{made['slug']}", allow_redirects=False)
    assert gone.headers["Location"] == f"{alice.base_url}/s/{made['slug']}"
    assert client.as_anonymous().get(gone.headers["Location"]).status_code == 410
    assert client.get("/paperless/share/nothing-here").json() == {"detail": "Not found."}


def test_share_link_refusals(alice, letter):
    client = dialect(alice, 10)
    future = (dt.datetime.now(dt.UTC) + dt.timedelta(days=200)).isoformat()
    for body, field, sentence in (
            ({}, "document", "This field is required."),
            ({"document": 999999}, "document", 'Invalid pk "999999" - object does not exist.'),
            ({"document": letter, "file_version": "pdf"}, "file_version",
             '"pdf" is not a valid choice.'),
            ({"document": letter, "expiration": future}, "expiration",
             "A share link expires at most 90 days after it is made.")):
        response = client.post(f"{API}/share_links/", body, media=JSON)
        assert (response.status_code, response.json()) == (400, {field: [sentence]}), body
    assert client.get(f"{API}/share_links/").json()["results"] == []
