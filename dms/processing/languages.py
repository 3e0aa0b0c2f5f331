"""OCR languages: the allowed values of a document's `lang` (api.md, "OCR status") are the languages
the workers that will read it have installed for Tesseract. Each worker asks its `tesseract` command
once and publishes the answer (dms.processing.cluster); a node accepts the languages every live
worker shares (a document may land on any of them), or its own Tesseract's before any worker has
registered."""

from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import subprocess
import threading
import time
from typing import TypeGuard

from dms.errors import Invalid

log = logging.getLogger("dms.languages")

# "osd" is Tesseract's orientation-and-script model, not a language anyone reads a document in.
NOT_LANGUAGES = {"osd", "equ"}
LANGUAGE_CODE = re.compile(r"[A-Za-z_]+\Z")


@functools.lru_cache(maxsize=1)
def installed_languages() -> tuple[str, ...]:
    """Sorted language codes Tesseract can read; empty when Tesseract is not installed."""
    command = shutil.which("tesseract")
    if command is None:
        log.warning("tesseract is not installed: documents cannot be OCRed")
        return ()
    # A PyInstaller bundle sets LD_LIBRARY_PATH for itself; the system tesseract must not see it.
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    try:
        result = subprocess.run([command, "--list-langs"], capture_output=True, text=True,
                                timeout=30, env=env, check=True)
    except (OSError, subprocess.SubprocessError) as error:
        log.warning("could not list Tesseract's languages: %s", error)
        return ()
    codes = {line.strip() for line in result.stdout.splitlines()[1:]}
    return tuple(sorted(c for c in codes if LANGUAGE_CODE.match(c) and c not in NOT_LANGUAGES))


ACCEPTED_CACHE_SECONDS = 2.0  # how long a node keeps the workers' answer
_accepted: tuple[float, tuple[str, ...]] = (-ACCEPTED_CACHE_SECONDS, ())
_accepted_lock = threading.Lock()


def accepted_languages() -> tuple[str, ...]:
    """The languages a document may ask for now (see the module docstring)."""
    global _accepted
    now = time.monotonic()
    with _accepted_lock:
        at, languages = _accepted
        if now - at < ACCEPTED_CACHE_SECONDS:
            return languages
    from dms.processing.cluster import (
        shared_languages,  # dms.processing.cluster needs the database: import late
    )

    shared = shared_languages()
    languages = shared if shared is not None else installed_languages()
    with _accepted_lock:
        _accepted = (now, languages)
    return languages


def is_valid_lang(lang: object) -> TypeGuard[str]:
    """`eng`, or a combination such as `eng+deu`, of accepted languages."""
    if not isinstance(lang, str) or not lang:
        return False
    parts = lang.split("+")
    accepted = accepted_languages()
    return len(set(parts)) == len(parts) and all(p in accepted for p in parts)


def check_lang(lang: object, field: str = "lang") -> str:
    """A valid OCR language, or the 400 that lists the installed ones."""
    if not is_valid_lang(lang):
        allowed = ", ".join(accepted_languages()) or "none (Tesseract is not installed)"
        raise Invalid(f"Unknown OCR language {lang!r}; installed languages: {allowed} "
                      "(combine them with +, e.g. eng+deu).", field)
    return lang
