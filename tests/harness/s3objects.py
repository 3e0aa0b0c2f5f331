"""Objects in the tests' S3 server (s3server.py) through a boto3 client: sample bytes, the ETags
S3 gives them, an error's status and code, reading an object back, a multipart upload in dms's
8 MiB parts done by hand (boto3's managed upload takes no IfNoneMatch), writes released at once."""

from __future__ import annotations

import hashlib
import random
import threading
from collections.abc import Callable

from botocore.exceptions import ClientError

MiB = 1 << 20
PART = 8 * MiB  # dms's multipart threshold and part size (api.md §19)


def sample(size: int) -> bytes:
    """`size` bytes that differ from one size to another, the same in every run."""
    return random.Random(size).randbytes(size)


def md5_etag(data: bytes) -> str:
    """S3's ETag of an object written in one piece."""
    return '"' + hashlib.md5(data).hexdigest() + '"'


def multipart_etag(data: bytes, part: int = PART) -> str:
    """S3's ETag of a multipart object: the MD5 of its parts' MD5s, a dash, their count."""
    digests = [hashlib.md5(data[at:at + part]).digest() for at in range(0, len(data), part)]
    return f'"{hashlib.md5(b"".join(digests)).hexdigest()}-{len(digests)}"'


def error_of(error: ClientError) -> tuple[int, str]:
    """A refusal's HTTP status and S3 error code."""
    return error.response["ResponseMetadata"]["HTTPStatusCode"], error.response["Error"]["Code"]


def read_object(client, bucket: str, key: str) -> bytes:
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
    """create_multipart_upload, upload_part per PART, complete (with `complete_args`, e.g.
    IfNoneMatch="*")."""
    upload, parts = prepare_parts(client, bucket, key, data)
    client.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload,
                                     MultipartUpload={"Parts": parts}, **complete_args)


def at_once(count: int, write: Callable[[int], object]) -> dict[int, str]:
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
            outcomes[number] = error_of(error)[1]

    threads = [threading.Thread(target=run, args=(number,)) for number in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return outcomes
