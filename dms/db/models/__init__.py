"""The peewee models: the schema as the newest migration leaves it (dms/db/migrations/ creates
it). This package's face is the names below; callers import them from `dms.db.models`."""

from dms.db.models._activity import (
    Event,
    EventStream,
    IntakeRefusal,
    MailAccount,
    Rule,
    RulePending,
    RuleRun,
    SplitRun,
    Task,
    TrashEntry,
    Webhook,
    WebhookCursor,
)
from dms.db.models._base import (
    STORED_DATETIME,
    BaseModel,
    OcrStatus,
    UTCDateTimeField,
    columns_of,
    from_row,
    insert_row,
    new_id,
    title_sort_key,
    update_rows,
    utcnow,
)
from dms.db.models._metadata import (
    COPY_VALUE_KEYS,
    VALUE_KEYS_OUT_OF_STEP,
    Correspondent,
    CustomField,
    CustomFieldLink,
    CustomFieldValue,
    DocumentType,
    Note,
)
from dms.db.models._papers import (
    DOCUMENT_DATE,
    PAGE_SEPARATOR,
    DocumentVersion,
    Node,
    Page,
    SavedSearch,
    Tag,
    Token,
    UiSettings,
    User,
    document_date_of,
)
from dms.db.models._sharing import Group, GroupMember, NodeGrant, ShareLink

__all__ = ["BaseModel", "COPY_VALUE_KEYS", "Correspondent", "CustomField", "CustomFieldLink",
           "CustomFieldValue", "VALUE_KEYS_OUT_OF_STEP",
           "DOCUMENT_DATE", "document_date_of", "DocumentType", "DocumentVersion", "Event",
           "EventStream", "Group",
           "GroupMember", "IntakeRefusal", "MailAccount", "Node", "NodeGrant", "Note", "OcrStatus",
           "PAGE_SEPARATOR", "Page",
           "Rule", "RulePending", "RuleRun", "STORED_DATETIME", "SavedSearch", "ShareLink",
           "SplitRun", "Tag", "Task", "Token",
           "TrashEntry", "UTCDateTimeField", "UiSettings", "User", "Webhook", "WebhookCursor",
           "columns_of", "from_row", "insert_row", "new_id", "title_sort_key", "update_rows",
           "utcnow"]
