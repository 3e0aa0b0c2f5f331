"""The one Config object: command-line flags win over DMS_* environment variables, which win over
the defaults. Read once, at start-up; nothing else in dms reads the environment."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dms.config.allowlist import (  # noqa: F401 — the allow-list's names, from dms.config
    Address,
    Allowed,
    Network,
    normal_host,
    parse_allowed,
    plain_address,
)
from dms.config.errors import ConfigError
from dms.config.urls import check_database_url, check_endpoint_url, check_queue_url

LOG_LEVELS = ("debug", "info", "warning", "error")


def default_ocr_workers() -> int:
    """One core stays free for the web server: max(1, cores - 1)."""
    return max(1, (os.cpu_count() or 1) - 1)


@dataclass(frozen=True)
class Config:
    host: str = "127.0.0.1"
    port: int = 8000
    data_dir: Path = Path("data")
    # None: SQLite in <data_dir>/dms.db. postgresql://user:password@host/db: PostgreSQL (README,
    # "Outgrowing one machine"). repr=False: it may hold a password.
    database_url: str | None = field(default=None, repr=False)
    # Where the stored files live; default <data_dir>/files. May be a mount every node shares
    # (README, "Several machines"); uploads are received in the node's own <data_dir>/tmp.
    files_dir: Path | None = None
    # Where originals and searchable PDFs are kept (api.md §19): "local" (files_dir) or "s3", an
    # S3-compatible bucket (the `s3` extra): s3_endpoint (None: AWS), s3_bucket, s3_region,
    # s3_access_key and s3_secret_key (or the file s3_secret_key_file names), keys under
    # s3_prefix. repr=False: secrets.
    storage: str = "local"
    s3_endpoint: str | None = None
    s3_bucket: str | None = None
    s3_region: str = "us-east-1"
    s3_access_key: str | None = field(default=None, repr=False)
    s3_secret_key: str | None = field(default=None, repr=False)
    s3_secret_key_file: Path | None = field(default=None, repr=False)
    s3_prefix: str = ""
    # None: the embedded queue (queue.db in the data dir, consumed inside `dms serve`).
    # redis://host:6379/0: Huey's Redis queue, consumed by `dms worker` processes anywhere.
    # repr=False: it may hold a password.
    queue_url: str | None = field(default=None, repr=False)
    # A web-only node: `dms serve` reads no pages (workers do); needs a queue_url.
    no_worker: bool = False
    # The consume folder (README, "The consume folder"): <consume_dir>/<username>/... is imported
    # into that user's .inbox. Polled (shares have no inotify) every consume_interval seconds; a
    # file is taken once its size and mtime have not changed for consume_stable_seconds.
    consume_dir: Path | None = None
    consume_interval: float = 10
    consume_stable_seconds: float = 5
    consume_keep: bool = False  # keep imported files in <consume_dir>/.done/ instead of deleting
    # A file whose bytes the user already has (dms.domain.duplicates): "refuse" (to .failed/,
    # listed among the user's intake refusals with the existing document) or "keep" (imported).
    consume_if_duplicate: str = "refuse"
    # A look reads at most consume_max_entries entries of the root, and of each user's tree, and
    # walks consume_max_depth levels of sub-folders below a user's folder (max_tree_depth if
    # lower; each level holds a file descriptor during the walk).
    consume_max_depth: int = 100
    consume_max_entries: int = 100_000
    # Most connections to PostgreSQL one dms process opens (its request threads, OCR workers and
    # the CLI each take one while they work); unused with SQLite.
    db_pool_size: int = 10
    threads: int = 8
    log_level: str = "info"
    admin_username: str = "admin"
    # repr=False: the config is logged at debug level and must never show a secret.
    admin_password: str | None = field(default=None, repr=False)
    max_upload_mb: int = 512
    max_json_kb: int = 1024
    # "": every installed language among eng and deu (dms.processing.languages.default_lang,
    # resolved by the runtime: the kernel does not ask Tesseract).
    ocr_lang: str = ""
    ocr_workers: int = field(default_factory=default_ocr_workers)
    # Limits on the work one request or one file may cause (README, "Limits").
    max_pages: int = 10_000  # pages of a PDF, frames of a TIFF
    max_image_megapixels: int = 50  # per image or TIFF frame, checked at upload
    ocr_max_megapixels: int = 25  # a page is scaled down to this before Tesseract reads it
    ocr_slice_seconds: int = 20  # a worker moves on to other documents after this long
    ocr_budget_minutes: float = 360  # processing time per document before it fails
    # A split (after given pages, at separator sheets, the intake's) takes documents of at most
    # this many pages: it looks at every page and may make one document per page.
    split_max_pages: int = 1000
    # The consume folder and mail split incoming PDFs at barcode separator sheets.
    split_on_barcode: bool = False
    # Address space of one PDF reader process (dms.files.pdf.process): a page needing more is
    # refused.
    pdf_memory_mb: int = 1024
    # Time limits of a PDF reader's call (dms.files.pdf): reading or rendering one page (for
    # processing and page operations), rendering a page's preview (a request waits for it), and
    # parsing every page of an upload (5 s + 2 s per MiB of the file, at most this).
    pdf_page_seconds: float = 120
    pdf_preview_seconds: float = 15
    pdf_inspect_seconds: float = 60
    # A worker holds a lease on the version it reads, renewed every third of this; a lease not
    # renewed for this long (its worker died) is taken over by another worker.
    lease_seconds: float = 60
    # The periodic jobs, each run once per period by one worker of the whole cluster: reconcile
    # (queue what the database says is unfinished) and verify (periods start Sundays 03:17 UTC).
    reconcile_minutes: float = 5
    verify_hours: float = 168
    # Users' mail accounts are checked for attachments this often (and on POST .../check/).
    mail_check_minutes: float = 5
    # A check of one account ends after this long (the rest waits for the next check) ...
    mail_check_seconds: float = 300
    # ... and leaves messages larger than this in the mailbox (fetched into a file, but their
    # parsed parts are held in memory).
    mail_max_message_mb: int = 25
    # A message with a longer header, or with more multipart containers (nested MIME parts), is
    # refused (dms.intake.mail._message).
    mail_max_header_kb: int = 8
    mail_max_multiparts: int = 50
    # Checks under way (queued or running): per user (429 past it) and per node (503), and the
    # checks a node runs at once (dms.intake.mail.checker).
    mail_checks_per_user: int = 2
    mail_checks_per_node: int = 100
    mail_checks_parallel: int = 4
    # A mail server that sends nothing for this long, or less than 16 KiB in this long while it
    # answers, is left (dms.intake.mail._client): a tarpit otherwise holds a check to its deadline.
    mail_stall_seconds: float = 30
    # The start-up sweep removes a file no row names only when it is older than this: another
    # node may be about to commit the row of a file it has just stored.
    sweep_grace_minutes: float = 60
    # ... which runs at start-up and then this often (once for the whole cluster).
    sweep_minutes: float = 60
    # A deleted node stays in its owner's trash this many days (0: deleted for good at once),
    # purged by a periodic job this often (once for the whole cluster).
    trash_days: int = 30
    trash_purge_minutes: float = 60
    # Rules (api.md, "How rules run"): the characters of a document's text they look at (its first
    # ones) and the time all of a user's rules may take matching one document (the rest are
    # skipped).
    rules_max_text_chars: int = 100_000
    rules_max_seconds: float = 2.0
    # The dry run (GET /rules/{id}/matches/) examines at most this many documents, for at most
    # this long, per request.
    rules_preview_documents: int = 1000
    rules_preview_seconds: float = 5.0
    # Runs of rules over existing documents, and large splits in the background, whose node
    # stopped are taken up this often (and at every start), once for the whole cluster.
    rule_runs_minutes: float = 5
    split_runs_minutes: float = 5
    max_tree_depth: int = 1000  # levels of folders below .home/.inbox
    max_tokens_per_user: int = 1000
    # The web page's login (a session, api.md §22) expires after this many days without use.
    session_idle_days: float = 14
    # Failed logins within 5 minutes past which logins are refused (429): from one address for one
    # username, from one address for any, for one username from any addresses
    # (dms.domain.credentials.LoginThrottle). Every node of a cluster counts the same failures.
    login_failures_per_address_user: int = 5
    login_failures_per_address: int = 50
    login_failures_per_user: int = 100
    search_timeout_seconds: float = 10.0
    # Keep a searchable PDF (the scan with Tesseract's invisible text) beside what Tesseract read.
    searchable_pdf: bool = True
    cors_origins: tuple[str, ...] = ()
    # The reverse proxy's address: its X-Forwarded-For/-Proto/-Host/-Port are then believed
    # (client address for login throttling, scheme and host for links); from anyone else ignored.
    trusted_proxy: str | None = None
    # Serve under a sub-path, e.g. /dms behind a proxy that forwards https://host/dms/...
    url_prefix: str = ""
    # The Paperless-ngx dialect (api.md §17) under this path ("": off), and the API version it
    # serves a request that names none (2.x-era scripts send none).
    paperless_prefix: str = "/paperless"
    paperless_default_version: int = 9
    # Most client connections open at once. At the limit the idle and slow ones (oldest activity
    # first) are closed to make room; one whose request is being served never is. The soft limit
    # of open files is raised at start-up to fit; if it cannot be, fewer are served (logged).
    connection_limit: int = 500
    # Seconds a client may take from the first byte of a request to the end of its headers;
    # slower ones (slowloris) are closed, however busily they trickle bytes.
    header_timeout: int = 15
    # Seconds an idle keep-alive connection (no request in progress) stays open.
    channel_timeout: int = 60
    # Where dms connects for users who are not superusers (webhooks, mail accounts): internal
    # addresses (loopback, private, link-local, cloud metadata) only if listed here, as host
    # names, addresses or networks (dms.files.outbound).
    outbound_allow: tuple[str, ...] = ()
    # The event stream (GET /events/, dms.notify): a stream ends after events_max_seconds (its
    # client resumes with Last-Event-ID), sends a comment every events_heartbeat_seconds, and one
    # server process serves at most events_max_streams at once, each on a waitress thread of its
    # own beyond `threads` (so streams never take the threads of ordinary requests).
    events_max_seconds: int = 3600
    events_heartbeat_seconds: float = 15
    events_max_streams: int = 50
    # Webhooks' deliveries: each POST ends after webhook_timeout_seconds; a failed one is tried
    # again after webhook_retry_seconds, then twice as long each time, for webhook_retry_hours;
    # a webhook failing webhook_max_failures times in a row is disabled.
    webhook_timeout_seconds: float = 10
    webhook_retry_seconds: float = 10
    webhook_retry_hours: float = 24
    webhook_max_failures: int = 100
    # Share links (api.md, "Share links") expire at most this many days after they are made.
    share_max_days: int = 90

    @property
    def db_path(self) -> Path:
        return self.data_dir / "dms.db"

    @property
    def files_path(self) -> Path:
        """The file store's directory: files_dir if set, else <data_dir>/files."""
        return self.files_dir if self.files_dir is not None else self.data_dir / "files"

    @property
    def embedded_queue(self) -> bool:
        """The queue lives in this process (queue.db); otherwise in Redis."""
        return self.queue_url is None

    @property
    def max_upload_bytes(self) -> int:
        return self.max_upload_mb * 1024 * 1024

    @property
    def mail_max_message_bytes(self) -> int:
        return self.mail_max_message_mb * 1024 * 1024

    @property
    def max_json_bytes(self) -> int:
        return self.max_json_kb * 1024

    @property
    def outbound_allowed(self) -> Allowed:
        """DMS_OUTBOUND_ALLOW, parsed (dms.files.outbound applies it)."""
        return parse_allowed(self.outbound_allow)

    @classmethod
    def load(cls, flags: Mapping[str, Any] | None = None,
             environ: Mapping[str, str] | None = None) -> Config:
        """Build the config from command-line flags (None = not given) and an environment."""
        flags = flags or {}
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            raw = flags.get(f.name)
            source = "--" + f.name.replace("_", "-")
            if raw is None:
                env_name = "DMS_" + f.name.upper()
                raw = environ.get(env_name)
                source = env_name
                if raw is None or raw == "":
                    continue
            values[f.name] = _convert(f.name, raw, source)
        return cls(**values)


def _convert(name: str, raw: Any, source: str) -> Any:
    """Turn a flag or environment string into the field's type, or say which setting is wrong."""
    kind = FIELD_TYPES[name]
    if kind in ("int", "float"):
        try:
            value = int(raw) if kind == "int" else float(raw)
        except (TypeError, ValueError):
            unit = "a whole number" if kind == "int" else "a number"
            raise ConfigError(f"{source} must be {unit}, not {raw!r}.") from None
        low, high = RANGES.get(name, (1, None))
        if value < low or (high is not None and value > high):
            raise ConfigError(f"{source} is out of range: {value} (allowed: {low} to "
                              f"{high if high is not None else 'any'}).")
        return value
    if kind == "bool":
        text = str(raw).strip().lower()
        if text not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
            raise ConfigError(f"{source} must be 1 or 0, not {raw!r}.")
        return text in ("1", "true", "yes", "on")
    if name in CHOICES:
        choice = str(raw).strip().lower()
        if choice not in CHOICES[name]:
            raise ConfigError(f"{source} must be {' or '.join(CHOICES[name])}, not {raw!r}.")
        return choice
    if name == "s3_endpoint":
        return check_endpoint_url(str(raw).strip().rstrip("/"), source)
    if name == "s3_prefix":
        prefix = str(raw).strip().strip("/")
        return prefix + "/" if prefix else ""
    if name in ("data_dir", "files_dir", "consume_dir", "s3_secret_key_file"):
        return Path(raw).expanduser()
    if name == "queue_url":
        return check_queue_url(str(raw).strip(), source)
    if name == "database_url":
        return check_database_url(str(raw).strip(), source)
    if name == "log_level":
        level = str(raw).lower()
        if level not in LOG_LEVELS:
            raise ConfigError(f"{source} must be one of {', '.join(LOG_LEVELS)}, not {raw!r}.")
        return level
    if name in ("url_prefix", "paperless_prefix"):
        prefix = "/" + str(raw).strip("/") if str(raw).strip("/") else ""
        if any(c in prefix for c in "?#% "):
            raise ConfigError(f"{source} must be a plain path such as /dms, not {raw!r}.")
        return prefix
    if name == "cors_origins":
        if isinstance(raw, (list, tuple)):
            return tuple(raw)
        return tuple(o.strip() for o in str(raw).split(",") if o.strip())
    if name == "outbound_allow":
        entries = tuple(raw) if isinstance(raw, (list, tuple)) else \
            tuple(e.strip() for e in str(raw).split(",") if e.strip())
        try:
            parse_allowed(entries)
        except ValueError as error:
            raise ConfigError(f"{source}: {error}.") from None
        return entries
    return str(raw)


# Settings that take one of a few words.
CHOICES = {"storage": ("local", "s3"), "consume_if_duplicate": ("refuse", "keep")}


# The type of each field as its annotation names it ("int", "str | None", ...): no eval needed.
FIELD_TYPES = {f.name: str(f.type).split(" ")[0] for f in dataclasses.fields(Config)}
# Allowed values of numeric settings (inclusive); absent: at least 1, no upper bound.
RANGES: dict[str, tuple[float, float | None]] = {
    "port": (0, 65535),
    "paperless_default_version": (1, 10),
    "db_pool_size": (2, 1000),
    "max_pages": (1, 1_000_000),
    "split_max_pages": (1, 1_000_000),
    "pdf_memory_mb": (256, 1_000_000),
    "max_tree_depth": (1, 100_000),
    "search_timeout_seconds": (0.1, 3600),
    "ocr_budget_minutes": (0.01, 10_000_000),
    "lease_seconds": (1, 86400),
    "reconcile_minutes": (0.01, 10_000),
    "verify_hours": (0.001, 100_000),
    "mail_check_minutes": (0.01, 100_000),
    "mail_check_seconds": (1, 86400),
    "mail_max_message_mb": (1, 1024),
    "mail_max_header_kb": (1, 256),  # the header section is refused past 256 KiB anyway
    "mail_max_multiparts": (1, 1000),
    "mail_checks_parallel": (1, 100),  # a thread each
    "mail_stall_seconds": (1, 3600),
    "consume_max_depth": (1, 1000),  # a file descriptor per level
    "pdf_page_seconds": (1, 86400),
    "pdf_preview_seconds": (1, 600),  # a request thread waits
    "pdf_inspect_seconds": (1, 3600),
    "sweep_grace_minutes": (0, 100_000),
    "sweep_minutes": (0.01, 100_000),
    "trash_days": (0, 36_500),
    "session_idle_days": (1, 36_500),  # above the hour a session's use is recorded to
    "trash_purge_minutes": (0.01, 100_000),
    "rules_max_text_chars": (1000, 100_000_000),
    "rules_max_seconds": (0.01, 3600),
    "rules_preview_documents": (1, 1_000_000),
    "rules_preview_seconds": (0.1, 600),
    "rule_runs_minutes": (0.01, 100_000),
    "split_runs_minutes": (0.01, 100_000),
    "consume_interval": (0.1, 86400),
    "consume_stable_seconds": (0, 3600),
    "connection_limit": (20, 1_000_000),
    "header_timeout": (1, 3600),
    "channel_timeout": (1, 86400),
    "events_max_seconds": (1, 86400),
    "events_heartbeat_seconds": (0.1, 3600),
    "events_max_streams": (1, 10_000),
    "webhook_timeout_seconds": (0.1, 60),
    "webhook_retry_seconds": (0.01, 30),  # api.md, "Webhooks": the first retry within 30 s
    "webhook_retry_hours": (0.0001, 720),
    "webhook_max_failures": (1, 1_000_000),
    "share_max_days": (1, 3650),
}
