"""The throwaway S3 server of the tests (tests/harness/s3server.py: SeaweedFS's `weed mini`) and
what dms's S3 store (api.md §19) may count on from it, through a boto3 client configured as dms's:
whole objects and byte ranges, writes refused when the key exists (simple and multipart, one after
the other and at once), uploads in 8 MiB parts, listings by prefix, deletes, objects kept across
kill -9, and how a request fails while the server is down or hung."""

from __future__ import annotations

import datetime
import hashlib
import io
import random
import threading
import time

import boto3
import botocore
import botocore.config
import pytest
from boto3.s3.transfer import TransferConfig
from botocore.exceptions import ClientError, EndpointConnectionError, ReadTimeoutError

from tests.harness.waiting import wait_for

pytestmark = [pytest.mark.sqlite_only, pytest.mark.enable_socket]  # no database: once is enough

MiB = 1 << 20
PART = 8 * MiB  # dms's multipart threshold and part size (api.md §19)


def sample(size: int) -> bytes:
    return random.Random(size).randbytes(size)


def md5_etag(data: bytes) -> str:
    return '"' + hashlib.md5(data).hexdigest() + '"'


def multipart_etag(data: bytes, part: int) -> str:
    """S3's ETag of a multipart object: the MD5 of its parts' MD5s, a dash, their count."""
    digests = [hashlib.md5(data[at:at + part]).digest() for at in range(0, len(data), part)]
    return f'"{hashlib.md5(b"".join(digests)).hexdigest()}-{len(digests)}"'


def count_attempts(client) -> list[float]:
    """The times at which `client` sends a request from now on (each attempt, retries too)."""
    sent: list[float] = []
    client.meta.events.register("before-send.s3", lambda **_: sent.append(time.monotonic()))
    return sent


def refusal(raised: pytest.ExceptionInfo) -> tuple[int, str]:
    """A ClientError's HTTP status and S3 error code."""
    response = raised.value.response
    return response["ResponseMetadata"]["HTTPStatusCode"], response["Error"]["Code"]


def read(client, bucket: str, key: str) -> bytes:
    return client.get_object(Bucket=bucket, Key=key)["Body"].read()


def prepare_parts(client, bucket: str, key: str, data: bytes) -> tuple[str, list[dict]]:
    """A multipart upload of `data` in PARTs, not completed: its id and its parts."""
    upload = client.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    parts = []
    for number, at in enumerate(range(0, len(data), PART), start=1):
        answer = client.upload_part(Bucket=bucket, Key=key, UploadId=upload, PartNumber=number,
                                    Body=data[at:at + PART])
        parts.append({"ETag": answer["ETag"], "PartNumber": number})
    return upload, parts


def upload_in_parts(client, bucket: str, key: str, data: bytes, **complete_args) -> None:
    """create_multipart_upload, upload_part per PART, complete (with `complete_args`)."""
    upload, parts = prepare_parts(client, bucket, key, data)
    client.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload,
                                     MultipartUpload={"Parts": parts}, **complete_args)


def at_once(count: int, write) -> dict[int, str]:
    """`write(number)` for numbers 0 to count - 1, each in its own thread, released together;
    each one's outcome: "written" or the S3 error code."""
    outcomes: dict[int, str] = {}
    start = threading.Barrier(count)

    def run(number: int) -> None:
        start.wait()
        try:
            write(number)
            outcomes[number] = "written"
        except ClientError as error:
            outcomes[number] = error.response["Error"]["Code"]

    threads = [threading.Thread(target=run, args=(number,)) for number in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return outcomes


def test_it_listens_on_loopback_and_only_on_its_own_ports(s3_server):
    expected = {("127.0.0.1", port) for port in s3_server.ports.values()}
    # The admin server (two of the ports) starts after the S3 API answers.
    wait_for(lambda: s3_server.listening() == expected, timeout=10,
             message=lambda: f"listening on {sorted(s3_server.listening())}")


def test_only_its_own_key_gets_in(s3_server):
    bucket = s3_server.bucket
    anonymous = boto3.client("s3", endpoint_url=s3_server.endpoint, region_name=s3_server.region,
                             config=botocore.config.Config(signature_version=botocore.UNSIGNED))
    wrong_secret = boto3.client("s3", endpoint_url=s3_server.endpoint,
                                region_name=s3_server.region,
                                aws_access_key_id=s3_server.access_key,
                                aws_secret_access_key="not-the-secret")

    with pytest.raises(ClientError) as raised:
        anonymous.put_object(Bucket=bucket, Key="keys/anonymous", Body=b"x")
    assert refusal(raised) == (403, "AccessDenied")
    with pytest.raises(ClientError) as raised:
        wrong_secret.put_object(Bucket=bucket, Key="keys/wrong", Body=b"x")
    assert refusal(raised) == (403, "SignatureDoesNotMatch")

    listed = s3_server.client().list_objects_v2(Bucket=bucket, Prefix="keys/")
    assert listed["KeyCount"] == 0


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
    assert refusal(raised) == (416, "InvalidRange")
    assert raised.value.response["ResponseMetadata"]["HTTPHeaders"]["content-range"] == (
        "bytes */100")


def test_a_conditional_put_writes_a_new_key_and_refuses_an_existing_one(s3_server):
    client, bucket = s3_server.client(), s3_server.bucket

    written = client.put_object(Bucket=bucket, Key="once/a", Body=b"first", IfNoneMatch="*")
    with pytest.raises(ClientError) as raised:
        client.put_object(Bucket=bucket, Key="once/a", Body=b"second", IfNoneMatch="*")

    assert written["ETag"] == md5_etag(b"first")
    assert refusal(raised) == (412, "PreconditionFailed")
    assert read(client, bucket, "once/a") == b"first"


def test_conditional_puts_of_one_key_at_once_have_one_winner(s3_server):
    """Eight writers of one key at the same moment: one writes, seven get 412, the object is the
    winner's bytes."""
    client, bucket = s3_server.client(max_pool_connections=8), s3_server.bucket
    bodies = [sample(64 * 1024 + number) for number in range(8)]

    outcomes = at_once(len(bodies), lambda number: client.put_object(
        Bucket=bucket, Key="once/raced", Body=bodies[number], IfNoneMatch="*"))

    winners = [number for number, outcome in outcomes.items() if outcome == "written"]
    assert len(winners) == 1
    assert sorted(outcomes.values()) == ["PreconditionFailed"] * 7 + ["written"]
    assert read(client, bucket, "once/raced") == bodies[winners[0]]


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
    assert read(client, bucket, "once/raced-parts") in [bodies[number] for number in winners]
    for number, outcome in outcomes.items():
        if outcome != "written":
            client.abort_multipart_upload(Bucket=bucket, Key="once/raced-parts",
                                          UploadId=uploads[number][0])


def test_boto3s_default_checksums_are_accepted_too(s3_server):
    """boto3's default (a CRC32 of every upload, sent as a trailer of an aws-chunked body) works
    on SeaweedFS 4.48 as well: this server cannot tell whether dms asks for checksums only when
    required."""
    client = boto3.client("s3", endpoint_url=s3_server.endpoint, region_name=s3_server.region,
                          aws_access_key_id=s3_server.access_key,
                          aws_secret_access_key=s3_server.secret_key,
                          config=botocore.config.Config(s3={"addressing_style": "path"}))
    data = sample(9 * MiB)

    client.put_object(Bucket=s3_server.bucket, Key="checksums/simple", Body=io.BytesIO(data))
    client.upload_fileobj(io.BytesIO(data), s3_server.bucket, "checksums/parts",
                          Config=TransferConfig(multipart_threshold=PART,
                                                multipart_chunksize=PART))

    assert read(client, s3_server.bucket, "checksums/simple") == data
    assert read(client, s3_server.bucket, "checksums/parts") == data


def test_a_multipart_upload_in_8_mib_parts(s3_server):
    client, bucket, data = s3_server.client(), s3_server.bucket, sample(20 * MiB)

    upload_in_parts(client, bucket, "parts/a", data)

    head = client.head_object(Bucket=bucket, Key="parts/a")
    assert (head["ContentLength"], head["ETag"]) == (20 * MiB, multipart_etag(data, PART))
    assert hashlib.sha256(read(client, bucket, "parts/a")).hexdigest() == (
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

    assert refusal(raised) == (412, "PreconditionFailed")
    assert read(client, bucket, "once/parts") == first
    pending = client.list_multipart_uploads(Bucket=bucket, Prefix="once/parts")
    assert [upload["Key"] for upload in pending.get("Uploads", [])] == ["once/parts"]
    client.abort_multipart_upload(Bucket=bucket, Key="once/parts",
                                  UploadId=pending["Uploads"][0]["UploadId"])
    assert "Uploads" not in client.list_multipart_uploads(Bucket=bucket, Prefix="once/parts")
    assert read(client, bucket, "once/parts") == first


def test_a_conditional_multipart_completion_is_refused_over_a_simple_object(s3_server):
    client, bucket = s3_server.client(), s3_server.bucket
    client.put_object(Bucket=bucket, Key="once/simple", Body=b"small")

    with pytest.raises(ClientError) as raised:
        upload_in_parts(client, bucket, "once/simple", sample(9 * MiB), IfNoneMatch="*")

    assert refusal(raised) == (412, "PreconditionFailed")
    assert read(client, bucket, "once/simple") == b"small"


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
    assert read(client, bucket, "managed/a") == data
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


def test_a_delete_and_the_delete_of_a_missing_key(s3_server):
    client, bucket = s3_server.client(), s3_server.bucket
    client.put_object(Bucket=bucket, Key="deleted/a", Body=b"gone soon")

    deleted = client.delete_object(Bucket=bucket, Key="deleted/a")
    missing = client.delete_object(Bucket=bucket, Key="deleted/never-there")

    assert deleted["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert missing["ResponseMetadata"]["HTTPStatusCode"] == 204
    with pytest.raises(ClientError) as raised:
        client.get_object(Bucket=bucket, Key="deleted/a")
    assert refusal(raised) == (404, "NoSuchKey")
    with pytest.raises(ClientError) as raised:
        client.head_object(Bucket=bucket, Key="deleted/a")
    assert refusal(raised) == (404, "404")  # a HEAD answer has no body to name the error
    assert client.list_objects_v2(Bucket=bucket, Prefix="deleted/")["KeyCount"] == 0


def test_objects_survive_a_kill_and_a_restart_on_the_same_ports(s3_server):
    client, bucket = s3_server.client(), s3_server.bucket
    small, large = sample(1000), sample(9 * MiB)
    client.put_object(Bucket=bucket, Key="kept/small", Body=small)
    upload_in_parts(client, bucket, "kept/large", large)
    endpoint = s3_server.endpoint

    s3_server.kill()
    s3_server.start()

    assert s3_server.endpoint == endpoint
    assert (read(client, bucket, "kept/small"), read(client, bucket, "kept/large")) == (
        small, large)


def test_a_request_to_a_stopped_server_fails_at_once(s3_server):
    """Nothing listens: each attempt's connection is refused at once. dms's retries setting,
    max_attempts 2, counts retries (botocore's legacy meaning): three attempts in all."""
    client, bucket = s3_server.client(), s3_server.bucket
    client.put_object(Bucket=bucket, Key="down/a", Body=b"before")
    attempts = count_attempts(client)
    s3_server.kill()
    try:
        began = time.monotonic()
        with pytest.raises(EndpointConnectionError):
            client.put_object(Bucket=bucket, Key="down/b", Body=b"while down")
        refused_after = time.monotonic() - began
    finally:
        s3_server.start()

    assert len(attempts) == 3
    # Not a speed target: the bound says no attempt waited for a timeout.
    assert refused_after < 2, refused_after
    listed = client.list_objects_v2(Bucket=bucket, Prefix="down/")
    assert [item["Key"] for item in listed["Contents"]] == ["down/a"]


@pytest.mark.slow
def test_a_request_to_a_hung_server_times_out_after_three_attempts(s3_server):
    """The server stopped (SIGSTOP): connections are accepted, nothing answers. Each of the three
    attempts waits read_timeout (dms's 10 s: 30 s in all; 2 s here), the backoff between them is
    at most 50 ms and 100 ms; the server answers again when it resumes, its objects intact."""
    client, bucket = s3_server.client(read_timeout=2), s3_server.bucket
    client.put_object(Bucket=bucket, Key="hung/a", Body=b"still here")
    attempts = count_attempts(client)
    s3_server.pause()
    try:
        began = time.monotonic()
        with pytest.raises(ReadTimeoutError):
            client.get_object(Bucket=bucket, Key="hung/a")
        waited = time.monotonic() - began
    finally:
        s3_server.resume()

    assert len(attempts) == 3
    # Not a speed target: three attempts of 2 s each, nothing more.
    assert 6 <= waited < 9, waited
    assert read(client, bucket, "hung/a") == b"still here"
