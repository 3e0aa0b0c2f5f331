"""The configured file store (DMS_STORAGE): a directory (the default) or an S3 bucket, whose
client is imported only then."""

from __future__ import annotations

from dms.config import Config, ConfigError
from dms.files.storage.base import FileStore
from dms.files.storage.directory import DirectoryStore


def open_store(config: Config) -> FileStore:
    if config.storage != "s3":
        return DirectoryStore(config.files_path, config.data_dir)
    from dms.files.storage.s3.store import S3Store

    return S3Store(bucket_settings(config), config.data_dir)


def bucket_settings(config: Config):
    """The bucket's settings, checked: a bucket name, and keys given together."""
    from dms.files.storage.s3.client import BucketSettings

    if not config.s3_bucket:
        raise ConfigError("DMS_STORAGE=s3 needs DMS_S3_BUCKET, the bucket's name.")
    secret = config.s3_secret_key
    if config.s3_secret_key_file is not None:
        try:
            secret = config.s3_secret_key_file.read_text(encoding="utf-8").strip()
        except OSError as error:
            raise ConfigError(f"DMS_S3_SECRET_KEY_FILE cannot be read: {error.strerror}.") \
                from None
    if bool(config.s3_access_key) != bool(secret):
        raise ConfigError("DMS_S3_ACCESS_KEY and DMS_S3_SECRET_KEY go together: give both (or "
                          "neither, for the credentials of the machine's AWS profile).")
    return BucketSettings(config.s3_endpoint, config.s3_bucket, config.s3_region,
                          config.s3_access_key, secret, config.s3_prefix,
                          connections=config.threads + config.ocr_workers * 2 + 4)
