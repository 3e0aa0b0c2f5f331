"""OCR languages: the allowed values of a document's `lang` are the languages installed for
Tesseract (api.md §7), asked of the `tesseract` command once per process."""

from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import subprocess

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


def is_valid_lang(lang: object) -> bool:
    """`eng`, or a combination such as `eng+deu`, of installed languages."""
    if not isinstance(lang, str) or not lang:
        return False
    parts = lang.split("+")
    return len(set(parts)) == len(parts) and all(p in installed_languages() for p in parts)


def check_lang(lang: object, field: str = "lang") -> str:
    """A valid OCR language, or the 400 that lists the installed ones."""
    if not is_valid_lang(lang):
        allowed = ", ".join(installed_languages()) or "none (Tesseract is not installed)"
        raise Invalid(f"Unknown OCR language {lang!r}; installed languages: {allowed} "
                      "(combine them with +, e.g. eng+deu).", field)
    return lang
