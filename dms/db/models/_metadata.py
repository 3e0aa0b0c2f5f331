"""What a document is about (migration 0021): correspondents, document types, custom fields and
their values, notes. A document's own columns (correspondent, type, date, serial number) are
Node's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from peewee import (
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


class _MatchedName(BaseModel):
    """A correspondent or a document type: a user's name, matched against new documents' text."""

    id = TextField(primary_key=True, default=new_id)
    owner = ForeignKeyField(User, on_delete="CASCADE")
    if TYPE_CHECKING:  # the keys' `<name>_id` accessors (see FOREIGN KEY IDS in _base.py)
        owner_id = TextField()
    name = TextField()
    name_key = TextField()
    match = TextField(default="")
    matching_algorithm = TextField(default="none")
    is_insensitive = BooleanField(default=True)
    created_at = UTCDateTimeField(default=utcnow)
    seq = BigIntegerField(null=True)  # its number in the Paperless-ngx dialect (migration 0027)


class Correspondent(_MatchedName):
    """Who sent a document (api.md §16)."""


class DocumentType(_MatchedName):
    """What a document is: an invoice, a contract (api.md §16)."""


class CustomField(BaseModel):
    """A user's typed field; `extra_data` is JSON (default currency, select options)."""

    id = TextField(primary_key=True, default=new_id)
    owner = ForeignKeyField(User, on_delete="CASCADE")
    if TYPE_CHECKING:
        owner_id = TextField()
    name = TextField()
    name_key = TextField()
    data_type = TextField()
    extra_data = TextField(default="{}")
    created_at = UTCDateTimeField(default=utcnow)
    seq = BigIntegerField(null=True)  # its number in the Paperless-ngx dialect (migration 0027)


class CustomFieldValue(BaseModel):
    """One field on one document: the value in its type's column (NULL: attached, no value)."""

    document = ForeignKeyField(Node, on_delete="CASCADE")
    field = ForeignKeyField(CustomField, on_delete="CASCADE")
    if TYPE_CHECKING:
        document_id = TextField()
        field_id = TextField()
    value_text = TextField(null=True)
    value_key = TextField(null=True)
    value_int = BigIntegerField(null=True)
    value_float = FloatField(null=True)
    value_date = TextField(null=True)
    value_bool = BooleanField(null=True)
    value_cents = BigIntegerField(null=True)
    value_currency = TextField(null=True)
    # A copy of the document's listing keys, kept by triggers (migration 0022): custom field
    # queries read a folder's matching values in title order without touching node.
    parent_id = TextField(null=True)
    title_sort = TextField(null=True)
    trash_id = TextField(null=True)

    class Meta:
        table_name = "custom_field_value"
        primary_key = CompositeKey("document", "field")


# The copy of a document's listing keys on its values (migration 0022's triggers keep it): the
# values out of step with their document, and the statement copying the keys again (dms verify
# --repair; a restore, whose rows bring the copy as it was backed up).
LISTING_KEYS = ("parent_id", "title_sort", "trash_id")
VALUE_KEYS_OUT_OF_STEP = ("SELECT v.document_id, v.field_id FROM custom_field_value AS v "
                          "JOIN node AS n ON n.id = v.document_id WHERE " + " OR ".join(
                              f"coalesce(v.{key}, '') <> coalesce(n.{key}, '')"
                              for key in LISTING_KEYS) + " ORDER BY 1, 2")
COPY_VALUE_KEYS = (f"UPDATE custom_field_value SET ({', '.join(LISTING_KEYS)}) = "
                   f"(SELECT {', '.join(LISTING_KEYS)} FROM node "
                   "WHERE node.id = custom_field_value.document_id)")


class CustomFieldLink(BaseModel):
    """A documentlink field's target, in order; the domain keeps every link both ways."""

    field = ForeignKeyField(CustomField, on_delete="CASCADE")
    document = ForeignKeyField(Node, on_delete="CASCADE")
    target = ForeignKeyField(Node, on_delete="CASCADE")
    if TYPE_CHECKING:
        field_id = TextField()
        document_id = TextField()
        target_id = TextField()
    position = IntegerField()

    class Meta:
        table_name = "custom_field_link"
        primary_key = CompositeKey("field", "document", "target")


class Note(BaseModel):
    """A note on a document, by a user (NULL once that account is gone)."""

    id = TextField(primary_key=True, default=new_id)
    document = ForeignKeyField(Node, on_delete="CASCADE")
    user = ForeignKeyField(User, null=True, on_delete="SET NULL")
    if TYPE_CHECKING:
        document_id = TextField()
        user_id = TextField(null=True)
    note = TextField()
    created_at = UTCDateTimeField(default=utcnow)
    seq = BigIntegerField(null=True)  # its number in the Paperless-ngx dialect (migration 0027)
