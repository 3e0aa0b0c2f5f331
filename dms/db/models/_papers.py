"""Users and their papers: accounts, tokens, the tree of folders and documents, versions,
pages and tags."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, NoReturn

from peewee import (
    BigIntegerField,
    BooleanField,
    FloatField,
    ForeignKeyField,
    IntegerField,
    TextField,
)

from dms.db.models._base import BaseModel, UTCDateTimeField, new_id, utcnow


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
    seq = BigIntegerField(null=True)  # its number in the Paperless-ngx dialect (migration 0027)

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
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS in _base.py)
        user_id = TextField()
    name = TextField(default="")
    created = UTCDateTimeField(default=utcnow)
    expiry = UTCDateTimeField(null=True)
    # "api" or "session" (the web page's login, migration 0033), and when a session was last
    # seen in use (recorded at most once an hour: dms.domain.credentials.record_use).
    kind = TextField(default="api")
    last_used = UTCDateTimeField(null=True)

    def is_expired(self, now: dt.datetime, session_idle: dt.timedelta) -> bool:
        """Past its expiry, or a session unused for `session_idle`."""
        if self.expiry is not None and self.expiry <= now:
            return True
        return (self.kind == "session" and self.last_used is not None
                and self.last_used + session_idle <= now)


class UiSettings(BaseModel):
    """A user's settings of Paperless-ngx's apps (migration 0027): a JSON object, theirs whole."""
    user = ForeignKeyField(User, primary_key=True, backref="+", on_delete="CASCADE")
    if TYPE_CHECKING:
        user_id = TextField()
    settings = TextField()

    class Meta:
        table_name = "ui_settings"


class SavedSearch(BaseModel):
    """A user's named query (migration 0031, dms.domain.savedsearches); `dialect`: what the
    Paperless-ngx dialect's saved views carry beside it, as JSON."""
    id = TextField(primary_key=True, default=new_id)
    seq = BigIntegerField(null=True)  # its number in the Paperless-ngx dialect
    owner = ForeignKeyField(User, backref="+", on_delete="CASCADE")
    if TYPE_CHECKING:
        owner_id = TextField()
    name = TextField()
    name_key = TextField()
    query = TextField()
    sort = TextField()
    show_in_sidebar = BooleanField()
    dialect = TextField(null=True)
    created_at = UTCDateTimeField(default=utcnow)

    class Meta:
        table_name = "saved_search"


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
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS in _base.py)
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
    # What the document is about (migration 0021; dms.domain.metadata): ids of the owner's
    # correspondent and document type, the date on the paper (NULL: the upload date, see
    # DOCUMENT_DATE) and the archive serial number, unique per owner.
    correspondent_id = TextField(null=True)
    document_type_id = TextField(null=True)
    document_date = TextField(null=True)
    asn = BigIntegerField(null=True)

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


# A document's date in SQL: the date on the paper, or the upload date (the day of created_at,
# UTC) where none was read or set (migration 0021); listings sort and filter by it.
def document_date_of(alias: str = "") -> str:
    """DOCUMENT_DATE of the table named `alias` ("n." or none)."""
    return f"coalesce({alias}document_date, substr({alias}created_at, 1, 10))"


DOCUMENT_DATE = document_date_of()


class DocumentVersion(BaseModel):
    """One uploaded file of a document; numbers count 1, 2, 3, ... per document."""

    id = TextField(primary_key=True, default=new_id)
    document = ForeignKeyField(Node, backref="versions", on_delete="CASCADE")
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS in _base.py)
        document_id = TextField()
    number = IntegerField()
    file_name = TextField()
    mime_type = TextField()
    size = IntegerField()
    page_count = IntegerField()
    sha256 = TextField()
    md5 = TextField(null=True)  # the original's MD5, for Paperless-ngx's clients (migration 0028)
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
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS in _base.py)
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
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS in _base.py)
        owner_id = TextField()
    name = TextField()
    name_key = TextField()
    bg_color = TextField(default="#c41fff")
    fg_color = TextField(default="#FFFFFF")
    description = TextField(default="")
    pinned = BooleanField(default=False)
    created_at = UTCDateTimeField(default=utcnow)
    # Filing itself (migration 0029): as correspondents' (dms.domain.metadata.labels).
    match = TextField(default="")
    matching_algorithm = TextField(default="none")
    is_insensitive = BooleanField(default=True)
    is_inbox_tag = BooleanField(default=False)  # every new document gets it
    # The tag above it (migration 0030, dms.domain.tagtree); deleting that one: top-level.
    parent = ForeignKeyField("self", null=True, on_delete="SET NULL", column_name="parent_id")
    if TYPE_CHECKING:
        parent_id = TextField()
    seq = BigIntegerField(null=True)  # its number in the Paperless-ngx dialect (migration 0027)
