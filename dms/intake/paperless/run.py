"""`dms import --from paperless PATH` (api.md §18, docs/moving-from-paperless.md): a Paperless-ngx
export becomes dms's users, groups, labels, documents, notes, trash, grants and saved searches, in
three passes over the manifests (dms.intake.paperless.manifest): the small things first, then each
document, then the further versions of 3.x documents; then the links between documents, the
sharing (dms.intake.paperless.sharing) and the saved views.

- A document goes into its owner's `.home/<folder>` (a sub-folder per storage path with
  `folders="storage-paths"`), with its original (checked against the manifest's checksum) as its
  first version, the archive PDF as its searchable PDF and `content` as its text — nothing is read
  again (dms.domain.imported). One write transaction a document: an interrupted import leaves
  whole documents, and the next run goes on where it stopped.
- A document the owner already holds (the same original, by SHA-256) is not imported again; its
  versions, links and trash state are not changed either.
- What cannot be imported is named in the report with the reason; the rest come in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO
from zoneinfo import ZoneInfo

from dms.db.models import Node, User
from dms.domain import imported, savedsearches, trash, tree
from dms.domain.documents import edit
from dms.errors import DomainError
from dms.intake.paperless import values
from dms.intake.paperless.export import Export, UnsafeName, open_export
from dms.intake.paperless.jsonstream import ManifestError
from dms.intake.paperless.labels import Labels, Owners
from dms.intake.paperless.manifest import (
    Document,
    Library,
    documents,
    manifest_files,
    read_library,
)
from dms.intake.paperless.sharing import Sharing
from dms.intake.paperless.views import saved_search_of
from dms.intake.report import Progress, Report

if TYPE_CHECKING:
    from dms.domain.services import Services

SOURCE = "paperless"


@dataclass
class Options:
    folder: str = "Paperless"
    folders: str = "one"  # or "storage-paths"
    only_user: User | None = None
    dry_run: bool = False
    time_zone: ZoneInfo = field(default_factory=lambda: ZoneInfo("UTC"))


def run(services: Services, path: Path, default_owner: User, options: Options,
        progress_stream: TextIO | None = None) -> Report:
    report = Report("Paperless-ngx export")
    try:
        with open_export(path) as export:
            _Import(services, export, default_owner, options, report, progress_stream).run()
    except ManifestError as error:
        report.readable = False
        report.problems.append(str(error))
    return report


class _Import:
    def __init__(self, services: Services, export: Export, default_owner: User, options: Options,
                 report: Report, progress_stream: TextIO | None):
        self.services, self.export, self.options, self.report = services, export, options, report
        self.library = Library()
        self.names = manifest_files(export, self.library)
        read_library(export, self.names, self.library)
        report.version = self.library.version
        report.not_imported.update(self.library.not_imported)
        report.not_imported.update({f"records of {model}": count
                                    for model, count in self.library.unknown.items()})
        report.left_out += [f"{name}: not a split manifest (left alone)"
                            for name in self.library.split_skipped]
        self.owners = Owners(self.library, default_owner, options.only_user, report.problems,
                             options.dry_run)
        self.labels = Labels(self.library, options.dry_run, report.problems)
        self.sharing = Sharing(self.library, self.owners, default_owner, options.dry_run,
                               report.counts, report.problems, report.not_imported)
        self.progress = Progress(self.library.documents, progress_stream)
        self.node_of: dict[Any, str] = {}  # Paperless-ngx document pk -> dms document id
        self.owner_of: dict[Any, User] = {}
        self.known: dict[str, dict[str, str]] = {}  # owner id -> known_originals
        self.folders: dict[tuple[str, Any], Node | None] = {}
        self.links: list[tuple[User, Any, list[tuple[str, Any]]]] = []

    def run(self) -> None:
        self.sharing.groups()
        try:
            for document in documents(self.export, self.names, self.options.time_zone):
                if document.root is None:
                    self._document(document)
                    self.progress.advance()
            if self.library.versions:
                for document in documents(self.export, self.names, self.options.time_zone):
                    if document.root is not None:
                        self._version(document)
                        self.progress.advance()
        finally:
            self.progress.finish()
        self._links()
        self.sharing.grants(self.node_of, self.owner_of)
        self._saved_views()
        self.report.counts["users"] = self.owners.made
        for kind, count in self.labels.made.items():
            self.report.counts[kind] += count
        if self.library.documents and not (self.report.counts["documents"]
                                           or self.report.counts["already there"]):
            self.report.readable = False

    # -- documents ---------------------------------------------------------------------------------
    def _known(self, owner: User) -> dict[str, str]:
        if owner.id not in self.known:
            self.known[owner.id] = imported.known_originals(owner)
        return self.known[owner.id]

    def _skip(self, document: Document, reason: str) -> None:
        self.report.skipped.append((f"document {document.pk} ({document.title!r})", reason))

    def _document(self, document: Document) -> None:
        owner = self.owners.of(document.owner)
        received = self._received(document)
        if received is None:
            return
        known = self._known(owner)
        if received.sha256 in known:
            received.discard()
            self.node_of[document.pk] = known[received.sha256]
            self.owner_of[document.pk] = owner
            self.report.counts["already there"] += 1
            return
        try:
            filed = self._filed(owner, document)
            folder = self._folder(owner, document.storage_path)
            if self.options.dry_run or folder is None:
                received.discard()
                self.node_of[document.pk], self.owner_of[document.pk] = "", owner
                self.report.counts["documents"] += 1
                self.report.counts["notes"] += len(filed.notes)
                self.report.counts["trash"] += document.deleted
                return
            node = self._add(owner, folder, document, received, filed)
        except DomainError as error:
            received.discard()
            self._skip(document, error.message)
            return
        if node is None:
            return
        known[received.sha256] = node.id
        self.node_of[document.pk] = node.id
        self.owner_of[document.pk] = owner
        self.report.counts["documents"] += 1
        self.report.counts["notes"] += len(filed.notes)
        if document.deleted:
            trash.delete(self.services, owner, node.id)
            self.report.counts["trash"] += 1

    def _add(self, owner: User, folder: Node, document: Document, received: imported.Received,
             filed: imported.Filed) -> Node | None:
        """The document; when its metadata is refused (a value dms does not take, a serial
        number another document of the owner's holds), without it, the reason reported (its
        files received again: a refused transaction lets them go)."""
        try:
            return imported.add_document(self.services, owner, folder, self._paper(document),
                                         received, filed, SOURCE)
        except DomainError as error:
            if not filed.attributes:
                raise
            self.report.problems.append(f"document {document.pk} ({document.title!r}): its "
                                        f"metadata not imported ({error.message})")
        filed.attributes = {}
        again = self._received(document)
        if again is None:
            return None
        return imported.add_document(self.services, owner, folder, self._paper(document), again,
                                     filed, SOURCE)

    def _received(self, document: Document) -> imported.Received | None:
        """Its files checked and in tmp/; None (reported) when they cannot be."""
        export, name = self.export, document.file_name
        try:
            if name is None or not export.has(name):
                self._skip(document, "its file is not in the export (exported with --data-only?)"
                           if name else "the manifest names no file for it")
                return None
            archive = document.archive_name if document.archive_name and \
                export.has(document.archive_name) else None
            with export.open(name) as original:
                searchable = export.open(archive) if archive else None
                try:
                    received = imported.receive(self.services, original, export.size(name),
                                                searchable, export.size(archive) if archive
                                                else 0)
                finally:
                    if searchable is not None:
                        searchable.close()
        except UnsafeName as error:
            self._skip(document, str(error))
            return None
        except DomainError as error:
            self._skip(document, "its file does not match the manifest's checksum (damaged?)"
                       if self._damaged(document) else f"its file is refused: {error.message}")
            return None
        except OSError as error:
            self._skip(document, f"its file cannot be read ({error.strerror or error})")
            return None
        expected = document.checksum
        actual = received.sha256 if len(expected) == 64 else received.md5
        if expected and actual != expected:
            received.discard()
            self._skip(document, "its file does not match the manifest's checksum (damaged?)")
            return None
        return received

    def _damaged(self, document: Document) -> bool:
        """Whether the original's bytes differ from the manifest's checksum (asked when the
        file was refused: a damaged file is told as such)."""
        import hashlib

        digest = hashlib.sha256() if len(document.checksum) == 64 else \
            hashlib.md5(usedforsecurity=False)
        try:
            with self.export.open(document.file_name or "") as stream:
                while block := stream.read(1 << 20):
                    digest.update(block)
        except (OSError, UnsafeName):
            return False
        return bool(document.checksum) and digest.hexdigest() != document.checksum

    def _paper(self, document: Document) -> imported.Paper:
        name = document.original_filename or Path(document.file_name or "document").name
        return imported.Paper(document.title, name[:255], document.content, document.added)

    def _filed(self, owner: User, document: Document) -> imported.Filed:
        attributes: dict[str, Any] = {}
        for kind, pk in (("correspondents", document.correspondent),
                         ("document_types", document.document_type)):
            if pk is not None:
                label_id = self.labels.label(owner, kind, pk)
                if label_id is not None:
                    attributes["correspondent" if kind == "correspondents" else
                               "document_type"] = label_id
        if document.created is not None:
            attributes["document_date"] = document.created.isoformat()
        if document.asn is not None:
            attributes["archive_serial_number"] = document.asn
        custom, links = values.custom_fields(self.labels, owner, self.library.values.get(
            document.pk, []), self.report.problems, document.pk)
        if custom:
            attributes["custom_fields"] = custom
        if links:
            self.links.append((owner, document.pk, links))
        tag_names = [name for name in (self.labels.tag_name(owner, pk) for pk in document.tags)
                     if name is not None]
        notes = [(self._author(note.get("user")), note.get("note") or note.get("comment") or "",
                  values.moment(note.get("created"), document.added))
                 for note in self.library.notes.get(document.pk, [])
                 if (note.get("note") or note.get("comment") or "").strip()]
        return imported.Filed(attributes, sorted(set(tag_names)), notes)

    def _author(self, user_pk: Any) -> str | None:
        if user_pk is None or user_pk not in self.library.objects["users"]:
            return None
        return self.owners.of(user_pk).id

    def _folder(self, owner: User, storage_path: Any) -> Node | None:
        """.home/<folder>[/<storage path name>] of the owner, made if needed (None in a dry run
        where it does not exist yet)."""
        by_path = self.options.folders == "storage-paths" and storage_path is not None
        key = (owner.id, storage_path if by_path else None)
        if key not in self.folders:
            home = tree.special_folder(owner, Node.HOME)
            titles = [self.options.folder]
            stored = self.library.objects["storage_paths"].get(storage_path) if by_path else None
            if stored and isinstance(stored.get("name"), str) and stored["name"].strip():
                titles.append(stored["name"].strip()[:128])
            folder: Node | None = home
            for title in titles:
                if folder is None:
                    break
                if self.options.dry_run:
                    folder = tree.find_child_folder(owner, folder.id, title)
                else:
                    folder, _ = tree.child_folder(owner, folder.id, title,
                                                  self.services.config.max_tree_depth, SOURCE)
            self.folders[key] = folder
        return self.folders[key]

    # -- versions (3.x) ----------------------------------------------------------------------------
    def _version(self, document: Document) -> None:
        node_id, owner = self.node_of.get(document.root), self.owner_of.get(document.root)
        if node_id is None or owner is None:
            self._skip(document, "a version of a document that was not imported")
            return
        received = self._received(document)
        if received is None:
            return
        if self.options.dry_run or received.sha256 in imported.version_checksums(node_id):
            received.discard()
            self.report.counts["versions" if self.options.dry_run else "already there"] += 1
            return
        try:
            imported.add_version(self.services, owner, node_id, self._paper(document), received)
        except DomainError as error:
            self._skip(document, error.message)
            return
        self.report.counts["versions"] += 1

    # -- after the documents -----------------------------------------------------------------------
    def _links(self) -> None:
        """Document link fields, once every document has its dms id."""
        for owner, pk, links in self.links:
            node_id = self.node_of.get(pk)
            if node_id is None or self.options.dry_run:
                continue
            fields = [{"field": field_id, "value": [self.node_of[target] for target in targets
                                                    if target in self.node_of][:100]}
                      for field_id, targets in links]
            try:
                current = values.current_values(node_id)
                edit.change(owner, node_id, {"custom_fields": current + fields}, None, None)
            except DomainError as error:
                self.report.problems.append(f"links of document {pk} not set: {error.message}")

    def _saved_views(self) -> None:
        for pk, view in self.library.objects["saved_views"].items():
            owner = self.owners.of(view.get("owner", view.get("user")))
            attributes, untranslated = saved_search_of(
                view, self.library.rules.get(pk, []), self.library, owner, self.labels)
            if untranslated:
                self.report.left_out.append(
                    f"saved view {view.get('name')!r}: {untranslated} (not imported)")
                continue
            if self.options.dry_run:
                self.report.counts["saved_searches"] += 1
                continue
            try:
                savedsearches.create_search(owner, attributes)
            except DomainError as error:
                if "already exists" not in error.message:
                    self.report.problems.append(
                        f"saved view {view.get('name')!r} not imported: {error.message}")
                continue
            self.report.counts["saved_searches"] += 1

