"""Secrets dms must be able to read back (a mail account's IMAP password), sealed with AES-256-GCM
under a key kept in the data dir (`mail.key`, 32 random bytes, mode 0600), so the database and
its backups alone never reveal them. A sealed value is bound to its row (the GCM associated
data), so a value copied onto another row does not open there.

Several nodes on one database need the same key file in each data dir (README, "Several
machines"); a node with another key cannot open the values and says so, it does not guess."""

from __future__ import annotations

import base64
import functools
import os
import secrets
from pathlib import Path

from dms.files.storage import fsync_dir

KEY_FILE = "mail.key"
KEY_BYTES = 32
NONCE_BYTES = 12
PREFIX = "aesgcm1:"


class Unsealable(Exception):
    """The value was sealed with another key, or is damaged."""


def key_path(data_dir: Path) -> Path:
    return data_dir / KEY_FILE


def load_key(data_dir: Path) -> bytes:
    """The data dir's key, made on first use. Two processes making it at once end with one key:
    each writes its own file and links it into place; the link of the second fails."""
    path = key_path(data_dir)
    if not path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        draft = data_dir / f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
        descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(descriptor, secrets.token_bytes(KEY_BYTES))
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        try:
            os.link(draft, path)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
        fsync_dir(data_dir)  # the key outlives a power cut, as the rows sealed with it do
    stat = path.stat()
    return _read_key(str(path), stat.st_mtime_ns, stat.st_size, stat.st_ino)


@functools.lru_cache(maxsize=8)
def _read_key(path: str, mtime_ns: int, size: int, inode: int) -> bytes:
    """The key file's bytes, read once while it stays the same file (a page of share links
    unseals every slug with it); a replaced or rewritten file is read again."""
    key = Path(path).read_bytes()
    if len(key) != KEY_BYTES:
        raise Unsealable(f"{path} is not a key of {KEY_BYTES} bytes.")
    return key


def _gcm(key: bytes, nonce: bytes):
    """An AES-GCM cipher; pycryptodomex is imported by the first process that seals or opens a
    value, not by every server at start (an idle server's memory)."""
    from Cryptodome.Cipher import AES

    return AES.new(key, AES.MODE_GCM, nonce=nonce)


def seal(key: bytes, plain: str, bound_to: str) -> str:
    nonce = secrets.token_bytes(NONCE_BYTES)
    cipher = _gcm(key, nonce)
    cipher.update(bound_to.encode())
    sealed, tag = cipher.encrypt_and_digest(plain.encode())
    return PREFIX + base64.b64encode(nonce + tag + sealed).decode()


def unseal(key: bytes, value: str, bound_to: str) -> str:
    try:
        if not value.startswith(PREFIX):
            raise ValueError("unknown format")
        raw = base64.b64decode(value[len(PREFIX):], validate=True)
        nonce, tag = raw[:NONCE_BYTES], raw[NONCE_BYTES:NONCE_BYTES + 16]
        sealed = raw[NONCE_BYTES + 16:]
        cipher = _gcm(key, nonce)
        cipher.update(bound_to.encode())
        return cipher.decrypt_and_verify(sealed, tag).decode()
    except (ValueError, UnicodeDecodeError):
        raise Unsealable() from None
