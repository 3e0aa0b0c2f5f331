"""`dms storage migrate --to local` (api.md §19): an installation in a bucket copies every file its
database names into DATA_DIR/files (or --files-dir) at the directory store's places, each one
hashed as it is written, one file per version (the same bytes hard-linked), continuing where a
run stopped, listing what it cannot copy; a server started on the directory serves every file.
The bucket is left as it was."""

from __future__ import annotations

import dataclasses
import hashlib

import pytest

from tests.harness.storageops import assert_served, dms_on, files_named, three_documents

pytestmark = [pytest.mark.enable_socket, pytest.mark.slow]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_every_file_lands_at_its_place_checked_and_a_server_on_the_directory_serves_it(
        config, sqlite_template, bucket, tmp_path):
    documents = three_documents(config, sqlite_template, "moved out of the bucket")
    files = files_named(config)
    in_bucket = {file.name: bucket.get(bucket.blob_key(file.sha256)) for file in files}
    keys = bucket.keys()
    target = tmp_path / "shared-files"

    result = dms_on(config, "storage", "migrate", "--to", "local", "--files-dir", target)
    assert (result.returncode, result.stderr) == (0, "")
    size = sum(file.size for file in files)
    assert result.stdout == (
        f"Copied 4 files ({size / 2**20:.1f} MiB) to the folder {target}; 0 were there "
        f"already; 4 files in all.\n"
        f"Every file is in the folder {target} now. To use it: stop dms (every node), run this "
        f"command once more (it copies what was uploaded meanwhile), then set\n"
        f"  DMS_STORAGE=local (or unset it)\n"
        f"  DMS_FILES_DIR={target}\n"
        f"and start dms again. The files in the bucket stay as they are: remove them yourself "
        f"once dms works from the new store.\n")
    for file in files:
        assert (target / file.name).read_bytes() == in_bucket[file.name]
    assert sorted(path.relative_to(target).as_posix() for path in target.rglob("*")
                  if path.is_file()) == sorted(file.name for file in files)
    assert list((target / ".incoming").iterdir()) == []
    assert bucket.keys() == keys  # the source stays

    again = dms_on(config, "storage", "migrate", "--to", "local", "--files-dir", target)
    assert (again.returncode, again.stdout.splitlines()[0]) == (
        0, f"Copied 0 files (0.0 MiB) to the folder {target}; 4 were there already; 4 files in "
           f"all.")

    on_disk = dataclasses.replace(config, storage="local", files_dir=target,
                                  s3_endpoint="http://127.0.0.1:9")  # the bucket is not used
    assert_served(on_disk, documents, in_bucket)


def test_a_run_stopped_after_two_files_continues_where_it_stopped(config, sqlite_template,
                                                                    bucket):
    three_documents(config, sqlite_template, "moved out of the bucket")
    files = files_named(config)

    first = dms_on(config, "storage", "migrate", "--to", "local", "--limit", "2")
    assert first.returncode == 0
    assert first.stdout.splitlines()[1:] == ["Stopped after 2 files, as --limit asks: run the "
                                             "same command again to copy the rest."]
    there = sorted(path for path in config.files_path.rglob("*") if path.is_file())
    assert len(there) == 2
    modified = {path: path.stat().st_mtime_ns for path in there}

    rest = dms_on(config, "storage", "migrate", "--to", "local")
    assert rest.returncode == 0
    assert rest.stdout.startswith("Copied 2 files ")
    assert rest.stdout.splitlines()[0].endswith("; 2 were there already; 4 files in all.")
    assert {path: path.stat().st_mtime_ns for path in there} == modified  # not copied again
    for file in files:
        assert (config.files_path / file.name).read_bytes() == \
            bucket.get(bucket.blob_key(file.sha256))


def test_a_missing_and_a_tampered_object_are_listed_and_the_rest_copied(config,
                                                                        sqlite_template,
                                                                        bucket):
    three_documents(config, sqlite_template, "moved out of the bucket")
    files = files_named(config)
    searchable = next(file for file in files if file.name.endswith(".searchable.pdf"))
    original = next(file for file in files if file.version_id == searchable.version_id
                    and file is not searchable)
    bucket.client.delete_object(Bucket=bucket.name,
                                Key=bucket.prefix + bucket.blob_key(searchable.sha256))
    other = b"y" * original.size
    bucket.put(bucket.blob_key(original.sha256), other)

    result = dms_on(config, "storage", "migrate", "--to", "local")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Copied 2 files ")
    assert lines[1] == "2 files could not be copied:"
    assert sorted(lines[2:4]) == sorted([
        f"  version {original.version_id}: its bytes are not what its row records "
        f"({original.size} bytes, SHA-256 {sha(other)}; recorded {original.size} bytes, "
        f"{original.sha256}); not copied",
        f"  version {searchable.version_id} (its searchable PDF): the bucket has no object "
        f"{searchable.sha256}; not copied"])
    assert len(lines) == 5
    assert sorted(path.relative_to(config.files_path).as_posix()
                  for path in config.files_path.rglob("*") if path.is_file()) == \
        sorted(file.name for file in files if file not in (original, searchable))
    assert list((config.files_path / ".incoming").iterdir()) == []


def test_the_files_in_the_bucket_already_copy_nothing(config, bucket):
    assert files_named(config) == []  # a migrated, empty database
    same = dms_on(config, "storage", "migrate", "--to", "s3")
    assert (same.returncode, same.stdout, same.stderr) == (
        2, "", "dms: the files are in the bucket already (DMS_STORAGE=s3): --to local copies "
               "them to the other kind of store.\n")
