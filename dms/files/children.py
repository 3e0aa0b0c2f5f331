"""How dms starts itself as a child process: a hidden subcommand (`dms _pdf-reader`,
`dms _search-build`, `dms _mail-unpack`, `dms _rules-match`) run by the same Python, or by the
executable of a PyInstaller build, which is dms itself."""

from __future__ import annotations

import sys


def dms_command(*arguments: str) -> list[str]:
    """The command line of `dms ARGUMENTS...` as this process was started."""
    own = [sys.executable] if getattr(sys, "frozen", False) else [sys.executable, "-m", "dms"]
    return own + list(arguments)
