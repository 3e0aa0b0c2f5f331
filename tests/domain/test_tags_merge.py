"""Managing tags on Settings › Tags (api.md §22): each tag with the number of documents it labels,
and one tag merged into another (POST /tags/{id}/merge/): its nodes get the other (and the tags
above it), it is deleted, its sub-tags move up, each node's history says so; refusals change
nothing. On the fast tier what merging does; through the API what a client sees."""

from __future__ import annotations

from dms.db.models import Tag
from dms.domain import tags, trash
from tests.harness.client import NOT_FOUND, assert_error
from tests.harness.database import snapshot
from tests.harness.documents import new_document
from tests.harness.domaintier import (
    assert_refused,
    events_of,
    home_id,
    new_folder,
    new_user,
)
from tests.harness.domaintier import new_document as create_document


def names_on(user, node_id) -> list[str]:
    return [tag["name"] for tag in tags.tags_of([node_id], user.id)[node_id]]


def tag_named(user, name) -> Tag:
    return Tag.get(Tag.owner == user.id, Tag.name == name)


def test_merging_moves_every_node_to_the_other_tag_and_deletes_the_tag(services, config):
    alice = new_user("alice")
    folder = new_folder(services, alice, "Bills", home_id(alice))
    only_old = create_document(services, alice, "gas bill", folder)
    both = create_document(services, alice, "water bill", folder)
    neither = create_document(services, alice, "letter")
    tags.change_node_tags(alice, only_old, ["invoice"], "replace")
    tags.change_node_tags(alice, both, ["invoice", "Invoices"], "replace")
    tags.change_node_tags(alice, folder, ["invoice"], "replace")
    tags.change_node_tags(alice, neither, ["private"], "replace")
    # Invoices sits under Money; a sub-tag of invoice moves up to the top.
    money = tags.create_tag(alice, {"name": "Money"})
    target = tags.update_tag(alice, tag_named(alice, "Invoices").id, {"parent": money.id})
    gas = tags.create_tag(alice, {"name": "Gas", "parent": tag_named(alice, "invoice").id})
    merged = tags.merge_tags(alice, tag_named(alice, "invoice").id, target.id)
    assert merged.id == target.id and merged.name == "Invoices"
    assert {node: names_on(alice, node) for node in (only_old, both, folder, neither)} == {
        only_old: ["Invoices", "Money"], both: ["Invoices", "Money"],
        folder: ["Invoices", "Money"], neither: ["private"]}
    assert not Tag.select().where(Tag.name == "invoice").exists()
    assert Tag.get_by_id(gas.id).parent_id is None
    assert events_of(alice, only_old)[-2:] == [("untagged", {"tags": ["invoice"]}),
                                               ("tagged", {"tags": ["Invoices"]})]
    # It had Invoices already: only the old one went.
    assert events_of(alice, both)[-1] == ("untagged", {"tags": ["invoice"]})
    assert tags.document_counts([target.id, money.id]) == {target.id: 2, money.id: 2}
    trash.delete(services, alice, both)
    assert tags.document_counts([target.id, money.id]) == {target.id: 1, money.id: 1}


def test_refused_merges_change_nothing(services, config):
    alice, bob = new_user("alice"), new_user("bob")
    paid = tags.create_tag(alice, {"name": "paid"})
    theirs = tags.create_tag(bob, {"name": "paid"})
    for into, code, detail, field in (
            (None, "required", "`into` must be the id of the tag to merge this one into.",
             "into"),
            (42, "invalid", "`into` must be the id of the tag to merge this one into.", "into"),
            (paid.id, "invalid", "A tag cannot be merged into itself; choose another tag.",
             "into"),
            (theirs.id, "not_found", "Not found.", None)):
        assert_refused(config, lambda into=into: tags.merge_tags(alice, paid.id, into), code,
                       detail, field)
    assert_refused(config, lambda: tags.merge_tags(bob, paid.id, theirs.id), "not_found",
                   "Not found.", None)


def test_tags_are_listed_with_their_counts_and_merged_through_the_api(alice, bob, config):
    first, second = new_document(alice, "a"), new_document(alice, "b")
    for document_id, names in ((first, ["paid", "2024"]), (second, ["Paid!"])):
        assert alice.post(f"/api/nodes/{document_id}/tags/", {"tags": names},
                          media="application/json").status_code == 201
    listing = alice.get("/api/tags/").json()["data"]
    counts = {tag["attributes"]["name"]: tag["attributes"]["document_count"] for tag in listing}
    assert counts == {"2024": 1, "paid": 1, "Paid!": 1}
    ids = {tag["attributes"]["name"]: tag["id"] for tag in listing}
    before = snapshot(config)
    assert_error(alice.post(f"/api/tags/{ids['Paid!']}/merge/", {"into": ids["Paid!"]},
                            media="application/json"), 400, "invalid",
                 "A tag cannot be merged into itself; choose another tag.", "/into")
    for refused in (bob.post(f"/api/tags/{ids['Paid!']}/merge/", {"into": ids["paid"]},
                             media="application/json"),
                    alice.post(f"/api/tags/{ids['Paid!']}/merge/", {"into": bob.home_id},
                               media="application/json")):
        assert (refused.status_code, refused.json()) == (404, NOT_FOUND)
    assert snapshot(config) == before
    merged = alice.post(f"/api/tags/{ids['Paid!']}/merge/", {"into": ids["paid"]},
                        media="application/json")
    assert merged.status_code == 200, merged.text
    assert merged.json()["data"]["attributes"]["document_count"] == 2
    assert alice.get(f"/api/tags/{ids['Paid!']}/").json() == NOT_FOUND
    assert alice.get(f"/api/documents/{second}/").json()["data"]["attributes"]["tags"] == [
        {"name": "paid", "bg_color": "#c41fff", "fg_color": "#FFFFFF"}]
