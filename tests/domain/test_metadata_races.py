"""What a document is about, changed from many threads at once (api.md §16): check-then-write
sequences hold because each runs in its owner's write scope. One serial number for 16 documents
at once: exactly one gets it, the others are refused and unchanged. 16 threads linking documents
to one target and unlinking others: every link ends up stored both ways, none half."""

from __future__ import annotations

import threading

from dms.db import database
from dms.domain.metadata import document as metadata
from dms.domain.metadata import fields
from dms.errors import Invalid
from tests.harness.domaintier import domain_thread, new_document, new_user

THREADS = 16


def run_all(targets):
    threads = [domain_thread(target) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_one_serial_number_for_sixteen_documents_at_once_goes_to_one(services):
    alice = new_user("alice")
    documents = [new_document(services, alice, f"doc {n}") for n in range(THREADS)]
    outcomes: list[str] = []
    lock = threading.Lock()

    def claim(document_id):
        def run():
            try:
                metadata.update_node(alice, document_id, "document",
                                     {"archive_serial_number": 7, "title": "claimed"})
                outcome = "set"
            except Invalid as error:
                outcome = error.message
            with lock:
                outcomes.append(outcome)
        return run

    run_all([claim(document_id) for document_id in documents])
    refused = ("Archive serial number 7 is already used by another of your documents (the "
               "trash included).")
    assert sorted(outcomes) == sorted(["set"] + [refused] * (THREADS - 1))
    rows = database.execute_sql("SELECT title, asn FROM node WHERE owner_id = ? AND kind = ?",
                                (alice.id, "document")).fetchall()
    # The one that got it was renamed with it; every refused one is exactly as it was.
    assert sorted(asn for _, asn in rows if asn is not None) == [7]
    assert [title for title, asn in rows if asn == 7] == ["claimed"]
    unchanged = sorted(title for title, asn in rows if asn is None)
    assert len(unchanged) == THREADS - 1
    assert set(unchanged) < {f"doc {n}" for n in range(THREADS)}


def test_links_made_and_taken_away_at_once_are_always_kept_both_ways(services):
    alice = new_user("alice")
    link = fields.create_field(alice, {"name": "Bezug", "data_type": "documentlink"})
    target = new_document(services, alice, "Police")
    spare = new_document(services, alice, "Anhang")
    documents = [new_document(services, alice, f"Brief {n}") for n in range(THREADS)]

    def relink(document_id, n):
        def run():
            for round_ in range(5):
                wanted = [target] if (n + round_) % 2 == 0 else [spare]
                metadata.update_node(alice, document_id, "document", {
                    "custom_fields": [{"field": link.id, "value": wanted}]})
        return run

    run_all([relink(document_id, n) for n, document_id in enumerate(documents)])
    stored = set(database.execute_sql(
        "SELECT document_id, target_id FROM custom_field_link WHERE field_id = ?",
        (link.id,)).fetchall())
    assert all((b, a) in stored for a, b in stored)  # every link has its mirror
    expected = {(document_id, target if (n + 4) % 2 == 0 else spare)
                for n, document_id in enumerate(documents)}
    assert {(a, b) for a, b in stored if a in documents} == expected
