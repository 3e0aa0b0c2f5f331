"""The storage commands stream (api.md §19): a 64 MiB file goes from the bucket to a directory,
back into a bucket and into a backup without the commands' memory growing by the file's size
(each command's peak resident memory, from GNU time, against the same command on a tiny
installation)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path

import pytest

from tests.harness import samples
from tests.harness.domaintier import domain_services, new_document, new_user, upload_file
from tests.harness.processes import config_args, dms_command
from tests.harness.storageops import bucket_environment

# Two installations in one test: the SQLite lane's data dirs (PostgreSQL gives a test one
# database); what is measured is the commands' streaming, the same on either engine.
pytestmark = [pytest.mark.enable_socket, pytest.mark.slow, pytest.mark.sqlite_only]

LARGE = 64 * 1024 * 1024
# What a command may use above its tiny run, below the file's 64 MiB: reading and writing take
# 1 MiB at a time, but an upload to the bucket sends 8 MiB parts, up to 4 at once (boto3's
# transfer, as uploads do: 12 MiB more than the tiny run when measured, 0 to 1.5 for the rest).
GROWTH_MIB = 40
TIME = Path("/usr/bin/time")


def peak_mib(config, *args: str) -> float:
    """The peak resident memory of `dms ARGS` on `config`'s installation, in MiB."""
    result = subprocess.run([str(TIME), "-f", "peak %M", *dms_command(*args,
                                                                       *config_args(config))],
                            env=bucket_environment(config), capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return int(result.stderr.strip().splitlines()[-1].split()[1]) / 1024


def installation(config, template, size: int) -> None:
    with domain_services(config, template) as services:
        alice = new_user("alice")
        data = samples.text(os.urandom(size // 2).hex())
        upload_file(services, alice, new_document(services, alice, "large"), "large.txt", data)


@pytest.mark.skipif(not TIME.exists(), reason="GNU time measures a command's peak memory")
def test_migrating_and_backing_up_a_64_mib_file_takes_no_more_memory_than_a_tiny_one(
        config, sqlite_template, tmp_path):
    peaks = {}
    for name, size in (("tiny", 16), ("large", LARGE)):
        where = dataclasses.replace(config, data_dir=tmp_path / name,
                                    s3_prefix=f"{config.s3_prefix}{name}/")
        installation(where, sqlite_template, size)
        peaks[name] = (
            peak_mib(where, "storage", "migrate", "--to", "local"),
            peak_mib(dataclasses.replace(where, storage="local",
                                         s3_prefix=f"{config.s3_prefix}{name}-again/"),
                     "storage", "migrate", "--to", "s3"),
            peak_mib(where, "backup", str(tmp_path / f"{name}.zip")))
    for what, tiny, large in zip(("to a directory", "to a bucket", "a backup"), *peaks.values(),
                                 strict=True):
        assert large - tiny < GROWTH_MIB, f"{what}: {tiny:.0f} MiB tiny, {large:.0f} MiB large"
