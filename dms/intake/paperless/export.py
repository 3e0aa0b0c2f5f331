"""A Paperless-ngx export as `document_exporter` wrote it (api.md §18): a directory or its `--zip`
file (entries at the root), holding `manifest.json`, `metadata.json` (2.10 on) or `version.json`
(1.8 to 2.9), the files the manifest names, and with `--split-manifest` one `…-manifest.json` per
document anywhere below (a JSON list whose first record is a document).

Names in a manifest are only ever looked up here, never made paths as they are: `\\` is read as
`/`, and a name that is absolute, holds `..`, NUL or an empty part is refused. In a directory the
file found must be a regular file inside it (no symbolic link leads out); in a zip, an entry of
that name. What a file may weigh is the caller's (the store's upload limit)."""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from dms.intake.paperless.jsonstream import ManifestError, array_items

MANIFEST = "manifest.json"
METADATA_FILES = ("metadata.json", "version.json")
SPLIT_SUFFIX = "-manifest.json"
MAX_ITEM_CHARS = 256 * 1024 * 1024  # one record: a document's content is its whole text
MAX_METADATA_BYTES = 64 * 1024
MAX_NAME_CHARS = 4096
MAX_ENTRIES = 10_000_000  # files in a zip or a directory tree looked through for split manifests


class UnsafeName(Exception):
    """A name in the manifest that could lead outside the export."""


def clean_name(name: object) -> str:
    """A manifest's file name as a relative POSIX path inside the export, or UnsafeName."""
    if not isinstance(name, str) or not name or len(name) > MAX_NAME_CHARS or "\0" in name:
        raise UnsafeName("a file name that is not a name")
    posix = name.replace("\\", "/")
    parts = PurePosixPath(posix).parts
    if posix.startswith("/") or (parts and parts[0].endswith(":")) \
            or any(part in ("..", "") for part in parts) or not parts:
        raise UnsafeName(f"a file name that leads outside the export ({name!r})")
    return "/".join(part for part in parts if part != ".")


class Export:
    """Opened with `open_export`; a context manager."""

    def __init__(self, origin: Path):
        self.origin = origin

    # -- what both kinds do ----------------------------------------------------------------------
    def version(self) -> str | None:
        """The release that wrote it ("2.20.15"), from metadata.json or version.json."""
        for name in METADATA_FILES:
            raw = self._small(name)
            if raw is None:
                continue
            try:
                version = json.loads(raw).get("version")
            except (ValueError, AttributeError):
                raise ManifestError(f"{name} is not the exporter's JSON.") from None
            return version if isinstance(version, str) else None
        return None

    def manifests(self) -> list[str]:
        """manifest.json, then the split manifests (sorted), as names in the export."""
        if not self.has(MANIFEST):
            raise ManifestError("There is no manifest.json in it: is it a Paperless-ngx export "
                                "(document_exporter)?")
        return [MANIFEST, *sorted(name for name in self._names()
                                  if name.endswith(SPLIT_SUFFIX) and name != MANIFEST)]

    def records(self, name: str) -> Iterator[Any]:
        with self.open(name) as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8", errors="strict")
            try:
                yield from array_items(text, MAX_ITEM_CHARS, name)
            except UnicodeDecodeError:
                raise ManifestError(f"{name} is not UTF-8 text.") from None

    def _small(self, name: str) -> bytes | None:
        if not self.has(name):
            return None
        with self.open(name) as stream:
            raw = stream.read(MAX_METADATA_BYTES + 1)
        if len(raw) > MAX_METADATA_BYTES:
            raise ManifestError(f"{name} is larger than the exporter writes it.")
        return raw

    # -- per kind ----------------------------------------------------------------------------------
    def has(self, name: str) -> bool:
        raise NotImplementedError

    def size(self, name: str) -> int:
        raise NotImplementedError

    def open(self, name: str) -> BinaryIO:
        raise NotImplementedError

    def _names(self) -> Iterator[str]:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self) -> Export:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class DirectoryExport(Export):
    def __init__(self, origin: Path):
        super().__init__(origin)
        self.root = origin.resolve()

    def _path(self, name: str) -> Path | None:
        """The regular file `name` names inside the export, or None."""
        path = self.root / clean_name(name)
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):
            return None
        if not real.is_relative_to(self.root) or not real.is_file():
            return None
        return real

    def has(self, name: str) -> bool:
        return self._path(name) is not None

    def size(self, name: str) -> int:
        path = self._path(name)
        if path is None:
            raise FileNotFoundError(name)
        return path.stat().st_size

    def open(self, name: str) -> BinaryIO:
        path = self._path(name)
        if path is None:
            raise FileNotFoundError(name)
        return open(path, "rb")  # noqa: SIM115 -- the caller's to close

    def _names(self) -> Iterator[str]:
        seen = 0
        for directory, folders, files in os.walk(self.root):  # links to folders not followed
            folders.sort()
            for file_name in sorted(files):
                seen += 1
                if seen > MAX_ENTRIES:
                    raise ManifestError(f"The export holds more than {MAX_ENTRIES:,} files.")
                yield (Path(directory) / file_name).relative_to(self.root).as_posix()


class ZipExport(Export):
    def __init__(self, origin: Path):
        super().__init__(origin)
        try:
            self.zip = zipfile.ZipFile(origin)
        except (zipfile.BadZipFile, OSError) as error:
            raise ManifestError(f"{origin.name} is not a zip file that can be read ({error})."
                                ) from None
        infos = self.zip.infolist()
        if len(infos) > MAX_ENTRIES:
            raise ManifestError(f"The zip holds more than {MAX_ENTRIES:,} entries.")
        self.entries: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            if info.is_dir():
                continue
            try:
                self.entries.setdefault(clean_name(info.filename), info)
            except UnsafeName:
                continue  # never looked up: a manifest's names are cleaned the same way

    def has(self, name: str) -> bool:
        return clean_name(name) in self.entries

    def size(self, name: str) -> int:
        return self.entries[clean_name(name)].file_size

    def open(self, name: str) -> BinaryIO:
        info = self.entries.get(clean_name(name))
        if info is None:
            raise FileNotFoundError(name)
        return self.zip.open(info)  # type: ignore[return-value]

    def _names(self) -> Iterator[str]:
        yield from sorted(self.entries)

    def close(self) -> None:
        self.zip.close()


def open_export(path: Path) -> Export:
    if path.is_dir():
        return DirectoryExport(path)
    if path.is_file():
        return ZipExport(path)
    raise ManifestError(f"{path} is neither a directory nor a zip file.")
