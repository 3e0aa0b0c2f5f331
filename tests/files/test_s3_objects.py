"""What dms's S3 store (api.md §19) may count on from objects in the tests' S3 server (SeaweedFS
4.48, tests/harness/s3server.py), through a boto3 client configured as dms's: whole objects and
byte ranges, writes refused when the key exists (simple and multipart, one after the other and at
once), uploads in 8 MiB parts, listings by prefix, deletes."""

from __future__ import annotations

import datetime
import hashlib
import io

import pytest
from boto3.s3.transfer import TransferConfig
from botocore.exceptions import ClientError

from tests.harness.s3objects import (
    PART,
    MiB,
    at_once,
    error_of,
    md5_etag,
    multipart_etag,
    prepare_parts,
    read_object,
    sample,
    upload_in_parts,
)

pytestmark = [pytest.mark.sqlite_only, pytest.mark.enable_socket]  # no database: once is enough


def test_an_object_is_read_back_whole(s3_server):
    client, bucket, data = s3_server.client(), s3_server.bucket, sample(100_000)

    put = client.put_object(Bucket=bucket, Key="whole/a", Body=data)
    got = client.get_object(Bucket=bucket, Key="whole/a")
    head = client.head_object(Bucket=bucket, Key="whole/a")

    assert put["ETag"] == md5_etag(data)
    assert (got["ResponseMetadata"]["HTTPStatusCode"], got["ContentLength"], got["ETag"],
            got["AcceptRanges"], got["Body"].read()) == (200, 100_000, md5_etag(data), "bytes",
                                                          data)
    assert (head["ContentLength"], head["ETag"], head["LastModified"]) == (
        100_000, md5_etag(data), got["LastModified"])


def test_byte_ranges(s3_server):
    client, bucket, data = s3_server.client(), s3_server.bucket, bytes(range(100))
    client.put_object(Bucket=bucket, Key="ranges/a", Body=data)

    def ranged(header: str) -> tuple:
        answer = client.get_object(Bucket=bucket, Key="ranges/a", Range=header)
        return (answer["ResponseMetadata"]["HTTPStatusCode"], answer["ContentRange"],
                answer["ContentLength"], answer["Body"].read())

    assert ranged("bytes=10-19") == (206, "bytes 10-19/100", 10, data[10:20])
    assert ranged("bytes=-5") == (206, "bytes 95-99/100", 5, data[95:])
    assert ranged("bytes=90-") == (206, "bytes 90-99/100", 10, data[90:])
    assert ranged("bytes=95-200") == (206, "bytes 95-99/100", 5, data[95:])
    with pytest.raises(ClientError) as raised:
        ranged("bytes=100-120")
    assert error_of(raised.value) == (416, "InvalidRange")
    assert raised.value.response["ResponseMetadata"]["HTTPHeaders"]["content-range"] == (
        "bytes */100")


def test_a_conditional_put_writes_a_new_key_and_refuses_an_existing_one(s3_server):
    client, bucket = s3_server.client(), s3_server.bucket

    written = client.put_object(Bucket=bucket, Key="once/a", Body=b"first", IfNoneMatch="*")
    with pytest.raises(ClientError) as raised:
        client.put_object(Bucket=bucket, Key="once/a", Body=b"second", IfNoneMatch="*")

    assert written["ETag"] == md5_etag(b"first")
    assert error_of(raised.value) == (412, "PreconditionFailed")
    assert read_object(client, bucket, "once/a") == b"first"


def test_conditional_puts_of_one_key_at_once_have_one_winner(s3_server):
    """Eight writers of one key at the same moment: one writes, seven get 412, the object is the
    winner's bytes. (The losers wait for a lock on the key that SeaweedFS retries each second:
    their 412s came after 0.1 to 3.2 s.)"""
    client, bucket = s3_server.client(max_pool_connections=8), s3_server.bucket
    bodies = [sample(64 * 1024 + number) for number in range(8)]

    outcomes = at_once(len(bodies), lambda number: client.put_object(
        Bucket=bucket, Key="once/raced", Body=bodies[number], IfNoneMatch="*"))

    winners = [number for number, outcome in outcomes.items() if outcome == "written"]
    assert len(winners) == 1
    assert sorted(outcomes.values()) == ["PreconditionFailed"] * 7 + ["written"]
    assert read_object(client, bucket, "once/raced") == bodies[winners[0]]


def test_a_multipart_upload_in_8_mib_parts(s3_server):
    client, bucket, data = s3_server.client(), s3_server.bucket, sample(20 * MiB)

    upload_in_parts(client, bucket, "parts/a", data)

    head = client.head_object(Bucket=bucket, Key="parts/a")
    assert (head["ContentLength"], head["ETag"]) == (20 * MiB, multipart_etag(data, PART))
    assert hashlib.sha256(read_object(client, bucket, "parts/a")).hexdigest() == (
        hashlib.sha256(data).hexdigest())
    tail = client.get_object(Bucket=bucket, Key="parts/a", Range=f"bytes={PART - 5}-{PART + 4}")
    assert (tail["ContentRange"], tail["Body"].read()) == (
        f"bytes {PART - 5}-{PART + 4}/{20 * MiB}", data[PART - 5:PART + 5])


def test_a_conditional_multipart_completion_is_refused_on_an_existing_key(s3_server):
    """IfNoneMatch on CompleteMultipartUpload: written on a new key, 412 on an existing one; the
    refused upload's parts stay until it is aborted."""
    client, bucket = s3_server.client(), s3_server.bucket
    first, second = sample(9 * MiB), sample(10 * MiB)

    upload_in_parts(client, bucket, "once/parts", first, IfNoneMatch="*")
    with pytest.raises(ClientError) as raised:
        upload_in_parts(client, bucket, "once/parts", second, IfNoneMatch="*")

    assert error_of(raised.value) == (412, "PreconditionFailed")
    assert read_object(client, bucket, "once/parts") == first
    pending = client.list_multipart_uploads(Bucket=bucket, Prefix="once/parts")
    assert [upload["Key"] for upload in pending.get("Uploads", [])] == ["once/parts"]
    client.abort_multipart_upload(Bucket=bucket, Key="once/parts",
                                  UploadId=pending["Uploads"][0]["UploadId"])
    assert "Uploads" not in client.list_multipart_uploads(Bucket=bucket, Prefix="once/parts")
    assert read_object(client, bucket, "once/parts") == first


def test_a_conditional_multipart_completion_is_refused_over_a_simple_object(s3_server):
    client, bucket = s3_server.client(), s3_server.bucket
    client.put_object(Bucket=bucket, Key="once/simple", Body=b"small")

    with pytest.raises(ClientError) as raised:
        upload_in_parts(client, bucket, "once/simple", sample(9 * MiB), IfNoneMatch="*")

    assert error_of(raised.value) == (412, "PreconditionFailed")
    assert read_object(client, bucket, "once/simple") == b"small"


def test_conditional_multipart_completions_at_once_may_each_win(s3_server):
    """SeaweedFS 4.48 checks IfNoneMatch on CompleteMultipartUpload without a lock: of four
    completions of one key at the same moment, two or three succeeded in two runs of three, each
    replacing the object. Written once holds for content-addressed keys only because every
    writer of a key writes the same bytes."""
    client, bucket = s3_server.client(max_pool_connections=4), s3_server.bucket
    bodies = [sample(9 * MiB + number) for number in range(4)]
    uploads = [prepare_parts(client, bucket, "once/raced-parts", body) for body in bodies]

    outcomes = at_once(len(uploads), lambda number: client.complete_multipart_upload(
        Bucket=bucket, Key="once/raced-parts", UploadId=uploads[number][0],
        MultipartUpload={"Parts": uploads[number][1]}, IfNoneMatch="*"))

    winners = [number for number, outcome in outcomes.items() if outcome == "written"]
    assert winners and set(outcomes.values()) <= {"written", "PreconditionFailed"}
    assert read_object(client, bucket, "once/raced-parts") in [bodies[number] for number in winners]
    for number, outcome in outcomes.items():
        if outcome != "written":
            client.abort_multipart_upload(Bucket=bucket, Key="once/raced-parts",
                                          UploadId=uploads[number][0])


def test_upload_fileobj_goes_multipart_past_the_threshold_and_takes_no_condition(s3_server):
    """boto3's managed upload splits a 20 MiB stream in 8 MiB parts, but refuses IfNoneMatch
    among its ExtraArgs (s3transfer's allow-list): a write-once multipart upload calls the three
    operations itself."""
    client, bucket, data = s3_server.client(), s3_server.bucket, sample(20 * MiB)
    transfer = TransferConfig(multipart_threshold=PART, multipart_chunksize=PART)

    client.upload_fileobj(io.BytesIO(data), bucket, "managed/a", Config=transfer)
    with pytest.raises(ValueError, match="Invalid extra_args key 'IfNoneMatch'"):
        client.upload_fileobj(io.BytesIO(data), bucket, "managed/b", Config=transfer,
                              ExtraArgs={"IfNoneMatch": "*"})

    head = client.head_object(Bucket=bucket, Key="managed/a")
    assert (head["ContentLength"], head["ETag"]) == (20 * MiB, multipart_etag(data, PART))
    assert read_object(client, bucket, "managed/a") == data
    assert client.list_objects_v2(Bucket=bucket, Prefix="managed/b")["KeyCount"] == 0


def test_a_listing_by_prefix(s3_server):
    client, bucket = s3_server.client(), s3_server.bucket
    before = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    for key, size in (("listed/a/1", 1), ("listed/a/2", 22), ("listed/a/3/deeper", 333),
                      ("listed/b/1", 4)):
        client.put_object(Bucket=bucket, Key=key, Body=sample(size))
    after = datetime.datetime.now(datetime.UTC)

    listed = client.list_objects_v2(Bucket=bucket, Prefix="listed/a/")

    assert [(item["Key"], item["Size"]) for item in listed["Contents"]] == [
        ("listed/a/1", 1), ("listed/a/2", 22), ("listed/a/3/deeper", 333)]
    assert (listed["KeyCount"], listed["IsTruncated"]) == (3, False)
    assert all(before <= item["LastModified"] <= after for item in listed["Contents"])


def test_a_listing_in_pages_gives_every_key_once_in_the_servers_order(s3_server):
    """SeaweedFS keeps keys as a tree of folders and lists them folder by folder: "a/b" comes
    before "a-b" and "b/c/d" before "b.x", where S3 orders keys by their bytes ('-' and '.' come
    before '/'). Pages and StartAfter follow the same order, so a walk in pages gives each key
    once; dms's keys (hex names of one length under blobs/xx/) come in S3's order here too."""
    client, bucket = s3_server.client(), s3_server.bucket
    for key in ("order/a", "order/a-b", "order/a/b", "order/a0", "order/b/c/d", "order/b.x",
                "order/B", "order/é"):
        client.put_object(Bucket=bucket, Key=key, Body=b"x")
    blobs = sorted(hashlib.sha256(bytes([number])).hexdigest() for number in range(6))
    for digest in blobs:
        client.put_object(Bucket=bucket, Key=f"order-blobs/{digest[:2]}/{digest}", Body=b"x")

    pages = [[item["Key"].removeprefix("order/") for item in page["Contents"]]
             for page in client.get_paginator("list_objects_v2").paginate(
                 Bucket=bucket, Prefix="order/", PaginationConfig={"PageSize": 3})]
    after = client.list_objects_v2(Bucket=bucket, Prefix="order/", StartAfter="order/a-b")
    blob_keys = [item["Key"] for item in
                 client.list_objects_v2(Bucket=bucket, Prefix="order-blobs/")["Contents"]]

    assert pages == [["B", "a", "a/b"], ["a-b", "a0", "b/c/d"], ["b.x", "é"]]
    assert [item["Key"] for item in after["Contents"]] == [
        "order/a0", "order/b/c/d", "order/b.x", "order/é"]
    assert blob_keys == [f"order-blobs/{digest[:2]}/{digest}" for digest in blobs]


def test_a_delete_and_the_delete_of_a_missing_key(s3_server):
    client, bucket = s3_server.client(), s3_server.bucket
    client.put_object(Bucket=bucket, Key="deleted/a", Body=b"gone soon")

    deleted = client.delete_object(Bucket=bucket, Key="deleted/a")
    missing = client.delete_object(Bucket=bucket, Key="deleted/never-there")

    assert deleted["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert missing["ResponseMetadata"]["HTTPStatusCode"] == 204
    with pytest.raises(ClientError) as raised:
        client.get_object(Bucket=bucket, Key="deleted/a")
    assert error_of(raised.value) == (404, "NoSuchKey")
    with pytest.raises(ClientError) as raised:
        client.head_object(Bucket=bucket, Key="deleted/a")
    assert error_of(raised.value) == (404, "404")  # a HEAD answer has no body to name the error
    assert client.list_objects_v2(Bucket=bucket, Prefix="deleted/")["KeyCount"] == 0
