"""The exit statuses of `dms COMMAND`, named (docs/configuration.md says which each command
gives). Scripts and systemd read them, so their values never change."""

from __future__ import annotations

import enum


class ExitStatus(enum.IntEnum):
    DONE = 0
    # Started and failed, with one line on standard error; also what a command was asked to
    # find: `dms verify`'s problems, the files `dms import` refused.
    FAILED = 1
    # Refused before anything started: a wrong setting, an unknown user, a password on the
    # command line (argparse's own usage errors exit with it too).
    REFUSED = 2
