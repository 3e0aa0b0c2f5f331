"""The tests of object storage (api.md §19): every test's installation keeps its files in the
module's S3 server (SeaweedFS on loopback, tests/harness/s3server.py), under a prefix of its own,
with no files directory."""

from __future__ import annotations

import dataclasses
import secrets

import pytest

from dms.config import Config


@pytest.fixture
def config(config: Config, s3_server) -> Config:
    """conftest's config, storing in the bucket under this test's own prefix."""
    return dataclasses.replace(
        config, storage="s3", s3_endpoint=s3_server.endpoint, s3_bucket=s3_server.bucket,
        s3_region=s3_server.region, s3_access_key=s3_server.access_key,
        s3_secret_key=s3_server.secret_key, s3_prefix=f"t-{secrets.token_hex(4)}/")


@pytest.fixture
def bucket(config: Config, s3_server):
    """What the bucket holds under this test's prefix: `keys(kind)` ("blobs", "work"),
    `get(key)`, `put(key, data)` and the raw boto3 client."""
    return Bucket(s3_server.client(), config.s3_bucket, config.s3_prefix)


class Bucket:
    def __init__(self, client, name: str, prefix: str):
        self.client, self.name, self.prefix = client, name, prefix

    def keys(self, kind: str = "blobs") -> list[str]:
        found, token = [], None
        while True:
            extra = {"ContinuationToken": token} if token else {}
            page = self.client.list_objects_v2(Bucket=self.name, Prefix=f"{self.prefix}{kind}/",
                                               **extra)
            found += [item["Key"][len(self.prefix):] for item in page.get("Contents", [])]
            token = page.get("NextContinuationToken")
            if not page.get("IsTruncated"):
                return sorted(found)

    def blob_key(self, sha256: str) -> str:
        return f"blobs/{sha256[:2]}/{sha256}"

    def get(self, key: str) -> bytes:
        return self.client.get_object(Bucket=self.name, Key=self.prefix + key)["Body"].read()

    def put(self, key: str, data: bytes) -> None:
        self.client.put_object(Bucket=self.name, Key=self.prefix + key, Body=data)
