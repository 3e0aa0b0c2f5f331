"""What works on the papers: mail accounts and their refusals, the trash, the event log, rules
and their runs, splits in the background, webhooks and event streams."""

from __future__ import annotations

from typing import TYPE_CHECKING

from peewee import (
    AutoField,
    BigIntegerField,
    BooleanField,
    CompositeKey,
    FloatField,
    ForeignKeyField,
    IntegerField,
    TextField,
)

from dms.db.models._base import BaseModel, UTCDateTimeField, new_id, utcnow
from dms.db.models._papers import Node, User


class MailAccount(BaseModel):
    """A user's IMAP account whose attachments become documents (api.md, "Mail accounts",
    dms.intake.mail)."""
    id = TextField(primary_key=True, default=new_id)
    owner = ForeignKeyField(User, backref="mail_accounts", on_delete="CASCADE")
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS in _base.py)
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
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS in _base.py)
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
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS in _base.py)
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
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS in _base.py)
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
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS in _base.py)
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
    # JSON: what the rule sets of a document's metadata (migration 0021; rules.checks.Actions).
    set_metadata = TextField(default="{}")
    last_error = TextField(null=True)
    created_at = UTCDateTimeField(default=utcnow)
    updated_at = UTCDateTimeField(default=utcnow)


class RulePending(BaseModel):
    """A new document whose rules have not run yet, and where it came from."""
    document = ForeignKeyField(Node, primary_key=True, on_delete="CASCADE")
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS in _base.py)
        document_id = TextField()
    source = TextField()
    created_at = UTCDateTimeField(default=utcnow)


class RuleRun(BaseModel):
    """POST /rules/{id}/apply/: one rule run over the owner's documents in the background."""
    id = TextField(primary_key=True, default=new_id)
    owner = ForeignKeyField(User, backref="rule_runs", on_delete="CASCADE")
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS in _base.py)
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
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS in _base.py)
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
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS in _base.py)
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


class WebhookCursor(BaseModel):
    """A webhook's position in the events of another owner who shares something with the
    webhook's owner (migration 0026): their events up to it are delivered or passed over."""
    webhook = ForeignKeyField(Webhook, on_delete="CASCADE")
    owner = ForeignKeyField(User, backref="+", on_delete="CASCADE")
    if TYPE_CHECKING:
        webhook_id = TextField()
        owner_id = TextField()
    last_event_id = BigIntegerField()

    class Meta:
        table_name = "webhook_cursor"
        primary_key = CompositeKey("webhook", "owner")


class Task(BaseModel):
    """What became of a file given to the Paperless-ngx dialect's post_document (migration
    0028, dms.domain.tasks)."""
    seq = BigIntegerField(primary_key=True)  # its number in the dialect
    id = TextField(unique=True)  # the UUID post_document answered
    owner = ForeignKeyField(User, backref="+", on_delete="CASCADE")
    if TYPE_CHECKING:
        owner_id = TextField()
        document_id = TextField(null=True)
    file_name = TextField()
    mime_type = TextField(null=True)
    status = TextField()  # SUCCESS or FAILURE
    result = TextField(null=True)
    document = ForeignKeyField(Node, null=True, backref="+", on_delete="SET NULL")
    created_at = UTCDateTimeField(default=utcnow)
    acknowledged = BooleanField(default=False)


class EventStream(BaseModel):
    """An open event stream (GET /events/), counted against the cap per user on every node."""
    id = TextField(primary_key=True, default=new_id)
    owner = ForeignKeyField(User, backref="event_streams", on_delete="CASCADE")
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS in _base.py)
        owner_id = TextField()
    server_id = TextField()  # the server process serving it, which renews expires_at
    expires_at = FloatField()  # epoch seconds
