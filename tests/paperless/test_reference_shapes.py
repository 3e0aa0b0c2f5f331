"""The dialect's JSON against what real Paperless-ngx servers answered (api.md §17): for each
route a client reads, the same keys at every level (an object's keys, a list's items', a page's),
in version 9 (as Paperless-ngx 2.20.15 answered) and 10 (3.0.5). Values are dms's own (its
library is not the recording's); which values they take is the other tests'. The one key dms
adds is `dms_id`.

The keys of the recorded answers are in reference_shapes.json beside this file, taken from the
recordings in ../shared/reference/paperless-ngx-api/ (keys only) by
`python -m tests.paperless.test_reference_shapes` in a checkout beside that folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.harness import samples
from tests.harness.paperless import API, JSON, dialect, make
from tests.harness.waiting import wait_processed
from tests.paperless.test_documents import uploaded

REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference" / "paperless-ngx-api"
SHAPES = Path(__file__).with_name("reference_shapes.json")
RELEASES = {9: "v2.20.15", 10: "v3.0.5"}
OURS_ONLY = {"dms_id"}


def recorded(version: int, name: str, method: str, path: str) -> Any:
    """The JSON of the first recorded exchange of `method` on `path` (query included or not)
    that answered 2xx with JSON, at the recording's default version or `version`."""
    exchanges = json.loads((REFERENCE / RELEASES[version] / f"{name}.json").read_text())
    for exchange in exchanges["exchanges"]:
        request, response = exchange["request"], exchange["response"]
        accept = request["headers"].get("Accept", "")
        asked = int(accept.split("version=")[1]) if "version=" in accept else version
        if request["method"] == method and request["path"].split("?")[0] == path \
                and asked == version and 200 <= response["status"] < 300 \
                and response.get("json") is not None:
            return response["json"]
    raise LookupError(f"{RELEASES[version]} has no {method} {path} in {name}.json")


def shape(value: Any) -> Any:
    """The keys at every level: an object's, the union of a list's items' shapes."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items() if key not in OURS_ONLY}
    if isinstance(value, list):
        merged: dict[str, Any] = {}
        for item in value:
            found = shape(item)
            if not isinstance(found, dict):
                return "list"
            merged.update({key: merged.get(key) or part for key, part in found.items()})
        return merged or "list"
    return "value"


def differences(ours: Any, theirs: Any, at: str = "") -> list[str]:
    """Where the keys differ (a list known on one side only: not compared deeper)."""
    if isinstance(theirs, dict) and isinstance(ours, dict):
        found = [f"{at}.{key} missing" for key in theirs if key not in ours]
        found += [f"{at}.{key} extra" for key in ours if key not in theirs]
        for key in theirs.keys() & ours.keys():
            found += differences(ours[key], theirs[key], f"{at}.{key}")
        return found
    return []


def library(alice, admin) -> dict[str, Any]:
    """One user's small library over the dialect: a tagged, typed, noted document with a field
    value, and a group (the shapes need each kind once)."""
    client = dialect(alice, 10)
    tag = make(client, "tags", name="Bills", is_inbox_tag=True)
    acme = make(client, "correspondents", name="ACME")
    kind = make(client, "document_types", name="Invoice")
    field = make(client, "custom_fields", name="Amount", data_type="monetary")
    task = uploaded(client, "invoice.pdf", samples.pdf(["Invoice from ACME, total EUR 5"]),
                    [("title", "invoice")])
    number = task["related_document_ids"][0]
    assert wait_processed(alice, client.get(f"{API}/documents/{number}/").json()["dms_id"]
                          )[-1] == "succeeded"
    changed = client.patch(f"{API}/documents/{number}/", {
        "tags": [tag["id"]], "correspondent": acme["id"], "document_type": kind["id"],
        "custom_fields": [{"field": field["id"], "value": "EUR5.00"}]}, media=JSON)
    assert changed.status_code == 200, changed.text
    client.post(f"{API}/documents/{number}/notes/", {"note": "Paid."}, media=JSON)
    make(dialect(admin, 10), "groups", name="Family")
    make(client, "saved_views", name="Inbox invoices", show_on_dashboard=True,
         show_in_sidebar=True, sort_field="created", sort_reverse=True,
         filter_rules=[{"rule_type": 6, "value": str(tag["id"])}], display_mode="table",
         display_fields=["title", "created"], page_size=25)
    make(client, "share_links", document=number, file_version="original", expiration=None)
    return {"number": number, "task": task["task_id"]}


# (recording file, method, path as recorded, our path: {n} the document's number, {t} the task)
READS = [
    ("document_detail", "GET", "/api/documents/1/", "/documents/{n}/"),
    ("documents_list", "GET", "/api/documents/", "/documents/"),
    ("notes", "GET", "/api/documents/1/notes/", "/documents/{n}/notes/"),
    ("metadata", "GET", "/api/documents/1/metadata/", "/documents/{n}/metadata/"),
    ("tags", "GET", "/api/tags/", "/tags/"),
    ("correspondents", "GET", "/api/correspondents/", "/correspondents/"),
    ("document_types", "GET", "/api/document_types/", "/document_types/"),
    ("custom_fields", "GET", "/api/custom_fields/", "/custom_fields/"),
    ("statistics", "GET", "/api/statistics/", "/statistics/"),
    ("ui_settings", "GET", "/api/ui_settings/", "/ui_settings/"),
    ("users", "GET", "/api/users/", "/users/"),
    ("groups", "GET", "/api/groups/", "/groups/"),
    ("remote_version", "GET", "/api/remote_version/", "/remote_version/"),
    ("search", "GET", "/api/search/", "/search/?query=invoice"),
    ("tasks", "GET", "/api/tasks/", "/tasks/?task_id={t}"),
    ("saved_views", "GET", "/api/saved_views/", "/saved_views/"),
]
VERSION_10_ONLY = [
    ("trash", "GET", "/api/trash/", "/trash/"),
    ("suggestions", "GET", "/api/documents/1/suggestions/", "/documents/{n}/suggestions/"),
    ("profile", "GET", "/api/profile/", "/profile/"),
    ("history", "GET", "/api/documents/1/history/", "/documents/{n}/history/"),
    ("selection_data", "POST", "/api/documents/selection_data/", "/documents/selection_data/"),
    ("share_links", "GET", "/api/documents/1/share_links/", "/documents/{n}/share_links/"),
]
# What dms answers differently on purpose (docs/paperless.md), by recording and place.
KNOWN = {
    ("ui_settings", ".settings"): "the app's own settings, as it saved them",
    ("history", ".changes."): "the fields a change changed",
    ("tasks", ".results.input_data.overrides."): "what the upload set",
}


def test_the_same_keys_as_paperless_ngx(alice, admin):
    made = library(alice, admin)
    expected = json.loads(SHAPES.read_text())
    found = {}
    for version in (9, 10):
        for read in READS + (VERSION_10_ONLY if version == 10 else []):
            name, method, theirs_path, ours_path = read
            theirs = expected[f"{name} v{version}"]
            client = dialect(admin if name in ("users", "groups") else alice, version)
            path = API + ours_path.format(n=made["number"], t=made["task"])
            answer = client.post(path, {"documents": [made["number"]]}, media=JSON) \
                if method == "POST" else client.get(path)
            assert answer.status_code == 200, (name, answer.text)
            missed = [difference for difference in differences(shape(answer.json()), theirs)
                      if not any(difference.startswith(where)
                                 for (file, where) in KNOWN if file == name)]
            if missed:
                found[f"{name} v{version}"] = missed
    assert found == {}


def _record_shapes() -> None:
    """reference_shapes.json from the recordings (run when they change)."""
    shapes = {}
    for version in (9, 10):
        for name, method, theirs_path, _ in READS + (VERSION_10_ONLY if version == 10 else []):
            shapes[f"{name} v{version}"] = shape(recorded(version, name, method, theirs_path))
    SHAPES.write_text(json.dumps(shapes, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    _record_shapes()
