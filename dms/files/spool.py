"""A request body written once: straight into `<data-dir>/tmp` while it arrives, hashed on the way,
then adopted by the store (a rename) instead of copied there a second time.

The HTTP server (dms.web.httpserver) hands each body's pieces to a SpooledBody as they come off
the socket. Up to `memory_limit` bytes stay in memory (JSON bodies, small files); past that the
body goes to a file of its own in the spool directory (mode 0600, a name no client chooses),
through a buffer of CHUNK bytes, and from then on its SHA-256, size and first bytes are kept as it
grows. The application reads it as `wsgi.input` (a SpooledInput); DirectoryStore.receive() asks
that input to give up its file (`adopt()`): flushed and no longer removed when the request ends
(fsynced only when the store keeps it: a body the checks refuse costs no sync of the disk). A
body nobody adopts is removed when the request is closed (or its connection drops mid-body);
after a crash, by the store's start-up sweep of tmp/. A body that cannot be
written (a full disk) is dropped as it arrives and its error raised to whoever reads or adopts
it, so that the answer is the application's (507), not a cut connection.

Threads: pieces are appended by the server's event loop until the body is complete; only then is
the body handed to one request thread, which reads or adopts it. The hashing (SHA-256 runs at
about the disk's speed) is not done in the event loop: each written chunk goes to one shared
hashing thread (hashlib releases the GIL), in order, at most MAX_PENDING chunks behind, so that
receiving and hashing use two cores and memory stays bounded; adopt() waits for the last chunk.
The MD5 that Paperless-ngx's clients look files up by (api.md §17) is made the same way on a
second shared thread: read again after the upload, it had halved a large upload's speed.
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

CHUNK = 1024 * 1024  # bytes gathered in memory between writes to the spool file
HEAD_BYTES = 8192  # the first bytes kept for sniffing the type
MAX_PENDING = 2  # chunks of a body written but not hashed yet, at most

_hashers: dict[str, ThreadPoolExecutor] = {}
_hasher_lock = threading.Lock()


def hashing_thread(name: str = "sha256") -> ThreadPoolExecutor:
    """The one thread that makes this kind of hash of spooled bodies, chunk after chunk in order
    (started by the first large body)."""
    with _hasher_lock:
        if name not in _hashers:
            _hashers[name] = ThreadPoolExecutor(max_workers=1,
                                                thread_name_prefix=f"dms-hash-{name}")
        return _hashers[name]


@dataclass
class SpooledFile:
    """A whole body on disk (written, not yet fsynced), now the caller's: its path, size, SHA-256
    and first bytes."""
    path: Path
    size: int
    sha256: str
    head: bytes
    md5: str


class SpooledBody:
    """One request body, in memory up to `memory_limit` bytes, else in a file in `directory`.
    Offers waitress' body-buffer interface: append(), __len__(), getfile(), close()."""

    def __init__(self, directory: Path, memory_limit: int):
        self.directory = directory
        self.memory_limit = memory_limit
        self.memory = bytearray()  # the body while it is small, then the chunk being gathered
        self.size = 0
        self.file: io.FileIO | None = None
        self.path: Path | None = None
        self.digest = hashlib.sha256()
        self.md5 = hashlib.md5(usedforsecurity=False)
        self.pending: deque[tuple[Future, Future]] = deque()
        self.head = b""
        self.reader: SpooledInput | None = None
        self.failure: OSError | None = None  # why the body could not be written

    def __len__(self) -> int:
        return self.size

    def __bool__(self) -> bool:
        return self.size > 0

    def append(self, data: bytes) -> None:
        self.size += len(data)
        if self.failure is not None:
            return  # the rest of a body that cannot be kept is read and dropped
        self.memory += data
        try:
            if self.file is None:
                if len(self.memory) > self.memory_limit:
                    self._to_file()
            elif len(self.memory) >= CHUNK:
                self._write_chunk()
        except OSError as error:
            self._fail(error)

    def _to_file(self) -> None:
        descriptor, name = tempfile.mkstemp(dir=self.directory, prefix="upload-")
        self.path = Path(name)
        self.file = io.FileIO(descriptor, "wb")
        self.head = bytes(self.memory[:HEAD_BYTES])
        self._write_chunk()

    def _write_chunk(self) -> None:
        chunk, self.memory = self.memory, bytearray()  # never changed again: no copy needed
        view = memoryview(chunk)
        while view:
            view = view[self.file.write(view):]
        self.pending.append((hashing_thread().submit(self.digest.update, chunk),
                             hashing_thread("md5").submit(self.md5.update, chunk)))
        while len(self.pending) > MAX_PENDING:
            for hashed in self.pending.popleft():
                hashed.result()

    def _fail(self, error: OSError) -> None:
        """The body cannot be kept (a full disk): drop what was written, remember why."""
        self.close()
        self.failure = error

    def _written(self) -> None:
        """Every byte in the file and hashed."""
        if self.memory:
            self._write_chunk()
        while self.pending:
            for hashed in self.pending.popleft():
                hashed.result()

    def getfile(self):
        """The body to read, from its first byte (called once it is complete)."""
        if self.failure is not None:
            return SpooledInput(self, None)
        if self.file is None:
            return io.BytesIO(bytes(self.memory))
        if self.reader is None:
            try:
                self._written()
            except OSError as error:
                self._fail(error)
                return SpooledInput(self, None)
            self.reader = SpooledInput(self, open(self.path, "rb"))  # noqa: SIM115 (the reader closes it)
        return self.reader

    def adopt(self) -> SpooledFile:
        """Give the spooled file to the caller, written (the store fsyncs what it keeps); the
        body is no longer removed when the request ends."""
        self._written()
        self.file.close()
        adopted = SpooledFile(self.path, self.size, self.digest.hexdigest(), self.head,
                              self.md5.hexdigest())
        self.path = None
        return adopted

    def close(self) -> None:
        """The request is over: remove the spool file unless it was adopted."""
        while self.pending:  # nobody wants the hashes any more
            for hashed in self.pending.popleft():
                hashed.cancel()
        for handle in (self.reader, self.file):
            if handle is not None:
                handle.close()
        if self.path is not None:
            self.path.unlink(missing_ok=True)
            self.path = None
        self.memory = bytearray()


def release(stream) -> None:
    """Remove a spooled body now unless it was adopted: the endpoint calls it when its handler
    is done, so that an answer (a refusal above all) leaves nothing in tmp/ behind it; waitress
    closes the body again when the request ends, which is then a no-op."""
    if isinstance(stream, SpooledInput):
        stream.body.close()


class SpooledInput(io.RawIOBase):
    """`wsgi.input` for a body spooled to a file: reads it like any file, or hands the file over
    (`adopt()`) so the store can keep it without copying."""

    def __init__(self, body: SpooledBody, file):
        super().__init__()
        self.body = body
        self.file = file

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        return self._file().readinto(buffer)

    def read(self, size: int = -1) -> bytes:
        return self._file().read(size)

    def readline(self, size: int = -1) -> bytes:
        return self._file().readline(size)

    def _file(self):
        if self.file is None:  # the body could not be written: say why to whoever reads it
            raise self.body.failure
        return self.file

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self._file().seek(offset, whence)

    def tell(self) -> int:
        return self._file().tell()

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
        super().close()

    def adopt(self) -> SpooledFile:
        return self.body.adopt()
