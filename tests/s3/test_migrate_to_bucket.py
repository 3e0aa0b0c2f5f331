"""`dms storage migrate --to s3` (api.md §19): an installation on local disk copies every file its
database names into the bucket — originals and searchable PDFs, one object for the same bytes —
checked, continuing where a run stopped, listing what it cannot copy; a server started on the
bucket then serves every file. The command never switches the configuration itself."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import signal
import subprocess

import pytest

from tests.harness import samples
from tests.harness.domaintier import (
    domain_services,
    new_document,
    new_user,
    upload_file,
)
from tests.harness.processes import config_args, dms_command, free_port
from tests.harness.storageops import (
    assert_served,
    bucket_environment,
    dms_on,
    files_named,
    three_documents,
)

pytestmark = [pytest.mark.enable_socket, pytest.mark.slow]


@pytest.fixture
def config(config):
    """The S3 tests' config (the bucket's settings, a prefix of its own), its files on local disk
    to begin with."""
    return dataclasses.replace(config, storage="local")


def mebibytes(*sizes: int) -> str:
    return f"{sum(sizes) / 2**20:.1f} MiB"


def switch_lines(config) -> str:
    return (f"Every file is in the bucket {config.s3_bucket} at {config.s3_endpoint}, prefix "
            f"{config.s3_prefix} now. To use it: stop dms (every node), run this command once "
            f"more (it copies what was uploaded meanwhile), then set\n"
            f"  DMS_STORAGE=s3\n"
            f"  DMS_S3_ENDPOINT={config.s3_endpoint}\n"
            f"  DMS_S3_BUCKET={config.s3_bucket}\n"
            f"  DMS_S3_REGION={config.s3_region}\n"
            f"  DMS_S3_PREFIX={config.s3_prefix}\n"
            f"  DMS_S3_ACCESS_KEY and DMS_S3_SECRET_KEY (or DMS_S3_SECRET_KEY_FILE) as for this "
            f"command\n"
            f"and start dms again. The files in the folder {config.files_path} stay as they are: "
            f"remove them yourself once dms works from the new store.\n")


def named_files(config):
    """The files the database names, with their bytes on local disk."""
    files = files_named(config)
    return files, {file.name: (config.files_path / file.name).read_bytes() for file in files}


def test_every_file_is_copied_checked_once_and_a_server_on_the_bucket_serves_it(
        config, sqlite_template, bucket):
    documents = three_documents(config, sqlite_template, "moved to the bucket")
    files, local = named_files(config)
    assert [file.name.endswith(".searchable.pdf") for file in files].count(True) == 1
    assert len(files) == 4 and len({file.sha256 for file in files}) == 3
    unique = {file.sha256: file.size for file in files}

    result = dms_on(config, "storage", "migrate", "--to", "s3", "--progress-every", "4")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == (
        f"4 of 4 files checked, 3 copied ({mebibytes(*unique.values())}), 1 there already.\n"
        f"Copied 3 files ({mebibytes(*unique.values())}) to the bucket {config.s3_bucket} at "
        f"{config.s3_endpoint}, prefix {config.s3_prefix}; 1 were there already; 4 files in "
        f"all.\n" + switch_lines(config))
    assert bucket.keys() == sorted(bucket.blob_key(sha) for sha in unique)
    for file in files:
        assert bucket.get(bucket.blob_key(file.sha256)) == local[file.name]

    again = dms_on(config, "storage", "migrate", "--to", "s3")
    assert (again.returncode, again.stdout.splitlines()[0]) == (
        0, f"Copied 0 files (0.0 MiB) to the bucket {config.s3_bucket} at {config.s3_endpoint}, "
           f"prefix {config.s3_prefix}; 4 were there already; 4 files in all.")

    shutil.rmtree(config.files_path)  # the server reads the bucket, nothing local
    assert_served(dataclasses.replace(config, storage="s3"), documents, local)


def test_a_run_stopped_after_one_file_continues_where_it_stopped(config, sqlite_template,
                                                                   bucket):
    three_documents(config, sqlite_template, "moved to the bucket")
    files, local = named_files(config)

    first = dms_on(config, "storage", "migrate", "--to", "s3", "--limit", "1")
    assert first.returncode == 0
    assert first.stdout.splitlines()[1:] == ["Stopped after 1 files, as --limit asks: run the "
                                             "same command again to copy the rest."]
    [copied] = bucket.keys()

    rest = dms_on(config, "storage", "migrate", "--to", "s3")
    assert rest.returncode == 0
    assert rest.stdout.splitlines()[0].split("; ")[1:] == ["2 were there already",
                                                           "4 files in all."]
    assert rest.stdout.startswith("Copied 2 files ")
    assert bucket.keys() == sorted({bucket.blob_key(file.sha256) for file in files})
    for file in files:
        assert bucket.get(bucket.blob_key(file.sha256)) == local[file.name]


def test_a_missing_and_a_damaged_file_are_listed_and_the_rest_copied(config, sqlite_template,
                                                                     bucket):
    documents = three_documents(config, sqlite_template, "moved to the bucket")
    files, local = named_files(config)
    searchable = next(file for file in files if file.name.endswith(".searchable.pdf"))
    original = next(file for file in files if file.version_id == searchable.version_id
                    and file is not searchable)
    (config.files_path / searchable.name).unlink()
    (config.files_path / original.name).write_bytes(b"x" * original.size)  # same size

    result = dms_on(config, "storage", "migrate", "--to", "s3")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[1] == "2 files could not be copied:"
    assert sorted(lines[2:4]) == sorted([
        f"  version {original.version_id}: its bytes are not what its row records "
        f"({original.size} bytes, SHA-256 {sha(b'x' * original.size)}; recorded "
        f"{original.size} bytes, {original.sha256}); not copied",
        f"  version {searchable.version_id} (its searchable PDF): its file "
        f"{config.files_path / searchable.name} is missing; not copied"])
    assert lines[4:] == ["They are missing or damaged where they are now (dms verify lists "
                         "them; a backup has them). Switch only once you know what to do about "
                         "them."]
    assert result.stdout.startswith("Copied 1 files ")
    invoice = next(file for file in files if file.sha256 not in (original.sha256,
                                                                 searchable.sha256))
    assert bucket.keys() == [bucket.blob_key(invoice.sha256)]
    assert bucket.get(bucket.blob_key(invoice.sha256)) == local[invoice.name]
    assert len(documents) == 3


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_refusals_copy_nothing(config, sqlite_template, bucket):
    three_documents(config, sqlite_template, "moved to the bucket")

    same = dms_on(config, "storage", "migrate", "--to", "local")
    assert (same.returncode, same.stdout, same.stderr) == (
        2, "", "dms: the files are on local disk already (DMS_STORAGE=local): --to s3 copies "
               "them to the other kind of store.\n")

    nowhere = f"http://127.0.0.1:{free_port()}"
    down = dms_on(dataclasses.replace(config, s3_endpoint=nowhere), "storage", "migrate",
                  "--to", "s3")
    assert (down.returncode, down.stdout, down.stderr.splitlines()[-1] + "\n") == (
        2, "", f"dms: the bucket {config.s3_bucket} at {nowhere}, prefix {config.s3_prefix} "
               f"cannot be reached; nothing was copied.\n")

    wrong_key = dms_on(dataclasses.replace(config, s3_secret_key="not-the-secret"), "storage",
                       "migrate", "--to", "s3")
    assert (wrong_key.returncode, wrong_key.stdout) == (2, "")
    assert wrong_key.stderr.splitlines()[-1] == (
        f"dms: The bucket '{config.s3_bucket}' at {config.s3_endpoint} refuses dms (access "
        f"denied): check DMS_S3_BUCKET (it must exist), DMS_S3_ACCESS_KEY and "
        f"DMS_S3_SECRET_KEY.")

    no_bucket = dms_on(dataclasses.replace(config, s3_bucket=""), "storage", "migrate",
                       "--to", "s3")
    assert (no_bucket.returncode, no_bucket.stdout, no_bucket.stderr) == (
        2, "", "dms: DMS_STORAGE=s3 needs DMS_S3_BUCKET, the bucket's name.\n")
    assert bucket.keys() == []


def test_a_run_killed_mid_way_continues_without_copying_again_what_is_there(
        config, sqlite_template, bucket):
    with domain_services(config, sqlite_template) as services:  # no reading: originals only
        alice = new_user("alice")
        contents = [samples.text(os.urandom(256 * 1024).hex() + "\n") for _ in range(40)]
        for number, data in enumerate(contents):
            upload_file(services, alice, new_document(services, alice, f"part {number}"),
                        f"part-{number}.txt", data)
    command = dms_command("storage", "migrate", "--to", "s3", "--progress-every", "1",
                          *config_args(config))
    running = subprocess.Popen(command, env=bucket_environment(config), stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    try:
        first = running.stdout.readline()
        assert first.startswith("1 of 40 files checked, 1 copied"), first
        running.send_signal(signal.SIGKILL)
    finally:
        running.wait(timeout=30)
        running.stdout.close()
    assert running.returncode == -signal.SIGKILL
    copied = len(bucket.keys())
    assert 1 <= copied < 40

    rest = dms_on(config, "storage", "migrate", "--to", "s3")
    assert rest.returncode == 0
    assert rest.stdout.startswith(f"Copied {40 - copied} files ")
    assert rest.stdout.splitlines()[0].endswith(f"; {copied} were there already; 40 files in "
                                                f"all.")
    keys = bucket.keys()
    assert sorted(bucket.get(key) for key in keys) == sorted(contents)
