"""One duplicate rule (api.md §22, "What went wrong is visible"; dms.domain.duplicates): an upload
with `if_duplicate=refuse` of bytes the caller already has — the newest version of a document
they own, outside the trash — is a 409 naming that document and changes nothing; `keep` (the
default) adds the copy; another user's papers, shared or not, never count and are never named;
two identical uploads at once make exactly one document. The consume folder's side is in
tests/intake/test_consume_duplicates.py."""

from __future__ import annotations

import hashlib
import io
import threading

from dms.domain import duplicates, trash, uploads
from dms.domain.documents import latest_version
from dms.errors import Duplicate
from tests.harness import samples
from tests.harness.client import NOT_FOUND, assert_error
from tests.harness.database import snapshot
from tests.harness.documents import make_folder, new_document, stored_files, temporary_files
from tests.harness.domaintier import domain_thread, home_id, new_user, upload_file
from tests.harness.domaintier import new_document as new_domain_document
from tests.harness.domaintier import new_folder as new_domain_folder
from tests.harness.waiting import wait_processed

LETTER = samples.pdf(["Stadtwerke invoice 4711, due in March"])
LETTER_SHA = hashlib.sha256(LETTER).hexdigest()
OTHER = samples.pdf(["Another letter altogether"])


def put(client, document_id: str, name: str, data: bytes, if_duplicate: str | None = None):
    query = f"?if_duplicate={if_duplicate}" if if_duplicate is not None else ""
    return client.put(f"/api/documents/{document_id}/upload/{name}{query}", data=data,
                      headers={"Content-Type": "application/octet-stream",
                               "Content-Disposition": "attachment; filename=x"})


def test_refuse_answers_409_naming_the_existing_document_and_changes_nothing(alice, config):
    bills = make_folder(alice, "Bills", alice.home_id)
    first = new_document(alice, "March invoice", bills)
    assert put(alice, first, "letter.pdf", LETTER).status_code == 201
    wait_processed(alice, first)  # its reading's work folder in tmp/ is gone
    second = new_document(alice, "letter.pdf", alice.inbox_id)
    before, files = snapshot(config), stored_files(config)

    refused = put(alice, second, "letter.pdf", LETTER, "refuse")
    assert (refused.status_code, refused.json()) == (409, {"errors": [{
        "detail": "You already have this file: \u201cMarch invoice\u201d in Bills.",
        "status": "409", "code": "duplicate", "meta": {"existing": {
            "id": first, "title": "March invoice", "folder": {"id": bills, "title": "Bills"}}}}]})
    assert snapshot(config) == before
    assert (stored_files(config), temporary_files(config)) == (files, [])

    # Other bytes are no duplicate; `keep` (and no choice at all) adds the copy.
    assert put(alice, second, "other.pdf", OTHER, "refuse").status_code == 201
    assert put(alice, second, "letter.pdf", LETTER, "keep").status_code == 201
    third = new_document(alice, "third", alice.inbox_id)
    assert put(alice, third, "letter.pdf", LETTER).status_code == 201


def test_the_one_step_upload_into_the_inbox_makes_nothing_when_refused(alice, config):
    """The legacy upload makes the document and adds the file in one request: refused, there is
    no node, no stored file and nothing left in tmp/."""
    first = alice.put("/api/document/upload/letter.pdf", data=LETTER)
    assert first.status_code == 201
    wait_processed(alice, first.json()["id"])
    before, files = snapshot(config), stored_files(config)
    refused = alice.put("/api/document/upload/again.pdf?if_duplicate=refuse", data=LETTER)
    assert (refused.status_code, refused.json()) == (409, {"errors": [{
        "detail": "You already have this file: \u201cletter.pdf\u201d in Inbox.",
        "status": "409", "code": "duplicate", "meta": {"existing": {
            "id": first.json()["id"], "title": "letter.pdf",
            "folder": {"id": alice.inbox_id, "title": ".inbox"}}}}]})
    assert snapshot(config) == before
    assert (stored_files(config), temporary_files(config)) == (files, [])
    assert alice.put("/api/document/upload/again.pdf?if_duplicate=keep",
                     data=LETTER).status_code == 201


def test_only_the_newest_version_of_a_live_document_of_one_s_own_counts(alice, bob, config):
    document = new_document(alice, "changed", alice.home_id)
    assert put(alice, document, "v1.pdf", LETTER).status_code == 201
    assert put(alice, document, "v2.pdf", OTHER).status_code == 201
    # The letter is only an older version now: not a duplicate.
    fresh = new_document(alice, "fresh", alice.inbox_id)
    assert put(alice, fresh, "letter.pdf", LETTER, "refuse").status_code == 201
    # In the trash: not a duplicate either; the same document itself: not one.
    assert alice.delete(f"/api/nodes/{fresh}/").status_code == 204
    again = new_document(alice, "again", alice.inbox_id)
    assert put(alice, again, "letter.pdf", LETTER, "refuse").status_code == 201
    assert put(alice, again, "letter.pdf", LETTER, "refuse").status_code == 201

    # Bob's papers never count for Alice, even shared with her (editor): none is named.
    shared = make_folder(bob, "Shared bills", bob.home_id)
    bobs = new_document(bob, "Bob's copy", shared)
    assert put(bob, bobs, "other.pdf", samples.text("Bob's own bytes\n")).status_code == 201
    assert bob.post(f"/api/nodes/{shared}/access/",
                    {"username": alice.username, "role": "editor"}).status_code == 201
    mine = new_document(alice, "mine", alice.inbox_id)
    assert put(alice, mine, "bob.txt", samples.text("Bob's own bytes\n"),
               "refuse").status_code == 201
    # Uploading into Bob's shared folder checks Alice's own papers (she has the letter).
    into_bobs = new_document(alice, "into Bob's", shared)
    refused = put(alice, into_bobs, "letter.pdf", LETTER, "refuse").json()["errors"][0]
    assert (refused["detail"], refused["meta"]["existing"]["id"]) == (
        "You already have this file: \u201cagain\u201d in Inbox.", again)


def test_bad_choices_and_other_users_documents_change_nothing(alice, bob, config):
    document = new_document(alice, "doc", alice.home_id)
    before = snapshot(config)
    assert_error(put(alice, document, "letter.pdf", LETTER, "maybe"), 400, "invalid",
                 "if_duplicate must be refuse or keep, not 'maybe'.")
    assert put(bob, document, "letter.pdf", LETTER, "refuse").json() == NOT_FOUND
    assert snapshot(config) == before
    assert temporary_files(config) == []


def test_two_identical_uploads_at_once_make_exactly_one_document(services, config):
    """Four at once (plain text: PDFs would wait for the user's share of the PDF readers)."""
    note = samples.text("The same note, sent four times at once\n")
    owner = new_user("carol")
    folder = new_domain_folder(services, owner, "Scans", home_id(owner))
    targets = [new_domain_document(services, owner, f"copy {n}", folder) for n in range(4)]
    results: dict[str, str] = {}
    start = threading.Barrier(len(targets))

    def send(document_id: str) -> None:
        start.wait()
        try:
            uploads.upload_version(services, owner, document_id, io.BytesIO(note), len(note),
                                   "note.txt", "refuse")
            results[document_id] = "uploaded"
        except Duplicate as error:
            results[document_id] = error.message

    threads = [domain_thread(send, target) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    [kept] = [target for target, result in results.items() if result == "uploaded"]
    title = f"copy {targets.index(kept)}"
    assert sorted(results.values()) == sorted(
        ["uploaded"] + [f"You already have this file: \u201c{title}\u201d in Scans."] * 3)
    assert duplicates.existing_copy(owner, hashlib.sha256(note).hexdigest()).id == kept
    assert [latest_version(target) is None for target in targets] == [
        target != kept for target in targets]
    assert stored_files(config) == [services.store.path(latest_version(kept).id)]


def test_the_rule_counts_one_s_own_live_documents_only(services):
    owner, other = new_user("dora"), new_user("erin")
    document = new_domain_document(services, owner, "letter", home_id(owner))
    upload_file(services, owner, document, "letter.pdf", LETTER)
    assert duplicates.existing_copy(owner, LETTER_SHA).id == document
    assert duplicates.existing_copy(owner, LETTER_SHA, exclude=document) is None
    assert duplicates.existing_copy(other, LETTER_SHA) is None
    trash.delete(services, owner, document)
    assert duplicates.existing_copy(owner, LETTER_SHA) is None
    assert [duplicates.check_choice(value) for value in ("refuse", "keep", None)] == [
        "refuse", "keep", "keep"]
