"""`dms import --from papermerge` (api.md §18) on both engines, over a Papermerge 2.1 backup
written as its `backup` command writes it (tests/harness/papermerge_backup.py): users with their
passwords, the folder tree (empty folders and folder tags too), documents with every version in
order and each page's text, tags — read back whole; a second run adds nothing; an archive that is
no 2.1 backup is refused with a sentence."""

from __future__ import annotations

import io
import json
import tarfile

import pytest

from dms.db import database
from dms.db.models import DocumentVersion, Node, User
from dms.domain import accounts, tags
from dms.domain.credentials import LoginThrottle
from dms.intake import papermerge
from tests.harness.domaintier import new_user
from tests.harness.paperless_export import hashed
from tests.harness.papermerge_backup import document, folder, user, write_backup


def rows(sql: str, params: tuple = ()) -> list[tuple]:
    return [tuple(row) for row in database.execute_sql(sql, params).fetchall()]


@pytest.fixture
def admin(services):
    return new_user("admin", is_superuser=True, is_staff=True)


def backup(tmp_path):
    return write_backup(tmp_path / "backup.tar.gz", [
        user("tata", hashed("tata-password"), [
            folder(".home/Receipts/", tags=["important"]),
            folder(".home/Receipts/2023/"),
            folder(".home/Empty/"),
            document("ticket", ".home/Receipts/2023/ticket", [["Train ticket", "page two"],
                                                              ["Train ticket OCR", "page 2"]],
                     tags=["important", "travel"]),
            document("letter", ".inbox/letter", [["Dear tata"]]),
        ])])


def tree_of(owner: User) -> list[tuple[str, str, str]]:
    """(path from the special folder, kind, tags) of every node of the owner, sorted."""
    nodes = {node.id: node for node in Node.select().where(Node.owner == owner.id)}

    def path(node: Node) -> str:
        steps = []
        while node is not None:
            steps.append(node.title)
            node = nodes.get(node.parent_id)
        return "/".join(reversed(steps))
    labels = tags.tags_of(list(nodes), owner.id)
    return sorted((path(node), node.kind, ",".join(sorted(t["name"] for t in labels[node.id])))
                  for node in nodes.values() if node.special is None)


def test_a_backup_comes_in_whole_and_a_second_run_adds_nothing(services, admin, tmp_path):
    path = backup(tmp_path)
    report = papermerge.run(services, path, admin, None, False)
    assert (report.exit_status, report.skipped, report.problems) == (0, [], [])
    assert (report.version, report.counts["users"], report.counts["documents"],
            report.counts["versions"], report.counts["folders"], report.counts["tags"]) == \
        ("2.1.9", 1, 2, 1, 3, 2)
    tata = User.get(User.username == "tata")
    assert tree_of(tata) == [
        (".home/Empty", "folder", ""),
        (".home/Receipts", "folder", "important"),
        (".home/Receipts/2023", "folder", ""),
        (".home/Receipts/2023/ticket", "document", "important,travel"),
        (".inbox/letter", "document", ""),
    ]
    ticket = Node.get(Node.owner == tata.id, Node.title == "ticket")
    versions = list(DocumentVersion.select().where(DocumentVersion.document == ticket.id)
                    .order_by(DocumentVersion.number))
    assert [(v.number, v.file_name, v.page_count) for v in versions] == \
        [(1, "ticket.pdf", 2), (2, "ticket.pdf", 2)]
    assert rows("SELECT number, text FROM page WHERE version_id = ? ORDER BY number",
                (versions[1].id,)) == [(1, "Train ticket OCR"), (2, "page 2")]
    assert ticket.ocr_status == "succeeded"
    accounts.authenticate("tata", "tata-password", "127.0.0.1", LoginThrottle())
    before = rows("SELECT count(*) FROM node"), rows("SELECT count(*) FROM document_version")
    again = papermerge.run(services, path, admin, None, False)
    assert (again.exit_status, again.counts["documents"], again.counts["already there"]) == \
        (0, 0, 2)
    assert (rows("SELECT count(*) FROM node"),
            rows("SELECT count(*) FROM document_version")) == before


def test_a_dry_run_changes_nothing(services, admin, tmp_path):
    before = rows("SELECT count(*) FROM node")
    report = papermerge.run(services, backup(tmp_path), admin, None, True)
    assert (report.exit_status, report.counts["documents"], report.counts["users"]) == (0, 2, 1)
    assert rows("SELECT count(*) FROM node") == before


def test_an_archive_that_is_no_2_1_backup_is_refused(services, admin, tmp_path):
    legacy = tmp_path / "legacy.tar"
    with tarfile.open(legacy, "w") as archive:
        info = tarfile.TarInfo("backup.json")
        raw = b'{"created": "2021-05-01", "documents": []}'
        info.size = len(raw)
        archive.addfile(info, io.BytesIO(raw))
    report = papermerge.run(services, legacy, admin, None, False)
    assert (report.exit_status, report.problems) == (
        2, ["backup.json has no list of users: is it a Papermerge 2.1 backup?"])
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not a tar")
    report = papermerge.run(services, junk, admin, None, False)
    assert report.exit_status == 2
    assert report.problems[0].startswith("junk.tar.gz is not a tar archive that can be read")


def test_a_backup_with_versions_without_numbers_skips_those_documents(services, admin, tmp_path):
    """A hostile or damaged backup.json (a version's number missing) is named, never a crash."""
    entry = user("tata", hashed("tata-password"), [document("ticket", ".home/ticket",
                                                            [["Train ticket"]])])
    path = write_backup(tmp_path / "backup.tar.gz", [entry])
    broken = tmp_path / "broken.tar.gz"
    with tarfile.open(path) as source, tarfile.open(broken, "w:gz") as target:
        for member in source:
            data = source.extractfile(member) if member.isfile() else None
            if member.name == "backup.json":
                backup = json.loads(data.read())
                for version in backup["users"][0]["nodes"][-1]["versions"]:
                    del version["number"]
                raw = json.dumps(backup).encode()
                member.size, data = len(raw), io.BytesIO(raw)
            target.addfile(member, data)
    report = papermerge.run(services, broken, admin, None, False)
    assert (report.exit_status, report.skipped) == (
        1, [("document '.home/ticket'", "its first file (version 1) is not in the archive")])
    assert rows("SELECT count(*) FROM node WHERE kind = 'document'") == [(0,)]
