"""Sparse fieldsets (docs/api.md, "Fewer fields"; dms.web.fieldsets): `fields[documents]` and
`fields[folders]` make a listing answer only those fields, read only what they need, and keep
the choice in its page links; a name a type lacks is refused with a sentence saying which it has."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from dms.web.nodefields import DOCUMENT_FIELDS, FOLDER_FIELDS
from tests.domain.test_saved_searches import saved
from tests.domain.test_tags import create_tag, set_tags
from tests.harness.client import assert_error
from tests.harness.documents import make_folder, new_document
from tests.harness.statements import logged_statements

FOLDER_NAMES = ", ".join(FOLDER_FIELDS)
DOCUMENT_NAMES = ", ".join(DOCUMENT_FIELDS)


def bills_folder(alice) -> tuple[str, str, str]:
    """Bills, holding the folder 2024 and the document "March invoice" tagged paid; their ids."""
    bills = make_folder(alice, "Bills", alice.home_id)
    year = make_folder(alice, "2024", bills)
    invoice = new_document(alice, "March invoice", bills)
    create_tag(alice, "paid")
    assert set_tags(alice, invoice, ["paid"]).status_code in (200, 201)
    return bills, year, invoice


def by_id(listing: dict) -> dict[str, dict]:
    return {resource["id"]: resource for resource in listing["data"]}


def test_a_listing_answers_only_the_fields_asked_for_and_its_links_keep_them(alice, server):
    bills, year, invoice = bills_folder(alice)
    full = by_id(alice.get(f"/api/nodes/{bills}/").json())
    path = f"/api/nodes/{bills}/?fields[documents]=title,tags&fields[folders]=title"
    listing = alice.get(path).json()
    assert by_id(listing) == {
        year: {"type": "folders", "id": year, "attributes": {"title": "2024"}},
        invoice: {"type": "documents", "id": invoice,
                  "attributes": {"title": "March invoice",
                                 "tags": full[invoice]["attributes"]["tags"]}}}
    assert [tag["name"] for tag in full[invoice]["attributes"]["tags"]] == ["paid"]
    assert listing["meta"] == alice.get(f"/api/nodes/{bills}/").json()["meta"]

    paged = alice.get(path + "&page[size]=1").json()
    assert len(paged["data"]) == 1
    assert set(paged["data"][0]["attributes"]) == {"title"} | (
        {"tags"} if paged["data"][0]["type"] == "documents" else set())
    query = parse_qs(urlsplit(paged["links"]["next"]).query)
    assert (query["fields[documents]"], query["fields[folders]"]) == (["title,tags"], ["title"])


def test_an_empty_fieldset_keeps_no_attribute_and_parent_is_a_field(alice, server):
    bills, year, invoice = bills_folder(alice)
    listing = alice.get(f"/api/nodes/{bills}/?fields[folders]=&fields[documents]=parent").json()
    assert by_id(listing) == {
        year: {"type": "folders", "id": year, "attributes": {}},
        invoice: {"type": "documents", "id": invoice, "attributes": {},
                  "relationships": {"parent": {"data": {"type": "folders", "id": bills}}}}}


def test_a_type_without_a_fieldset_keeps_all_of_its_fields(alice, server):
    bills, year, invoice = bills_folder(alice)
    full = by_id(alice.get(f"/api/nodes/{bills}/").json())
    listing = by_id(alice.get(f"/api/nodes/{bills}/?fields[documents]=size").json())
    assert listing == {year: full[year],
                       invoice: {"type": "documents", "id": invoice, "attributes": {"size": 0}}}


def test_the_fields_named_are_the_fields_a_node_has(alice, server):
    bills, year, invoice = bills_folder(alice)
    full = by_id(alice.get(f"/api/nodes/{bills}/").json())
    for node_id, fields in ((year, FOLDER_FIELDS), (invoice, DOCUMENT_FIELDS)):
        resource = full[node_id]
        assert [*resource["attributes"], *resource["relationships"]] == list(fields)


def test_every_node_listing_takes_fieldsets(alice, server):
    bills_folder(alice)
    expected = {
        "/api/nodes/?fields[folders]=title": {"folders"},
        "/api/folders/?fields[folders]=title": {"folders"},
        "/api/documents/?fields[documents]=title": {"documents"},
    }
    for path, types in expected.items():
        data = alice.get(path).json()["data"]
        assert {resource["type"] for resource in data} == types, path
        assert all(resource["attributes"] == {"title": resource["attributes"]["title"]}
                   and "relationships" not in resource for resource in data), path


def test_a_field_left_out_is_not_read(alice, server):
    """Tags, mail, the metadata and the breadcrumbs each cost a lookup; left out, none runs."""
    bills, _, _ = bills_folder(alice)

    def tables(path: str) -> list[str]:
        statements = logged_statements(lambda: alice.get(path).raise_for_status())
        return [sql.split(" FROM ", 1)[1].split()[0] for sql, _ in statements
                if sql.startswith("SELECT") and " FROM " in sql]

    everything = tables(f"/api/nodes/{bills}/")
    titles = tables(f"/api/nodes/{bills}/?fields[documents]=title&fields[folders]=title")
    assert len(titles) < len(everything)
    # What a title does not need: tags, the mail a document came by, custom fields, and the
    # folder's own breadcrumb.
    lookups = {"node_tag", "document_mail", "custom_field_value"}
    assert lookups <= set(everything), everything
    assert not lookups & set(titles), titles


def test_a_bad_fieldset_is_refused_with_what_the_type_has(alice, server):
    bills, _, invoice = bills_folder(alice)
    cases = {
        "fields[documents]=title,titel": "fields[documents]: documents have no field "
                                         f"\u201ctitel\u201d; theirs are {DOCUMENT_NAMES}.",
        "fields[folders]=size": "fields[folders]: folders have no field \u201csize\u201d; "
                                f"theirs are {FOLDER_NAMES}.",
        "fields[tags]=name": "fields[tags] names a type this answer does not hold; its types "
                             "are folders and documents.",
        "fields[folders]=title&fields[folders]=tags": "fields[folders] is given twice; name its "
                                                      "fields once, separated by commas.",
    }
    search = saved(alice, name="All")["id"]
    paths = (f"/api/nodes/{bills}/", "/api/nodes/", "/api/folders/", "/api/documents/",
             f"/api/saved-searches/{search}/documents/")
    cases["fields[" + "x" * 200 + "]=title"] = (
        "fields[" + "x" * 92 + "\u2026 names a type this answer does not hold; its types are "
        "folders and documents.")
    for query, detail in cases.items():
        for path in paths:
            assert_error(alice.get(f"{path}?{query}"), 400, "invalid", detail)
    assert alice.get(f"/api/saved-searches/{search}/documents/?fields[documents]=title").json()[
        "data"] == [{"type": "documents", "id": invoice, "attributes": {"title": "March invoice"}}]


def test_each_field_alone_is_the_same_as_in_the_whole_resource(alice, server):
    """A document with a tag, a correspondent, a date and a file; each field asked for alone
    answers what the whole resource says of it."""
    bills, year, invoice = bills_folder(alice)
    correspondent = alice.post("/api/correspondents/", {"data": {
        "type": "correspondents", "attributes": {"name": "Stadtwerke"}}}).json()["data"]["id"]
    changed = alice.patch(f"/api/documents/{invoice}/", {"data": {
        "type": "documents", "id": invoice, "attributes": {
            "correspondent": correspondent, "document_date": "2024-03-05",
            "archive_serial_number": 17}}})
    assert changed.status_code == 200, changed.text
    full = by_id(alice.get(f"/api/nodes/{bills}/").json())
    for node_id, kind, fields in ((year, "folders", FOLDER_FIELDS),
                                  (invoice, "documents", DOCUMENT_FIELDS)):
        for field in fields:
            alone = by_id(alice.get(f"/api/nodes/{bills}/?fields[{kind}]={field}").json())
            expected = ({"relationships": full[node_id]["relationships"], "attributes": {}}
                        if field == "parent"
                        else {"attributes": {field: full[node_id]["attributes"][field]}})
            assert alone[node_id] == {"type": kind, "id": node_id, **expected}, field
    assert full[invoice]["attributes"]["correspondent"] == correspondent
    assert full[invoice]["attributes"]["archive_serial_number"] == 17


def test_a_shared_folder_shows_the_chosen_fields_as_its_viewer_sees_them(alice, bob, server):
    """bob, a viewer of Bills: his role, the owner and his breadcrumb (from his .shared folder),
    in .shared and inside Bills, as his whole listing says them."""
    bills, year, invoice = bills_folder(alice)
    assert alice.post(f"/api/nodes/{bills}/access/",
                      {"username": "bob", "role": "viewer"}).status_code == 201
    shared = bob.get("/api/users/me/").json()["data"]["relationships"]["shared_folder"]["data"]
    chosen = "fields[folders]=access,owner,breadcrumb&fields[documents]=access,owner,breadcrumb"
    for folder in (shared["id"], bills):
        full = by_id(bob.get(f"/api/nodes/{folder}/").json())
        trimmed = by_id(bob.get(f"/api/nodes/{folder}/?{chosen}").json())
        assert trimmed == {node_id: {"type": resource["type"], "id": node_id, "attributes": {
            name: resource["attributes"][name] for name in ("breadcrumb", "access", "owner")}}
            for node_id, resource in full.items()}, folder
    inside = by_id(bob.get(f"/api/nodes/{bills}/?{chosen}").json())
    assert inside[invoice]["attributes"]["access"] == "viewer"
    assert inside[invoice]["attributes"]["owner"] == alice.username
    assert [title for title, _ in inside[invoice]["attributes"]["breadcrumb"]][-2:] == [
        "Bills", "March invoice"]
