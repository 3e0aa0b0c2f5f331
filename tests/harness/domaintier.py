"""The fast domain tier: the domain's services on a database that is already migrated, in this
process, with no server thread and no socket (docs/development.md, "The tiers of tests").

SQLite: `dms migrate` makes one file per session (in a child process, so that this process'
database object stays unbound until a test binds it); each test copies it into its own data
dir. PostgreSQL: each test's database is already a clone of the cluster's migrated template
(the `config` fixture's). Opening either finds nothing to migrate.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from dms.config import Config
from dms.db.models import Node, User
from dms.domain import accounts, tree
from dms.domain.services import Services
from dms.errors import DomainError
from dms.runtime import Runtime, open_installation
from tests.harness.database import snapshot

REPOSITORY = Path(__file__).resolve().parents[2]


def migrated_sqlite(directory: Path) -> Path:
    """A new SQLite database under `directory`, migrated by `dms migrate`; its path."""
    subprocess.run([sys.executable, "-m", "dms", "migrate", "--data-dir", str(directory)],
                   check=True, capture_output=True, timeout=120, cwd=REPOSITORY)
    return directory / "dms.db"


@contextmanager
def domain_services(config: Config, template: Path | None,
                    workers: bool = False) -> Iterator[Services]:
    """The services of `config`'s installation: its SQLite file copied from `template` first
    (None: PostgreSQL, already a clone). `workers`: the queue's workers and the search indexer
    run too (a document uploaded is read; a search finds it), still without a socket."""
    if template is not None:
        config.data_dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(template, config.db_path)
    runtime = Runtime(config, open_installation(config))
    if workers:
        runtime.start(index=True, read_pages=True)
    try:
        yield runtime.services
    finally:
        runtime.stop()


def new_user(username: str, password: str = "user-password-1", **attributes) -> User:
    """A user made by the domain, as the admin's POST /users/ and change-password would."""
    return accounts.create_user(username, password, **attributes)


def home_id(user: User) -> str:
    """The id of `user`'s .home folder."""
    return tree.special_folder(user, Node.HOME).id


def assert_refused(config: Config, call: Callable[[], object], code: str, detail: str,
                   field: str | None) -> None:
    """`call()` is refused with exactly this code, sentence and field (the pointer's tail through
    the API), and the database is as it was."""
    before = snapshot(config)
    with pytest.raises(DomainError) as refused:
        call()
    assert (refused.value.code, str(refused.value), refused.value.field) == (code, detail, field)
    assert snapshot(config) == before
