"""Metadata benchmark: a listing filtered by a correspondent or a custom field, or sorted by a
document's date or a custom field, against the same listing unfiltered, over 100,000 documents.

The target (../shared/docs/targets.md): "listing filtered by a custom field / a correspondent,
100,000 documents — measured against the unfiltered listing — <= 1.5x".

For each engine (SQLite in a temporary data dir; PostgreSQL in a throwaway cluster of Debian's
server binaries on loopback, fsync off: tests/harness/pgcluster.py) and each --layouts layout, one
user (the admin) gets --documents documents, written straight into the database with plain SQL in
transactions of --batch documents (as bench/scale.py does):
- `one`: all of them in one folder, `Big`; `spread`: in 100 folders of equal size (`Part 000` ...
  `Part 099`), the folder listing being timed on `Part 050`.
- 20 correspondents (made by dms.domain.metadata.labels), one of them on 80 % of the documents, in
  turn (4 % each), none on the other 20 %; three custom fields (dms.domain.metadata.fields):
  `Amount` (monetary, EUR) on 60 % of the documents, log-uniform from 5 to 2,000 (about half over
  100), `Paid` (boolean, false on about 30 % of them) on the same documents, `Due` (date,
  2023-2025) on 30 % (a part of those with an Amount); each value's columns are those
  dms.domain.metadata.fields.encode() writes. 90 % of the documents carry a document date
  (2020-2025), the others fall back to their upload date; titles are a word and a number, so that
  title order, id order and insertion order differ.
- The search marks the rows' triggers make are dropped: on SQLite the search_outbox rows are
  deleted in each loading transaction (the server's start-up builds its index from every node and
  is waited for before anything is timed); on PostgreSQL the custom field values are written with
  `session_replication_role = replica` (their marks would only recompute each document's
  heading, which holds no word of a monetary, boolean or date value), which also holds back the
  trigger copying each document's listing keys onto its values (migration 0022): the loader
  copies them after, with dms's own statement (COPY_VALUE_KEYS).
- No ANALYZE on SQLite: dms never runs one, so its planner goes by its rules, not statistics
  (PostgreSQL's autovacuum gathers them; the loader runs VACUUM ANALYZE as it would).
Then `dms serve` (one process, DMS_OCR_WORKERS=1) answers, over one keep-alive connection as the
admin, for the folder listing (GET /api/nodes/{folder}/) and GET /api/documents/, page[size]=100,
page 1 and the middle page of each listing's own pages, the cases:
  unfiltered (the limit); correspondent=<one of the 20>; correspondent=none;
  custom_field_query=["Paid","exact",false]; ["Amount","gt",100];
  ["AND",[["Paid","exact",false],["Due","range",["2024-01-01","2024-12-31"]]]];
  sort=document_date; sort=-cf_<Amount's id>.
Each case is timed alternately with the unfiltered listing at the same page position (request by
request, so that the machine's noise hits both alike), --warmup then --runs requests of each; it
prints p50/p95 of the case and of the unfiltered listing timed beside it, and their ratios
(p50 to p50, p95 to p95) marked against 1.5x. Each answer's `meta.pagination.count` is checked
against the count the generated data gives, and the first row of the sorted pages against the
order asked for. With --explain (the default) each engine's query plans of the cases over 1.5x
are printed: the exact count and page SQL the listing runs (dms.domain.listings), EXPLAIN QUERY
PLAN on SQLite, EXPLAIN ANALYZE on PostgreSQL, each with parameters' values (custom
plans). It never asserts.

    .venv/bin/python -m bench.metadata [--documents 100000] [--layouts one spread]
        [--engines sqlite postgresql] [--runs 50] [--warmup 10] [--no-explain]
    .venv/bin/python -m bench.metadata --documents 10000 --runs 20      # quick: checks it runs
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import random
import signal
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import ADMIN_PASSWORD, KeepAlive, ServerProcess, engine_target, machine
from bench.lib.bulk import many, stamp
from bench.lib.search_queries import percentile
from bench.lib.search_server import OutputDrain, wait_for_index
from dms.db import database, is_postgresql, open_database
from dms.db.models import COPY_VALUE_KEYS, Node, User, new_id
from dms.db.schema import migrate_schema
from dms.domain import accounts, listings
from dms.domain.metadata import fields as custom
from dms.domain.metadata import labels

TARGET = 1.5
CORRESPONDENTS = 20
FOLDERS = 100  # of the `spread` layout
SPREAD_TIMED = 50  # the folder of `spread` whose listing is timed
PAGE_SIZE = 100
WORDS = ("invoice electricity water insurance contract tax letter bank pension doctor rent "
         "phone internet car school garden").split()

FOLDER = ("INSERT INTO node (id, owner_id, parent_id, kind, title, title_sort, created_at, "
          "updated_at) VALUES (?, ?, ?, 'folder', ?, ?, ?, ?)")
DOCUMENT = ("INSERT INTO node (id, owner_id, parent_id, kind, title, title_sort, lang, ocr, "
            "ocr_status, file_name, size, page_count, created_at, updated_at, correspondent_id, "
            "document_date) VALUES (?, ?, ?, 'document', ?, ?, 'eng', TRUE, 'succeeded', ?, ?, 1, "
            "?, ?, ?, ?)")
VALUE = ("INSERT INTO custom_field_value (document_id, field_id, value_text, value_key, value_int, "
         "value_float, value_date, value_bool, value_cents, value_currency) "
         "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")


@dataclass
class Doc:
    """What the generator gave one document: enough to count each case's matches."""
    folder: int
    correspondent: int | None
    cents: int | None
    paid: bool | None
    due: str | None
    date: str  # document_date, or the upload date it falls back to


@dataclass
class Built:
    folder: str  # the timed folder's id
    folder_index: int
    correspondents: list[str]
    fields: dict[str, str]  # name -> id
    docs: list[Doc] = field(default_factory=list)


def a_date(rng: random.Random, first_year: int, last_year: int) -> str:
    first = dt.date(first_year, 1, 1).toordinal()
    return dt.date.fromordinal(rng.randint(first, dt.date(last_year, 12, 31).toordinal())) \
        .isoformat()


def load(target, layout: str, size: int, batch: int) -> Built:
    """The database of one run: the admin, their correspondents, fields and documents."""
    open_database(target)
    migrate_schema()
    if not is_postgresql():
        database.execute_sql("PRAGMA synchronous = OFF")  # this loading connection only
    user = accounts.create_user("admin", ADMIN_PASSWORD, is_superuser=True, is_staff=True)
    home = Node.get((Node.owner == user.id) & (Node.special == Node.HOME))
    correspondents = [labels.create(labels.CORRESPONDENTS, user, {"name": f"Sender {n:02d}"}).id
                      for n in range(CORRESPONDENTS)]
    definitions = {}
    for name, data_type, extra in (("Amount", "monetary", {"default_currency": "EUR"}),
                                   ("Paid", "boolean", {}), ("Due", "date", {})):
        row = custom.create_field(user, {"name": name, "data_type": data_type,
                                         "extra_data": extra})
        definitions[name] = custom.definition(row)
    now = stamp()
    folders = [(new_id(), user.id, home.id, title, title.casefold(), now, now)
               for title in (["Big"] if layout == "one" else
                             [f"Part {n:03d}" for n in range(FOLDERS)])]
    timed_index = 0 if layout == "one" else SPREAD_TIMED
    built = Built(folders[timed_index][0], timed_index, correspondents,
                  {name: definition.id for name, definition in definitions.items()})
    rng = random.Random(11)
    assigned = 0
    per_folder = math.ceil(size / len(folders))
    with database.atomic():
        many(FOLDER, folders)
    for first in range(0, size, batch):
        nodes, values = [], []
        for number in range(first, min(first + batch, size)):
            document_id = new_id()
            folder_index = number // per_folder
            correspondent = None
            if number % 5 != 4:  # 80 %, the 20 in turn
                correspondent = assigned % CORRESPONDENTS
                assigned += 1
            title = f"{rng.choice(WORDS)} {rng.randrange(1_000_000):06d}"
            document_date = a_date(rng, 2020, 2025) if rng.random() < 0.9 else None
            nodes.append((document_id, user.id, folders[folder_index][0], title,
                          title.casefold(), f"doc-{number}.pdf", 20_000, now, now,
                          correspondents[correspondent] if correspondent is not None else None,
                          document_date))
            cents = paid = due = None
            if number % 5 in (0, 1, 2):  # 60 %
                cents = round(math.exp(rng.uniform(math.log(500), math.log(200_000))))
                paid = rng.random() >= 0.3
                values.append(value_row(document_id, definitions["Amount"],
                                        f"EUR{cents // 100}.{cents % 100:02d}"))
                values.append(value_row(document_id, definitions["Paid"], paid))
                if number % 10 in (0, 1, 2):  # 30 %, all of them with an Amount
                    due = a_date(rng, 2023, 2025)
                    values.append(value_row(document_id, definitions["Due"], due))
            built.docs.append(Doc(folder_index, correspondent, cents, paid, due,
                                  document_date or now[:10]))
        with database.atomic():
            many(DOCUMENT, nodes)
            if is_postgresql():  # no search marks: see the docstring
                database.execute_sql("SET LOCAL session_replication_role = replica")
            many(VALUE, values)
            if not is_postgresql():  # the server's start-up build indexes every node
                database.execute_sql("DELETE FROM search_outbox")
    if is_postgresql():
        with database.atomic():
            database.execute_sql(COPY_VALUE_KEYS)
        database.execute_sql("VACUUM ANALYZE")
    else:
        database.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    database.close()
    return built


def value_row(document_id: str, definition: custom.FieldDef, value) -> tuple:
    columns = custom.encode(definition, value, "/bench")
    return (document_id, definition.id, *(columns[name] for name in custom.VALUE_COLUMNS))


# -- the cases ------------------------------------------------------------------------------------

@dataclass
class Case:
    name: str
    query: str  # the request's parameters beyond paging ('' for the limit)
    keeps: object  # Doc -> bool
    sort_check: str | None = None  # "date" or "amount": the first row's order is checked


def cases(built: Built) -> list[Case]:
    correspondent = 7
    amount = built.fields["Amount"]

    def cfq(query) -> str:
        return "custom_field_query=" + urllib.parse.quote(json.dumps(query, separators=(",", ":")))

    return [
        Case("unfiltered (the limit)", "", lambda d: True),
        Case("correspondent=<one of 20>",
             f"correspondent={built.correspondents[correspondent]}",
             lambda d: d.correspondent == correspondent),
        Case("correspondent=none", "correspondent=none", lambda d: d.correspondent is None),
        Case('cfq ["Paid","exact",false]', cfq(["Paid", "exact", False]),
             lambda d: d.paid is False),
        Case('cfq ["Amount","gt",100]', cfq(["Amount", "gt", 100]),
             lambda d: d.cents is not None and d.cents > 10_000),
        Case("cfq AND(Paid false, Due in 2024)",
             cfq(["AND", [["Paid", "exact", False],
                          ["Due", "range", ["2024-01-01", "2024-12-31"]]]]),
             lambda d: d.paid is False and d.due is not None and "2024-01-01" <= d.due
             <= "2024-12-31"),
        Case("sort=document_date", "sort=document_date", lambda d: True, "date"),
        Case("sort=-cf_<Amount>", f"sort=-cf_{amount}", lambda d: True, "amount"),
    ]


def path_of(base: str, case: Case, page: int) -> str:
    extra = f"&{case.query}" if case.query else ""
    return f"{base}?page[size]={PAGE_SIZE}{extra}&page[number]={page}"


def check_first_row(body: dict, case: Case, built: Built, expected_docs: list[Doc]) -> str | None:
    """None when page 1 starts where the sort says; else a sentence."""
    rows = body["data"]
    if not rows:
        return "page 1 is empty"
    attributes = rows[0]["attributes"]
    if case.sort_check == "date":
        earliest = min(d.date for d in expected_docs)
        if attributes.get("document_date") != earliest:
            return (f"ORDER: the first row's document_date is {attributes.get('document_date')!r}"
                    f", the earliest is {earliest!r}")
    if case.sort_check == "amount":
        values = {item["field"]: item["value"] for item in attributes.get("custom_fields", [])}
        first = values.get(built.fields["Amount"])
        top = max(d.cents for d in expected_docs if d.cents is not None)
        wanted = f"EUR{top // 100}.{top % 100:02d}"
        if first != wanted:
            without = sum(1 for row in rows if built.fields["Amount"] not in
                          {item["field"] for item in row["attributes"].get("custom_fields", [])})
            return (f"ORDER: the first row's Amount is {first!r}, the largest is {wanted!r}; "
                    f"{without} of page 1's {len(rows)} rows have no Amount (api.md: documents "
                    "without a value come last)")
    return None


def timed_pair(http: KeepAlive, path: str, base_path: str, warmup: int, runs: int) -> dict:
    """`path` and `base_path` alternately, request by request: p50/p95 of each (ms)."""
    for _ in range(warmup):
        http.get(base_path)
        http.get(path)
    own, base = [], []
    for number in range(runs):
        for which, target in ((own, path), (base, base_path)) if number % 2 else \
                ((base, base_path), (own, path)):
            start = time.perf_counter()
            http.get(target)
            which.append((time.perf_counter() - start) * 1000)
    own.sort()
    base.sort()
    return {"p50": percentile(own, 0.5), "p95": percentile(own, 0.95),
            "base_p50": percentile(base, 0.5), "base_p95": percentile(base, 0.95)}


def timed_alone(http: KeepAlive, path: str, warmup: int, runs: int) -> dict:
    for _ in range(warmup):
        http.get(path)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        http.get(path)
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return {"p50": percentile(samples, 0.5), "p95": percentile(samples, 0.95)}


def mark(ratio: float) -> str:
    return "ok" if ratio <= TARGET else "MISS"


def measure(http: KeepAlive, built: Built, args) -> list[dict]:
    """Every case on both listings, page 1 and the middle page; the rows of the report."""
    rows = []
    listings_timed = (("folder", f"/api/nodes/{built.folder}/",
                       [d for d in built.docs if d.folder == built.folder_index]),
                      ("documents", "/api/documents/", built.docs))
    for listing, base, docs in listings_timed:
        all_cases = cases(built)
        limit = all_cases[0]
        base_pages = json.loads(http.get(path_of(base, limit, 1)))["meta"]["pagination"]["pages"]
        for case in all_cases:
            first = json.loads(http.get(path_of(base, case, 1)))
            count = first["meta"]["pagination"]["count"]
            expected = sum(1 for d in docs if case.keeps(d))
            pages = first["meta"]["pagination"]["pages"]
            problems = []
            if count != expected:
                problems.append(f"COUNT: answered {count:,}, the data has {expected:,}")
            if case.sort_check:
                problem = check_first_row(first, case, built, docs)
                if problem:
                    problems.append(problem)
            for position, page, base_page in (("1", 1, 1),
                                              ("mid", pages // 2 + 1, base_pages // 2 + 1)):
                path, base_path = path_of(base, case, page), path_of(base, limit, base_page)
                if case is limit:
                    numbers = timed_alone(http, path, args.warmup, args.runs)
                    numbers.update(base_p50=numbers["p50"], base_p95=numbers["p95"])
                else:
                    numbers = timed_pair(http, path, base_path, args.warmup, args.runs)
                row = {"listing": listing, "case": case.name, "page": f"{page}/{pages}",
                       "position": position, "count": count, "query": case.query,
                       "problems": problems, **numbers,
                       "r50": numbers["p50"] / numbers["base_p50"],
                       "r95": numbers["p95"] / numbers["base_p95"]}
                rows.append(row)
                print_row(row, case is limit)
            for problem in problems:
                print(f"      ! {problem}", flush=True)
    return rows


HEADER = (f"  {'listing':<9} {'case':<33} {'page':>9} {'count':>7}  {'p50 ms':>7} {'p95 ms':>7}"
          f"  {'lim p50':>7} {'lim p95':>7}  {'x p50':>6}      {'x p95':>6}")


def print_row(row: dict, limit: bool) -> None:
    ratios = ("   (the limit)" if limit else
              f"  {row['r50']:5.2f}x {mark(row['r50']):<4} {row['r95']:5.2f}x {mark(row['r95'])}")
    print(f"  {row['listing']:<9} {row['case']:<33} {row['page']:>9} {row['count']:>7,}  "
          f"{row['p50']:7.2f} {row['p95']:7.2f}  {row['base_p50']:7.2f} {row['base_p95']:7.2f}"
          f"{ratios}", flush=True)


# -- why a case misses ----------------------------------------------------------------------------

def explain(target, built: Built, rows: list[dict]) -> None:
    """The plans of the count and page SQL of each case over the target (page 1 and, when it
    differs, the middle page), as dms.domain.listings builds them for the server."""
    missed = [row for row in rows if row["r50"] > TARGET or row["r95"] > TARGET]
    if not missed:
        return
    open_database(target)
    try:
        user = User.get(User.username == "admin")
        seen = set()
        for row in missed:
            key = (row["listing"], row["query"])
            query = dict(urllib.parse.parse_qsl(row["query"]))
            if row["listing"] == "folder":
                _, listing = listings.listing(user, built.folder, query.get("sort"), about=query)
            else:
                listing = listings.of_kind(user, Node.DOCUMENT, about=query)
            page = int(row["page"].split("/")[0])
            offset = (page - 1) * PAGE_SIZE
            if (*key, page) in seen:
                continue
            seen.add((*key, page))
            if key not in seen:
                seen.add(key)
                print(f"\n  -- {row['listing']}: {row['case']} (x p50 {row['r50']:.2f})")
                count_sql, count_params = listing.count_sql()
                plan(f"count: {count_sql}", count_sql, count_params)
            fetch_sql, fetch_params = listing.page_sql(offset, PAGE_SIZE)
            plan(f"page {page} (OFFSET {offset}): {fetch_sql}", fetch_sql, fetch_params)
    finally:
        database.close()


def plan(title: str, sql: str, params: tuple) -> None:
    print(f"     {title}")
    if is_postgresql():
        lines = [line for (line,) in database.execute_sql(
            f"EXPLAIN (ANALYZE, COSTS OFF) {sql}", params).fetchall()]
    else:
        started = time.perf_counter()
        database.execute_sql(sql, params).fetchall()
        took = (time.perf_counter() - started) * 1000
        levels: dict[int, int] = {}
        lines = []
        for node_id, parent, _, detail in database.execute_sql(f"EXPLAIN QUERY PLAN {sql}",
                                                               params).fetchall():
            levels[node_id] = levels.get(parent, -1) + 1
            lines.append("  " * levels[node_id] + detail)
        lines.append(f"(ran in {took:.1f} ms in-process)")
    for line in lines:
        print(f"       {line}")


# -- main -----------------------------------------------------------------------------------------

def run(engine: str, layout: str, args, cluster) -> list[dict]:
    where = ("one folder" if layout == "one" else
             f"{FOLDERS} folders of {math.ceil(args.documents / FOLDERS):,} (the listing: one of "
             "them)")
    print(f"\n== {engine}, {args.documents:,} documents in {where}; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    with tempfile.TemporaryDirectory(prefix="dms-bench-metadata-") as tmp:
        data_dir = Path(tmp) / "data"
        target, env = engine_target(engine, cluster, data_dir)
        started = time.perf_counter()
        built = load(target, layout, args.documents, args.batch)
        print(f"loaded in {time.perf_counter() - started:.0f} s"
              + (f"; dms.db {target.stat().st_size / 2**20:.0f} MiB" if engine == "sqlite"
                 else ""), flush=True)
        started = time.perf_counter()
        server = ServerProcess(data_dir, **env)
        drain = OutputDrain(server.process.stdout)
        try:
            http = KeepAlive(server.port, server.login())
            wait_for_index(server, http, started)
            print(f"server ready after {time.perf_counter() - started:.1f} s; each case timed "
                  f"alternately with the unfiltered listing's same page position, {args.warmup} "
                  f"warm-up + {args.runs} timed requests of each; page[size]={PAGE_SIZE}",
                  flush=True)
            print(HEADER)
            rows = measure(http, built, args)
            if drain.tracebacks:
                print(f"  the server printed {drain.tracebacks} traceback(s)")
        finally:
            server.stop()
        if args.explain:
            explain(target, built, rows)
    return rows


def summary(measured: dict) -> None:
    print(f"\n-- target: a filtered or sorted listing <= {TARGET}x the unfiltered one "
          "(the same listing and page position, timed beside it)")
    for (engine, layout), rows in measured.items():
        cases_rows = [row for row in rows if row["case"] != "unfiltered (the limit)"]
        over = [row for row in cases_rows if row["r50"] > TARGET or row["r95"] > TARGET]
        print(f"  {engine}, {layout}: {len(cases_rows) - len(over)} of {len(cases_rows)} within "
              f"(p50 and p95){'; over (x p50 / x p95):' if over else ''}")
        for row in over:
            print(f"    {row['listing']:<9} {row['case']:<33} page {row['position']:<3} "
                  f"{row['r50']:5.2f}x / {row['r95']:5.2f}x")
        wrong = sorted({problem for row in rows for problem in row["problems"]})
        for problem in wrong:
            print(f"    ! {problem}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--layouts", nargs="+", default=["one", "spread"],
                        choices=["one", "spread"])
    parser.add_argument("--engines", nargs="+", default=["sqlite", "postgresql"],
                        choices=["sqlite", "postgresql"])
    parser.add_argument("--runs", type=int, default=50, help="timed requests of each, per case")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--batch", type=int, default=10_000, help="documents per transaction")
    parser.add_argument("--no-explain", dest="explain", action="store_false",
                        help="do not print the query plans of the cases over the target")
    args = parser.parse_args()
    # A terminated run stops its servers and PostgreSQL cluster (the finally blocks) too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    print(f"machine: {machine()}")
    cluster = None
    if "postgresql" in args.engines:
        from tests.harness.pgcluster import Cluster
        cluster = Cluster().start()
        print(f"PostgreSQL: a throwaway cluster of {cluster.bin.parent.name} on loopback "
              "(fsync off, shared_buffers 64MB)")
    measured = {}
    try:
        for layout in args.layouts:
            for engine in args.engines:
                measured[(engine, layout)] = run(engine, layout, args, cluster)
    finally:
        if cluster:
            cluster.stop()
    summary(measured)


if __name__ == "__main__":
    main()
