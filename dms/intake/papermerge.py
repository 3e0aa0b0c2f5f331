"""`dms import --from papermerge BACKUP.tar.gz` (api.md §18): a Papermerge 2.1 backup (its
`backup` command, releases 2.1.5 to 2.1.9) becomes dms's users, folder tree, documents with every
version and each page's text, and tags — the model dms's API already shares with Papermerge.

The archive: the files of each version under `docs/user_<id>/document_<id>/v<n>/<name>` (the
`file_path` of each version in `backup.json`), then `backup.json` last: `{"created", "version",
"users": [{"username", "password", ..., "tags": [...], "nodes": [...]}]}`, every node with its
`breadcrumb` (titles from `.home` or `.inbox`, a folder's ending in `/`), a document with its
`versions` (`number`, `file_name`, `pages` with their `text`) and its tags by name.

Two passes over the tar stream (a gzip stream cannot be read backwards cheaply): the first finds
and reads `backup.json` (at most MAX_JSON_BYTES), the second takes the files in the order they
come, which is each document's versions in order: its first file makes the document, the next ones
its further versions. Nothing is OCR'd: each page keeps its text. A document the owner holds
already (the same first file, by SHA-256) is not imported again. Names in the archive are only
looked up, never made paths.
"""

from __future__ import annotations

import datetime as dt
import json
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from dms.db.models import Node, Tag, User
from dms.domain import imported, tags, tree
from dms.domain.tagfilter import name_key
from dms.errors import DomainError
from dms.intake.paperless.manifest import parse_moment
from dms.intake.report import Progress, Report

if TYPE_CHECKING:
    from dms.domain.services import Services

SOURCE = "papermerge"
BACKUP_JSON = "backup.json"
MAX_JSON_BYTES = 1 << 30
MAX_TAGS = 1000  # per user
SPECIAL = {".home": Node.HOME, ".inbox": Node.INBOX}


class BackupError(Exception):
    """The archive cannot be read: the sentence says why."""


@dataclass
class Version:
    owner: dict[str, Any]
    document: dict[str, Any]
    number: int
    last: bool


def run(services: Services, path: Path, default_owner: User, only_user: User | None,
        dry_run: bool, progress_stream: TextIO | None = None) -> Report:
    report = Report("Papermerge backup")
    try:
        backup = _backup_json(path)
        report.version = backup.get("version") if isinstance(backup.get("version"), str) \
            else None
        _Restore(services, backup, default_owner, only_user, dry_run, report,
                 progress_stream).run(path)
    except BackupError as error:
        report.readable = False
        report.problems.append(str(error))
    return report


def _members(path: Path) -> Iterator[tuple[tarfile.TarFile, tarfile.TarInfo]]:
    try:
        with tarfile.open(path, "r:*") as archive:
            for member in archive:
                yield archive, member
    except (tarfile.TarError, OSError, EOFError) as error:
        raise BackupError(f"{path.name} is not a tar archive that can be read ({error}).") \
            from None


def _backup_json(path: Path) -> dict[str, Any]:
    for archive, member in _members(path):
        if member.name.lstrip("./") == BACKUP_JSON and member.isfile():
            if member.size > MAX_JSON_BYTES:
                raise BackupError("backup.json is larger than a backup writes it.")
            stream = archive.extractfile(member)
            assert stream is not None  # a regular file
            try:
                backup = json.loads(stream.read(MAX_JSON_BYTES + 1))
            except (ValueError, RecursionError):
                raise BackupError("backup.json is not valid JSON.") from None
            if not isinstance(backup, dict) or not isinstance(backup.get("users"), list):
                raise BackupError("backup.json has no list of users: is it a Papermerge 2.1 "
                                  "backup?")
            return backup
    raise BackupError(f"There is no backup.json in {path.name}: is it a Papermerge 2.1 backup "
                      "(made by its `backup` command)?")


class _Restore:
    def __init__(self, services: Services, backup: dict[str, Any], default_owner: User,
                 only_user: User | None, dry_run: bool, report: Report,
                 progress_stream: TextIO | None):
        self.services, self.backup, self.report = services, backup, report
        self.default, self.only, self.dry_run = default_owner, only_user, dry_run
        self.versions: dict[str, Version] = {}  # file_path -> its version
        count = 0
        for user in backup["users"]:
            if not isinstance(user, dict):
                continue
            for node in user.get("nodes") or []:
                if isinstance(node, dict) and node.get("ctype") == "document":
                    count += 1
                    numbers: list[int] = [
                        v["number"] for v in node.get("versions") or []
                        if isinstance(v, dict) and isinstance(v.get("number"), int)]
                    newest = max(numbers, default=None)
                    for version in node.get("versions") or []:
                        if isinstance(version, dict) and isinstance(version.get("file_path"),
                                                                    str):
                            self.versions[version["file_path"]] = Version(
                                user, node, version.get("number") or 0,
                                version.get("number") == newest)
        self.progress = Progress(count, progress_stream)
        self.owners: dict[int, User] = {}
        self.documents: dict[int, str | None] = {}  # id(document entry) -> dms id (None: skip)
        self.known: dict[str, dict[str, str]] = {}
        self.folders: dict[tuple[str, str], Node | None] = {}

    def run(self, path: Path) -> None:
        self._folders()
        try:
            for archive, member in _members(path):
                version = self.versions.get(member.name)
                if version is None or not member.isfile():
                    continue
                stream = archive.extractfile(member)
                if stream is not None:
                    with stream:
                        self._file(version, stream, member.size)
        finally:
            self.progress.finish()
        for version in {id(v.document): v for v in self.versions.values()}.values():
            if id(version.document) not in self.documents:
                self._skip(version.document, "its first file (version 1) is not in the archive")

    def _folders(self) -> None:
        """Every folder of the tree, empty ones too, with its tags."""
        for user in self.backup["users"]:
            if not isinstance(user, dict):
                continue
            for node in user.get("nodes") or []:
                if not isinstance(node, dict) or node.get("ctype") != "folder" \
                        or not isinstance(node.get("breadcrumb"), str):
                    continue
                owner = self._owner(user)
                folder = self._folder(owner, node["breadcrumb"])
                names = self._tag_names(owner, node.get("tags"))
                if folder is not None and names and not self.dry_run \
                        and folder.special is None:
                    tags.change_node_tags(owner, folder.id, names, "append")

    # -- users, folders, tags ------------------------------------------------------------------
    def _owner(self, user: dict[str, Any]) -> User:
        if self.only is not None:
            return self.only
        key = id(user)
        if key not in self.owners:
            self.owners[key] = self._account(user)
        return self.owners[key]

    def _account(self, user: dict[str, Any]) -> User:
        username = user.get("username")
        if not isinstance(username, str):
            return self.default
        found = User.get_or_none(User.username == username)
        if found is not None:
            return found
        self.report.counts["users"] += 1
        if self.dry_run:
            return self.default
        try:
            return imported.create_imported_user(username, user)
        except DomainError as error:
            self.report.counts["users"] -= 1
            self.report.problems.append(f"user {username!r} not made ({error.message}); their "
                                        f"documents are {self.default.username}'s")
            return self.default

    def _folder(self, owner: User, breadcrumb: str) -> Node | None:
        """The folder of a breadcrumb's parent titles, made if needed (None in a dry run where it
        does not exist yet)."""
        steps = [step for step in breadcrumb.split("/") if step]
        if not steps:
            return None
        key = (owner.id, "/".join(steps))
        if key in self.folders:
            return self.folders[key]
        folder: Node | None
        if len(steps) == 1:
            folder = tree.special_folder(owner, SPECIAL.get(steps[0], Node.HOME))
            if steps[0] not in SPECIAL:  # a root that is neither: below .home
                folder = self._child(owner, folder, steps[0])
        else:
            parent = self._folder(owner, "/".join(steps[:-1]))
            folder = self._child(owner, parent, steps[-1]) if parent is not None else None
        self.folders[key] = folder
        return folder

    def _child(self, owner: User, parent: Node, title: str) -> Node | None:
        if self.dry_run:
            return tree.find_child_folder(owner, parent.id, title[:tree.MAX_TITLE_LENGTH])
        folder, made = tree.child_folder(owner, parent.id, title[:tree.MAX_TITLE_LENGTH],
                                         self.services.config.max_tree_depth, SOURCE)
        self.report.counts["folders"] += made
        return folder

    def _tag_names(self, owner: User, entries: object) -> list[str]:
        names = []
        for entry in (entries if isinstance(entries, list) else [])[:MAX_TAGS]:
            name = entry.get("name") if isinstance(entry, dict) else None
            if not isinstance(name, str) or not name.strip():
                continue
            if Tag.get_or_none(Tag.owner == owner.id, Tag.name_key == name_key(name)) is None:
                self.report.counts["tags"] += 1
                if not self.dry_run:
                    self._make_tag(owner, entry)
            names.append(name.strip())
        return sorted(set(names))

    @staticmethod
    def _make_tag(owner: User, entry: dict[str, Any]) -> None:
        attributes = {key: entry[key] for key in ("name", "bg_color", "fg_color", "description",
                                                  "pinned") if entry.get(key) is not None}
        try:
            tags.create_tag(owner, attributes)
        except DomainError:
            tags.create_tag(owner, {"name": entry["name"]})

    # -- documents -------------------------------------------------------------------------------
    def _skip(self, document: dict[str, Any], reason: str) -> None:
        self.report.skipped.append((f"document {document.get('breadcrumb')!r}", reason))
        self.documents[id(document)] = None

    def _file(self, version: Version, stream: Any, size: int) -> None:
        document, key = version.document, id(version.document)
        if version.number != 1 and key not in self.documents:
            return  # its first file was not seen first: reported at the end
        if self.documents.get(key, "") is None:
            return  # skipped
        owner = self._owner(version.owner)
        entry = next((v for v in document.get("versions") or [] if isinstance(v, dict)
                      and v.get("number") == version.number), {})
        texts = [page.get("text") or "" for page in sorted(
            (p for p in entry.get("pages") or [] if isinstance(p, dict)),
            key=lambda page: page.get("number") or 0)]
        title = document["title"] if isinstance(document.get("title"), str) else "document"
        added = parse_moment(document.get("created_at")) or parse_moment(
            self.backup.get("created")) or dt.datetime.now(dt.UTC)
        paper = imported.Paper(title, str(entry.get("file_name") or title)[:255],
                               imported.PAGE_BREAK.join(texts), added)
        try:
            received = imported.receive(self.services, stream, size, None, 0)
        except DomainError as error:
            if version.number == 1:
                self._skip(document, f"its file is refused: {error.message}")
            else:
                self.report.problems.append(f"version {version.number} of "
                                            f"{document.get('breadcrumb')!r} not imported: "
                                            f"{error.message}")
            return
        if version.number == 1:
            self._first(owner, document, paper, received)
        else:
            self._further(owner, document, paper, received)
        if version.last:
            self.progress.advance()

    def _first(self, owner: User, document: dict[str, Any], paper: imported.Paper,
               received: imported.Received) -> None:
        key = id(document)
        known = self.known.setdefault(owner.id, imported.known_originals(owner))
        if received.sha256 in known:
            received.discard()
            self.documents[key] = None
            self.report.counts["already there"] += 1
            return
        breadcrumb = document.get("breadcrumb")
        where = breadcrumb.rsplit("/", 1)[0] if isinstance(breadcrumb, str) and \
            "/" in breadcrumb else ".home"
        folder = self._folder(owner, where)
        names = self._tag_names(owner, document.get("tags"))
        if self.dry_run or folder is None:
            received.discard()
            self.documents[key] = ""
            self.report.counts["documents"] += 1
            return
        try:
            node = imported.add_document(self.services, owner, folder, paper, received,
                                         imported.Filed(tag_names=names), SOURCE)
        except DomainError as error:
            self._skip(document, error.message)
            return
        known[received.sha256] = node.id
        self.documents[key] = node.id
        self.report.counts["documents"] += 1

    def _further(self, owner: User, document: dict[str, Any], paper: imported.Paper,
                 received: imported.Received) -> None:
        node_id = self.documents.get(id(document))
        if not node_id or self.dry_run:
            received.discard()
            self.report.counts["versions"] += bool(self.dry_run and node_id is not None)
            return
        try:
            imported.add_version(self.services, owner, node_id, paper, received)
        except DomainError as error:
            self.report.problems.append(f"a version of {document.get('breadcrumb')!r} not "
                                        f"imported: {error.message}")
            return
        self.report.counts["versions"] += 1
