"""The domain's errors: what went wrong, as a sentence for people, and the field at fault.

The domain modules (accounts, tree, documents, processing, ...) raise these and know nothing of
HTTP; dms.web turns each class into its status and the JSON:API error envelope in one place.

`field` names the input at fault: a plain name ("title", "password") is relative to the request
body the handler parsed (dms.web prefixes it with `/data/attributes/` or `/`), a name starting
with "/" is already a JSON pointer ("/target_parent/id").
"""

from __future__ import annotations


class DomainError(Exception):
    code = "invalid"
    # What a client needs besides the sentence to act on the error (the existing document of a
    # refused duplicate), as the JSON:API error's `meta`; None: nothing.
    meta: dict[str, object] | None = None

    def __init__(self, message: str, field: str | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.field = field
        if code is not None:
            self.code = code


class NotFound(DomainError):
    """Unknown, or another user's: the two must look the same (api.md, "Permissions")."""
    code = "not_found"

    def __init__(self, message: str = "Not found.", field: str | None = None):
        super().__init__(message, field)


class Forbidden(DomainError):
    code = "permission_denied"

    def __init__(self, message: str = "You do not have permission to perform this action.",
                 field: str | None = None):
        super().__init__(message, field)


class Invalid(DomainError):
    """Bad input; `code` may be more precise: required, blank, does_not_exist, parse_error, ..."""
    code = "invalid"


class Conflict(DomainError):
    code = "conflict"


class Duplicate(Conflict):
    """A file the caller already has, refused on request (api.md §22): `meta` names the existing
    document (`{"existing": {"id", "title", "folder": {"id", "title"}}}`)."""
    code = "duplicate"

    def __init__(self, message: str, meta: dict[str, object], field: str | None = None):
        super().__init__(message, field)
        self.meta = meta


class Gone(DomainError):
    """Was there and is no more, for good: an expired, revoked or used-up share link."""
    code = "gone"


class TooLarge(DomainError):
    code = "too_large"


class UnsupportedType(DomainError):
    code = "unsupported_media_type"


class Throttled(DomainError):
    code = "throttled"

    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.retry_after = retry_after


class StorageFull(DomainError):
    """The disk (or the database) has no room left: nothing was changed."""
    code = "insufficient_storage"

    def __init__(self, message: str = "The server's disk is full, so nothing was saved; "
                                      "ask the administrator to free some space."):
        super().__init__(message)


class Unavailable(DomainError):
    """A temporary condition (busy, timed out, rebuilding): trying again later may work."""
    code = "unavailable"
