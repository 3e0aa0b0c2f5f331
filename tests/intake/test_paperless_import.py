"""`dms import --from paperless` (api.md §18) on both engines, over exports written as each release
family's `document_exporter` writes them (tests/harness/paperless_export.py): users with their
Django password hashes, labels, nested tags, custom fields of several types, notes with authors,
dates, serial numbers, files with their checksums and archive PDFs, 3.x versions and trash, saved
views — read back whole; a second run adds nothing; a damaged or missing file skips its document
and names it; a hostile manifest is refused with a sentence; a dry run changes nothing."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import zipfile
from zoneinfo import ZoneInfo

import pytest

from dms.db import database
from dms.db.models import DocumentVersion, Node, Note, User
from dms.domain import accounts, tags
from dms.domain.credentials import LoginThrottle
from dms.domain.metadata import document as document_metadata
from dms.intake.paperless import run
from tests.harness.domaintier import new_user
from tests.harness.paperless_export import RELEASES, Doc, hashed, major, write_export
from tests.harness.processes import config_args, environment
from tests.harness.waiting import wait_for

BERLIN = ZoneInfo("Europe/Berlin")


def rows(sql: str, params: tuple = ()) -> list[tuple]:
    return [tuple(row) for row in database.execute_sql(sql, params).fetchall()]


def library(release: str) -> dict:
    """The same small library in every release's words."""
    nested = major(release) >= (2, 19)
    docs = [
        Doc(1, "ACME invoice", "Invoice 4711 from ACME", tags=[1, 2] if nested else [2],
            correspondent=1, document_type=1, asn=7, notes=[(2, "Call back on Monday")],
            values={1: "EUR120.50", 2: "Paid", 3: [2], 4: "Meter 4711", 5: 12, 6: 2.5,
                    7: "2024-04-01", 8: True, 9: "https://example.org/a",
                    **({10: "Long\ntext"} if major(release) >= (2, 19) else {})},
            versions=["Invoice 4711 signed"] if major(release) >= (3, 0) else []),
        Doc(2, "Power bill", "Electricity bill for March", tags=[1], created="2024-11-02",
            values={2: "Open"}),
        Doc(3, "Team memo", "Team memo about planning", owner=None, archive=False,
            deleted=major(release) >= (3, 0), created="2023-12-31"),
    ]
    return {"docs": docs, "tags": [(1, "Finance"), (2, "paid", 1 if nested else None)],
            "correspondents": [(1, "ACME")], "document_types": [(1, "Invoice")],
            "fields": {1: ("Amount", "monetary", None), 2: ("Status", "select", ["Open", "Paid"]),
                       3: ("Related", "documentlink", None), 4: ("Memo", "string", None),
                       5: ("Pages", "integer", None), 6: ("Rate", "float", None),
                       7: ("Due", "date", None), 8: ("Settled", "boolean", None),
                       9: ("Link", "url", None),
                       **({10: ("Summary", "longtext", None)} if major(release) >= (2, 19)
                          else {})},
            "views": [(1, "ACME paid", [(3, "1"), (6, "2")]),
                      (2, "By storage path", [(25, "1")])],
            "users": [(1, "admin", "pbkdf2_sha256$600000$c2FsdA$abc=", True),
                      (2, "alice", hashed("alice-password"), False),
                      (3, "bob", hashed("bob-password"), False)],
            "groups": [(1, "Household")], "memberships": {2: [1], 3: [1]},
            "shares": [("user", 3, "view_document", 1), ("group", 1, "change_document", 2),
                       ("user", 3, "view_tag", 1)]}


def export(tmp_path, release: str, **options):
    return write_export(tmp_path / "export", release, **library(release), **options)


def import_export(services, path, **options) -> run.Report:
    admin = User.get(User.username == "admin")
    return run.run(services, path, admin, run.Options(time_zone=BERLIN, **options))


@pytest.fixture
def admin(services):
    return new_user("admin", is_superuser=True, is_staff=True)


def documents_of(user: User) -> dict[str, Node]:
    paperless = rows("SELECT n.id FROM node AS n JOIN node AS p ON p.id = n.parent_id "
                          "WHERE p.title = 'Paperless' AND n.owner_id = ?", (user.id,))
    return {node.title: node for node in Node.select().where(
        Node.id.in_([row[0] for row in paperless]))}


def about(node: Node) -> dict:
    facts = document_metadata.about([node.id])[node.id]
    names = {"correspondent": "SELECT name FROM correspondent WHERE id = ?",
             "document_type": "SELECT name FROM document_type WHERE id = ?"}
    for name, sql in names.items():
        if facts[name] is not None:
            facts[name] = rows(sql, (facts[name],))[0][0]
    fields = {row[0]: row[1] for row in rows("SELECT id, name FROM custom_field")}
    facts["custom_fields"] = {fields[item["field"]]: item["value"]
                              for item in facts["custom_fields"]}
    return {key: facts[key] for key in ("correspondent", "document_type", "document_date",
                                        "archive_serial_number", "custom_fields")}


@pytest.mark.parametrize("release", RELEASES)
def test_each_release_family_comes_in_whole(services, admin, tmp_path, release):
    report = import_export(services, export(tmp_path, release))
    version_3, fields = major(release) >= (3, 0), major(release) >= (2, 1)
    assert (report.exit_status, report.skipped) == (0, []), report.lines(False)
    assert report.version == release
    alice = User.get(User.username == "alice")
    # Owners from 1.14 on; before, and without an owner, the first superuser's.
    owner = alice if major(release) >= (1, 14) else admin
    mine, admins = documents_of(owner), documents_of(admin)
    assert sorted(mine) == ["ACME invoice", "Power bill"] + (["Team memo"] if owner == admin
                                                             else [])
    assert sorted(admins) == sorted(["Team memo"] + (["ACME invoice", "Power bill"]
                                                     if owner == admin else []))
    invoice, bill, memo = mine["ACME invoice"], mine["Power bill"], admins["Team memo"]
    # Dates: the day on the paper (a Berlin server's day before 2.16) and the upload moment.
    assert about(invoice) == {
        "correspondent": "ACME", "document_type": "Invoice", "document_date": "2024-05-01",
        "archive_serial_number": 7,
        "custom_fields": {"Amount": "EUR120.50", "Status": "opt0000000000001" if major(
            release) >= (2, 14) else invoice_option(owner, "Paid"),
            "Memo": "Meter 4711", "Related": [bill.id], "Pages": 12, "Rate": 2.5,
            "Due": "2024-04-01", "Settled": True, "Link": "https://example.org/a",
            **({"Summary": "Long\ntext"} if major(release) >= (2, 19) else {})}
        if fields else {}}
    assert about(bill)["document_date"] == "2024-11-02"
    assert about(memo)["document_date"] == "2023-12-31"
    assert invoice.created_at.replace(tzinfo=dt.UTC) == dt.datetime(2024, 5, 2, 8, 15, 1, 873000,
                                                                     tzinfo=dt.UTC)
    # Files and text: the original checked, the archive as the searchable PDF, nothing queued.
    versions = list(DocumentVersion.select().where(DocumentVersion.document == invoice.id)
                    .order_by(DocumentVersion.number))
    # The name it was uploaded under (1.9 on), else its name in the export.
    first_name = "scan-1.pdf" if major(release) >= (1, 9) else "2024-05-01 ACME invoice.pdf"
    assert [(v.number, v.file_name, v.searchable_size is not None) for v in versions] == \
        [(1, first_name, True)] + ([(2, "scan-1001.pdf", True)] if version_3 else [])
    assert invoice.ocr_status == "succeeded" and memo.ocr_status == "succeeded"
    assert rows("SELECT text FROM page WHERE version_id = ?", (versions[0].id,)) == \
        [("Invoice 4711 from ACME",)]
    assert DocumentVersion.get(DocumentVersion.document == memo.id).searchable_size is None
    # Labels file documents by themselves as they did there (the harness: "any" word, no pattern
    # given for tags and correspondents alike).
    assert [(algorithm, match, bool(insensitive)) for algorithm, match, insensitive in rows(
        "SELECT matching_algorithm, match, is_insensitive FROM correspondent")] == \
        [("any", "", True)]
    assert [(algorithm, bool(inbox)) for algorithm, inbox in rows(
        "SELECT matching_algorithm, is_inbox_tag FROM tag WHERE name = 'paid' AND owner_id = ?",
        (owner.id,))] == [("any", False)]
    # Tags (nested from 2.19), notes with their author and day.
    assert sorted(t["name"] for t in tags.tags_of([invoice.id], owner.id)[invoice.id]) == \
        (["Finance", "paid"] if major(release) >= (2, 19) else ["paid"])
    if major(release) >= (2, 19):
        assert rows("SELECT p.name FROM tag AS t JOIN tag AS p ON p.id = t.parent_id "
                         "WHERE t.name = 'paid'") == [("Finance",)]
    notes = list(Note.select().where(Note.document == invoice.id))
    assert [(n.note, n.user_id, n.created_at.date().isoformat()) for n in notes] == \
        ([("Call back on Monday", alice.id, "2024-06-01")] if major(release) >= (1, 9) else [])
    # 3.x: the trashed memo is in dms's trash.
    assert (memo.trash_id is not None) == version_3
    # Alice logs in with her Paperless-ngx password, which is then hashed with dms's scheme.
    assert alice.password_hash.startswith("pbkdf2_sha256$")
    accounts.authenticate("alice", "alice-password", "127.0.0.1", LoginThrottle())
    assert User.get_by_id(alice.id).password_hash.startswith("scrypt$")
    # The saved view whose rules translate is a saved search; the other is named.
    assert rows("SELECT name, query, sort FROM saved_search") == \
        [("ACME paid", 'correspondent:"ACME" tag:"paid"', "-document_date")]
    assert report.left_out == ["saved view 'By storage path': filter rule 25 has no equivalent "
                               "in dms's query language (not imported)"]
    assert report.problems == []
    assert report.counts["documents"] == 3 and report.counts["users"] == 2
    assert report.counts["trash"] == version_3
    # Groups with their members; object permissions (1.17 on) as grants by the owner.
    household = rows("SELECT g.id FROM user_group AS g WHERE g.name = 'Household'")
    assert len(household) == 1
    members = rows("SELECT u.username FROM group_member AS m JOIN \"user\" AS u "
                   "ON u.id = m.user_id ORDER BY u.username")
    assert members == [("alice",), ("bob",)]
    shared = rows("SELECT n.title, coalesce(u.username, g.name), r.role FROM node_grant AS r "
                  "JOIN node AS n ON n.id = r.node_id LEFT JOIN \"user\" AS u "
                  "ON u.id = r.user_id LEFT JOIN user_group AS g ON g.id = r.group_id "
                  "ORDER BY n.title")
    assert shared == ([("ACME invoice", "bob", "viewer"), ("Power bill", "Household", "editor")]
                      if major(release) >= (1, 17) else [])
    assert report.not_imported.get("permissions on tags, labels and views", 0) == \
        (1 if major(release) >= (1, 17) else 0)


def invoice_option(user: User, label: str) -> str:
    extra = rows("SELECT extra_data FROM custom_field WHERE owner_id = ? AND name = ?",
                      (user.id, "Status"))[0][0]
    return next(o["id"] for o in json.loads(extra)["select_options"] if o["label"] == label)


@pytest.mark.parametrize(("prefix", "split", "as_zip"), [(True, True, False), (False, True, True),
                                                         (True, False, True)])
def test_layouts_and_a_second_run(services, admin, tmp_path, prefix, split, as_zip):
    path = export(tmp_path, "2.20.15", prefix=prefix, split=split, as_zip=as_zip)
    first = import_export(services, path)
    assert (first.exit_status, first.counts["documents"], first.counts["notes"]) == (0, 3, 1)
    before = rows("SELECT count(*) FROM node"), rows("SELECT count(*) FROM tag"), \
        rows("SELECT count(*) FROM node_grant"), rows("SELECT count(*) FROM group_member")
    assert before[2:] == ([(2,)], [(2,)])
    second = import_export(services, path)
    assert (second.exit_status, second.counts["documents"], second.counts["already there"]) == \
        (0, 0, 3)
    assert (rows("SELECT count(*) FROM node"), rows("SELECT count(*) FROM tag"),
            rows("SELECT count(*) FROM node_grant"),
            rows("SELECT count(*) FROM group_member")) == before


def test_damaged_and_missing_files_skip_their_document_only(services, admin, tmp_path):
    path = export(tmp_path, "2.20.15")
    manifest = json.loads((path / "manifest.json").read_text())
    names = {r["pk"]: r["__exported_file_name__"] for r in manifest
             if r["model"] == "documents.document"}
    (path / names[2]).write_bytes(b"%PDF-1.4 damaged")
    (path / names[3]).unlink()
    report = import_export(services, path)
    assert report.exit_status == 1
    assert report.skipped == [
        ("document 2 ('Power bill')", "its file does not match the manifest's checksum "
                                      "(damaged?)"),
        ("document 3 ('Team memo')", "its file is not in the export (exported with "
                                     "--data-only?)")]
    assert sorted(documents_of(User.get(User.username == "alice"))) == ["ACME invoice"]


def test_a_dry_run_changes_nothing(services, admin, tmp_path):
    before = rows("SELECT count(*) FROM node"), rows("SELECT count(*) FROM \"user\"")
    report = import_export(services, export(tmp_path, "3.0.5"), dry_run=True)
    assert (report.exit_status, report.counts["documents"], report.counts["users"]) == (0, 3, 2)
    assert (rows("SELECT count(*) FROM node"),
            rows("SELECT count(*) FROM \"user\"")) == before


@pytest.mark.parametrize(("manifest", "problem"), [
    ([{"model": "documents.document", "pk": 1, "fields": {"title": "x", "checksum": "0"},
       "__exported_file_name__": "../../etc/passwd"}],
     ("document 1 ('x')", "a file name that leads outside the export ('../../etc/passwd')")),
    ([{"model": "documents.document", "pk": 1, "fields": {"title": "x", "checksum": "0"},
       "__exported_file_name__": "/etc/passwd"}],
     ("document 1 ('x')", "a file name that leads outside the export ('/etc/passwd')")),
])
def test_names_that_lead_outside_are_refused(services, admin, tmp_path, manifest, problem):
    (tmp_path / "export").mkdir()
    (tmp_path / "export" / "manifest.json").write_text(json.dumps(manifest))
    report = import_export(services, tmp_path / "export")
    assert (report.exit_status, report.skipped) == (2, [problem])


@pytest.mark.parametrize(("content", "problem"), [
    ("[" * 100_000, "manifest.json nests deeper than a manifest does."),
    ('{"model": 1}', "manifest.json is not a JSON list."),
    ("[{}, ", "manifest.json is not valid JSON (Expecting value)."),
])
def test_a_hostile_manifest_is_refused_with_a_sentence(services, admin, tmp_path, content,
                                                       problem):
    (tmp_path / "export").mkdir()
    (tmp_path / "export" / "manifest.json").write_text(content)
    report = import_export(services, tmp_path / "export")
    assert (report.exit_status, report.problems) == (2, [problem])
    assert rows("SELECT count(*) FROM node WHERE kind = 'document'") == [(0,)]


def test_the_command_line(services, admin, config, tmp_path):
    path = export(tmp_path, "1.17.4", as_zip=True)
    result = subprocess.run(
        [sys.executable, "-m", "dms", "import", "--from", "paperless", str(path),
         "--time-zone", "Europe/Berlin", *config_args(config)],
        env=environment(), capture_output=True, text=True, timeout=300)
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    assert result.stdout.splitlines() == [
        "Paperless-ngx export of release 1.17.4:",
        "  users: 2 imported", "  groups: 1 imported", "  documents: 3 imported",
        "  notes: 1 imported", "  grants: 2 imported", "  tags: 2 imported",
        "  correspondents: 1 imported", "  document types: 1 imported",
        "  saved searches: 1 imported", "  not imported: 1 permissions on tags, labels and views",
        "  saved view 'By storage path': filter rule 25 has no equivalent in dms's query "
        "language (not imported)"]
    assert zipfile.is_zipfile(path)


def test_killed_mid_import_then_run_again_each_document_once(services, admin, config, tmp_path):
    docs = [Doc(pk, f"Letter {pk:03d}", f"Letter number {pk} about something") for pk in
            range(1, 121)]
    path = write_export(tmp_path / "export", "2.20.15", docs)
    command = [sys.executable, "-m", "dms", "import", "--from", "paperless", str(path),
               *config_args(config)]
    process = subprocess.Popen(command, env=environment(), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: rows("SELECT count(*) FROM node WHERE kind = 'document'")[0][0] >= 10,
                 timeout=120, interval=0.01, message="no document imported in time")
    finally:
        process.kill()
        process.wait()
    landed = rows("SELECT count(*) FROM node WHERE kind = 'document'")[0][0]
    assert 10 <= landed < 120  # killed in the middle
    again = subprocess.run(command, env=environment(), capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"  documents already there: {landed:,}" in again.stdout.splitlines()
    titles = [title for (title,) in rows("SELECT title FROM node WHERE kind = 'document' "
                                         "ORDER BY title")]
    assert titles == [f"Letter {pk:03d}" for pk in range(1, 121)]
    assert rows("SELECT count(*) FROM document_version")[0][0] == 120


@pytest.mark.config(max_upload_mb=1)
def test_a_zip_bomb_is_taken_no_further_than_the_upload_limit(services, admin, tmp_path):
    """A member that inflates past DMS_MAX_UPLOAD_MB stops there: that document is skipped."""
    bomb = b"%PDF-1.4\n" + b"0" * (8 * 2**20)
    path = write_export(tmp_path / "export", "2.20.15", [
        Doc(1, "Bomb", "boom", data=bomb, archive=False), Doc(2, "Fine", "fine")], as_zip=True)
    assert path.stat().st_size < 100_000
    report = import_export(services, path)
    assert report.exit_status == 1
    assert report.skipped == [("document 1 ('Bomb')", "its file is refused: The file is larger "
                                                      "than the maximum of 1 MiB.")]
    assert rows("SELECT title FROM node WHERE kind = 'document'") == [("Fine",)]


def test_the_manifest_reader_holds_one_bounded_item_at_a_time():
    """Items are decoded one by one from a stream; one over the limit is refused by its size
    (the importer's limit is 256 MiB of text: a document's content)."""
    import io

    from dms.intake.paperless import jsonstream

    items = [{"model": "documents.note", "fields": {"note": "x" * 500}}] * 3
    text = json.dumps(items)
    assert list(jsonstream.array_items(io.StringIO(text), 1000, "m.json")) == items
    with pytest.raises(jsonstream.ManifestError) as refused:
        list(jsonstream.array_items(io.StringIO(json.dumps([{"note": "x" * 5000}])), 1000,
                                    "m.json"))
    assert str(refused.value) == "m.json holds an item of more than 1,000 characters."
