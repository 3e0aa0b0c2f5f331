"""The dialect never answers 500 (api.md §17, "Bad input"): property-based requests (hypothesis,
bounded examples) to the routes that read what a client writes — the document list's filters,
ordering and paging with values of every kind (numbers of other scripts, junk dates, JSON that
is not a custom field query), document changes, bulk edits, labels, notes, the trash, settings,
uploads' fields — each answered with a status below 500 and, for a refusal, Django REST
framework's shape: `{"detail": "..."}` or `{"field": [...]}`."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.harness import samples
from tests.harness.database import snapshot
from tests.harness.paperless import API, JSON, dialect, make
from tests.harness.waiting import wait_processed
from tests.paperless.test_documents import post_document, uploaded

MAX_EXAMPLES = 100
FILTERS = ["title__icontains", "title__istartswith", "title_content", "query", "search",
           "tags__id", "tags__id__all", "tags__id__in", "tags__id__none", "is_tagged",
           "is_in_inbox", "correspondent__id", "correspondent__id__in",
           "correspondent__id__none", "correspondent__isnull", "document_type__id__in",
           "created__date__gt", "created__gte", "created__year", "added__date__lt",
           "archive_serial_number", "checksum__iexact", "original_filename__iexact",
           "custom_fields__id__all", "has_custom_fields", "custom_field_query", "id__in", "id",
           "mime_type", "owner__id", "owner__id__none", "owner__isnull", "shared_by__id",
           "more_like_id", "ordering", "fields", "truncate_content", "full_perms", "page",
           "page_size"]
# Values a client could send: numbers (of other scripts too), lists, dates, words, JSON.
VALUES = st.one_of(
    st.integers(min_value=-2**70, max_value=2**70).map(str),
    st.sampled_from(["", "³", "١٢", "1,2", "1,,x", "2024-13-01", "2024-02-29", "true", "no",
                     "-created", "nonsense", "last", "0", "[", '["AND", [["x", "exact", 1]]]',
                     '[1, "range", [1]]', '["OR", []]', "\x00", "%", "_"]),
    st.text(max_size=40))
JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70),
              st.floats(allow_nan=False), st.text(max_size=20)),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=8)
BODY_KEYS = ["title", "tags", "correspondent", "document_type", "created", "custom_fields",
             "archive_serial_number", "set_permissions", "owner", "name", "color", "parent",
             "matching_algorithm", "match", "is_inbox_tag", "data_type", "extra_data", "note",
             "documents", "method", "parameters", "action", "settings", "tasks", "username",
             "password"]
BODIES = st.dictionaries(st.sampled_from(BODY_KEYS), JSON_VALUES, max_size=5)
BULK = st.fixed_dictionaries({
    "documents": st.one_of(st.lists(st.integers(min_value=-5, max_value=50), max_size=4),
                           JSON_VALUES),
    "method": st.sampled_from(["add_tag", "remove_tag", "modify_tags", "set_correspondent",
                               "set_document_type", "modify_custom_fields", "set_permissions",
                               "rotate", "merge", "split", "delete_pages", "reprocess",
                               "set_storage_path", "nonsense"]),
    "parameters": st.dictionaries(st.sampled_from([
        "tag", "add_tags", "remove_tags", "correspondent", "document_type",
        "add_custom_fields", "remove_custom_fields", "set_permissions", "merge", "degrees",
        "pages", "metadata_document_id", "delete_originals", "owner"]), JSON_VALUES,
        max_size=4)})


def drf_shaped(response) -> bool:
    """A status below 500, and a refusal in DRF's shape."""
    if response.status_code >= 500:
        return False
    if response.status_code < 400 or response.status_code == 401:
        return True
    body = response.json()
    return isinstance(body, dict) and bool(body) and all(
        isinstance(value, str if key == "detail" else list) for key, value in body.items())


def run(test) -> None:
    settings(max_examples=MAX_EXAMPLES, deadline=None, database=None,
             suppress_health_check=list(HealthCheck))(test)()


def test_no_request_gets_a_server_error(alice):
    client = dialect(alice, 10)
    tag = make(client, "tags", name="Bills")
    number = uploaded(client, "letter.pdf", samples.pdf(["One", "Two"]))[
        "related_document_ids"][0]
    seen: list[Any] = []

    def check(response, what) -> None:
        seen.append(what)
        assert drf_shaped(response), (what, response.status_code, response.text[:300])

    @given(st.lists(st.tuples(st.sampled_from(FILTERS), VALUES), max_size=4),
           st.sampled_from([9, 10, None]))
    def listing(params, version):
        query = "&".join(f"{name}={quote(value, safe='')}" for name, value in params)
        check(dialect(alice, version).get(f"{API}/documents/?{query}"), ("list", query))

    @given(st.sampled_from([("PATCH", f"/documents/{number}/"), ("PUT", f"/documents/{number}/"),
                            ("POST", "/tags/"), ("PATCH", f"/tags/{tag['id']}/"),
                            ("POST", "/custom_fields/"), ("POST", "/correspondents/"),
                            ("POST", f"/documents/{number}/notes/"), ("POST", "/trash/"),
                            ("POST", "/ui_settings/"), ("POST", "/tasks/acknowledge/"),
                            ("POST", "/documents/selection_data/"), ("POST", "/token/"),
                            ("POST", "/groups/"), ("POST", "/users/")]), BODIES)
    def changes(route, body):
        method, path = route
        check(client.request(method, API + path, json_body=body, media=JSON), (route, body))

    @given(BULK)
    def bulk(body):
        check(client.post(f"{API}/documents/bulk_edit/", body, media=JSON), ("bulk", body))

    @given(st.lists(st.tuples(st.sampled_from(["title", "created", "correspondent", "tags",
                                                "document_type", "archive_serial_number",
                                                "custom_fields"]), VALUES), max_size=4))
    def upload(fields):
        check(post_document(client, "x.txt", samples.text("x\n"), fields), ("upload", fields))

    for test in (listing, changes, bulk, upload):
        run(test)
    assert len(seen) >= 2 * MAX_EXAMPLES  # the properties ran their examples



def test_null_characters_and_hostile_json_are_refused(alice, config):
    """What the fuzzer found on PostgreSQL (a null character reached the database: 500), and
    JSON Python refuses only by an exception of its own (too deep), each a 400 changing
    nothing."""
    client = dialect(alice, 10)
    number = uploaded(client, "a.txt", samples.text("a\n"))["related_document_ids"][0]
    assert wait_processed(alice, client.get(f"{API}/documents/{number}/").json()["dms_id"])[
        -1] == "succeeded"
    before = snapshot(config)
    listed = client.get(f"{API}/documents/?title__icontains=a%00")
    assert (listed.status_code, listed.json()) == (400, {
        "title__icontains": ["Null characters are not allowed."]})
    for raw in (b'{"title": "a\\u0000"}', b"[" * 100_000 + b"]" * 100_000,
                b'{"title": "\\ud800"}', b'{"title": NaN}'):
        response = client.request("PATCH", f"{API}/documents/{number}/", data=raw,
                                  headers={"Content-Type": JSON})
        assert (response.status_code, list(response.json())) == (400, ["detail"]), raw[:20]
        assert response.json()["detail"].startswith("JSON parse error - ")
    form = client.request("POST", f"{API}/token/", data=b"username=a%00&password=x",
                          headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert (form.status_code, form.json()) == (400, {
        "username": ["Null characters are not allowed."]})
    upload = post_document(client, "x.txt", samples.text("x\n"), [("title", "a\x00")])
    assert (upload.status_code, upload.json()) == (400, {
        "title": ["Null characters are not allowed."]})
    assert snapshot(config) == before
