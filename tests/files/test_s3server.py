"""The throwaway S3 server of the tests (tests/harness/s3server.py: SeaweedFS's `weed mini`)
itself, through a boto3 client configured as dms's (api.md §19): only loopback and its own ports,
only its own key, objects kept across kill -9 and a restart, and how a request fails while the
server is down or hung. What its objects do is test_s3_objects.py's."""

from __future__ import annotations

import io
import time

import boto3
import botocore
import botocore.config
import pytest
from boto3.s3.transfer import TransferConfig
from botocore.exceptions import ClientError, EndpointConnectionError, ReadTimeoutError

from tests.harness.s3objects import (
    PART,
    MiB,
    error_of,
    read_object,
    sample,
    upload_in_parts,
)
from tests.harness.waiting import wait_for

pytestmark = [pytest.mark.sqlite_only, pytest.mark.enable_socket]  # no database: once is enough


def count_attempts(client) -> list[float]:
    """The times at which `client` sends a request from now on (each attempt, retries too)."""
    sent: list[float] = []
    client.meta.events.register("before-send.s3", lambda **_: sent.append(time.monotonic()))
    return sent


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
    assert error_of(raised.value) == (403, "AccessDenied")
    with pytest.raises(ClientError) as raised:
        wrong_secret.put_object(Bucket=bucket, Key="keys/wrong", Body=b"x")
    assert error_of(raised.value) == (403, "SignatureDoesNotMatch")

    listed = s3_server.client().list_objects_v2(Bucket=bucket, Prefix="keys/")
    assert listed["KeyCount"] == 0


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

    assert read_object(client, s3_server.bucket, "checksums/simple") == data
    assert read_object(client, s3_server.bucket, "checksums/parts") == data


def test_objects_survive_a_kill_and_a_restart_on_the_same_ports(s3_server):
    client, bucket = s3_server.client(), s3_server.bucket
    small, large = sample(1000), sample(9 * MiB)
    client.put_object(Bucket=bucket, Key="kept/small", Body=small)
    upload_in_parts(client, bucket, "kept/large", large)
    endpoint = s3_server.endpoint

    s3_server.kill()
    s3_server.start()

    assert s3_server.endpoint == endpoint
    assert read_object(client, bucket, "kept/small") == small
    assert read_object(client, bucket, "kept/large") == large


def test_a_request_to_a_stopped_server_fails_at_once(s3_server):
    """Nothing listens: each of the two attempts' connection is refused at once."""
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

    assert len(attempts) == 2
    # Not a speed target: the bound says no attempt waited for a timeout.
    assert refused_after < 2, refused_after
    listed = client.list_objects_v2(Bucket=bucket, Prefix="down/")
    assert [item["Key"] for item in listed["Contents"]] == ["down/a"]


@pytest.mark.slow
def test_a_request_to_a_hung_server_times_out_after_two_attempts(s3_server):
    """The server stopped (SIGSTOP): connections are accepted, nothing answers. Each of the two
    attempts waits read_timeout (dms's 10 s: 20 s in all; 2 s here), with a backoff of at most
    50 ms between them; the server answers again when it resumes, its objects intact."""
    bucket = s3_server.bucket
    # Written with dms's own timeout: right after the previous test's restart a first write can
    # take more than 2 s under load (CI's two lanes: twice in a row once).
    s3_server.client().put_object(Bucket=bucket, Key="hung/a", Body=b"still here")
    client = s3_server.client(read_timeout=2)
    attempts = count_attempts(client)
    s3_server.pause()
    try:
        began = time.monotonic()
        with pytest.raises(ReadTimeoutError):
            client.get_object(Bucket=bucket, Key="hung/a")
        waited = time.monotonic() - began
    finally:
        s3_server.resume()

    assert len(attempts) == 2
    # Not a speed target: two attempts of 2 s each, nothing more.
    assert 4 <= waited < 7, waited
    assert read_object(s3_server.client(), bucket, "hung/a") == b"still here"
