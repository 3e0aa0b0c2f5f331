"""Another user's things in the dialect (api.md §17, §21), tried as an attacker would, on both
engines: every route with a number in its path — listed from the dialect's own route tables, so
that a route added later is covered by itself — answers 404 to bob for alice's document, tag,
correspondent, type, field, user, group, task, saved view and share link, as for a number that
does not exist; alice's numbers in bob's bodies and filters are unknown (400 naming the field, or
nothing found); and nothing of alice's changes."""

from __future__ import annotations

import json

from dms.web.paperless.app import ROUTE_TABLES
from tests.harness import samples
from tests.harness.database import snapshot
from tests.harness.paperless import API, JSON, dialect, make
from tests.harness.waiting import wait_processed
from tests.paperless.test_documents import post_document, uploaded

# A share link's public download (/share/{slug}) is for anyone holding the slug: not a number.
WITH_NUMBERS = sorted({(route.method, route.path) for table in ROUTE_TABLES
                       for route in table.routes if "{" in route.path and route.auth})


def alices(alice, admin) -> dict[str, int]:
    """Alice's things, one of each kind, by the name of a path's parameter (item_id by kind)."""
    client = dialect(alice, 10)
    task = uploaded(client, "letter.txt", samples.text("Alice's letter\n"))
    document = task["related_document_ids"][0]
    assert wait_processed(alice, client.get(f"{API}/documents/{document}/").json()[
        "dms_id"])[-1] == "succeeded"
    note = client.post(f"{API}/documents/{document}/notes/", {"note": "private"},
                       media=JSON).json()[0]["id"]
    group = make(dialect(admin, 10), "groups", name="Alice's family")
    me = client.get(f"{API}/ui_settings/").json()["user"]["id"]
    view = make(client, "saved_views", name="Alice's view", filter_rules=[])
    link = client.post(f"{API}/share_links/", {"document": document}, media=JSON)
    assert link.status_code == 201, link.text
    return {"document_id": document, "note": note, "task_id": task["id"], "user_id": me,
            "group_id": group["id"], "view_id": view["id"], "link_id": link.json()["id"],
            **{kind: make(client, kind, name=f"Alice's {kind}", **extra)["id"]
               for kind, extra in (("tags", {}), ("correspondents", {}),
                                   ("document_types", {}),
                                   ("custom_fields", {"data_type": "string"}))}}


def test_alices_numbers_are_unknown_to_bob(alice, bob, admin, config):
    theirs = alices(alice, admin)
    bobs = dialect(bob, 10)
    mine = uploaded(bobs, "mine.txt", samples.text("Bob's own\n"))["related_document_ids"][0]
    assert wait_processed(bob, bobs.get(f"{API}/documents/{mine}/").json()["dms_id"])[-1] == \
        "succeeded"
    before = snapshot(config)
    for method, path in WITH_NUMBERS:
        name = path.split("{")[1].split("}")[0]
        value = theirs[path.split("/")[2]] if name == "item_id" else theirs[name]
        url = API + path.removeprefix("/api").replace("{" + name + "}", str(value))
        response = bobs.request(method, url + (f"?id={theirs['note']}" if method == "DELETE"
                                               and url.endswith("/notes/") else ""),
                                json_body={"note": "x", "title": "x", "name": "x"}
                                if method in ("POST", "PUT", "PATCH") else None, media=JSON)
        assert response.status_code == 404, (method, path, response.status_code)
        assert list(response.json()) == ["detail"], (method, path)

    # Alice's numbers in bob's bodies: unknown, named, nothing changed.
    refusals = [
        ("POST", "/documents/bulk_edit/", {"documents": [theirs["document_id"]],
                                           "method": "add_tag", "parameters": {"tag": 1}},
         "documents"),
        ("POST", "/documents/bulk_edit/", {"documents": [mine], "method": "add_tag",
                                           "parameters": {"tag": theirs["tags"]}}, "tags"),
        ("POST", "/documents/selection_data/", {"documents": [theirs["document_id"]]},
         "documents"),
        ("POST", "/trash/", {"action": "restore", "documents": [theirs["document_id"]]},
         "documents"),
        ("PATCH", f"/documents/{mine}/", {"correspondent": theirs["correspondents"]},
         "correspondent"),
        ("PATCH", f"/documents/{mine}/", {"document_type": theirs["document_types"]},
         "document_type"),
        ("PATCH", f"/documents/{mine}/", {"tags": [theirs["tags"]]}, "tags"),
        ("PATCH", f"/documents/{mine}/", {"custom_fields": [
            {"field": theirs["custom_fields"], "value": "x"}]}, "custom_fields"),
    ]
    for method, path, body, field in refusals:
        response = bobs.request(method, API + path, json_body=body, media=JSON)
        assert (response.status_code, list(response.json())) == (400, [field]), (path, body)
        if field == "custom_fields":  # item by item, as DRF writes a list's errors
            assert response.json() == {"custom_fields": [{"field": [
                "You have no custom field with this id."]}]}
    uploaded_with = post_document(bobs, "x.txt", samples.text("x\n"),
                                  [("tags", str(theirs["tags"]))])
    assert (uploaded_with.status_code, list(uploaded_with.json())) == (400, ["tags"])
    notes = bobs.delete(f"{API}/documents/{mine}/notes/?id={theirs['note']}")
    assert (notes.status_code, notes.json()) == (404, {"detail": "Not found."})
    assert snapshot(config) == before

    # Filters by alice's numbers find nothing of hers; the lists hold only bob's.
    for query in (f"id__in={theirs['document_id']}", f"tags__id__all={theirs['tags']}",
                  f"correspondent__id={theirs['correspondents']}",
                  f"owner__id={theirs['user_id']}", f"shared_by__id={theirs['user_id']}",
                  "custom_field_query=" + json.dumps([theirs["custom_fields"], "exists", True])):
        found = bobs.get(f"{API}/documents/?{query}").json()
        assert found.get("results", []) == [], query
    assert [d["id"] for d in bobs.get(f"{API}/documents/").json()["results"]] == [mine]
    for kind in ("tags", "correspondents", "document_types", "custom_fields"):
        assert bobs.get(f"{API}/{kind}/").json()["count"] == 0, kind
    assert [u["username"] for u in bobs.get(f"{API}/users/").json()["results"]] == ["bob"]
    assert bobs.get(f"{API}/groups/").json()["count"] == 0
    assert bobs.get(f"{API}/tasks/").json()["count"] == 1
    assert bobs.get(f"{API}/search/?query=alice").json()["documents"] == []
