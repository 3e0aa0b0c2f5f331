"""The commands about users, straight on the database (no server needed, a running one sees the
change at once): createsuperuser, createuser, changepassword, users, activate, deactivate."""

from __future__ import annotations

import argparse
import getpass
import sys

from dms.cli.status import ExitStatus
from dms.config import Config

COMMANDS = ("createsuperuser", "createuser", "changepassword", "users", "activate", "deactivate")


def read_password(from_stdin: bool) -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    first = getpass.getpass("Password: ")
    if getpass.getpass("Password (again): ") != first:
        print("dms: the two passwords differ; nothing changed.", file=sys.stderr)
        raise SystemExit(ExitStatus.FAILED)
    return first


def manage_user(args: argparse.Namespace, config: Config) -> ExitStatus:
    """Exit status 0 done, 1 refused (one line: an unknown user, a short password, the last
    active superuser)."""
    from dms.db.schema import open_migrated
    from dms.errors import DomainError

    open_migrated(config)
    try:
        if args.command == "users":
            print("\n".join(user_table()))
        elif args.command in ("activate", "deactivate"):
            from dms.domain import accounts

            accounts.set_active(args.username, args.command == "activate")
            print(f"User {args.username!r} {args.command}d.")
        else:
            return create_or_change(args)
    except DomainError as error:
        print(f"dms: {error}", file=sys.stderr)
        return ExitStatus.FAILED
    return ExitStatus.DONE


def create_or_change(args: argparse.Namespace) -> ExitStatus:
    from dms.db.models import User
    from dms.domain import accounts

    password = read_password(args.password_stdin)
    if args.command == "createsuperuser":
        accounts.create_user(args.username, password, is_superuser=True, is_staff=True)
        print(f"Superuser {args.username!r} created.")
    elif args.command == "createuser":
        accounts.create_user(args.username, password, is_staff=args.staff,
                             email=args.email or "")
        print(f"{'Staff user' if args.staff else 'User'} {args.username!r} created.")
    else:
        user = User.get_or_none(User.username == args.username)
        if user is None:
            print(f"dms: there is no user {args.username!r}.", file=sys.stderr)
            return ExitStatus.FAILED
        accounts.set_password(user, password)
        print(f"Password changed for {args.username!r}.")
    return ExitStatus.DONE


def user_table() -> list[str]:
    """`dms users`: every account, one line each, in columns."""
    from dms.domain import accounts

    rows = [("USERNAME", "ROLE", "ACTIVE", "JOINED")]
    for user in accounts.all_users():
        role = "superuser" if user.is_superuser else "staff" if user.is_staff else "user"
        rows.append((user.username, role, "yes" if user.is_active else "no",
                     user.date_joined.strftime("%Y-%m-%d")))
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    return ["  ".join([*(cell.ljust(width) for cell, width in zip(row, widths, strict=False)),
                       row[3]])
            for row in rows]
