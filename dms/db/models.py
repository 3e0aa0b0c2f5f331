"""The peewee models: the schema as the newest migration leaves it (dms/db/migrations/ creates
it)."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from peewee import (
    AutoField,
    BigIntegerField,
    BooleanField,
    FloatField,
    ForeignKeyField,
    IntegerField,
    Model,
    TextField,
)

from dms.db import database

STORED_DATETIME = "%Y-%m-%d %H:%M:%S.%f"

# FOREIGN KEY IDS: peewee gives every ForeignKeyField `x` an accessor `x_id`, the key's value
# without loading the row (on the class, the column for queries). The type checker cannot see
# them, so each model declares its own under `if TYPE_CHECKING:`, as the field type of the key's
# column (every key is text); at run time the block does not run and peewee sees no new fields.


def utcnow() -> dt.datetime:
    """Now in UTC, naive: every datetime in the database is UTC."""
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def new_id() -> str:
    return str(uuid.uuid4())


def title_sort_key(title: str) -> str:
    """What listings sort titles by: casefolded (SQLite's NOCASE folds only ASCII)."""
    return title.casefold()


def columns_of(model: type[Model]) -> list[str]:
    """The model's columns in table order, for raw SQL that `from_row` turns into models."""
    return [field.column_name for field in model._meta.sorted_fields]


M = TypeVar("M", bound=Model)


def from_row(model: type[M], columns: list[str], values: Iterable[Any]) -> M:
    """A model instance of a row read with raw SQL, each value turned as peewee would. On the
    paths every request takes: Model.raw() resolves its columns and builds its query on every call,
    which costs more than the query."""
    instance = model(__no_default__=True)
    fields = model._meta.columns
    instance.__data__.update((fields[name].name, fields[name].python_value(value))
                             for name, value in zip(columns, values, strict=True))
    return instance


class UTCDateTimeField(TextField):
    """A naive UTC datetime stored as fixed-width text, so text order is time order."""

    def db_value(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, str):
            return value
        return value.strftime(STORED_DATETIME)

    def python_value(self, value: Any) -> dt.datetime | None:
        if value is None or isinstance(value, dt.datetime):
            return value
        return dt.datetime.fromisoformat(value)  # C speed; strptime dominated listing time


class OcrStatus:
    """A document's `ocr_status` (api.md, "OCR status"): the only four values, named once.

    received (waiting) -> started (a worker reads it) -> succeeded | failed; a new upload or a
    re-run starts over at received."""
    RECEIVED = "received"
    STARTED = "started"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    ALL = (RECEIVED, STARTED, SUCCEEDED, FAILED)
    PENDING = (RECEIVED, STARTED)  # work left to do: reconcile() queues these


class BaseModel(Model):
    class Meta:
        database = database
        legacy_table_names = False


class User(BaseModel):
    id = TextField(primary_key=True, default=new_id)
    username = TextField(unique=True)
    # The username casefolded (dms.text.username_key): unique, so ADMIN cannot join admin.
    username_key = TextField()
    # None: the account has no usable password (set one with change-password).
    password_hash = TextField(null=True)
    first_name = TextField(default="")
    last_name = TextField(default="")
    email = TextField(default="")
    is_active = BooleanField(default=True)
    is_staff = BooleanField(default=False)
    is_superuser = BooleanField(default=False)
    date_joined = UTCDateTimeField(default=utcnow)

    @property
    def is_admin(self) -> bool:
        """Admins manage accounts (api.md, "Permissions"); they get no access to other people's
        papers."""
        return self.is_superuser or self.is_staff


class Token(BaseModel):
    # SHA-512 hex digest of the secret; the secret itself is never stored.
    digest = TextField(primary_key=True)
    # First 16 characters of the digest: the token's public id (spec: "first 16 characters").
    token_key = TextField(unique=True)
    user = ForeignKeyField(User, backref="tokens", on_delete="CASCADE")
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS above)
        user_id = TextField()
    name = TextField(default="")
    created = UTCDateTimeField(default=utcnow)
    expiry = UTCDateTimeField(null=True)

    def is_expired(self, now: dt.datetime) -> bool:
        return self.expiry is not None and self.expiry <= now


class Node(BaseModel):
    FOLDER = "folder"
    DOCUMENT = "document"
    HOME = "home"
    INBOX = "inbox"
    SPECIAL_TITLES = {HOME: ".home", INBOX: ".inbox"}

    id = TextField(primary_key=True, default=new_id)
    owner = ForeignKeyField(User, backref="nodes", on_delete="CASCADE")
    # No cascade: subtrees are deleted in one statement (see migration 0002).
    parent = ForeignKeyField("self", null=True, backref="children")
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS above)
        owner_id = TextField()
        parent_id = TextField(null=True)
    kind = TextField()
    # "home" or "inbox" for the two folders every user has; None for every other node.
    special = TextField(null=True)
    title = TextField()
    # title.casefold(): SQLite's NOCASE folds only ASCII, and listings sort by this in an index.
    title_sort = TextField()
    # Documents only (None for folders); file_name, size and page_count follow the latest version.
    lang = TextField(null=True)
    ocr = BooleanField(null=True)
    ocr_status = TextField(null=True)
    ocr_error = TextField(null=True)
    # Processing attempts of the latest version; reset by each upload and by a re-run.
    ocr_attempts = IntegerField(default=0)
    # Seconds of processing spent on the latest version (the per-document budget).
    ocr_seconds = FloatField(default=0.0)
    file_name = TextField(null=True)
    size = IntegerField(default=0)
    page_count = IntegerField(default=0)
    created_at = UTCDateTimeField(default=utcnow)
    updated_at = UTCDateTimeField(default=utcnow)
    # None: live. In the trash: the id of the node whose deletion put it there (migration 0013).
    trash_id = TextField(null=True)

    def save(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Refused: a whole-row save writes back every column read earlier, undoing concurrent
        changes (a move committed meanwhile). Write with targeted UPDATEs (dms.db)."""
        raise TypeError("Whole-row saves of nodes are refused in dms: insert with "
                        "Node.insert() and change rows with targeted UPDATEs.")

    @property
    def is_special(self) -> bool:
        """.home and .inbox: never renamed, moved or deleted (spec, "Special folders")."""
        return self.special is not None

    @property
    def is_folder(self) -> bool:
        return self.kind == Node.FOLDER

    @property
    def is_document(self) -> bool:
        return self.kind == Node.DOCUMENT


class DocumentVersion(BaseModel):
    """One uploaded file of a document; numbers count 1, 2, 3, ... per document."""

    id = TextField(primary_key=True, default=new_id)
    document = ForeignKeyField(Node, backref="versions", on_delete="CASCADE")
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS above)
        document_id = TextField()
    number = IntegerField()
    file_name = TextField()
    mime_type = TextField()
    size = IntegerField()
    page_count = IntegerField()
    sha256 = TextField()
    lang = TextField()
    created_at = UTCDateTimeField(default=utcnow)
    # The searchable PDF made when the version needed Tesseract (dms.processing.searchable); None:
    # none.
    searchable_size = IntegerField(null=True)
    searchable_sha256 = TextField(null=True)
    # What made it (migration 0014): empty for an upload; "2 page(s) deleted" for a page operation.
    short_description = TextField(default="")
    # A part of a batch the intake split (migration 0014): the SHA-256 of the file received.
    source_sha256 = TextField(null=True)


# Between pages in a document's whole text (api.md, "Pages, text and OCR", the search index).
PAGE_SEPARATOR = "\n\n"


class Page(BaseModel):
    """One page of a version, with its text once processing has read it."""

    id = TextField(primary_key=True, default=new_id)
    version = ForeignKeyField(DocumentVersion, backref="pages", on_delete="CASCADE")
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS above)
        version_id = TextField()
    number = IntegerField()
    text = TextField(default="")
    # How the text was read: None (not yet), "text", "layer", "ocr" or "skipped" (migration 0004).
    method = TextField(null=True)
    # The texts of its barcodes as a JSON list, where processing looked (migration 0017).
    barcodes = TextField(null=True)


class Tag(BaseModel):
    """A user's label for nodes (api.md, "Tags"); `name_key` makes names unique regardless of
    case."""

    id = TextField(primary_key=True, default=new_id)
    owner = ForeignKeyField(User, backref="tags", on_delete="CASCADE")
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS above)
        owner_id = TextField()
    name = TextField()
    name_key = TextField()
    bg_color = TextField(default="#c41fff")
    fg_color = TextField(default="#FFFFFF")
    description = TextField(default="")
    pinned = BooleanField(default=False)
    created_at = UTCDateTimeField(default=utcnow)


class MailAccount(BaseModel):
    """A user's IMAP account whose attachments become documents (api.md, "Mail accounts",
    dms.intake.mail)."""
    id = TextField(primary_key=True, default=new_id)
    owner = ForeignKeyField(User, backref="mail_accounts", on_delete="CASCADE")
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS above)
        owner_id = TextField()
    host = TextField()
    port = IntegerField()
    security = TextField()  # "ssl", "starttls" or "none" (loopback hosts only)
    username = TextField()
    password = TextField()  # sealed (dms.files.sealing), never in clear
    mailbox = TextField()
    after_import = TextField()  # "mark_seen", "flag" or "move"
    move_to = TextField(null=True)
    folder_per_sender = BooleanField(default=False)
    enabled = BooleanField(default=True)
    last_checked_at = UTCDateTimeField(null=True)
    last_error = TextField(null=True)
    imported_count = IntegerField(default=0)
    # Epoch seconds until which one process checks this account (claimed in the database).
    checking_until = FloatField(null=True)
    created_at = UTCDateTimeField(default=utcnow)


class IntakeRefusal(BaseModel):
    """A file the intake refused (dms.domain.refusals): its owner sees it, the admin counts it."""
    id = TextField(primary_key=True, default=new_id)
    owner = ForeignKeyField(User, backref="intake_refusals", on_delete="CASCADE")
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS above)
        owner_id = TextField()
    source = TextField()  # "consume" or "mail"
    name = TextField()  # the file's name (consume: its path below the user's folder)
    origin = TextField(null=True)  # mail: the message's subject
    reason = TextField()
    refused_at = UTCDateTimeField(default=utcnow)


class TrashEntry(BaseModel):
    """One deletion in a user's trash, keyed by the node it deleted (dms.domain.trash)."""
    node = ForeignKeyField(Node, primary_key=True, on_delete="CASCADE")
    owner = ForeignKeyField(User, backref="trash_entries", on_delete="CASCADE")
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS above)
        node_id = TextField()
        owner_id = TextField()
    deleted_at = UTCDateTimeField()
    purge_at = UTCDateTimeField()
    original_parent_id = TextField(null=True)
    original_parent_title = TextField(null=True)


class Event(BaseModel):
    """One entry of the event log: a node's history (dms.db.events)."""
    id = AutoField()
    owner = ForeignKeyField(User, on_delete="CASCADE")
    node = ForeignKeyField(Node, backref="events", on_delete="CASCADE")
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS above)
        owner_id = TextField()
        node_id = TextField()
    actor_id = TextField(null=True)
    action = TextField()
    details = TextField()  # JSON
    at = UTCDateTimeField(default=utcnow)
    # The node as the change left it (NULL for events recorded before migration 0016).
    node_kind = TextField(null=True)
    node_title = TextField(null=True)
    parent_id = TextField(null=True)


class Rule(BaseModel):
    """A user's matching rule (api.md, "Rules", dms.domain.rules); `position` is the API's
    `order`."""
    id = TextField(primary_key=True, default=new_id)
    owner = ForeignKeyField(User, backref="rules", on_delete="CASCADE")
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS above)
        owner_id = TextField()
    name = TextField()
    name_key = TextField()  # unique per owner regardless of case and width, as tags' names
    enabled = BooleanField(default=True)
    position = IntegerField(default=0)
    match_field = TextField()
    match_algorithm = TextField()
    match_pattern = TextField()
    case_sensitive = BooleanField(default=False)
    sources = TextField()  # comma-separated: api, import, consume, mail
    add_tags = TextField()  # JSON list of tag names
    move_to = TextField(null=True)  # a folder id; no foreign key (see migration 0015)
    set_title = TextField(null=True)
    stop = BooleanField(default=False)
    last_error = TextField(null=True)
    created_at = UTCDateTimeField(default=utcnow)
    updated_at = UTCDateTimeField(default=utcnow)


class RulePending(BaseModel):
    """A new document whose rules have not run yet, and where it came from."""
    document = ForeignKeyField(Node, primary_key=True, on_delete="CASCADE")
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS above)
        document_id = TextField()
    source = TextField()
    created_at = UTCDateTimeField(default=utcnow)


class RuleRun(BaseModel):
    """POST /rules/{id}/apply/: one rule run over the owner's documents in the background."""
    id = TextField(primary_key=True, default=new_id)
    owner = ForeignKeyField(User, backref="rule_runs", on_delete="CASCADE")
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS above)
        owner_id = TextField()
    rule_id = TextField()
    rule_name = TextField()
    state = TextField()  # queued, running, succeeded, failed
    examined = IntegerField(default=0)
    matched = IntegerField(default=0)
    changed = IntegerField(default=0)
    after_id = TextField(null=True)  # the last document done (documents go by id)
    error = TextField(null=True)
    worker_id = TextField(null=True)
    lease_until = FloatField(null=True)  # epoch seconds
    created_at = UTCDateTimeField(default=utcnow)
    started_at = UTCDateTimeField(null=True)
    finished_at = UTCDateTimeField(null=True)


class SplitRun(BaseModel):
    """A split too large for one request (api.md, "Splits in the background", dms.domain.splitruns):
    its parts are made in the background, a batch per write transaction; `split_part` names the
    documents made."""
    id = TextField(primary_key=True, default=new_id)
    owner = ForeignKeyField(User, backref="split_runs", on_delete="CASCADE")
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS above)
        owner_id = TextField()
    document_id = TextField()  # the source (no foreign key: it goes to the trash, then away)
    version_id = TextField()  # its latest version when the split was asked for
    folder_id = TextField()  # where it was then, and where the parts go
    title = TextField()  # its title then: the parts are <stem>-<n>.pdf
    kind = TextField()  # after_pages, barcode, blank
    plan = TextField(null=True)  # JSON [[first, last], ...] of each part; null: to be found
    parts = IntegerField(null=True)  # len(plan)
    parts_made = IntegerField(default=0)
    state = TextField()  # queued, running, succeeded, failed
    error = TextField(null=True)
    worker_id = TextField(null=True)
    lease_until = FloatField(null=True)  # epoch seconds
    created_at = UTCDateTimeField(default=utcnow)
    started_at = UTCDateTimeField(null=True)
    finished_at = UTCDateTimeField(null=True)


class Webhook(BaseModel):
    """A user's webhook (api.md, "Webhooks", dms.domain.webhooks) and where its delivery stands
    (dms.notify.deliverer)."""
    id = TextField(primary_key=True, default=new_id)
    owner = ForeignKeyField(User, backref="webhooks", on_delete="CASCADE")
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS above)
        owner_id = TextField()
    url = TextField()
    events = TextField()  # JSON list of event types
    secret = TextField()  # sealed (dms.files.sealing), never in clear
    enabled = BooleanField(default=True)
    created_at = UTCDateTimeField(default=utcnow)
    last_event_id = BigIntegerField()  # the owner's events up to it are delivered or given up
    attempts = IntegerField(default=0)  # failed attempts at the event after last_event_id
    retry_since = FloatField(null=True)  # epoch seconds of that event's first failure
    next_attempt_at = FloatField(default=0)  # epoch seconds
    lease_holder = TextField(null=True)  # the deliverer that holds the webhook ...
    lease_until = FloatField(null=True)  # ... until then (epoch seconds)
    last_delivery_at = UTCDateTimeField(null=True)
    last_status = IntegerField(null=True)
    last_error = TextField(null=True)
    failures_in_a_row = IntegerField(default=0)


class EventStream(BaseModel):
    """An open event stream (GET /events/), counted against the cap per user on every node."""
    id = TextField(primary_key=True, default=new_id)
    owner = ForeignKeyField(User, backref="event_streams", on_delete="CASCADE")
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS above)
        owner_id = TextField()
    server_id = TextField()  # the server process serving it, which renews expires_at
    expires_at = FloatField()  # epoch seconds
