"""The tantivy index under `<data-dir>/search/`: its schema and analyzer, opening it (or knowing
that it must be rebuilt), writing documents, and running a query to ranked node ids.

One document per node: `id` (stored, the node's id) and the same UUID as two whole numbers in
fast fields, `id_hi` and `id_lo`, from which a query's hits get their ids without reading stored
documents (format 5; an id that is not a canonical UUID has 0 in both and is read from the store),
`owner` (the owner's id: every query
filters by it), `tag_ids` (the ids of its tags, for tag filters), and `title`, `tags` (its tag
names, the subject and sender of the message a document came by, its metadata's words), `body`
(the text of a document's latest version) and `notes`, all folded by the same analyzer as the
queries: lower case, accents and ligatures folded to ASCII (`Käse` -> `kase`, `Straße` ->
`strasse`), words over 40 characters dropped, with positions (phrases). Scores are per-field
BM25, the title weighted TITLE_BOOST and tag names TAGS_BOOST times the body. `inner` holds the
inner parts of the words of the title, tag names and text: a word inside a compound word is the
beginning of one (dms.search.terms; format 4).

For the query language's fields (dms.search.treequery): `parent` (the folder it is in),
`correspondent`, `doctype` (ids), `mime` (the latest version's type and its kind: `image/png` and
`image`), and whole numbers, indexed and fast: `created` (the date on the paper, else the upload
day) and `added` (the upload day), both as date.toordinal(), and `asn`; the two days also as
the terms of their year, month and day in `created_days` and `added_days` (dms.search.days,
format 7). A document without a value has no term in that field. For phrases: `title_pairs`,
`body_pairs` and `notes_pairs`, the neighbouring terms with a common word (dms.search.pairs).

Every word of a query is a prefix: it matches the terms that begin with it, expanded to the most
frequent ones in the caller's documents (`EXPANSIONS_LAST` for the last word, the one being typed,
`EXPANSIONS_OTHER` for the others). Finding those walks every term with the prefix in the term
dictionary, which OCR noise can make huge (a one-letter prefix over two million distinct terms took
67 ms per field), so a word is a prefix of titles from MIN_TITLE_PREFIX letters on and of text from
MIN_TEXT_PREFIX letters on; shorter, it matches only itself there. The work of a query stays
bounded.

`dms-index.json` beside the index says which index format and tantivy version wrote it and that
it is complete; an index without it, of another version, or that cannot be opened is rebuilt.
Concurrency: only the indexer thread writes (dms.search.indexer); queries take a searcher of the
last commit from any thread.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

from dms.search import days
from dms.search import pairs as pairs_
from dms.search.snapshot import INNER_FIELD, Snapshot
from dms.search.terms import (
    ANALYZER,
    EXPANSIONS_LAST,
    EXPANSIONS_OTHER,
    MAX_INNER_CHARS,
    MAX_TERM_CHARS,
    MIN_TEXT_PREFIX,
    MIN_TITLE_PREFIX,
    TAGS_BOOST,
    TITLE_BOOST,
    analyzer,
    compound_terms,
    inner_parts,
    terms,
)

__all__ = ["ANALYZER", "EXPANSIONS_LAST", "EXPANSIONS_OTHER", "MAX_TERM_CHARS", "MIN_TEXT_PREFIX",
           "MIN_TITLE_PREFIX", "TAGS_BOOST", "TITLE_BOOST", "Entry", "IndexUnusable",
           "SearchIndex", "Snapshot", "analyzer", "terms"]

log = logging.getLogger("dms.search")

INDEX_FORMAT = 7  # raise when the schema or the analyzer changes: old indexes are rebuilt
MARKER = "dms-index.json"
WRITER_HEAP_BYTES = 32 * 1024 * 1024  # tantivy flushes a segment past this much buffered data
SEGMENT_FILES = ("idx", "term", "store", "pos", "fieldnorm", "fast")
TEXT_FIELDS = ("title", "tags", "body", "notes")
KEY_FIELDS = ("parent", "correspondent", "doctype", "mime")
NUMBER_FIELDS = ("created", "added", "asn")
ID_HALVES = ("id_hi", "id_lo")


class IndexUnusable(Exception):
    """The index is missing, of another version, or broken: it must be rebuilt."""


@functools.lru_cache(maxsize=1)
def tantivy_version() -> str:
    """The installed tantivy's version: no need to import (and map) the native module just to
    check an index. Read from the name of its metadata folder beside it (`tantivy-0.27.0.dist-
    info`, the name the wheel standard fixes) rather than by importlib.metadata, which imports
    zipfile, csv and email: 0.6 MiB of an idle server (bench/RESULTS.md, "Idle memory after a
    restart"). Several such folders (a damaged install): importlib.metadata chooses; none (a
    PyInstaller bundle may lack them): the module says."""
    import importlib.util

    spec = importlib.util.find_spec("tantivy")
    if spec is not None and spec.origin:
        found = list(Path(spec.origin).parent.parent.glob("tantivy-*.dist-info"))
        if len(found) == 1:
            return found[0].name.removeprefix("tantivy-").removesuffix(".dist-info")
        if found:
            import importlib.metadata

            return importlib.metadata.version("tantivy")
    import tantivy

    return tantivy.__version__.split()[1].lstrip("v")  # "tantivy v0.27.0, index_format v7"


def version_tag() -> dict:
    """What wrote an index: our format and tantivy's version (which fixes its on-disk format)."""
    return {"format": INDEX_FORMAT, "tantivy": tantivy_version(), "complete": True}


def schema():
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("owner", tokenizer_name="raw", index_option="basic")
    builder.add_text_field("tag_ids", tokenizer_name="raw", index_option="basic")
    for field in TEXT_FIELDS:
        builder.add_text_field(field, tokenizer_name=ANALYZER, index_option="position")
    # Parts of words, to find a word inside a compound (dms.search.terms): only whether a
    # node has them, no frequencies or positions.
    builder.add_text_field(INNER_FIELD, tokenizer_name="whitespace", index_option="basic")
    # Neighbouring terms with a common word, one term a pair, as often as it comes
    # (dms.search.pairs): for phrases.
    for field in pairs_.FIELDS.values():
        builder.add_text_field(field, tokenizer_name="raw", index_option="freq")
    # A day's year, month and itself (dms.search.days): for date ranges.
    for field in days.FIELDS.values():
        builder.add_text_field(field, tokenizer_name="raw", index_option="basic")
    for field in KEY_FIELDS:
        builder.add_text_field(field, tokenizer_name="raw", index_option="basic")
    for field in NUMBER_FIELDS:
        builder.add_integer_field(field, indexed=True, fast=True)
    for field in ID_HALVES:
        builder.add_unsigned_field(field, fast=True)
    return builder.build()


def id_halves(node_id: str) -> tuple[int, int]:
    """The node's UUID as two u64 (its first and last eight bytes); (0, 0) for an id that would
    not come back from them unchanged (dms.search.snapshot.ids_of)."""
    try:
        number = uuid.UUID(node_id).int
    except ValueError:
        return 0, 0
    if str(uuid.UUID(int=number)) != node_id or number == 0:
        return 0, 0
    return number >> 64, number & ((1 << 64) - 1)


@dataclass
class Entry:
    """What the index holds of one node."""
    node_id: str
    owner_id: str
    title: str
    body: str
    tag_names: list[str]
    tag_ids: list[str]
    notes: str = ""
    parent: str | None = None
    correspondent: str | None = None
    doctype: str | None = None
    mime: str | None = None
    created: int | None = None  # days, date.toordinal()
    added: int | None = None
    asn: int | None = None

    def keys(self) -> dict[str, list[str]]:
        """The values of KEY_FIELDS it has (a type with its kind)."""
        mime = [self.mime, self.mime.split("/")[0]] if self.mime else []
        found: dict[str, list[str | None]] = {
            "parent": [self.parent], "correspondent": [self.correspondent],
            "doctype": [self.doctype], "mime": list(mime)}
        return {field: [value for value in values if value]
                for field, values in found.items() if any(values)}

    def inner(self) -> str:
        """The inner parts of the words of its title, tag names and text (dms.search.terms),
        those of the title and the tags first; of a long text, its beginning's."""
        return " ".join(inner_parts([
            *compound_terms(self.title), *compound_terms(" ".join(self.tag_names)),
            *compound_terms(self.body[:MAX_INNER_CHARS])]))

    def pairs(self) -> dict[str, list[str]]:
        """Its neighbouring terms with a common word (dms.search.pairs), per field that has any."""
        texts = {"title": self.title, "body": self.body, "notes": self.notes}
        made = {pairs_.FIELDS[name]: pairs_.text_pairs(text) for name, text in texts.items()}
        return {field: found for field, found in made.items() if found}

    def numbers(self) -> dict[str, int]:
        found = {"created": self.created, "added": self.added, "asn": self.asn}
        return {field: value for field, value in found.items() if value is not None}

    def days(self) -> dict[str, list[str]]:
        """Its days as terms (dms.search.days)."""
        found = {"created": self.created, "added": self.added}
        return {days.FIELDS[field]: days.day_terms(day) for field, day in found.items()
                if day is not None}


class SearchIndex:
    def __init__(self, directory: Path):
        self.directory = directory
        self._index = None

    @functools.cached_property
    def schema(self):
        return schema()  # on first use: importing tantivy maps a 10 MB native library

    # -- opening -------------------------------------------------------------------------------
    def check_marker(self) -> None:
        """IndexUnusable unless a complete index of this version is there (reads one small file;
        the index itself is opened only when needed)."""
        try:
            marker = json.loads((self.directory / MARKER).read_text())
        except (OSError, ValueError):
            raise IndexUnusable("the index is missing or was not completed") from None
        if marker != version_tag():
            raise IndexUnusable(f"the index was written by another version ({marker})")

    def open(self) -> None:
        """Open the existing index; IndexUnusable if it must be rebuilt instead."""
        import tantivy

        self.check_marker()
        try:
            index = tantivy.Index.open(str(self.directory))
            index.register_tokenizer(ANALYZER, analyzer())
            searcher = index.searcher()
            searcher.search(tantivy.Query.all_query(), 1)  # reads every segment's metadata
            self._check_segments()
        except (OSError, ValueError) as error:
            raise IndexUnusable(f"the index cannot be read: {error}") from None
        self._index = index

    def _check_segments(self) -> None:
        """tantivy opens a segment's files lazily: a missing one would only fail a later query.
        Every file that meta.json implies must be there."""
        meta = json.loads((self.directory / "meta.json").read_text())
        present = set(os.listdir(self.directory))
        for segment in meta.get("segments", []):
            prefix = segment["segment_id"].replace("-", "")
            needed = [f"{prefix}.{extension}" for extension in SEGMENT_FILES]
            if segment.get("deletes"):
                needed.append(f"{prefix}.{segment['deletes']['opstamp']}.del")
            missing = [name for name in needed if name not in present]
            if missing:
                raise ValueError(f"{', '.join(missing)} missing")

    def create_empty(self) -> None:
        """Start from nothing: remove whatever is in the directory (not the directory itself,
        which may be a disk of its own mounted there), make an empty index."""
        import tantivy

        self.directory.mkdir(parents=True, exist_ok=True)
        for child in self.directory.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)
        index = tantivy.Index(self.schema, path=str(self.directory))
        index.register_tokenizer(ANALYZER, analyzer())
        self._index = index

    def mark_complete(self) -> None:
        temporary = self.directory / (MARKER + ".tmp")
        temporary.write_text(json.dumps(version_tag()))
        os.replace(temporary, self.directory / MARKER)

    @property
    def is_open(self) -> bool:
        return self._index is not None

    def close(self) -> None:
        """Let go of the index (its memory maps); searchers in use keep what they hold."""
        self._index = None

    # -- writing (the indexer thread only) -------------------------------------------------------
    def writer(self):
        return self._index.writer(WRITER_HEAP_BYTES, 1)

    @staticmethod
    def document(entry: Entry):
        import tantivy

        document = tantivy.Document(id=entry.node_id, owner=entry.owner_id, title=entry.title,
                                    body=entry.body, tags=entry.tag_names, tag_ids=entry.tag_ids,
                                    notes=entry.notes, inner=entry.inner(), **entry.keys(),
                                    **entry.pairs(), **entry.numbers(),
                                    **entry.days())
        # Added one by one: as keywords, a number past 2**63 would be taken for a float.
        for field, half in zip(ID_HALVES, id_halves(entry.node_id), strict=True):
            document.add_unsigned(field, half)
        return document

    def put(self, writer, node_id: str, entry: Entry | None) -> None:
        """Replace what the index holds of `node_id` by `entry` (None: remove it). Idempotent."""
        writer.delete_documents_by_term("id", node_id)
        if entry is not None:
            writer.add_document(self.document(entry))

    def reload(self) -> None:
        self._index.reload()

    def snapshot(self) -> Snapshot:
        """What the last commit holds, for queries: stays valid whatever happens to the index."""
        return Snapshot(self._index.searcher(), self.schema)

    def count(self) -> int:
        return self.snapshot().count()

    def holds(self, node_id: str) -> bool:
        return self.snapshot().holds(node_id)
