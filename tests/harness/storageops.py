"""The storage commands of api.md §19 as a user runs them: `python -m dms ...` on a test's data
dir and database with the bucket's DMS_S3_* settings in its environment (the S3 tests' config,
tests/s3/conftest.py), and the files a database names with their bytes."""

from __future__ import annotations

import subprocess

from dms.db import database
from dms.db.schema import open_migrated
from dms.files.storage.stored import StoredFile, stored_files
from tests.harness.processes import config_args, config_env, dms_command, environment


def bucket_environment(config) -> dict[str, str]:
    """DMS_STORAGE and the DMS_S3_* settings of `config`, and its database."""
    settings = dict(DMS_STORAGE=config.storage, DMS_S3_ENDPOINT=config.s3_endpoint,
                    DMS_S3_BUCKET=config.s3_bucket, DMS_S3_REGION=config.s3_region,
                    DMS_S3_ACCESS_KEY=config.s3_access_key,
                    DMS_S3_SECRET_KEY=config.s3_secret_key, DMS_S3_PREFIX=config.s3_prefix)
    return environment(**{name: value for name, value in settings.items() if value is not None},
                       **config_env(config))


def dms_on(config, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    """`dms ARGS --data-dir ... [--database-url ...]` with `config`'s storage settings."""
    return subprocess.run(dms_command(*map(str, args), *config_args(config)),
                          env=bucket_environment(config), capture_output=True, text=True,
                          timeout=timeout)


def files_named(config) -> list[StoredFile]:
    """The files `config`'s database names (originals and searchable PDFs), by name; the
    database opened for this and closed again."""
    open_migrated(config)
    try:
        return sorted(stored_files(database.execute_sql), key=lambda file: file.name)
    finally:
        database.close()


def assert_served(config, documents: dict[str, str], files: dict[str, bytes]) -> None:
    """A server on `config` gives alice every document's file and the scan's searchable PDF as
    `files` has them ({stored file's name: bytes}; `documents`: {title: id}, a "scan" among
    them)."""
    from tests.harness.appserver import running
    from tests.harness.client import Client

    with running(config) as server:
        alice = Client(server.url).login("alice", "user-password-1")
        for title, document in documents.items():
            [version] = alice.get(f"/api/documents/{document}/").json()["data"]["attributes"][
                "versions"]
            download = alice.get(f"/api/documents/{document}/download/")
            assert (download.status_code, download.content) == \
                (200, files[f"{version['id'][:2]}/{version['id']}"]), title
        searchable = alice.get(f"/api/documents/{documents['scan']}/download/?searchable=1")
        [pdf] = [data for name, data in files.items() if name.endswith(".searchable.pdf")]
        assert (searchable.status_code, searchable.content) == (200, pdf)


def three_documents(config, template, words: str) -> dict[str, str]:
    """alice's invoice (a PDF), the same PDF again and a scan read into a searchable PDF, each
    with `words` in it: {title: document id}."""
    from tests.harness import samples
    from tests.harness.domaintier import domain_services, new_user, read_document

    with domain_services(config, template, workers=True) as services:
        alice = new_user("alice")
        invoice = samples.pdf([f"Invoice 4711, {words}"])
        return {"invoice": read_document(services, alice, "invoice", "invoice.pdf", invoice),
                "again": read_document(services, alice, "again", "invoice.pdf", invoice),
                "scan": read_document(services, alice, "scan", "scan.png",
                                      samples.png(f"Scan 0815 {words}"))}
