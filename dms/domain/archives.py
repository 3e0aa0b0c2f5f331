"""Archives of a selection of nodes (api.md, "Archives", GET /nodes/download/): a zip (optionally
AES-256 encrypted, with pyzipper) or a tar.gz, keeping the folder structure.

Archives are streamed: files are read and sent in chunks and the archive is never held whole, in
memory or on disk, so memory stays flat for multi-GB selections. Zip entries use data descriptors
(the stream is not seekable), which every unzip tool reads. AES zips open in 7-Zip and other
WinZip-AES readers, not in Windows Explorer or macOS Archive Utility.
"""

from __future__ import annotations

import datetime as dt
import io
import unicodedata
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from dms.db import database
from dms.files.storage import Blob, FileStore

ARCHIVE_TYPES = ("zip", "targz")
# Characters that are unsafe in a file name on some system that will unpack the archive.
UNSAFE_CHARACTERS = set('<>:"/\\|?*')
MAX_ENTRY_NAME = 200


@dataclass(frozen=True)
class Entry:
    """One archive member: a folder (path ends with /) or a document's latest file."""
    path: str
    file: Callable[[], Iterator[bytes]] | None = None  # its bytes, read from the store
    size: int = 0
    modified: dt.datetime | None = None


def safe_name(title: str) -> str:
    """A name that cannot climb out of the folder it is unpacked into, on any system."""
    cleaned = "".join("_" if c in UNSAFE_CHARACTERS or unicodedata.category(c) == "Cc" else c
                      for c in title).strip().rstrip(". ")
    if cleaned in ("", ".", ".."):
        cleaned = "_"
    return cleaned[:MAX_ENTRY_NAME]


def document_name(title: str, file_name: str) -> str:
    """The title, plus the file's extension when the title lacks it (`Invoice` -> `Invoice.pdf`)."""
    extension = Path(file_name).suffix
    name = safe_name(title)
    if extension and not name.lower().endswith(extension.lower()):
        name += safe_name(extension)
    return name


def unique(name: str, taken: set[str]) -> str:
    """`name`, or `name (2)`, `name (3)`, ... before the extension, whichever is still free."""
    if name.casefold() not in taken:
        taken.add(name.casefold())
        return name
    stem, extension = (name[:-1], "/") if name.endswith("/") else (
        (name[:-len(Path(name).suffix)], Path(name).suffix) if Path(name).suffix else (name, ""))
    number = 2
    while f"{stem} ({number}){extension}".casefold() in taken:
        number += 1
    name = f"{stem} ({number}){extension}"
    taken.add(name.casefold())
    return name


SUBTREE_WITH_FILES = """
    WITH RECURSIVE below(id, depth) AS (
        SELECT id, 0 FROM node WHERE id = ?
        UNION ALL
        SELECT n.id, below.depth + 1 FROM node AS n JOIN below ON n.parent_id = below.id
        WHERE below.depth < ? AND n.trash_id IS NULL
    )
    SELECT n.id, n.parent_id, n.kind, n.title, v.id, v.file_name, v.size, v.created_at,
           v.searchable_size, v.sha256, v.searchable_sha256
    FROM below JOIN node AS n ON n.id = below.id
    LEFT JOIN document_version AS v ON v.document_id = n.id
        AND v.number = (SELECT MAX(number) FROM document_version WHERE document_id = n.id)
    ORDER BY below.depth, n.kind DESC, n.title_sort, n.id"""


def entries(root_ids: list[str], store: FileStore, searchable: bool = False,
            max_depth: int = 1000) -> list[Entry]:
    """The members for the selected nodes (already checked to be the caller's), each folder with
    everything below it, at most `max_depth` levels down (the walk stays finite on any tree).
    Documents without a file are left out; with `searchable`, a document's searchable PDF is
    taken instead of its file where it has one."""
    result: list[Entry] = []
    taken: dict[str, set[str]] = {"": set()}  # folder path -> names used in it
    seen: set[str] = set()
    for root_id in root_ids:
        paths: dict[str, str] = {}
        for node_id, parent_id, kind, title, version_id, file_name, size, created, \
                searchable_size, sha256, searchable_sha256 in database.execute_sql(
                    SUBTREE_WITH_FILES, (root_id, max_depth)):
            if node_id in seen:
                continue  # only a damaged tree (a loop) or overlapping selections repeat a node
            seen.add(node_id)
            parent_path = paths.get(parent_id, "") if node_id != root_id else ""
            used = taken.setdefault(parent_path, set())
            if kind == "folder":
                path = parent_path + unique(safe_name(title), used) + "/"
                paths[node_id] = path
                taken[path] = set()
                result.append(Entry(path))
            elif version_id is not None:
                modified = dt.datetime.fromisoformat(created)
                if searchable and searchable_size is not None:
                    path = parent_path + unique(document_name(title, "searchable.pdf"), used)
                    blob = Blob(version_id, searchable_sha256, searchable=True)
                    result.append(Entry(path, partial(store.read, blob), searchable_size,
                                        modified))
                else:
                    path = parent_path + unique(document_name(title, file_name), used)
                    result.append(Entry(path, partial(store.read, Blob(version_id, sha256)), size,
                                        modified))
    return result


class _Sink(io.RawIOBase):
    """Collects what an archive writer writes, for the generator to hand out; not seekable."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]  # zipfile writes bytes
        self.chunks.append(bytes(data))
        return len(data)

    def take(self) -> bytes:
        data = b"".join(self.chunks)
        self.chunks.clear()
        return data


def stream_zip(members: list[Entry], password: str | None = None) -> Iterator[bytes]:
    import pyzipper  # imported on first use: keeps the idle server small

    sink = _Sink()
    options = {"encryption": pyzipper.WZ_AES} if password else {}
    with pyzipper.AESZipFile(sink, "w", compression=pyzipper.ZIP_STORED, **options) as archive:
        if password:
            archive.setpassword(password.encode("utf-8"))
        for member in members:
            stamp = (member.modified or dt.datetime(1980, 1, 1)).timetuple()[:6]
            info = archive.zipinfo_cls(member.path, date_time=stamp)
            if member.file is None:
                archive.writestr(info, b"")
            else:
                info.file_size = member.size
                with archive.open(info, "w", force_zip64=member.size > 2**31) as target:
                    for chunk in member.file():
                        target.write(chunk)
                        yield sink.take()
            yield sink.take()
    yield sink.take()


def stream_targz(members: list[Entry]) -> Iterator[bytes]:
    """A gzip-compressed POSIX tar written by hand: tarfile's addfile copies a whole member
    before returning, which would hold a large file in memory here."""
    import tarfile  # imported on first use: keeps the idle server small

    compressor = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # 16+: gzip framing
    for member in members:
        info = tarfile.TarInfo(member.path.rstrip("/"))
        info.mtime = int((member.modified or dt.datetime(1980, 1, 1)).timestamp())
        if member.file is None:
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            yield compressor.compress(info.tobuf(tarfile.PAX_FORMAT))
            continue
        info.size, info.mode = member.size, 0o644
        yield compressor.compress(info.tobuf(tarfile.PAX_FORMAT))
        for chunk in member.file():
            yield compressor.compress(chunk)
        yield compressor.compress(b"\0" * (-member.size % tarfile.BLOCKSIZE))
    yield compressor.compress(b"\0" * (2 * tarfile.BLOCKSIZE))  # end-of-archive marker
    yield compressor.flush()
