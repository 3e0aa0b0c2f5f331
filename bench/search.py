"""Search benchmark: latency of GET /api/search/ over 10,000, 100,000 and 1,000,000 documents with
text, served by a real `dms serve` on its tantivy index; the index's build time and size, the size
of dms.db, and the server's RSS.

For each --sizes count and each --owners layout, in a fresh temporary data dir:

1. The database: schema by dms.db.open_database; the owners by dms.domain.accounts.create_user (`admin`,
   the first owner, is also the admin; with more owners `owner001`... — only the admin and the
   owner whose documents are queried get a password, hashing 100 scrypt passwords would only cost
   time); then the documents, bulk-inserted with plain SQL in transactions of --batch documents,
   generated batch by batch (memory stays flat): each a `node` row (kind 'document', ocr_status
   'succeeded', a title of two words and a year-month), one `document_version` row and ONE `page`
   row holding its text: --words words drawn from a Zipf distribution (exponent 1) over a
   vocabulary of --vocabulary English and German words (function words the most frequent, then
   real words, German compounds and English plurals; umlauts included), plus one of --rare-words
   made-up words (e.g. `kavomitu`) at a random place, so that rare words exist. Documents go to
   the owners in turn, in folders of 1,000 under each owner's .home. The triggers' search_outbox
   rows are deleted (the server's start-up rebuild covers every node). It prints the time this
   took and the size of dms.db (after a WAL checkpoint).
2. The index build: `dms serve` (DMS_OCR_WORKERS=1) finds no index in <data-dir>/search/ and
   builds it from the database; GET /health as the admin is polled every 0.2 s until
   `search.state` is "ready". It prints the seconds from starting the server process until then
   (and the server's own logged figure, which excludes the start-up), the folders and documents
   indexed, the index's size on disk (every file in <data-dir>/search/, and its segment count),
   and the server's RSS (VmRSS, of which anonymous and file-backed) at its peak during the build
   (sampled at each poll), right after it, and after the queries. The index is memory-mapped:
   queries read it through the page cache, so the page cache it wants to stay fast is its size
   on disk; the file-backed part of the RSS is the shared libraries (~20 MiB) plus the pages of
   the index the server has touched. The indexer's writer may still merge segments after
   "ready": the segment count is printed again after the queries.
3. Queries, over one keep-alive connection logged in as the owner whose documents are queried
   (with one owner: all documents; with 100: 1/100 of them), one class after the other; each
   class is a list of --queries queries cycled through 20 warm-up requests and then --runs timed
   ones (sequential, as in ../shared/docs/targets.md): "common word" — the most frequent words of
   the vocabulary (the function words: in nearly every document); "rare word" — made-up words
   that occur in the queried owner's documents; "two words" — one of the 300 most frequent
   content words and any content word; "prefix 3/4/5" — the first 3, 4 or 5 letters of content
   words (dms makes every query word a prefix). It prints per class the median number of results
   (dms returns at most 100, best first) and p50/p95/p99 in ms, then the targets (p95 <= 20 ms for
   every class at 100,000 documents, <= 50 ms at 1,000,000) and the classes over them.

The load average is printed before each layout: the machine may be shared. It prints numbers and
never asserts.

    .venv/bin/python -m bench.search [--sizes 10000 100000 1000000] [--owners 1 100] [--runs 300]
        [--queries 50] [--words 200] [--vocabulary 4000] [--rare-words 5000] [--batch 10000]
    .venv/bin/python -m bench.search --sizes 2000 --owners 1 --runs 50     # quick: checks it runs
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import random
import statistics
import tempfile
import threading
import time
import urllib.parse
from collections import Counter
from pathlib import Path

from bench.common import ADMIN_PASSWORD, KeepAlive, ServerProcess, machine
from dms.domain import accounts
from dms.db import database, open_database
from dms.db.models import Node, new_id

FOLDER_SIZE = 1000
OWNER_PASSWORD = "bench-owner-password-1"
WARMUP = 20
MAX_RESULTS = 100  # dms's default limit
POLL_SECONDS = 0.2
BUILD_TIMEOUT_SECONDS = 3 * 3600
TIMESTAMP = "%Y-%m-%d %H:%M:%S.%f"
TARGETS_MS = {100_000: 20.0, 1_000_000: 50.0}  # p95 of every class, ../shared/docs/targets.md

ENGLISH = """
account address agreement amount annual answer application appointment approval april
arrival article assessment assistance attachment august balance bank benefit bill board
booking branch budget building business calendar cancellation capital card case certificate
change charge claim client closing company complaint condition confirmation contact contract
copy cost council country court coverage credit customer damage date deadline debit december
delivery department deposit description design detail director discount district doctor
document draft driver employee employer energy engineer entry estimate event evidence example
expense export february fee file finance form freight friday fund garden government guarantee
health heating history holiday hospital house income information insurance interest invoice
item january job july june key kitchen labour land lease letter licence limit loan manager
march market may meeting member message method mileage monday month mortgage name notice
november number october office order owner package page parcel partner payment pension period
permit phone plan policy position premium price product profit project property purchase
quantity quarter question rate receipt record reference refund region registration reminder
rent repair report request reservation result return revenue review salary sale saturday
schedule school service settlement share shipment signature statement station storage street
subscription summary sunday supplier support survey tax teacher telephone tenant term thursday
ticket total training transfer travel treatment tuesday unit update usage user value vehicle
vendor warranty water wednesday week work year annual approved complete current due early
final general monthly net new official open overdue paid pending personal previous private
public quarterly received regular remaining signed special standard total urgent valid weekly
yearly accept add apply arrange attach book calculate cancel check confirm deliver describe
enclose extend forward include inform issue manage notify order pay provide receive refer
register remind renew replace request return review send settle ship sign submit transfer
update verify
""".split()

GERMAN = """
Abrechnung Absender Adresse Angebot Anhang Anlage Anmeldung Anschrift Antrag Antwort Arbeit
Arbeitgeber Arzt Auftrag Ausgabe Auszahlung Auto Bank Beitrag Bescheid Bescheinigung
Bestätigung Bestellung Betrag Betreff Betrieb Bewerbung Bezahlung Bürgeramt Datum Dienst
Dokument Druck Eingang Einkommen Einnahme Einzug Empfänger Ende Entwurf Erklärung Erstattung
Fahrzeug Familie Finanzamt Firma Forderung Formular Frist Führerschein Gebühr Gehalt Gemeinde
Genehmigung Gericht Geschäft Gesundheit Gewinn Grundstück Gutschrift Gutachten Haftpflicht
Handwerker Haus Haushalt Heizung Hinweis Höhe Jahr Kasse Kauf Kaution Kellerraum Kind
Kindergeld Kosten Krankenkasse Kredit Kunde Kündigung Leistung Lieferung Lohn Mahnung Miete
Mieter Mitglied Monat Nachweis Nebenkosten Nummer Nutzung Öffnungszeiten Ort Pflege Police
Post Praxis Preis Prüfung Quittung Rate Rechnung Reise Rente Reparatur Rückzahlung Schaden
Schreiben Schule Sozialversicherung Steuer Strom Stunde Summe Tarif Termin Überweisung
Umzug Unterlagen Unterschrift Urlaub Verbrauch Vereinbarung Verein Verfahren Vergütung
Verlängerung Vermieter Vermögen Versicherung Vertrag Vollmacht Vorgang Vorschuss Wasser
Wohnung Zahlung Zählerstand Zeitraum Zeugnis Zins Zulage Zusage Zuschuss
aktuell allgemein amtlich bar beglichen bezahlt dringend einmalig fällig gültig jährlich
monatlich offen persönlich pünktlich schriftlich sofort überfällig vierteljährlich vorläufig
zusätzlich zuständig abschließen anfordern beantragen begleichen bestätigen bezahlen einreichen
erhalten erstatten kündigen mahnen prüfen senden überweisen unterschreiben verlängern
zahlen zustellen
""".split()

FUNCTION_WORDS = """the of and to in for on with by at from this that is are was be as your our
we you it not or please der die das und zu den mit von für ist im auf dem nicht ein eine des
Sie wir Ihre unser bitte""".split()


def vocabulary(size: int, rng: random.Random) -> list[str]:
    """Function words first (the most frequent), then real words, then German compounds and
    English plurals until `size` words; the content words in random order."""
    words = list(dict.fromkeys(ENGLISH + GERMAN))
    nouns = [word for word in GERMAN if word[0].isupper()]
    known = set(words) | set(FUNCTION_WORDS)
    while len(words) + len(FUNCTION_WORDS) < size:
        if rng.random() < 0.75:
            first, second = rng.sample(nouns, 2)
            joint = "s" if first.endswith(("ung", "heit", "keit", "ion", "tät", "schaft")) else ""
            word = first + joint + second.lower()
        else:
            word = rng.choice(ENGLISH) + "s"
        if word not in known:
            known.add(word)
            words.append(word)
    rng.shuffle(words)
    return (FUNCTION_WORDS + words)[:size]


def rare_words(count: int, known: set[str], rng: random.Random) -> list[str]:
    """Made-up words of four consonant-vowel syllables (`kavomitu`): none is a real word, a
    vocabulary word, or (all being 8 letters) a prefix of another."""
    consonants, vowels = "bdfgklmnprstvz", "aeiou"
    words: dict[str, None] = {}
    while len(words) < count:
        word = "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(4))
        if word not in known:
            words[word] = None
    return list(words)


class TextGenerator:
    """Texts and titles. The Zipf weights are cumulated once: random.choices with weights= would
    cumulate them again at every call."""

    def __init__(self, words: list[str], rare: list[str], seed: int):
        self.words = words
        self.content = words[len(FUNCTION_WORDS):]
        self.rare = rare
        self.cumulative = list(itertools.accumulate(1 / rank for rank in range(1, len(words) + 1)))
        self.rng = random.Random(seed)

    def text(self, count: int) -> tuple[str, str]:
        """(the text, the rare word in it)."""
        chosen = self.rng.choices(self.words, cum_weights=self.cumulative, k=count)
        rare = self.rng.choice(self.rare)
        chosen.insert(self.rng.randrange(count + 1), rare)
        return " ".join(chosen) + ".", rare

    def title(self) -> str:
        return " ".join(self.rng.choices(self.content, k=2)) + \
            f" {self.rng.randrange(2000, 2026)}-{self.rng.randrange(1, 13):02d}"


# -- the database ---------------------------------------------------------------------------------
NODE_FOLDER = ("INSERT INTO node (id, owner_id, parent_id, kind, title, title_sort, created_at, "
               "updated_at) VALUES (?, ?, ?, 'folder', ?, ?, ?, ?)")
NODE_DOCUMENT = ("INSERT INTO node (id, owner_id, parent_id, kind, title, title_sort, lang, ocr, "
                 "ocr_status, file_name, size, page_count, created_at, updated_at) "
                 "VALUES (?, ?, ?, 'document', ?, ?, 'eng', 1, 'succeeded', ?, ?, 1, ?, ?)")
VERSION = ("INSERT INTO document_version (id, document_id, number, file_name, mime_type, size, "
           "page_count, sha256, lang, created_at) "
           "VALUES (?, ?, 1, ?, 'application/pdf', ?, 1, ?, 'eng', ?)")
PAGE = "INSERT INTO page (id, version_id, number, text, method) VALUES (?, ?, 1, ?, 'layer')"


class Owner:
    def __init__(self, user_id: str, username: str, password: str | None, home_id: str):
        self.id, self.username, self.password, self.home_id = user_id, username, password, home_id
        self.documents = 0
        self.folder_id: str | None = None


def create_owners(count: int, queried: int) -> list[Owner]:
    owners = []
    for number in range(count):
        username = "admin" if number == 0 else f"owner{number:03d}"
        password = ADMIN_PASSWORD if number == 0 else OWNER_PASSWORD if number == queried else None
        attributes = {"is_superuser": True, "is_staff": True} if number == 0 else {}
        user = accounts.create_user(username, password, **attributes)
        home = Node.get((Node.owner == user.id) & (Node.special == Node.HOME))
        owners.append(Owner(user.id, username, password, home.id))
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
            nodes.append((document_id, owner.id, owner.folder_id, title, title.casefold(),
                          file_name, len(text) * 20, now, now))
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
    database.execute_sql("PRAGMA synchronous = OFF")  # this loading connection only
    queried_number = 0 if owner_count == 1 else 1
    owners = create_owners(owner_count, queried_number)
    queried = owners[queried_number]
    generator = TextGenerator(words, rare, seed=8)
    rare_counts = add_documents(owners, size, args.words, args.batch, generator, queried)
    database.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    database.close()
    return owners, queried, rare_counts


# -- the server -----------------------------------------------------------------------------------
class OutputDrain:
    """Reads the server's output in a thread (a full pipe would block the server) and keeps the
    indexer's "search index built" line."""

    def __init__(self, stream):
        self.built_line: str | None = None
        self.tracebacks = 0
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            if "search index built" in line:
                self.built_line = line.strip()
            if "Traceback" in line:
                self.tracebacks += 1


def memory(pid: int) -> dict[str, float]:
    """VmRSS, RssAnon and RssFile of a process, MiB."""
    values = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key = line.split(":", 1)[0]
            if key in ("VmRSS", "RssAnon", "RssFile"):
                values[key] = int(line.split()[1]) / 1024
    return values


def rss_text(values: dict[str, float]) -> str:
    rss, anonymous, file = (values.get(key, math.nan) for key in ("VmRSS", "RssAnon", "RssFile"))
    return f"{rss:.1f} MiB (anonymous {anonymous:.1f}, file-backed {file:.1f})"


def index_size(directory: Path) -> tuple[int, int]:
    """(bytes of every file under `directory`, segments in its meta.json)."""
    total = sum(path.stat().st_size for path in directory.rglob("*") if path.is_file())
    try:
        segments = len(json.loads((directory / "meta.json").read_text()).get("segments", []))
    except (OSError, ValueError):
        segments = -1
    return total, segments


def wait_for_index(server: ServerProcess, admin: KeepAlive, started: float) -> tuple[dict, dict]:
    """Polls /health until search is ready: (its last search status, peak memory)."""
    peak: dict[str, float] = {}
    last_report = time.perf_counter()
    while True:
        status = json.loads(admin.get("/health")).get("search", {})
        values = memory(server.process.pid)
        if values.get("VmRSS", 0) > peak.get("VmRSS", 0):
            peak = values
        if status.get("state") == "ready":
            return status, peak
        if time.perf_counter() - started > BUILD_TIMEOUT_SECONDS:
            raise RuntimeError(f"the index was not ready after {BUILD_TIMEOUT_SECONDS} s: "
                               f"{status}")
        if time.perf_counter() - last_report >= 15:
            last_report = time.perf_counter()
            print(f"  building: {status.get('indexed', 0):,} of {status.get('to_index', 0):,} "
                  f"({last_report - started:.0f} s, RSS {values.get('VmRSS', 0):.0f} MiB)",
                  flush=True)
        time.sleep(POLL_SECONDS)


# -- queries --------------------------------------------------------------------------------------
def make_queries(words: list[str], rare_counts: Counter, count: int,
                 rng: random.Random) -> dict[str, list[str]]:
    content = words[len(FUNCTION_WORDS):]
    present_rare = sorted(rare_counts)
    rare = rng.sample(present_rare, min(count, len(present_rare))) or ["zzzabsent"]
    queries = {
        "common word": words[:count],
        "rare word": rare,
        "two words": [f"{rng.choice(content[:300])} {rng.choice(content)}" for _ in range(count)],
    }
    for letters in (3, 4, 5):
        longer = [word for word in content if len(word) > letters]
        queries[f"prefix {letters}"] = [rng.choice(longer)[:letters] for _ in range(count)]
    return queries


def percentile(samples: list[float], fraction: float) -> float:
    """Nearest rank of sorted `samples`."""
    return samples[max(0, math.ceil(fraction * len(samples)) - 1)]


def run_class(http: KeepAlive, texts: list[str], runs: int) -> dict:
    paths = [(text, f"/api/search/?q={urllib.parse.quote(text)}") for text in texts]
    cycle = itertools.cycle(paths)
    for _ in range(WARMUP):
        http.get(next(cycle)[1])
    samples, bodies = [], {}
    for _ in range(runs):
        text, path = next(cycle)
        start = time.perf_counter()
        body = http.get(path)
        samples.append((time.perf_counter() - start) * 1000)
        bodies[text] = body
    samples.sort()
    results = [len(json.loads(body)) for body in bodies.values()]
    return {"results": statistics.median(results), "p50": statistics.median(samples),
            "p95": percentile(samples, 0.95), "p99": percentile(samples, 0.99)}


def print_targets(size: int, measured: dict[str, dict]) -> None:
    """The target for this size (p95 of every class), or both when the size has none."""
    worst = max(measured, key=lambda kind: measured[kind]["p95"])
    for target_size, target in TARGETS_MS.items():
        if size in TARGETS_MS and size != target_size:
            continue
        over = [f"{kind} {measured[kind]['p95']:.1f} ms" for kind in measured
                if measured[kind]["p95"] > target]
        verdict = (f"over it: {', '.join(over)}" if over else
                   f"all within (worst: {worst}, {measured[worst]['p95']:.1f} ms)")
        note = "" if size == target_size else f" (this run has {size:,})"
        print(f"target: p95 <= {target:g} ms for every class at {target_size:,} documents{note}: "
              f"{verdict}")


def measure(size: int, owner_count: int, args, words: list[str], rare: list[str]) -> None:
    print(f"\n== {size:,} documents, {owner_count} owner{'s' if owner_count > 1 else ''}; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    with tempfile.TemporaryDirectory(prefix="dms-bench-search-") as tmp:
        data_dir = Path(tmp) / "data"
        db_path = data_dir / "dms.db"
        started = time.perf_counter()
        owners, queried, rare_counts = build_database(db_path, size, owner_count, args, words, rare)
        print(f"database: {size:,} documents ({sum(o.documents for o in owners):,} placed, "
              f"{queried.documents:,} of them the queried owner {queried.username}'s) written in "
              f"{time.perf_counter() - started:.1f} s; dms.db "
              f"{db_path.stat().st_size / 2**20:,.1f} MiB", flush=True)

        started = time.perf_counter()
        server = ServerProcess(data_dir, DMS_OCR_WORKERS="1")
        drain = OutputDrain(server.process.stdout)
        try:
            admin = KeepAlive(server.port, server.login())
            status, peak = wait_for_index(server, admin, started)
            built = time.perf_counter() - started
            after_build = memory(server.process.pid)
            index_bytes, segments = index_size(data_dir / "search")
            time.sleep(0.5)  # the log line comes right after the state changes
            logged = drain.built_line.split("search index built: ", 1)[-1] \
                if drain.built_line else "not seen"
            print(f"index build: {built:.1f} s from starting the server to search ready "
                  f"({status.get('indexed', 0) / built:,.0f} nodes/s); server's log: {logged}")
            print(f"  indexed (health): {status.get('indexed', 0):,} folders and documents, "
                  f"pending changes {status.get('pending_changes')}")
            print(f"  index on disk: {index_bytes / 2**20:,.1f} MiB in {segments} segments "
                  f"({index_bytes / max(size, 1):,.0f} bytes a document); dms.db "
                  f"{db_path.stat().st_size / 2**20:,.1f} MiB")
            print(f"  page cache the index wants: {index_bytes / 2**20:,.1f} MiB (its size: the "
                  "index is memory-mapped, read through the page cache, not counted in the RSS "
                  "until touched)")
            print(f"  server RSS: peak during the build {rss_text(peak)}; after the build "
                  f"{rss_text(after_build)}", flush=True)

            token = server.token if queried.username == "admin" else \
                server.login(queried.username, queried.password)
            http = KeepAlive(server.port, token)
            queries = make_queries(words, rare_counts, args.queries, random.Random(9))
            print(f"queries as {queried.username} ({queried.documents:,} documents), "
                  f"{args.queries} per class, {WARMUP} warm-up then {args.runs} timed requests; "
                  "examples: " + ", ".join(f"{kind} {texts[0]!r}"
                                           for kind, texts in queries.items()))
            print(f"{'class':<12}  {'median results':>14}  {'p50 ms':>8}  {'p95 ms':>8}  "
                  f"{'p99 ms':>8}", flush=True)
            measured = {}
            for kind, texts in queries.items():
                numbers = measured[kind] = run_class(http, texts, args.runs)
                print(f"{kind:<12}  {numbers['results']:>14,.0f}  {numbers['p50']:8.2f}  "
                      f"{numbers['p95']:8.2f}  {numbers['p99']:8.2f}", flush=True)
            after_queries = memory(server.process.pid)
            index_after, segments_after = index_size(data_dir / "search")
            print(f"server RSS after the queries: {rss_text(after_queries)}; index on disk then "
                  f"{index_after / 2**20:,.1f} MiB in {segments_after} segments")
            print_targets(size, measured)
            if drain.tracebacks:
                print(f"the server printed {drain.tracebacks} traceback(s)")
        finally:
            server.stop()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000],
                        help="document counts, each in its own fresh data dir")
    parser.add_argument("--owners", type=int, nargs="+", default=[1, 100],
                        help="owner layouts: the documents spread over this many owners")
    parser.add_argument("--runs", type=int, default=300, help="timed requests per query class")
    parser.add_argument("--queries", type=int, default=50, help="distinct queries per class")
    parser.add_argument("--words", type=int, default=200, help="Zipf words of text per document")
    parser.add_argument("--vocabulary", type=int, default=4000, help="distinct Zipf words")
    parser.add_argument("--rare-words", type=int, default=5000,
                        help="made-up words, one in each document")
    parser.add_argument("--batch", type=int, default=10_000, help="documents per transaction")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    print(f"load average before the run: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    rng = random.Random(7)
    words = vocabulary(args.vocabulary, rng)
    rare = rare_words(args.rare_words, set(words), rng)
    print(f"{len(words)} distinct words (Zipf), {args.words} words a document plus one of "
          f"{len(rare):,} rare words; folders of {FOLDER_SIZE:,} documents", flush=True)
    for size in args.sizes:
        for owner_count in args.owners:
            measure(size, owner_count, args, words, rare)


if __name__ == "__main__":
    main()
