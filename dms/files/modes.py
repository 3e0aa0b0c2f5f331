"""Owner-only file modes (docs/operations.md, "Who can read the files"): on a shared NAS any local
account could otherwise read every user's papers, the password hashes and the sealed mail passwords
with their key.

Every dms process creates what it writes owner-only — directories 0700, files 0600 — because its
entry point (dms.cli.main) sets the umask (`restrict_umask`), whatever the umask it was started
with; a library function never changes a process-wide setting behind its caller's back. Backups
are made 0600 explicitly. An installation made before (or files a person copied in) is tightened
at start: the data dir, the files dir and the entries at the top of the data dir (`tighten`). That
is enough to lock other accounts out of everything below, since a directory they cannot enter hides
its contents whatever their modes; reading every stored file's mode at each start would cost a
stat per file. `dms verify` reports what is still loose (`loose`), and `--repair` tightens it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

UMASK = 0o077
DIRECTORY_MODE, FILE_MODE = 0o700, 0o600
GROUP_AND_OTHERS = 0o077


def restrict_umask() -> None:
    """Everything this process creates from now on is owner-only (process-wide, inherited by the
    children it starts: Tesseract's output, the PDF readers)."""
    os.umask(UMASK)


def installation_paths(data_dir: Path, files_dir: Path) -> list[Path]:
    """What start-up tightens and verify checks: the data dir, the files dir (another mount, when
    DMS_FILES_DIR names one) and the data dir's own entries."""
    paths = [data_dir]
    if files_dir.resolve() != (data_dir / "files").resolve():
        paths.append(files_dir)
    if data_dir.is_dir():
        paths.extend(sorted(data_dir.iterdir()))
    return paths


def loose(paths: list[Path]) -> list[Path]:
    """The paths that group or others may read, write or enter (links are not followed: a link's
    own mode means nothing)."""
    found = []
    for path in paths:
        try:
            mode = path.lstat().st_mode
        except FileNotFoundError:
            continue
        if not stat.S_ISLNK(mode) and mode & GROUP_AND_OTHERS:
            found.append(path)
    return found


def tighten(paths: list[Path]) -> list[Path]:
    """Make the loose ones among `paths` owner-only (0700 a directory, 0600 anything else); the
    paths changed."""
    changed = loose(paths)
    for path in changed:
        mode = DIRECTORY_MODE if path.is_dir() else FILE_MODE
        os.chmod(path, mode, follow_symlinks=False)
    return changed
