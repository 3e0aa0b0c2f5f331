"""`dms storage gc` (api.md §19): the garbage collection now — in a bucket, objects no row names
older than a day (or --grace-hours); on local disk the sweep, which it says."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time

import pytest

from tests.harness import samples
from tests.harness.domaintier import domain_services, new_document, new_user, upload_file
from tests.harness.processes import free_port
from tests.harness.storageops import dms_on

pytestmark = [pytest.mark.enable_socket]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_objects_no_row_names_go_once_older_than_the_grace(config, sqlite_template, bucket):
    kept = samples.text("kept by its row\n")
    with domain_services(config, sqlite_template) as services:
        alice = new_user("alice")
        upload_file(services, alice, new_document(services, alice, "kept"), "kept.txt", kept)
    orphan = b"an object a crash left"
    bucket.put(bucket.blob_key(sha(orphan)), orphan)

    young = dms_on(config, "storage", "gc")
    assert (young.returncode, young.stdout, young.stderr) == (
        0, f"Removed 0 objects of the bucket {config.s3_bucket} that no version names and that "
           f"are older than 24 hours.\n", "")
    assert bucket.keys() == sorted([bucket.blob_key(sha(kept)), bucket.blob_key(sha(orphan))])

    now = dms_on(config, "storage", "gc", "--grace-hours", "0")
    assert (now.returncode, now.stdout) == (
        0, f"Removed 1 objects of the bucket {config.s3_bucket} that no version names and that "
           f"are older than 0 hours.\n")
    assert bucket.keys() == [bucket.blob_key(sha(kept))]


def test_on_local_disk_it_runs_the_sweep_and_says_so(config, sqlite_template, bucket):
    config = dataclasses.replace(config, storage="local")
    with domain_services(config, sqlite_template) as services:
        alice = new_user("alice")
        upload_file(services, alice, new_document(services, alice, "kept"), "kept.txt",
                    samples.text("kept by its row\n"))
    stray = config.files_path / "01" / "01234567-89ab-4def-8123-456789abcdef"
    stray.parent.mkdir(exist_ok=True)
    stray.write_bytes(b"left by a crash")
    hour_ago = time.time() - 3600
    os.utime(stray, (hour_ago, hour_ago))
    interrupted = config.data_dir / "tmp" / "upload-interrupted"
    interrupted.write_bytes(b"half an upload")
    os.utime(interrupted, (hour_ago, hour_ago))

    young = dms_on(config, "storage", "gc", "--grace-hours", "2")
    assert (young.returncode, young.stdout, young.stderr) == (
        0, "The files are on local disk (DMS_STORAGE=local): the sweep removed 0 files no "
           "version names and 0 interrupted uploads, each older than 2 hours.\n", "")
    assert stray.exists() and interrupted.exists()

    swept = dms_on(config, "storage", "gc")  # DMS_SWEEP_GRACE_MINUTES: 60
    assert (swept.returncode, swept.stdout) == (
        0, "The files are on local disk (DMS_STORAGE=local): the sweep removed 1 files no "
           "version names and 1 interrupted uploads, each older than 1 hour.\n")
    assert not stray.exists() and not interrupted.exists()
    assert bucket.keys() == []


def test_a_bucket_that_refuses_dms_or_cannot_be_reached_stops_gc_and_verify(config,
                                                                            sqlite_template,
                                                                            bucket):
    with domain_services(config, sqlite_template) as services:
        alice = new_user("alice")
        upload_file(services, alice, new_document(services, alice, "kept"), "kept.txt",
                    samples.text("kept by its row\n"))
    refused = (f"dms: The bucket '{config.s3_bucket}' at {config.s3_endpoint} refuses dms "
               f"(access denied): check DMS_S3_BUCKET (it must exist), DMS_S3_ACCESS_KEY and "
               f"DMS_S3_SECRET_KEY.")
    wrong_key = dataclasses.replace(config, s3_secret_key="not-the-secret")
    nowhere = dataclasses.replace(config, s3_endpoint=f"http://127.0.0.1:{free_port()}")
    for command, reached in ((("storage", "gc", "--grace-hours", "0"), "nothing was removed"),
                             (("verify",), "its files were not checked")):
        result = dms_on(wrong_key, *command)
        assert (result.returncode, result.stdout, result.stderr.splitlines()[-1]) == \
            (2, "", refused), command
        result = dms_on(nowhere, *command)
        assert (result.returncode, result.stdout, result.stderr.splitlines()[-1]) == \
            (1, "", f"dms: the bucket {config.s3_bucket} cannot be reached, so {reached}; try "
                    f"again in a moment."), command
    assert len(bucket.keys()) == 1
