"""The fast domain tier: the domain's services on a database that is already migrated, in this
process, with no server thread and no socket (docs/development.md, "The tiers of tests").

SQLite: `dms migrate` makes one file per session (in a child process, so that this process'
database object stays unbound until a test binds it); each test copies it into its own data
dir. PostgreSQL: each test's database is already a clone of the cluster's migrated template
(the `config` fixture's). Opening either finds nothing to migrate.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from dms import search
from dms.config import Config
from dms.db import database, release_connection
from dms.db.models import Node, User
from dms.domain import accounts, documents, history, tags, tree, uploads
from dms.domain.services import Services
from dms.errors import DomainError
from dms.runtime import Runtime, open_installation
from tests.harness.database import snapshot
from tests.harness.waiting import wait_indexed, wait_status_ended

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


# -- documents that get read: domain_services(..., workers=True) -----------------------------------

def inbox_id(user: User) -> str:
    """The id of `user`'s .inbox folder."""
    return tree.special_folder(user, Node.INBOX).id


def new_folder(services: Services, user: User, title: str, parent_id: str) -> str:
    """A folder made as POST /folders/ makes it: its id."""
    return tree.create_node(user, Node.FOLDER, {"title": title}, parent_id,
                            parent_field="parent", default_lang=services.config.ocr_lang,
                            max_depth=services.config.max_tree_depth).id


def new_document(services: Services, user: User, title: str, parent_id: str | None = None) -> str:
    """A document without a file, made as POST /nodes/ makes it (in the .inbox unless
    `parent_id`): its id."""
    return tree.create_node(user, Node.DOCUMENT, {"title": title}, parent_id or inbox_id(user),
                            parent_field="parent", default_lang=services.config.ocr_lang,
                            max_depth=services.config.max_tree_depth).id


def upload_file(services: Services, user: User, document_id: str, name: str,
                data: bytes) -> Node:
    """`data` uploaded as the document's newest version, as PUT /documents/{id}/upload/ does."""
    return uploads.upload_version(services, user, document_id, io.BytesIO(data), len(data), name)


def wait_read(document_id: str, timeout: float = 90) -> list[str]:
    """Poll the document's row until its reading ended (the workers of
    domain_services(workers=True)); every status seen, in order."""
    return wait_status_ended(lambda: database.execute_sql(
        "SELECT ocr_status FROM node WHERE id = ?", (document_id,)).fetchone()[0], timeout, 0.05)


def read_document(services: Services, user: User, title: str, name: str, data: bytes,
                  parent_id: str | None = None, timeout: float = 90) -> str:
    """A document made, its first file uploaded and read to the end (succeeded): its id."""
    document_id = new_document(services, user, title, parent_id)
    upload_file(services, user, document_id, name, data)
    assert wait_read(document_id, timeout)[-1] == "succeeded"
    return document_id


def filed(user: User, document_id: str) -> tuple[str, str, list[str]]:
    """(title, parent folder id, tag names) of the user's live document."""
    node = tree.owned_node(user, document_id, Node.DOCUMENT)
    labels = tags.tags_of([node.id], user.id)[node.id]
    return node.title, node.parent_id, [tag["name"] for tag in labels]


def events_of(user: User, node_id: str) -> list[tuple[str, dict]]:
    """(action, details) of the node's history (GET /nodes/{id}/history/), oldest first."""
    return [(row.action, row.details)
            for row in reversed(history.history_of(user, node_id).fetch(0, 1000))]


def rules_applied(user: User, node_id: str) -> list[dict]:
    """The details of the document's rule_applied events, oldest first."""
    return [details for action, details in events_of(user, node_id) if action == "rule_applied"]


def page_ids(document_id: str) -> list[str]:
    """The ids of the pages of the document's latest version, in order."""
    latest = documents.latest_version(document_id)
    assert latest is not None
    return documents.page_ids([latest.id])[latest.id]


def stored_file(services: Services, version_id: str) -> bytes:
    """A version's file as the store holds it (what its download sends)."""
    return services.store.path(version_id).read_bytes()


def latest_file(services: Services, document_id: str) -> bytes:
    """The document's latest file (GET /documents/{id}/download/)."""
    latest = documents.latest_version(document_id)
    assert latest is not None
    return stored_file(services, latest.id)


def search_titles(services: Services, user: User, text: str) -> list[str]:
    """The titles GET /search/?q=`text` finds for `user` once the index caught up, sorted."""
    wait_indexed(services.config)
    return sorted(hit["title"] for hit in search.query(services.search, user, text))


def domain_thread(target: Callable[..., object], *args: object) -> threading.Thread:
    """A thread (not started) that calls `target(*args)` and then gives its database connection
    back, as a request thread does after each request: PostgreSQL's pool is bounded, and a thread
    that ends holding a connection keeps it from everyone."""
    def run() -> None:
        try:
            target(*args)
        finally:
            release_connection()
    return threading.Thread(target=run)
