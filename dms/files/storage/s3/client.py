"""The S3 client (boto3, the `s3` extra): one per process, thread-safe, imported only when
DMS_STORAGE=s3 (the embedded default never loads it). Checksums are computed and validated only
when an operation requires them: boto3's newer default (a CRC on every request and response)
is refused by several S3-compatible servers. Short timeouts and few retries: a bucket that is
down makes an upload fail within seconds (503), not hang."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dms.config import ConfigError
from dms.files.storage.base import StoreUnavailable

# A call waits this long for the bucket's next bytes (and is tried twice): an upload or download
# stalled by a bucket that accepts connections but does not answer fails within 20 s.
READ_TIMEOUT_SECONDS = 10
DOWN = ("The file store (the S3 bucket) cannot be reached, so nothing was saved; try again in a "
        "moment.")


@dataclass(frozen=True)
class BucketSettings:
    endpoint: str | None
    bucket: str
    region: str
    access_key: str | None
    secret_key: str | None
    prefix: str
    connections: int = 20


def make_client(settings: BucketSettings) -> Any:
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        raise ConfigError("DMS_STORAGE=s3 needs boto3: pip install 'dms[s3]' (or "
                          "scripts/setup.sh --extras s3 in the checkout).") from None
    config = Config(request_checksum_calculation="when_required",
                    response_checksum_validation="when_required",
                    s3={"addressing_style": "path" if settings.endpoint else "auto"},
                    retries={"total_max_attempts": 2, "mode": "standard"},
                    connect_timeout=3, read_timeout=READ_TIMEOUT_SECONDS,
                    max_pool_connections=settings.connections)
    session = boto3.session.Session()
    return session.client("s3", endpoint_url=settings.endpoint or None,
                          region_name=settings.region,
                          aws_access_key_id=settings.access_key,
                          aws_secret_access_key=settings.secret_key, config=config)


def error_code(error: BaseException) -> str:
    """An S3 error's code ("NoSuchKey", "PreconditionFailed", "404", ...); "" for others."""
    response = getattr(error, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code", ""))
    return ""


def status_of(error: BaseException) -> int:
    response = getattr(error, "response", None)
    if isinstance(response, dict):
        return int(response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
    return 0


def is_missing(error: BaseException) -> bool:
    return error_code(error) in ("NoSuchKey", "404", "NotFound") or status_of(error) == 404


REFUSALS = ("NoSuchBucket", "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch",
            "InvalidBucketName", "AllAccessDisabled", "403")


def is_refused(error: BaseException) -> bool:
    """The bucket answers but refuses dms (a wrong bucket name or keys): a setting to fix."""
    return error_code(error) in REFUSALS or status_of(error) == 403


def is_down(error: BaseException) -> bool:
    """The bucket cannot be reached or failed on its side (try again later), rather than refused
    what was asked."""
    from botocore.exceptions import BotoCoreError, ClientError

    if isinstance(error, ClientError):
        return status_of(error) >= 500 or error_code(error) in ("SlowDown", "RequestTimeout")
    return isinstance(error, (BotoCoreError, OSError))


class BucketDown(StoreUnavailable):
    """The bucket is unreachable: 503 with a sentence; nothing was changed."""

    def __init__(self, message: str = DOWN):
        super().__init__(message)


REFUSED = ("The file store (the S3 bucket) refuses dms's requests, so nothing was saved; the "
           "administrator finds why in the server's log.")


class BucketRefused(StoreUnavailable):
    """The bucket refuses dms (its name or the keys are wrong): 503 with a sentence, the reason
    in the log."""

    def __init__(self, message: str = REFUSED):
        super().__init__(message)
