"""Search benchmark: latency of GET /api/search/ over 10,000 and 100,000 documents with text,
served by a real `dms serve`, and the size of the full-text index and of the database.

The documents are written straight into SQLite with the dms models (bulk inserts; the node
table's triggers add each title to the index), each with a version and one page holding its text
(~200 words drawn from a Zipf distribution over a vocabulary of a few thousand English and German
words, umlauts included); the text goes into the index with the statement processing uses
(dms.search.set_document_text), one commit per --batch documents, so the index grows by
incremental merges as in a server that processed its documents over time. Documents sit in
folders of 1,000 under the admin's home folder, all owned by the admin (one owner: the owner
filter inside the index does not narrow anything).

Queries, cycled, over one keep-alive connection (common.timed): single words, two words, and
prefixes (the first 3-5 letters of a word); dms makes every query word a prefix match. Each kind
is timed alone and in a mix. "median matches" is how many documents the kind's queries match
(dms returns at most 100, best first). It prints numbers and never asserts.

    .venv/bin/python bench/search.py [--sizes 10000 100000] [--words 200] [--vocabulary 4000]
                                     [--runs 300] [--batch 100]
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ADMIN_PASSWORD, ServerProcess, machine, timed  # noqa: E402

from dms import accounts, search  # noqa: E402
from dms.db import database, open_database  # noqa: E402
from dms.models import DocumentVersion, Node, Page, User, new_id, utcnow  # noqa: E402

FOLDER_SIZE = 1000
ROWS_PER_INSERT = 500
QUERIES_PER_KIND = 50

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


class TextGenerator:
    def __init__(self, words: list[str], seed: int):
        self.words = words
        self.cumulative = list(itertools.accumulate(1 / rank for rank in range(1, len(words) + 1)))
        self.rng = random.Random(seed)

    def text(self, count: int) -> str:
        chosen = self.rng.choices(self.words, cum_weights=self.cumulative, k=count)
        return " ".join(chosen) + "."

    def title(self) -> str:
        return " ".join(self.rng.choices(self.words[len(FUNCTION_WORDS):], k=2)) + \
            f" {self.rng.randrange(2000, 2026)}-{self.rng.randrange(1, 13):02d}"


def add_documents(user: User, home: Node, start: int, stop: int, words: int,
                  generator: TextGenerator, batch: int) -> None:
    """Documents number `start` to `stop` - 1, each with a version, a page and indexed text."""
    now = utcnow()
    folders, nodes, versions, pages, texts = [], [], [], [], []
    folder_id = None
    for number in range(start, stop):
        if folder_id is None or number % FOLDER_SIZE == 0:
            folder_id = new_id()
            title = f"Folder {number // FOLDER_SIZE:03d}"
            folders.append({"id": folder_id, "owner": user.id, "parent": home.id,
                            "kind": Node.FOLDER, "title": title, "title_sort": title.casefold(),
                            "created_at": now, "updated_at": now})
        document_id, version_id = new_id(), new_id()
        title, text = generator.title(), generator.text(words)
        nodes.append({"id": document_id, "owner": user.id, "parent": folder_id,
                      "kind": Node.DOCUMENT, "title": title, "title_sort": title.casefold(),
                      "created_at": now, "updated_at": now, "lang": "eng", "ocr": True,
                      "ocr_status": "succeeded", "file_name": f"doc-{number}.pdf",
                      "size": len(text) * 20, "page_count": 1})
        versions.append({"id": version_id, "document": document_id, "number": 1,
                         "file_name": f"doc-{number}.pdf", "mime_type": "application/pdf",
                         "size": len(text) * 20, "page_count": 1, "sha256": "0" * 64,
                         "lang": "eng", "created_at": now})
        pages.append({"id": new_id(), "version": version_id, "number": 1, "text": text,
                      "method": "layer"})
        texts.append((document_id, text))
    with database.atomic():
        for model, rows in ((Node, folders), (Node, nodes), (DocumentVersion, versions),
                            (Page, pages)):
            for first in range(0, len(rows), ROWS_PER_INSERT):
                model.insert_many(rows[first:first + ROWS_PER_INSERT]).execute()
    for first in range(0, len(texts), batch):
        with database.atomic():
            for document_id, text in texts[first:first + batch]:
                search.set_document_text(document_id, text)


def sizes(db_path: Path) -> dict[str, float]:
    """MiB of the index's shadow tables, of everything else, and of the database file."""
    database.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    rows = database.execute_sql("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall()
    index = sum(size for name, size in rows if name.startswith("search_index"))
    content = sum(size for name, size in rows if name == "search_index_content")
    page_text = sum(size for name, size in rows if name == "page")
    return {"index": index / 2**20, "index_content": content / 2**20, "page": page_text / 2**20,
            "file": db_path.stat().st_size / 2**20}


def make_queries(words: list[str], rng: random.Random) -> dict[str, list]:
    """Content words only; the two-word queries pair one of the 300 most frequent with any."""
    content = [word for word in words[len(FUNCTION_WORDS):] if len(word) >= 5]
    return {
        "single word": [rng.choice(content) for _ in range(QUERIES_PER_KIND)],
        "two words": [f"{rng.choice(content[:300])} {rng.choice(content)}"
                      for _ in range(QUERIES_PER_KIND)],
        "prefix (3-5 letters)": [(word := rng.choice(content))[:rng.randint(3, min(5, len(word) - 1))]
                                 for _ in range(QUERIES_PER_KIND)],
    }


def match_counts(user: User, queries: list[str]) -> float:
    counts = []
    for text in queries:
        expression = search.match_expression(user.id, text)
        counts.append(database.execute_sql("SELECT count(*) FROM search_index WHERE search_index "
                                           "MATCH ?", (expression,)).fetchone()[0])
    return statistics.median(counts)


def measure(data_dir: Path, queries: dict[str, list], runs: int) -> tuple[dict, float]:
    server = ServerProcess(data_dir)
    try:
        server.login()
        http = server.connection()
        results = {}
        mixed = [query for trio in zip(*queries.values()) for query in trio]
        for kind, texts in {**queries, "mix of the three": mixed}.items():
            cycle = itertools.cycle([f"/api/search/?q={urllib.parse.quote(text)}" for text in texts])
            results[kind] = timed(lambda: http.get(next(cycle)), runs=runs)
        return results, server.rss_mib()
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000],
                        help="document counts to measure at, ascending (the database grows)")
    parser.add_argument("--words", type=int, default=200, help="words of text per document")
    parser.add_argument("--vocabulary", type=int, default=4000, help="distinct words")
    parser.add_argument("--runs", type=int, default=300, help="timed requests per query kind")
    parser.add_argument("--batch", type=int, default=100, help="documents indexed per commit")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    print(f"load average before the run: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    rng = random.Random(7)
    words = vocabulary(args.vocabulary, rng)
    generator = TextGenerator(words, seed=8)
    queries = make_queries(words, rng)
    print(f"{len(words)} distinct words (Zipf), {args.words} words a document; example queries: "
          + ", ".join(repr(texts[0]) for texts in queries.values()))

    with tempfile.TemporaryDirectory(prefix="dms-bench-search-") as tmp:
        data_dir = Path(tmp) / "data"
        db_path = data_dir / "dms.db"
        open_database(db_path)
        user = accounts.create_user("admin", ADMIN_PASSWORD, is_superuser=True, is_staff=True)
        home = Node.get(Node.owner == user, Node.special == Node.HOME)
        database.close()
        done = 0
        for size in sorted(args.sizes):
            open_database(db_path)
            started = time.perf_counter()
            add_documents(user, home, done, size, args.words, generator, args.batch)
            built = time.perf_counter() - started
            done = size
            space = sizes(db_path)
            matches = {kind: match_counts(user, texts) for kind, texts in queries.items()}
            database.close()
            results, rss = measure(data_dir, queries, args.runs)

            print(f"\n{size:,} documents (built in {built:.1f} s): index {space['index']:.1f} MiB "
                  f"(of which {space['index_content']:.1f} MiB its copy of the text), page table "
                  f"{space['page']:.1f} MiB, database file {space['file']:.1f} MiB; "
                  f"server RSS after {rss:.1f} MiB")
            print(f"{'query kind':<22}  {'median matches':>14}  {'p50 ms':>8}  {'p95 ms':>8}")
            for kind, numbers in results.items():
                count = f"{matches[kind]:14,.0f}" if kind in matches else f"{'':14}"
                print(f"{kind:<22}  {count}  {numbers['p50']:8.2f}  {numbers['p95']:8.2f}")


if __name__ == "__main__":
    main()
