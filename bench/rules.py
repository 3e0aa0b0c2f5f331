"""What rules cost per processed document (target: 50 rules in at most 5 ms per page of text).

One SQLite data dir, written through dms's own schema: one user with 50 rules of every algorithm
(12 `any`, 10 `all`, 10 `exact`, 10 `regex`, 8 `fuzzy`; a few match, most do not, as in a real
household's rules), and documents of 1, 10, 40 and 400 pages of letter-like text (about 2,500
characters a page). Each document is marked new and timed in-process, as the worker that read it
runs its rules (dms.domain.rules.filing): `prepare` (read the text, match all 50 rules: the
figure per page of text is its median over the pages) and applying what matched. In dms the
changes join the transaction that marks the reading ended, which commits anyway; here they are
timed in a transaction of their own, commit included (an upper bound). Rules look at the first
DMS_RULES_MAX_TEXT_CHARS (100,000) characters: past about 40 pages the cost stops growing, and
the per-page figure falls.

    .venv/bin/python -m bench.rules [--pages 1,10,40,400] [--documents 20] [--rules 50]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import tempfile
import time
from pathlib import Path

from dms.config import Config
from dms.db import database, document_scope, open_database, owner_scope, write_transaction
from dms.db.models import Node, new_id, utcnow
from dms.db.schema import migrate_schema
from dms.domain import accounts, tree
from dms.domain.rules import filing, store

PAGE_CHARS = 2500
WORDS = ("the of and to in invoice total amount customer number date payment account please "
         "electricity water insurance contract tax letter bank pension doctor rent phone "
         "internet car school garden meter reading period tariff balance due within days "
         "Stadtwerke Versicherung Rechnung Betrag Kunde Zahlung Vertrag Steuer Beitrag").split()
ANY = ["zebra giraffe", "pension", "quartz", "lottery jackpot", "volcano", "Kündigung",
       "dentist", "mortgage", "harbour", "telescope", "orchestra", "saxophone"]
ALL = ["tax letter", "zebra pension", "bank statement", "school trip", "car repair",
       "garden hose", "phone bill", "water meter", "doctor appointment", "rent increase"]
EXACT = ["total amount", "customer number 4711", "Deutsche Bahn", "vehicle tax", "gas supply",
         "annual statement", "final notice", "credit card", "parking ticket", "tax refund"]
REGEX = [r"INV-\d{4}-\d{4}", r"(?i)policy\s+no\.?\s*(\d+)", r"IBAN\s*DE\d{20}",
         r"\b\d{2}\.\d{2}\.\d{4}\b", r"(?i)kundennummer:?\s*(\d+)", r"Order #\d{6}",
         r"(?i)steuer-?id", r"\b[A-Z]{2}\d{9}\b", r"(a+)+$", r"(?i)reminder|mahnung"]
FUZZY = ["Allianz Versicherung", "Stadtwerke Musterstadt", "Finanzamt", "Krankenkasse",
         "Deutsche Rentenversicherung", "Hausverwaltung Schmidt", "Telekom Rechnung",
         "Sparkasse Kontoauszug"]


def page_text(generator: random.Random) -> str:
    words, size = [], 0
    while size < PAGE_CHARS:
        word = generator.choice(WORDS)
        words.append(word)
        size += len(word) + 1
    return " ".join(words)


def add_rules(user, count: int) -> None:
    specs = ([("any", p) for p in ANY] + [("all", p) for p in ALL]
             + [("exact", p) for p in EXACT] + [("regex", p) for p in REGEX]
             + [("fuzzy", p) for p in FUZZY])
    for index, (algorithm, pattern) in enumerate(specs[:count]):
        store.create_rule(user, {
            "name": f"rule {index:02d} {algorithm}", "order": index,
            "match": {"algorithm": algorithm, "pattern": pattern},
            "actions": {"add_tags": [f"tag {index}"],
                        "set_title": "{title} ({match})" if index % 7 == 0 else None}})


def add_document(user, inbox, pages: int, generator: random.Random) -> str:
    now = utcnow()
    node_id, version_id = new_id(), new_id()
    with write_transaction():
        Node.insert(id=node_id, owner=user.id, parent=inbox.id, kind=Node.DOCUMENT,
                    title=f"scan of {pages} pages", title_sort=f"scan of {pages} pages",
                    lang="eng", ocr=True, ocr_status="started", file_name="scan.pdf",
                    size=pages * PAGE_CHARS, page_count=pages, created_at=now,
                    updated_at=now).execute()
        database.execute_sql(
            "INSERT INTO document_version (id, document_id, number, file_name, mime_type, size, "
            "page_count, sha256, lang, created_at) VALUES (?, ?, 1, 'scan.pdf', "
            "'application/pdf', ?, ?, ?, 'eng', ?)",
            (version_id, node_id, pages * PAGE_CHARS, pages, "0" * 64,
             Node.created_at.db_value(now)))
        for start in range(1, pages + 1, 100):
            numbers = range(start, min(start + 100, pages + 1))
            database.execute_sql(
                "INSERT INTO page (id, version_id, number, text, method) VALUES "
                + ", ".join("(?, ?, ?, ?, 'text')" for _ in numbers),
                [v for number in numbers
                 for v in (new_id(), version_id, number, page_text(generator))])
        filing.mark_new(node_id, "api")
    return node_id


def run_rules(config: Config, owner_id: str, document_id: str) -> tuple[float, float]:
    """(ms matching, ms applying) of one new document's rules, as its worker runs them."""
    started = time.perf_counter()
    apply = filing.prepare(config, document_id)
    matched = time.perf_counter()
    with write_transaction(owner_scope(owner_id), document_scope(document_id)):
        apply()
    return (matched - started) * 1000, (time.perf_counter() - matched) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", default="1,10,40,400")
    parser.add_argument("--documents", type=int, default=20, help="documents of each size")
    parser.add_argument("--rules", type=int, default=50)
    args = parser.parse_args()
    sizes = [int(size) for size in args.pages.split(",")]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}")
    generator = random.Random(27)
    with tempfile.TemporaryDirectory(prefix="dms-bench-rules-") as tmp:
        config = Config(data_dir=Path(tmp))
        open_database(config.db_path)
        migrate_schema()
        user = accounts.create_user("admin", "bench-password", is_superuser=True, is_staff=True)
        inbox = tree.special_folder(user, Node.INBOX)
        add_rules(user, args.rules)
        print(f"{args.rules} rules; {args.documents} documents of each size; "
              f"{PAGE_CHARS} characters a page; rules look at the first "
              f"{config.rules_max_text_chars:,} characters")
        print(f"{'pages':>6} {'match p50':>10} {'p95':>8} {'per page':>10} "
              f"{'apply p50':>10}")
        for pages in sizes:
            ids = [add_document(user, inbox, pages, generator) for _ in range(args.documents)]
            run_rules(config, user.id, add_document(user, inbox, pages, generator))  # warm-up
            times = [run_rules(config, user.id, document_id) for document_id in ids]
            match = sorted(t[0] for t in times)
            apply = sorted(t[1] for t in times)
            print(f"{pages:>6} {statistics.median(match):8.2f} ms "
                  f"{match[max(0, int(len(match) * 0.95) - 1)]:6.2f} ms "
                  f"{statistics.median(match) / pages:7.3f} ms "
                  f"{statistics.median(apply):7.2f} ms", flush=True)
        database.close()


if __name__ == "__main__":
    main()
