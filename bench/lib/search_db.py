"""bench/search.py's database: owners and their folders and documents (with one page of text
each) written straight into a new data dir's SQLite file, in batches. Each owner has
CORRESPONDENTS correspondents and the document types of TYPES; each document one of each (in
turn), a date on the paper (a random day from 2015 to 2026) and a serial number, so that the
query language's fields and dates have something to find."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from bench.common import ADMIN_PASSWORD
from bench.lib.corpus import TextGenerator
from dms.db import database, open_database
from dms.db.models import Node, new_id
from dms.db.schema import migrate_schema
from dms.domain import accounts
from dms.domain.metadata import labels

FOLDER_SIZE = 1000
CORRESPONDENTS = [f"Sender {number:02d}" for number in range(20)]
TYPES = ["Invoice", "Letter", "Contract", "Receipt", "Statement"]
FIRST_YEAR, LAST_YEAR = 2015, 2026
OWNER_PASSWORD = "bench-owner-password-1"


# -- the database ---------------------------------------------------------------------------------
NODE_FOLDER = ("INSERT INTO node (id, owner_id, parent_id, kind, title, title_sort, created_at, "
               "updated_at) VALUES (?, ?, ?, 'folder', ?, ?, ?, ?)")


NODE_DOCUMENT = ("INSERT INTO node (id, owner_id, parent_id, kind, title, title_sort, lang, ocr, "
                 "ocr_status, file_name, size, page_count, created_at, updated_at, "
                 "correspondent_id, document_type_id, document_date, asn) "
                 "VALUES (?, ?, ?, 'document', ?, ?, 'eng', 1, 'succeeded', ?, ?, 1, ?, ?, "
                 "?, ?, ?, ?)")
VERSION = ("INSERT INTO document_version (id, document_id, number, file_name, mime_type, size, "
           "page_count, sha256, lang, created_at) "
           "VALUES (?, ?, 1, ?, 'application/pdf', ?, 1, ?, 'eng', ?)")
PAGE = "INSERT INTO page (id, version_id, number, text, method) VALUES (?, ?, 1, ?, 'layer')"


class Owner:
    def __init__(self, user_id: str, username: str, password: str | None, home_id: str):
        self.id, self.username, self.password, self.home_id = user_id, username, password, home_id
        self.documents = 0
        self.folder_id: str | None = None
        self.correspondents: list[str] = []  # ids, in the order of CORRESPONDENTS
        self.types: list[str] = []  # ids, in the order of TYPES


def create_owners(count: int, queried: int) -> list[Owner]:
    owners = []
    for number in range(count):
        username = "admin" if number == 0 else f"owner{number:03d}"
        password = ADMIN_PASSWORD if number == 0 else OWNER_PASSWORD if number == queried else None
        attributes = {"is_superuser": True, "is_staff": True} if number == 0 else {}
        user = accounts.create_user(username, password, **attributes)
        home = Node.get((Node.owner == user.id) & (Node.special == Node.HOME))
        owner = Owner(user.id, username, password, home.id)
        owner.correspondents = [labels.create(labels.CORRESPONDENTS, user, {"name": name}).id
                                for name in CORRESPONDENTS]
        owner.types = [labels.create(labels.DOCUMENT_TYPES, user, {"name": name}).id
                       for name in TYPES]
        owners.append(owner)
    return owners


def add_documents(owners: list[Owner], size: int, words: int, batch: int,
                  generator: TextGenerator, queried: Owner) -> Counter:
    """`size` documents, the owners in turn, inserted `batch` at a time (one transaction each).
    Returns how often each rare word occurs in the queried owner's documents."""
    rare_counts: Counter = Counter()
    connection = database.connection()
    started = last_report = time.perf_counter()
    for first in range(0, size, batch):
        now = time.strftime("%Y-%m-%d %H:%M:%S.000000", time.gmtime())
        folders, nodes, versions, pages = [], [], [], []
        for number in range(first, min(first + batch, size)):
            owner = owners[number % len(owners)]
            if owner.documents % FOLDER_SIZE == 0:
                owner.folder_id = new_id()
                title = f"Folder {owner.documents // FOLDER_SIZE:03d}"
                folders.append((owner.folder_id, owner.id, owner.home_id, title, title.casefold(),
                                now, now))
            owner.documents += 1
            document_id, version_id = new_id(), new_id()
            title = generator.title()
            text, rare = generator.text(words)
            if owner is queried:
                rare_counts[rare] += 1
            file_name = f"doc-{number}.pdf"
            day = (f"{generator.rng.randrange(FIRST_YEAR, LAST_YEAR + 1)}-"
                   f"{generator.rng.randrange(1, 13):02d}-{generator.rng.randrange(1, 29):02d}")
            nodes.append((document_id, owner.id, owner.folder_id, title, title.casefold(),
                          file_name, len(text) * 20, now, now,
                          owner.correspondents[owner.documents % len(CORRESPONDENTS)],
                          owner.types[owner.documents % len(TYPES)], day, owner.documents))
            versions.append((version_id, document_id, file_name, len(text) * 20, "0" * 64, now))
            pages.append((new_id(), version_id, text))
        with database.atomic():
            connection.executemany(NODE_FOLDER, folders)
            connection.executemany(NODE_DOCUMENT, nodes)
            connection.executemany(VERSION, versions)
            connection.executemany(PAGE, pages)
            # The triggers queued every new node for the indexer; the server's rebuild at
            # start-up covers them all (and is what this measures).
            connection.execute("DELETE FROM search_outbox")
        done = min(first + batch, size)
        if time.perf_counter() - last_report >= 15 or done == size:
            last_report = time.perf_counter()
            print(f"  inserted {done:,} of {size:,} documents "
                  f"({last_report - started:.0f} s)", flush=True)
    return rare_counts


def build_database(db_path: Path, size: int, owner_count: int, args,
                   words: list[str], rare: list[str]) -> tuple[list[Owner], Owner, Counter]:
    open_database(db_path)
    migrate_schema()
    database.execute_sql("PRAGMA synchronous = OFF")  # this loading connection only
    queried_number = 0 if owner_count == 1 else 1
    owners = create_owners(owner_count, queried_number)
    queried = owners[queried_number]
    generator = TextGenerator(words, rare, seed=8)
    rare_counts = add_documents(owners, size, args.words, args.batch, generator, queried)
    database.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    database.close()
    return owners, queried, rare_counts
