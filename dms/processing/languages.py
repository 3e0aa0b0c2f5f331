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


MAX_LANGUAGES = 5  # languages one `+` combination may name: each slows Tesseract down
DEFAULT_CANDIDATES = ("eng", "deu")  # what DMS_OCR_LANG's default reads, where installed


def default_lang() -> str:
    """DMS_OCR_LANG when it is not set: every installed language among eng and deu (`eng+deu`
    on a fresh install, whose set-up installs both), `eng` when neither is found. Asks this
    node's Tesseract once per process (installed_languages is cached)."""
    installed = installed_languages()
    return "+".join(code for code in DEFAULT_CANDIDATES if code in installed) or "eng"


def lang_problem(lang: object) -> str | None:
    """Why `lang` is not an OCR language a document may ask for (one accepted language, or up to
    MAX_LANGUAGES of them joined by +), as a sentence naming the part at fault; None if it is."""
    if not isinstance(lang, str) or not lang:
        return "An OCR language is required, e.g. eng, or deu+eng for several."
    parts = lang.split("+")
    if len(parts) > MAX_LANGUAGES:
        return (f"At most {MAX_LANGUAGES} OCR languages may be combined; {lang[:100]!r} names "
                f"{len(parts)}.")
    accepted = accepted_languages()
    allowed = ", ".join(accepted) or "none (Tesseract is not installed)"
    for part in parts:
        if part not in accepted:
            return (f"Unknown OCR language {part[:100]!r}; installed languages: {allowed} "
                    "(combine them with +, e.g. eng+deu).")
    if len(set(parts)) != len(parts):
        return f"{lang!r} names a language twice; name each once."
    return None


def is_valid_lang(lang: object) -> TypeGuard[str]:
    """`eng`, or a combination such as `eng+deu`, of accepted languages."""
    return lang_problem(lang) is None


def check_lang(lang: object, field: str = "lang") -> str:
    """A valid OCR language, or the 400 that names the part at fault and the installed ones."""
    problem = lang_problem(lang)
    if problem is not None:
        raise Invalid(problem, field)
    assert isinstance(lang, str)
    return lang
