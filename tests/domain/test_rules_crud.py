"""Rules kept (docs/api.md, "Rules"): through the API as a user would, create with its defaults,
read, list in the order they run, change (match and actions key by key), delete; every refusal a
sentence with a pointer into the body that changes nothing; the owner, another user and an admin
(404), anonymous (401). On the fast tier (the domain's functions, no server): each refusal with its
field and code, `move_to` one of the caller's live folders, names unique per user, and the limits
(200 rules, 1,000 characters of pattern, names unique also when created from many threads at
once)."""

from __future__ import annotations

import threading

import pytest

from dms.domain import trash
from dms.domain.rules import store
from dms.errors import DomainError
from tests.harness.client import NOT_FOUND, VND, assert_error
from tests.harness.database import execute_sql, query_sql, snapshot
from tests.harness.documents import make_folder
from tests.harness.domaintier import (
    assert_refused,
    domain_thread,
    home_id,
    inbox_id,
    new_document,
    new_folder,
    new_user,
)
from tests.harness.rules import add_rule, rule_body

ATTRIBUTES = "/data/attributes/"

# What a rule sets of a document's metadata (api.md §16), none of it here.
NO_METADATA = {"set_correspondent": None, "set_document_type": None, "set_custom_field": None,
               "set_document_date_from_text": False}


def test_a_rule_is_created_with_its_defaults_read_listed_changed_and_deleted(alice):
    bills = make_folder(alice, "Bills", alice.home_id)
    body = rule_body("Utility bills", "billing@stadtwerke.example", algorithm="exact",
                     field="mail_from", actions={"move_to": bills, "add_tags": ["bills"]})
    response = alice.post("/api/rules/", body)
    assert (response.status_code, response.headers["Content-Type"]) == (201, VND), response.text
    rule = response.json()["data"]
    created_at = rule["attributes"]["created_at"]
    assert rule == {"type": "rules", "id": rule["id"], "attributes": {
        "name": "Utility bills", "enabled": True, "order": 0,
        "match": {"field": "mail_from", "algorithm": "exact",
                  "pattern": "billing@stadtwerke.example", "case_sensitive": False},
        "sources": ["api", "import", "consume", "mail"],
        "actions": {"add_tags": ["bills"], "move_to": bills, "set_title": None, "stop": False,
                    **NO_METADATA},
        "last_error": None, "created_at": created_at, "updated_at": created_at}}
    assert alice.get(f"/api/rules/{rule['id']}/").json() == {"data": rule}

    first = add_rule(alice, "First", "x", order=-5, actions={"stop": True})
    same_order = add_rule(alice, "a second", "y", order=-5, actions={"add_tags": ["y"]})
    listing = alice.get("/api/rules/").json()
    assert [item["id"] for item in listing["data"]] == [same_order["id"], first["id"], rule["id"]]
    assert listing["meta"]["pagination"] == {"page": 1, "pages": 1, "count": 3}

    response = alice.patch(f"/api/rules/{rule['id']}/", {"data": {"type": "rules", "attributes": {
        "match": {"pattern": "STADTWERKE", "case_sensitive": True},
        "actions": {"set_title": "Bill {created:%Y-%m}", "add_tags": []},
        "sources": ["mail"], "enabled": False, "order": 7}}})
    assert response.status_code == 200, response.text
    changed = response.json()["data"]["attributes"]
    assert (changed["match"], changed["actions"], changed["sources"], changed["enabled"],
            changed["order"]) == (
        {"field": "mail_from", "algorithm": "exact", "pattern": "STADTWERKE",
         "case_sensitive": True},
        {"add_tags": [], "move_to": bills, "set_title": "Bill {created:%Y-%m}", "stop": False,
         **NO_METADATA},
        ["mail"], False, 7)
    assert changed["updated_at"] >= created_at

    assert alice.delete(f"/api/rules/{rule['id']}/").status_code == 204
    assert alice.get(f"/api/rules/{rule['id']}/").json() == NOT_FOUND
    assert [item["id"] for item in alice.get("/api/rules/").json()["data"]] == \
        [same_order["id"], first["id"]]


REFUSED = [
    ({"name": "n", "actions": {"stop": True}}, 400, "required",
     'A rule needs `match`: {"field", "algorithm", "pattern"}.', "match"),
    ({"match": {"pattern": "x"}, "actions": {"stop": True}}, 400, "required",
     "A rule needs a name.", "name"),
    ({"name": " ", "match": {"pattern": "x"}, "actions": {"stop": True}}, 400, "blank",
     "A rule name may not be blank.", "name"),
    ({"name": "n" * 101, "match": {"pattern": "x"}, "actions": {"stop": True}}, 400, "invalid",
     "A rule name has at most 100 characters.", "name"),
    ({"name": "n", "match": {"pattern": "x"}}, 400, "required",
     "A rule needs `actions`: add_tags, move_to, set_title or stop.", "actions"),
    ({"name": "n", "match": {"pattern": "x"}, "actions": {"add_tags": [], "stop": False}}, 400,
     "invalid", "A rule needs at least one action: add_tags, move_to, set_title, "
     "set_correspondent, set_document_type, set_custom_field, set_document_date_from_text or "
     "stop.",
     "actions"),
    ({"name": "n", "match": {"pattern": "(a", "algorithm": "regex"}, "actions": {"stop": True}},
     400, "invalid", "The regular expression is not valid for RE2: missing ): (a. (RE2 has no "
     "backreferences or lookaround; see the guide.)", "match/pattern"),
    ({"name": "n", "match": {"pattern": r"(\w+) \1", "algorithm": "regex"},
      "actions": {"stop": True}}, 400, "invalid", "The regular expression is not valid for RE2: "
     "invalid escape sequence: \\1. (RE2 has no backreferences or lookaround; see the guide.)",
     "match/pattern"),
    ({"name": "n", "match": {"pattern": "x" * 1001}, "actions": {"stop": True}}, 400, "invalid",
     "A pattern has at most 1000 characters.", "match/pattern"),
    ({"name": "n", "match": {"pattern": "--"}, "actions": {"stop": True}}, 400, "invalid",
     "A pattern of the any algorithm needs at least one word (letters or digits).",
     "match/pattern"),
    ({"name": "n", "match": {"pattern": "x", "algorithm": "soundex"},
      "actions": {"stop": True}}, 400, "invalid",
     "`algorithm` must be one of any, all, exact, regex, fuzzy.", "match/algorithm"),
    ({"name": "n", "match": {"pattern": "x", "field": "body"}, "actions": {"stop": True}}, 400,
     "invalid", "`field` must be one of text, title, file_name, mail_from, mail_subject, any.",
     "match/field"),
    ({"name": "n", "match": {"pattern": "x", "algoritm": "regex"}, "actions": {"stop": True}},
     400, "invalid", '`match` has no key "algoritm"; its keys are field, algorithm, pattern, '
     "case_sensitive.", "match/algoritm"),
    ({"name": "n", "match": {"pattern": "x", "algorithm": "fuzzy", "case_sensitive": True},
      "actions": {"stop": True}}, 400, "invalid", "Fuzzy matching ignores case (OCR confuses it "
     "too): case_sensitive must be false with the fuzzy algorithm.", "match/case_sensitive"),
    ({"name": "n", "match": {"pattern": "x"}, "sources": ["api", "fax"],
      "actions": {"stop": True}}, 400, "invalid",
     "Each source must be one of api, import, consume, mail.", "sources/1"),
    ({"name": "n", "match": {"pattern": "x"}, "sources": [], "actions": {"stop": True}}, 400,
     "invalid", "`sources` must be a list of one or more of api, import, consume, mail.",
     "sources"),
    ({"name": "n", "match": {"pattern": "x"}, "actions": {"add_tags": ["ok", "a,b"]}}, 400,
     "invalid", "A tag name may not contain commas, control characters or invisible formatting "
     "characters.", "actions/add_tags/1"),
    ({"name": "n", "match": {"pattern": "x"}, "actions": {"set_title": "{title.__class__}"}},
     400, "invalid", "A title template may use {title}, {file_name}, {created}, {mail_from}, "
     "{mail_subject}, {match} (and {created:%d.%m.%Y} for another date format); "
     "{title.__class__} is none of them.", "actions/set_title"),
    ({"name": "n", "match": {"pattern": "x"}, "actions": {"set_title": "{created:%Q}"}}, 400,
     "invalid", "A date format may use the directives %Y %y %m %d %H %M %S %j %b %B %a %A %p %I "
     "%U %W %%; %Q is not one of them.", "actions/set_title"),
    ({"name": "n", "match": {"pattern": "x"}, "actions": {"set_title": "{title:>10}"}}, 400,
     "invalid", "Only {created} takes a format (as in {created:%Y-%m-%d}); {title} does not.",
     "actions/set_title"),
    ({"name": "n", "match": {"pattern": "x"}, "actions": {"set_title": "Bill {title"}}, 400,
     "invalid", "A title template has a `{` without its `}`; write `{{` for a brace.",
     "actions/set_title"),
    ({"name": "n", "match": {"pattern": "x"}, "order": 1.5, "actions": {"stop": True}}, 400,
     "invalid", "`order` must be a whole number from -1000000 to 1000000.", "order"),
    ({"name": "n", "match": {"pattern": "x"}, "enabled": "yes", "actions": {"stop": True}}, 400,
     "invalid", "`enabled` must be true or false.", "enabled"),
    ({"name": "n", "match": {"pattern": "x"}, "actions": {"move_to": 7}}, 400, "invalid",
     "`move_to` must be a folder id or null.", "actions/move_to"),
    ({"name": "n", "match": {"pattern": "x"}, "actions": {"stop": True, "a/b": 1}}, 400,
     "invalid", '`actions` has no key "a/b"; its keys are add_tags, move_to, set_title, stop, '
     "set_correspondent, set_document_type, set_custom_field, set_document_date_from_text.",
     "actions/a~1b"),
    ({"name": "n", "match": "x", "actions": {"stop": True}}, 400, "invalid",
     "`match` must be an object with field, algorithm, pattern, case_sensitive.", "match"),
]


@pytest.mark.parametrize("attributes, status, code, detail, field", REFUSED)
def test_invalid_rules_are_refused_and_nothing_is_created(services, config, attributes, status,
                                                          code, detail, field):
    """The fast tier (no server): the domain's refusal, its field (the pointer's tail) and code."""
    owner = new_user("alice")
    assert_refused(config, lambda: store.create_rule(owner, attributes), code, detail, field)


def test_invalid_rules_are_answered_with_a_pointer_into_the_body(alice, config):
    """The same refusals through the API, on POST and PATCH: the envelope, the field as a JSON
    pointer (escaped)."""
    add_rule(alice, "Invoices", "x", actions={"stop": True})
    other = add_rule(alice, "Other", "x", actions={"stop": True})
    before = snapshot(config)
    attributes = {"name": "n", "match": {"pattern": "x"}, "actions": {"stop": True, "a/b": 1}}
    response = alice.post("/api/rules/", {"data": {"type": "rules", "attributes": attributes}})
    assert_error(response, 400, "invalid", '`actions` has no key "a/b"; its keys are add_tags, '
                 "move_to, set_title, stop, set_correspondent, set_document_type, "
                 "set_custom_field, set_document_date_from_text.", ATTRIBUTES + "actions/a~1b")
    response = alice.post("/api/rules/", rule_body("n", "x", actions={"move_to": "no-such"}))
    assert_error(response, 400, "does_not_exist",
                 "Invalid folder 'no-such': the folder does not exist.",
                 ATTRIBUTES + "actions/move_to")
    response = alice.patch(f"/api/rules/{other['id']}/",
                           {"data": {"type": "rules", "attributes": {"name": "invoices"}}})
    assert_error(response, 400, "invalid", "You already have a rule with this name.",
                 ATTRIBUTES + "name")
    assert snapshot(config) == before


def test_move_to_must_be_one_of_the_callers_live_folders(services, config):
    alice, bob = new_user("alice"), new_user("bob")
    document = new_document(services, alice, "a letter", home_id(alice))
    trashed = new_folder(services, alice, "Old", home_id(alice))
    trash.delete(services, alice, trashed)
    foreign = new_folder(services, bob, "Bob's", home_id(bob))
    for folder in (foreign, trashed, "no-such-folder"):
        assert_refused(config, lambda folder=folder: store.create_rule(alice, {
            "name": "n", "match": {"pattern": "x"}, "actions": {"move_to": folder}}),
            "does_not_exist", f"Invalid folder {folder!r}: the folder does not exist.",
            "actions/move_to")
    assert_refused(config, lambda: store.create_rule(alice, {
        "name": "n", "match": {"pattern": "x"}, "actions": {"move_to": document}}),
        "invalid", "A rule can only move documents into a folder; this is a document.",
        "actions/move_to")
    inbox = store.create_rule(alice, {"name": "To the inbox", "match": {"pattern": "x"},
                                      "actions": {"move_to": inbox_id(alice)}})
    assert (inbox.move_to, inbox.enabled, inbox.last_error) == (inbox_id(alice), True, None)


def stop_rule(name: str) -> dict:
    return {"name": name, "match": {"pattern": "x"}, "actions": {"stop": True}}


def test_names_are_unique_per_user_regardless_of_case(services, config):
    alice, bob = new_user("alice"), new_user("bob")
    store.create_rule(alice, stop_rule("Invoices"))
    assert_refused(config, lambda: store.create_rule(alice, stop_rule("INVOICES")), "invalid",
                   "You already have a rule with this name.", "name")
    other = store.create_rule(alice, stop_rule("Other"))
    assert_refused(config, lambda: store.update_rule(alice, other.id, {"name": "invoices"}),
                   "invalid", "You already have a rule with this name.", "name")
    assert store.create_rule(bob, stop_rule("Invoices")).name == "Invoices"  # bob's own names
    assert [rule.name for rule in store.rules_of(alice)] == ["Invoices", "Other"]


def at_once(user, names: list[str]) -> list:
    """store.create_rule for each name, each in its own thread, released together: "created" or
    the refusal's (code, sentence, field) for each, sorted."""
    barrier = threading.Barrier(len(names))
    outcomes: list = []

    def create(name: str) -> None:
        barrier.wait()
        try:
            store.create_rule(user, stop_rule(name))
            outcomes.append("created")
        except DomainError as error:
            outcomes.append((error.code, str(error), error.field))

    threads = [domain_thread(create, name) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sorted(outcomes, key=str)


LIMIT = "One user may have at most 200 rules; delete one you no longer need first."


def test_concurrent_creations_keep_names_unique_and_the_limit(services, config):
    """The check-then-write of a rule's name and of the limit, from many threads at once."""
    alice = new_user("alice")
    assert at_once(alice, ["Same"] * 8) == \
        [("invalid", "You already have a rule with this name.", "name")] * 7 + ["created"]
    # 198 more make 199 of the user's 200: of 6 at once, exactly one gets in.
    for index in range(198):
        execute_sql(config, "INSERT INTO rule (id, owner_id, name, name_key, enabled, position, "
                            "match_field, match_algorithm, match_pattern, case_sensitive, "
                            "sources, add_tags, stop, created_at, updated_at) VALUES "
                            "(?, ?, ?, ?, ?, 0, 'text', 'any', 'x', ?, 'api', '[]', ?, "
                            "'2026-01-01 00:00:00.000000', '2026-01-01 00:00:00.000000')",
                    f"00000000-0000-4000-8000-{index:012d}", alice.id, f"r{index}", f"r{index}",
                    True, False, True)
    assert at_once(alice, [f"late{index}" for index in range(6)]) == \
        [("invalid", LIMIT, None)] * 5 + ["created"]
    assert query_sql(config, "SELECT count(*) FROM rule WHERE owner_id = ?", alice.id) == [(200,)]
    assert_refused(config, lambda: store.create_rule(alice, stop_rule("one more")), "invalid",
                   LIMIT, None)


def test_another_users_rule_is_not_found_and_anonymous_is_401(alice, bob, admin, anon, config):
    rule = add_rule(alice, "Mine", "x", actions={"stop": True})
    before = snapshot(config)
    patch = {"data": {"type": "rules", "attributes": {"name": "Taken"}}}
    for client in (bob, admin):
        assert client.get(f"/api/rules/{rule['id']}/").json() == NOT_FOUND
        assert client.patch(f"/api/rules/{rule['id']}/", patch).json() == NOT_FOUND
        assert client.delete(f"/api/rules/{rule['id']}/").json() == NOT_FOUND
        assert client.get(f"/api/rules/{rule['id']}/matches/").json() == NOT_FOUND
        assert client.post(f"/api/rules/{rule['id']}/apply/").json() == NOT_FOUND
        assert client.get("/api/rules/").json()["data"] == []
    for method, path in (("GET", "/api/rules/"), ("POST", "/api/rules/"),
                         ("GET", f"/api/rules/{rule['id']}/"),
                         ("PATCH", f"/api/rules/{rule['id']}/"),
                         ("DELETE", f"/api/rules/{rule['id']}/"),
                         ("GET", f"/api/rules/{rule['id']}/matches/"),
                         ("POST", f"/api/rules/{rule['id']}/apply/"),
                         ("GET", "/api/rule-runs/00000000-0000-4000-8000-000000000000/")):
        response = anon.request(method, path, json_body={"data": {"type": "rules"}})
        assert_error(response, 401, "not_authenticated",
                     "Authentication credentials were not provided.")
    assert snapshot(config) == before
    assert alice.get(f"/api/rules/{rule['id']}/").json()["data"] == rule


def test_a_rule_body_needs_the_json_api_media_type(alice, config):
    before = snapshot(config)
    response = alice.post("/api/rules/", rule_body("n", "x", actions={"stop": True}),
                          media="application/json")
    assert_error(response, 415, "unsupported_media_type", "Unsupported media type "
                 "'application/json' in the request; use application/vnd.api+json.")
    response = alice.post("/api/rules/", {"data": {"type": "tags", "attributes": {}}})
    assert_error(response, 409, "conflict", 'The resource type "tags" does not match `rules`.',
                 "/data/type")
    assert snapshot(config) == before
