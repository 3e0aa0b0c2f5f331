"""`dms verify` of an installation in a bucket (api.md §19): every object a row names is there with
its size (one listing), `--deep` reads and hashes each; objects no row names are listed as the
directory's orphans are (young ones as expected); the periodic verify checks sizes only."""

from __future__ import annotations

import hashlib

import pytest

from dms.ops import verify
from dms.ops.verify.files import check_bucket
from tests.harness import samples
from tests.harness.domaintier import domain_services, new_user, read_document
from tests.harness.storageops import dms_on, files_named

pytestmark = [pytest.mark.enable_socket, pytest.mark.slow]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def two_documents(config, template) -> None:
    """alice's invoice (a PDF) and a scan read into a searchable PDF, in the bucket."""
    with domain_services(config, template, workers=True) as services:
        alice = new_user("alice")
        read_document(services, alice, "invoice", "invoice.pdf",
                      samples.pdf(["Invoice 4711 in the bucket"]))
        read_document(services, alice, "scan", "scan.png", samples.png("Scan 0815 in a bucket"))


def problems(stdout: str) -> list[str]:
    """The report's lines between the first (how many were checked) and the search's."""
    return [line for line in stdout.splitlines()[1:]
            if not line.startswith(("The search index", "No problems", "Problems"))]


def test_a_clean_bucket_then_a_missing_and_a_resized_object_then_a_tampered_one(
        config, sqlite_template, bucket):
    two_documents(config, sqlite_template)
    files = files_named(config)
    assert len(files) == 3
    clean = dms_on(config, "verify")
    assert (clean.returncode, clean.stdout.splitlines()[0], problems(clean.stdout),
            clean.stdout.splitlines()[-1]) == \
        (0, "Checked 3 stored files (objects of the bucket).", [], "No problems found.")
    deep = dms_on(config, "verify", "--deep")
    assert (deep.returncode, problems(deep.stdout)) == (0, [])

    searchable = next(file for file in files if file.name.endswith(".searchable.pdf"))
    scan = next(file for file in files if file.version_id == searchable.version_id
                and file is not searchable)
    invoice = next(file for file in files if file not in (searchable, scan))
    same_size = b"s" * invoice.size
    bucket.put(bucket.blob_key(invoice.sha256), same_size)
    plain = dms_on(config, "verify")
    assert (plain.returncode, problems(plain.stdout)) == (0, [])  # only a read can tell
    deep = dms_on(config, "verify", "--deep")
    assert (deep.returncode, problems(deep.stdout), deep.stdout.splitlines()[-1]) == (
        1, ["1 corrupt files (checksum or size differs):",
            f"  version {invoice.version_id} ({config.s3_prefix}{bucket.blob_key(invoice.sha256)}"
            f": its bytes' SHA-256 is {sha(same_size)})"], "Problems found.")

    bucket.client.delete_object(Bucket=bucket.name,
                                Key=config.s3_prefix + bucket.blob_key(searchable.sha256))
    bucket.put(bucket.blob_key(scan.sha256), b"shorter")
    plain = dms_on(config, "verify")
    assert (plain.returncode, plain.stdout.splitlines()[0], problems(plain.stdout)) == (
        1, "Checked 2 stored files (objects of the bucket).",
        ["1 corrupt files (checksum or size differs):",
         f"  version {scan.version_id} ({config.s3_prefix}{bucket.blob_key(scan.sha256)}: 7 "
         f"bytes, recorded {scan.size})",
         "1 missing files (version without its file):",
         f"  version {searchable.version_id} (its searchable PDF)"])


def test_objects_no_row_names_are_expected_for_a_day_then_orphans(config, sqlite_template,
                                                                  bucket):
    two_documents(config, sqlite_template)
    stray = b"an object whose upload never wrote its row"
    bucket.put(bucket.blob_key(sha(stray)), stray)
    key = config.s3_prefix + bucket.blob_key(sha(stray))

    result = dms_on(config, "verify")
    assert (result.returncode, problems(result.stdout)) == (0, [
        "1 objects no version refers to yet are younger than a day: uploads in progress, or "
        "interrupted ones that the garbage collection removes once they are older (not a "
        "problem):", f"  {key}"])

    with domain_services(config, None) as services:  # the database as it is
        report = verify.Report(checked_at="now")
        check_bucket(report, services.store, grace_seconds=0)  # as if a day had passed
        assert (report.orphaned, report.recent_orphans, report.files_checked) == ([key], [], 3)
        assert verify.repair(report)[-1] == (
            "Not repaired: 1 orphaned objects are left for the garbage collection (every "
            "DMS_SWEEP_MINUTES, or dms storage gc now), which removes them.")

        verify.run_periodically(config, services.store)
        last = verify.last_result()
        assert (last["ok"], last["files_checked"], last["in_bucket"], last["recent_orphans"]) \
            == (True, 3, True, [key])
