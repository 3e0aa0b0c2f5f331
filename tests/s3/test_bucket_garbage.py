"""What is removed from the bucket and when (api.md §19): a purge takes the objects nobody else
names, the garbage collection those no row has named for a day, never one an upload of the same
bytes is committing (dms.files.storage.s3.leases), and uploads and purges of the same bytes
racing leave every acknowledged version with its object."""

from __future__ import annotations

import hashlib
import io
import threading
import time

import pytest

from dms.db import release_connection
from dms.domain import trash
from dms.files.storage import Blob
from dms.files.storage.s3 import leases
from tests.harness import samples
from tests.harness.domaintier import new_document, new_user, upload_file

pytestmark = [pytest.mark.enable_socket, pytest.mark.config(trash_days=0)]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_the_garbage_collection_removes_old_objects_no_row_names_and_keeps_the_rest(
        services, bucket):
    alice = new_user("alice")
    kept = samples.text("kept by a row\n")
    upload_file(services, alice, new_document(services, alice, "kept"), "kept.txt", kept)
    orphan, leased = b"left by a crash", b"an upload committing its row"
    bucket.put(bucket.blob_key(sha(orphan)), orphan)
    bucket.put(bucket.blob_key(sha(leased)), leased)
    bucket.put("work/0123abcd-0000-4000-8000-000000000000/1.pdf", b"%PDF page of a gone reading")
    lease = leases.take_upload(sha(leased))

    assert services.store.collect_garbage(grace_seconds=3600) == 0  # all younger than that
    assert len(bucket.keys()) == 3 and len(bucket.keys("work")) == 1

    assert services.store.collect_garbage(grace_seconds=0) == 1
    assert bucket.keys() == sorted([bucket.blob_key(sha(kept)), bucket.blob_key(sha(leased))])
    assert bucket.keys("work") == []

    with_row_written = leases.take_upload(sha(kept))  # settled by the row, as uploads do
    leases.release([lease, with_row_written])
    assert services.store.collect_garbage(grace_seconds=0) == 1
    assert bucket.keys() == [bucket.blob_key(sha(kept))]


def test_a_lease_left_by_a_dead_node_expires_after_a_day(services, bucket):
    data = b"an upload whose node died before its row"
    bucket.put(bucket.blob_key(sha(data)), data)
    leases.take_upload(sha(data))
    assert services.store.remove_unreferenced([sha(data)]) == 0
    assert services.store.remove_unreferenced([sha(data)],
                                              now=time.time() + leases.UPLOAD_LEASE_SECONDS + 1) \
        == 1
    assert bucket.keys() == []


def test_uploads_and_purges_of_the_same_bytes_at_once_lose_no_acknowledged_file(services,
                                                                                bucket):
    """Eight threads, over and over: some upload the same bytes as new documents, others delete
    documents holding them for good. Each removal finds the bytes named by someone or claims
    them, each upload leases them first: at the end every version's object is there."""
    users = [new_user(f"user{n}") for n in range(4)]
    data = samples.text("the same bytes, uploaded and purged at once\n")
    documents: list[tuple[object, str]] = []
    lock = threading.Lock()
    failures: list[BaseException] = []

    def uploader(user) -> None:
        try:
            for _ in range(6):
                document_id = new_document(services, user, "same")
                upload_file(services, user, document_id, "same.txt", data)
                with lock:
                    documents.append((user, document_id))
        except BaseException as error:  # noqa: BLE001 — reported below
            failures.append(error)
        finally:
            release_connection()

    def purger() -> None:
        try:
            for _ in range(12):
                with lock:
                    taken = documents.pop(0) if len(documents) > 2 else None
                if taken is None:
                    time.sleep(0.01)
                    continue
                user, document_id = taken
                trash.delete(services, user, document_id, "document")
        except BaseException as error:  # noqa: BLE001 — reported below
            failures.append(error)
        finally:
            release_connection()

    threads = [threading.Thread(target=uploader, args=(user,)) for user in users] + \
        [threading.Thread(target=purger) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert failures == []
    assert len(documents) >= 3
    assert bucket.keys() == [bucket.blob_key(sha(data))]
    for _, document_id in documents:  # whoever still holds the bytes finds them
        assert b"".join(services.store.read(_blob_of(document_id))) == data
    for user, document_id in list(documents):
        trash.delete(services, user, document_id, "document")
    assert bucket.keys() == []


def _blob_of(document_id: str):
    from dms.domain.documents import latest_version
    from dms.files.storage import original

    return original(latest_version(document_id))


def test_a_purge_keeps_an_object_whose_upload_is_committing_its_row(services, bucket):
    """The race the leases close: an upload finds its bytes in the bucket already (another
    document's) and writes nothing; that document is purged before the upload's row is written.
    The object stays, and the upload's row finds it."""
    alice, bob = new_user("alice"), new_user("bob")
    data = samples.text("bytes two people upload\n")
    first = new_document(services, alice, "first")
    upload_file(services, alice, first, "a.txt", data)
    received = services.store.receive(io.BytesIO(data), len(data), 1 << 20)
    services.store.store(received, "0123abcd-0000-4000-8000-00000000b0b0")  # row not yet written

    trash.delete(services, alice, first, "document")
    assert bucket.keys() == [bucket.blob_key(sha(data))]

    upload_file(services, bob, new_document(services, bob, "second"), "b.txt", data)
    services.store.settle([Blob("0123abcd-0000-4000-8000-00000000b0b0", sha(data))])
    assert bucket.get(bucket.blob_key(sha(data))) == data


def test_an_upload_waits_for_a_removal_of_its_bytes_and_writes_them_again(services, bucket):
    """The other side: a removal has claimed the object (a delete lease) when an upload of the
    same bytes starts: the upload waits until the removal is done, then writes the object."""
    alice = new_user("alice")
    data = samples.text("bytes being removed\n")
    bucket.put(bucket.blob_key(sha(data)), data)
    claimed = leases.claim([sha(data)])
    assert list(claimed) == [sha(data)]

    def remove_then_release() -> None:
        time.sleep(0.5)
        bucket.client.delete_object(Bucket=bucket.name, Key=bucket.prefix + bucket.blob_key(
            sha(data)))
        leases.release(claimed.values())
        release_connection()

    remover = threading.Thread(target=remove_then_release)
    remover.start()
    started = time.monotonic()
    upload_file(services, alice, new_document(services, alice, "again"), "again.txt", data)
    waited = time.monotonic() - started
    remover.join(10)
    assert waited >= 0.4
    assert bucket.get(bucket.blob_key(sha(data))) == data


def test_an_upload_writes_again_an_object_whose_size_is_wrong(services, bucket):
    """A damaged object (other bytes under these bytes' name, of another size) is replaced by
    the next upload of the right bytes, not taken for them."""
    alice = new_user("alice")
    data = samples.text("the right bytes\n")
    bucket.put(bucket.blob_key(sha(data)), b"truncated")
    upload_file(services, alice, new_document(services, alice, "right"), "right.txt", data)
    assert bucket.get(bucket.blob_key(sha(data))) == data


def test_an_upload_refused_after_its_object_was_written_leaves_nothing(services, bucket):
    """What an upload does when its row's transaction refuses it (the document deleted
    meanwhile, a duplicate refused): its file stored, then removed. It lets go of its own lease
    first, so its object goes at once instead of a day later."""
    data = samples.text("bytes of a refused upload\n")
    received = services.store.receive(io.BytesIO(data), len(data), 1 << 20)
    services.store.store(received, "0123abcd-0000-4000-8000-0000000000aa")
    assert bucket.keys() == [bucket.blob_key(sha(data))]
    services.store.remove([Blob("0123abcd-0000-4000-8000-0000000000aa", sha(data))])
    assert bucket.keys() == []
