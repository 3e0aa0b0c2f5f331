"""`dms backup` of an installation in a bucket (api.md §19): every file the snapshot names is
streamed from its object into the zip, held by a lease meanwhile so that a purge cannot take
it; `dms restore` puts such a backup into a local data dir (files/), and `dms storage migrate
--to s3` then puts it into a bucket again."""

from __future__ import annotations

import dataclasses
import zipfile

import pytest

from dms.db import database
from dms.domain import trash
from dms.files.storage import Blob
from dms.files.storage.s3 import leases
from dms.files.storage.stored import stored_files
from tests.harness import samples
from tests.harness.appserver import empty_target
from tests.harness.domaintier import (
    new_document,
    new_user,
    upload_file,
)
from tests.harness.processes import free_port
from tests.harness.storageops import dms_on, files_named, three_documents

pytestmark = [pytest.mark.enable_socket, pytest.mark.slow, pytest.mark.config(trash_days=0)]


def test_a_backup_restores_into_a_data_dir_byte_for_byte_and_goes_back_into_a_bucket(
        config, sqlite_template, bucket, tmp_path, request):
    three_documents(config, sqlite_template, "backed up")
    files = files_named(config)
    assert len(files) == 4
    in_bucket = {file.name: bucket.get(bucket.blob_key(file.sha256)) for file in files}
    out = tmp_path / "backup.zip"

    made = dms_on(config, "backup", out)
    assert made.returncode == 0, made.stderr
    assert made.stdout.startswith(f"Backup written to {out}: ")
    assert made.stdout.endswith(" 3 documents, 4 files.\n")
    with zipfile.ZipFile(out) as archive:
        assert {name: archive.read(name) for name in archive.namelist()
                if name.startswith("files/")} == \
            {f"files/{name}": data for name, data in in_bucket.items()}
    assert not any(path.name.startswith(".backup-") for path in config.data_dir.iterdir())

    target = dataclasses.replace(empty_target(config, request, tmp_path / "restored"),
                                 storage="local")
    restored = dms_on(target, "restore", out)
    assert restored.returncode == 0, restored.stderr
    for file in files:
        assert (target.data_dir / "files" / file.name).read_bytes() == in_bucket[file.name]
    verified = dms_on(target, "verify")
    assert (verified.returncode, verified.stdout.splitlines()[0],
            verified.stdout.splitlines()[-1]) == (0, "Checked 4 stored files.",
                                                  "No problems found.")

    back = dataclasses.replace(target, s3_prefix=f"{config.s3_prefix}restored/")
    moved = dms_on(back, "storage", "migrate", "--to", "s3")
    assert moved.returncode == 0, moved.stdout + moved.stderr
    checked = dms_on(dataclasses.replace(back, storage="s3"), "verify", "--deep")
    assert (checked.returncode, checked.stdout.splitlines()[0],
            checked.stdout.splitlines()[-1]) == (
        0, "Checked 4 stored files (objects of the bucket).", "No problems found.")


def test_an_object_a_backup_holds_outlives_the_purge_of_its_last_version(services, bucket):
    """A backup holds the objects its snapshot names (dms.files.storage.s3.leases.hold): a
    document deleted for good meanwhile keeps its object until the backup releases it; the
    garbage collection then takes it."""
    data = samples.text("purged while a backup reads it\n")
    alice = new_user("alice")
    document = new_document(services, alice, "purged")
    upload_file(services, alice, document, "purged.txt", data)
    [file] = stored_files(database.execute_sql)
    held, removing = leases.hold([file.sha256])
    assert (len(held), removing) == (1, [])

    trash.delete(services, alice, document, "document")  # trash_days=0: for good
    assert bucket.keys() == [bucket.blob_key(file.sha256)]
    assert b"".join(services.store.read(Blob(file.version_id, file.sha256))) == data

    leases.release(held)
    assert services.store.remove_unreferenced([file.sha256]) == 1
    assert bucket.keys() == []


def test_a_bucket_that_cannot_be_reached_writes_no_backup(config, sqlite_template, tmp_path):
    three_documents(config, sqlite_template, "backed up")
    out = tmp_path / "backup.zip"
    down = dms_on(dataclasses.replace(config, s3_endpoint=f"http://127.0.0.1:{free_port()}"),
                  "backup", out)
    assert (down.returncode, down.stdout, down.stderr.splitlines()[-1]) == (
        1, "", f"dms: the bucket {config.s3_bucket} cannot be reached, so no backup was "
               f"written; try again in a moment.")
    assert list(tmp_path.glob("backup.zip*")) == []
    assert not any(path.name.startswith(".backup-") for path in config.data_dir.iterdir())


def test_a_backup_into_the_bucket_restores_from_it(config, sqlite_template, bucket, tmp_path,
                                                   request):
    """`dms backup --to-bucket NAME` leaves the zip in the bucket (`backups/NAME`) and nothing on
    the node; `dms restore --from-bucket NAME` restores it into a new data dir, which keeps its
    files in the same bucket (the objects are there already)."""
    three_documents(config, sqlite_template, "backed up")
    files = files_named(config)

    made = dms_on(config, "backup", "--to-bucket", "nightly.zip")
    assert made.returncode == 0, made.stderr
    assert made.stdout.startswith(f"Backup written to the bucket {config.s3_bucket} as "
                                  f"backups/nightly.zip: ")
    assert made.stdout.endswith(" 3 documents, 4 files.\n")
    assert bucket.keys("backups") == ["backups/nightly.zip"]
    assert not any(path.name.startswith(".backup") for path in config.data_dir.iterdir())

    refused = dms_on(config, "backup", "--to-bucket", "../escape.zip")
    assert (refused.returncode, refused.stderr.strip()) == (
        2, "dms: A backup's name in the bucket is a plain file name (letters, digits, . _ -), "
           "not '../escape.zip'.")
    target = empty_target(config, request, tmp_path / "restored")
    missing = dms_on(target, "restore", "--from-bucket", "never.zip")
    assert (missing.returncode, missing.stderr.strip()) == (
        2, f"dms: The bucket {config.s3_bucket} has no backup named 'never.zip' under backups/.")
    assert not target.data_dir.exists()

    restored = dms_on(target, "restore", "--from-bucket", "nightly.zip")
    assert restored.returncode == 0, restored.stderr
    assert restored.stdout.startswith("Restored nightly.zip into ")
    assert restored.stdout.splitlines()[-1] == (
        f"The files are in the bucket {config.s3_bucket} (0 copied there, {len(files)} there "
        f"already); none stay in {target.data_dir}.")
    assert not (target.data_dir / "files").exists()
    assert sorted(path.name for path in target.data_dir.parent.iterdir()
                  if path.name.startswith(".dms-restore-")) == []
    checked = dms_on(target, "verify", "--deep")
    assert (checked.returncode, checked.stdout.splitlines()[0],
            checked.stdout.splitlines()[-1]) == (
        0, f"Checked {len(files)} stored files (objects of the bucket).", "No problems found.")
