"""A null character (%00, "\\u0000") where a client may write text, on both engines: PostgreSQL's
text cannot hold or even compare one, so where it reached a query it was a 500 (the dialect's
fuzzer found it). Every filter of every list answers without a server error (a name or id with one
names nothing), and a body's text is refused by its field's own check (a
label's `match` too) — or kept where dms seals it (a mail password: tests/intake)."""

from __future__ import annotations

from tests.harness.client import VND
from tests.harness.documents import new_document

PARAMETERS = ["tags", "tags_op", "owner", "sort", "q", "correspondent", "document_type", "asn",
              "document_date_after", "document_date_before", "cf_x", "custom_field_query",
              "lang", "page[number]", "page[size]", "title", "kind", "mime_type", "node"]
NUL = "a\x00b"


def test_no_filter_with_a_null_character_is_a_server_error(alice):
    lists = [f"/api/nodes/{alice.home_id}/", "/api/documents/", "/api/search/", "/api/trash/",
             "/api/tags/", "/api/nodes/", "/api/correspondents/", "/api/custom-fields/",
             "/api/tokens/", "/api/rules/", "/api/webhooks/", "/api/groups/", "/api/users/"]
    answered = {(path, name): alice.get(f"{path}?{name}=a%00b").status_code
                for path in lists for name in PARAMETERS}
    assert {key: status for key, status in answered.items() if status >= 500} == {}
    for name in ("tags", "owner", "correspondent"):
        assert alice.get(f"/api/documents/?{name}=a%00b").status_code in (200, 400), name
    assert alice.get("/api/documents/?tags=a%00b").json()["data"] == []
    assert alice.get("/api/documents/?owner=a%00b").json()["data"] == []


def test_text_with_a_null_character_is_refused_by_its_field(alice):
    document = new_document(alice, "letter", alice.home_id)
    bodies = [
        ("/api/tags/", "tags", {"name": "t", "description": NUL}),
        ("/api/correspondents/", "correspondents", {"name": NUL}),
        ("/api/correspondents/", "correspondents", {"name": "c", "match": NUL}),
        ("/api/document-types/", "document-types", {"name": "d", "match": NUL}),
        ("/api/custom-fields/", "custom-fields", {"name": NUL, "data_type": "string"}),
        (f"/api/documents/{document}/notes/", "notes", {"note": NUL}),
        ("/api/rules/", "rules", {"name": NUL}),
        ("/api/groups/", "groups", {"name": NUL}),
    ]
    for path, kind, attributes in bodies:
        response = alice.post(path, {"data": {"type": kind, "attributes": attributes}},
                              media=VND)
        assert response.status_code in (400, 403), (path, attributes, response.text)
    matched = alice.post("/api/correspondents/", {"data": {"type": "correspondents",
                                                           "attributes": {"name": "c",
                                                                          "match": NUL}}})
    assert matched.json()["errors"][0]["detail"] == (
        "match must be text of at most 256 characters, without null characters.")
