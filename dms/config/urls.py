"""The settings that are URLs: only the kinds dms can use, each refused with a sentence that shows
one it can."""

from __future__ import annotations

from dms.config.errors import ConfigError


def check_database_url(url: str, source: str) -> str:
    """Only PostgreSQL URLs: SQLite is what an unset setting means."""
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme not in ("postgresql", "postgres"):
        raise ConfigError(f"{source} must be a PostgreSQL URL such as "
                          f"postgresql://dms:password@localhost/dms (leave it unset for SQLite "
                          f"in the data directory).")
    return url


def check_queue_url(url: str, source: str) -> str:
    """Only Redis URLs: the embedded queue is what an unset setting means."""
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme not in ("redis", "rediss", "unix"):
        raise ConfigError(f"{source} must be a Redis URL such as redis://localhost:6379/0 (leave "
                          f"it unset for the queue inside `dms serve`).")
    return url


def check_endpoint_url(url: str, source: str) -> str:
    """An S3 endpoint is an http(s) URL (DMS_S3_ENDPOINT; unset means AWS S3)."""
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"{source} must be a URL such as http://127.0.0.1:8333, not {url!r}.")
    return url
