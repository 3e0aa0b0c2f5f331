"""The dialect's objects (api.md §17) on both engines, against the shapes Paperless-ngx answers
(../shared/reference/paperless-ngx-api/): tags, correspondents, document types and custom fields
created, filtered, changed and deleted here show in dms's own API at once (and the other way);
another user's are unknown; the caller's settings, profile, statistics, users and groups;
documents by number in version 9's and 10's shapes."""

from __future__ import annotations

import threading

from tests.harness import samples
from tests.harness.documents import create_node, upload_accepted
from tests.harness.paperless import API, dialect, make
from tests.harness.waiting import wait_processed

JSON = "application/json"


def number_of(client, path: str, name: str) -> int:
    return next(item["id"] for item in client.get(f"{API}/{path}/?page_size=1000").json()[
        "results"] if item["name"] == name)


def test_tags_both_ways(alice, bob):
    client = dialect(alice, 10)
    made = make(client, "tags", name="Finance", color="#2ca02c", text_color="#ffffff")
    me = client.get(f"{API}/ui_settings/").json()["user"]["id"]
    assert made == {"id": made["id"], "slug": "finance", "name": "Finance", "color": "#2ca02c",
                    "text_color": "#ffffff", "match": "", "matching_algorithm": 0,
                    "is_insensitive": True, "is_inbox_tag": False, "document_count": 0,
                    "owner": me, "user_can_change": True, "parent": None, "children": []}
    ours = alice.get("/api/tags/").json()["data"]
    assert [(tag["attributes"]["name"], tag["attributes"]["bg_color"]) for tag in ours] == [
        ("Finance", "#2ca02c")]
    # Made in dms's API: there at once.
    assert alice.post("/api/tags/", {"data": {"type": "tags", "attributes": {
        "name": "Ärger"}}}).status_code == 201
    listed = client.get(f"{API}/tags/?ordering=-name").json()
    assert [(tag["name"], tag["slug"]) for tag in listed["results"]] == [
        ("Ärger", "arger"), ("Finance", "finance")]
    assert [tag["name"] for tag in client.get(
        f"{API}/tags/?name__icontains=FIN").json()["results"]] == ["Finance"]
    assert [tag["name"] for tag in client.get(
        f"{API}/tags/?id__in={made['id']}").json()["results"]] == ["Finance"]
    changed = client.patch(f"{API}/tags/{made['id']}/", {"color": "#ff0000"}, media=JSON)
    assert (changed.status_code, changed.json()["color"]) == (200, "#ff0000")
    assert client.post(f"{API}/tags/", {"name": "finance"}, media=JSON).json() == {
        "name": ["A tag with this name already exists."]}
    # bob does not know alice's tag.
    assert dialect(bob).get(f"{API}/tags/{made['id']}/").json() == {
        "detail": "No Tag matches the given query."}
    assert dialect(bob).delete(f"{API}/tags/{made['id']}/").status_code == 404
    assert client.delete(f"{API}/tags/{made['id']}/").status_code == 204
    assert [tag["attributes"]["name"] for tag in alice.get("/api/tags/").json()["data"]] == [
        "Ärger"]


def test_correspondents_and_types_with_their_matching(alice):
    client = dialect(alice, 10)
    acme = make(client, "correspondents", name="ACME Corporation", matching_algorithm=1,
                match="ACME", is_insensitive=True)
    assert {key: acme[key] for key in ("slug", "match", "matching_algorithm", "document_count",
                                       "user_can_change")} == {
        "slug": "acme-corporation", "match": "ACME", "matching_algorithm": 1,
        "document_count": 0, "user_can_change": True}
    learned = make(client, "document_types", name="Invoice", matching_algorithm=6)
    theirs = {item["attributes"]["name"]: item["attributes"]["matching_algorithm"]
              for path in ("correspondents", "document-types")
              for item in alice.get(f"/api/{path}/").json()["data"]}
    assert theirs == {"ACME Corporation": "any", "Invoice": "auto"}
    assert client.get(f"{API}/document_types/{learned['id']}/").json()["matching_algorithm"] == 6
    detail = client.get(f"{API}/correspondents/{acme['id']}/").json()
    assert detail["last_correspondence"] is None
    refused = client.post(f"{API}/correspondents/", {"name": "X", "matching_algorithm": 9},
                          media=JSON)
    assert (refused.status_code, refused.json()) == (
        400, {"matching_algorithm": ['"9" is not a valid choice.']})
    assert [item["attributes"]["name"] for item in alice.get("/api/correspondents/").json()[
        "data"]] == ["ACME Corporation"]


def test_custom_fields(alice):
    client = dialect(alice, 10)
    field = make(client, "custom_fields", name="Priority", data_type="select",
                 extra_data={"select_options": [{"label": "high"}, {"label": "low"}]})
    options = field["extra_data"]["select_options"]
    assert ([option["label"] for option in options], field["data_type"],
            field["document_count"]) == (["high", "low"], "select", 0)
    amount = make(client, "custom_fields", name="Amount", data_type="monetary",
                  extra_data={"default_currency": "EUR"})
    assert amount["extra_data"] == {"default_currency": "EUR"}
    assert make(client, "custom_fields", name="Paid", data_type="boolean")["extra_data"] is None
    refused = client.post(f"{API}/custom_fields/", {"name": "X", "data_type": "nonsense"},
                          media=JSON)
    assert (refused.status_code, list(refused.json())) == (400, ["data_type"])


def test_the_callers_settings_profile_statistics(alice, admin):
    client = dialect(alice, 10)
    assert client.post(f"{API}/ui_settings/", {"settings": {"dark_mode": {"enabled": "true"},
                                                             "documentListSize": 50}},
                       media=JSON).json() == {"success": True}
    settings = client.get(f"{API}/ui_settings/").json()
    assert (settings["user"]["username"], settings["user"]["is_superuser"],
            settings["settings"]["dark_mode"], settings["settings"]["documentListSize"],
            "view_document" in settings["permissions"],
            "add_user" in settings["permissions"]) == (
        "alice", False, {"enabled": "true"}, 50, True, False)
    assert "add_user" in dialect(admin).get(f"{API}/ui_settings/").json()["permissions"]
    refused = client.post(f"{API}/ui_settings/", {"settings": [1]}, media=JSON)
    assert (refused.status_code, refused.json()) == (400, {"settings": [
        "settings is a JSON object."]})
    profile = client.get(f"{API}/profile/").json()
    assert (profile["auth_token"], profile["has_usable_password"], profile["password"]) == (
        alice.token, True, "*" * 16)
    document = create_node(alice, "documents", "letter", alice.inbox_id)
    upload_accepted(alice, document, "letter.txt", samples.text("Hello there\n"))
    assert wait_processed(alice, document)[-1] == "succeeded"
    make(client, "tags", name="Finance")
    statistics = client.get(f"{API}/statistics/").json()
    assert statistics == {"documents_total": 1, "documents_inbox": 1, "inbox_tag": None,
                          "inbox_tags": None, "document_file_type_counts": [
                              {"mime_type": "text/plain", "mime_type_count": 1}],
                          "character_count": len("Hello there\n"), "tag_count": 1,
                          "correspondent_count": 0, "document_type_count": 0,
                          "storage_path_count": 0, "current_asn": 0}
    # Counted again once the library changed (a new document read): not a stale number.
    second = create_node(alice, "documents", "note", alice.inbox_id)
    upload_accepted(alice, second, "note.txt", samples.text("Bye\n"))
    assert wait_processed(alice, second)[-1] == "succeeded"
    assert client.get(f"{API}/statistics/").json()["character_count"] == len(
        "Hello there\nBye\n")
    assert client.get(f"{API}/remote_version/").json() == {"version": "3.0.0",
                                                           "update_available": False}
    assert client.get(f"{API}/status/").json() == {
        "detail": "You do not have permission to perform this action."}
    assert dialect(admin).get(f"{API}/status/").json()["pngx_version"] == "3.0.0"


def test_users_and_groups(alice, bob, admin):
    client = dialect(alice, 10)
    mine = client.get(f"{API}/users/").json()
    assert [user["username"] for user in mine["results"]] == ["alice"]
    everyone = dialect(admin, 10).get(f"{API}/users/").json()
    assert [user["username"] for user in everyone["results"]] == ["admin", "alice", "bob"]
    bobs = next(user for user in everyone["results"] if user["username"] == "bob")
    assert client.get(f"{API}/users/{bobs['id']}/").json() == {
        "detail": "No User matches the given query."}
    group = admin.post("/api/groups/", {"data": {"type": "groups", "attributes": {
        "name": "Family", "members": [alice.user_id]}}}).json()["data"]
    listed = client.get(f"{API}/groups/").json()["results"]
    assert [(item["name"], item["permissions"]) for item in listed] == [("Family", [])]
    assert client.get(f"{API}/users/").json()["results"][0]["groups"] == [listed[0]["id"]]
    assert dialect(bob).get(f"{API}/groups/{listed[0]['id']}/").json() == {
        "detail": "No Group matches the given query."}
    assert group["attributes"]["name"] == "Family"
    assert client.get(f"{API}/storage_paths/").json()["results"] == []
    refused = client.post(f"{API}/storage_paths/", {"name": "x", "path": "y"}, media=JSON)
    assert (refused.status_code, refused.json()) == (403, {
        "detail": "dms files documents in folders; it has no storage paths."})


def test_documents_by_number_in_both_versions(alice, bob):
    document = create_node(alice, "documents", "ACME invoice", alice.home_id)
    upload_accepted(alice, document, "invoice.txt", samples.text("Invoice 4711\n"))
    assert wait_processed(alice, document)[-1] == "succeeded"
    assert alice.post(f"/api/nodes/{document}/tags/", {"tags": ["paid"]},
                      media=JSON).status_code == 201
    nine = dialect(alice, 9).get(f"{API}/documents/").json()
    assert (nine["count"], nine["all"], len(nine["results"])) == (
        1, [nine["results"][0]["id"]], 1)
    shown = nine["results"][0]
    paid = number_of(dialect(alice), "tags", "paid")
    assert {key: shown[key] for key in ("title", "content", "tags", "mime_type", "page_count",
                                        "original_file_name", "storage_path", "dms_id",
                                        "user_can_change", "notes", "custom_fields")} == {
        "title": "ACME invoice", "content": "Invoice 4711\n", "tags": [paid],
        "mime_type": "text/plain", "page_count": 1, "original_file_name": "invoice.txt",
        "storage_path": None, "dms_id": document, "user_can_change": True, "notes": [],
        "custom_fields": []}
    assert "versions" not in shown
    ten = dialect(alice, 10).get(f"{API}/documents/{shown['id']}/").json()
    assert (ten["versions"][0]["is_root"], ten["root_document"], ten["id"]) == (
        True, None, shown["id"])
    assert dialect(bob).get(f"{API}/documents/{shown['id']}/").json() == {
        "detail": "No Document matches the given query."}
    assert dialect(bob).get(f"{API}/documents/").json()["count"] == 0


def test_version_9_all_is_every_number_in_the_lists_order(alice, bob):
    """`all` (version 9) is joined by the database: every number of the filtered list, in its
    ordering, whichever page is asked for; none for an empty list; for someone a folder is
    shared with, their own documents and the shared ones in one order."""
    folder = create_node(alice, "folders", "Shared", alice.home_id)
    for title, parent in (("Bravo", alice.home_id), ("Alpha", folder), ("Charlie", folder)):
        create_node(alice, "documents", title, parent)
    create_node(bob, "documents", "Delta", bob.home_id)
    assert alice.post(f"/api/nodes/{folder}/access/",
                      {"username": "bob", "role": "viewer"}).status_code == 201
    for user, titles in ((alice, ["Alpha", "Bravo", "Charlie"]),
                         (bob, ["Alpha", "Charlie", "Delta"])):
        for ordering in ("title", "-title", "-created", "added"):
            every = dialect(user, 10).get(
                f"{API}/documents/?ordering={ordering}&page_size=100").json()["results"]
            if ordering.endswith("title"):
                assert [d["title"] for d in every] == (
                    titles[::-1] if ordering.startswith("-") else titles)
            second = dialect(user, 9).get(
                f"{API}/documents/?ordering={ordering}&page_size=2&page=2").json()
            assert (second["count"], second["all"], [d["id"] for d in second["results"]]) == (
                3, [d["id"] for d in every], [every[2]["id"]]), (user, ordering)
    empty = dialect(alice, 9).get(f"{API}/documents/?title__icontains=nothing").json()
    assert empty == {"count": 0, "next": None, "previous": None, "all": [], "results": []}
    assert "all" not in dialect(alice, 10).get(f"{API}/documents/").json()


def test_version_9_all_and_counts_follow_a_change_made_in_another_thread(alice):
    """`all` and the count are kept until the database changes (dms.db.kept): each request
    thread keeps its own, and a document another thread (another waitress thread) files shows at
    the next page this one answers."""
    first = create_node(alice, "documents", "First", alice.home_id)
    client = dialect(alice, 9)
    before = client.get(f"{API}/documents/?page_size=1&ordering=title").json()
    assert (before["count"], len(before["all"]), alice.get(
        "/api/documents/").json()["meta"]["pagination"]["count"]) == (1, 1, 1)
    made: list[str] = []
    writer = threading.Thread(target=lambda: made.append(
        create_node(alice, "documents", "Second", alice.home_id)))
    writer.start()
    writer.join()
    after = client.get(f"{API}/documents/?page_size=1&ordering=title").json()
    numbers = {d["title"]: d["id"] for d in dialect(alice, 10).get(
        f"{API}/documents/?ordering=title").json()["results"]}
    assert (after["count"], after["all"]) == (2, [numbers["First"], numbers["Second"]])
    assert alice.get("/api/documents/").json()["meta"]["pagination"]["count"] == 2
    assert made and first != made[0]
