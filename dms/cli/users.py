"""The commands about users, straight on the database (no server needed): createsuperuser and
changepassword."""

from __future__ import annotations

import argparse
import getpass
import sys

from dms.config import Config


def read_password(from_stdin: bool) -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    first = getpass.getpass("Password: ")
    if getpass.getpass("Password (again): ") != first:
        raise SystemExit("dms: the two passwords differ; nothing changed.")
    return first


def manage_user(args: argparse.Namespace, config: Config) -> int:
    """createsuperuser and changepassword, straight on the database (no server needed)."""
    from dms.db.models import User
    from dms.db.schema import open_migrated
    from dms.domain import accounts
    from dms.errors import DomainError

    open_migrated(config)
    password = read_password(args.password_stdin)
    try:
        if args.command == "createsuperuser":
            accounts.create_user(args.username, password, is_superuser=True, is_staff=True)
            print(f"Superuser {args.username!r} created.")
        else:
            user = User.get_or_none(User.username == args.username)
            if user is None:
                print(f"dms: there is no user {args.username!r}.", file=sys.stderr)
                return 1
            accounts.set_password(user, password)
            print(f"Password changed for {args.username!r}.")
    except DomainError as error:
        print(f"dms: {error}", file=sys.stderr)
        return 1
    return 0
