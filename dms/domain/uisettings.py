"""Each user's settings of Paperless-ngx's apps (GET/POST /paperless/api/ui_settings/, api.md
§17): a JSON object the apps write and read back (dark mode, list sizes, saved view order). dms
reads nothing in it; it keeps it whole, at most MAX_BYTES of JSON, replaced by each save."""

from __future__ import annotations

import json
from typing import Any

from dms.db import owner_scope, write_transaction
from dms.db.models import UiSettings, User
from dms.errors import Invalid

MAX_BYTES = 64 * 1024


def settings_of(user: User) -> dict[str, Any]:
    row = UiSettings.get_or_none(UiSettings.user == user.id)
    return json.loads(row.settings) if row is not None else {}


def save_settings(user: User, settings: object) -> None:
    """Keep `settings` (a JSON object) as the user's; Invalid when it is not one or too large."""
    if not isinstance(settings, dict):
        raise Invalid("settings is a JSON object.", "settings")
    text = json.dumps(settings, ensure_ascii=False, separators=(",", ":"))
    if len(text.encode("utf-8")) > MAX_BYTES:
        raise Invalid(f"settings may hold at most {MAX_BYTES // 1024} KiB of JSON.", "settings")
    with write_transaction(owner_scope(user.id)):
        UiSettings.insert(user=user.id, settings=text).on_conflict(
            conflict_target=[UiSettings.user], update={UiSettings.settings: text}).execute()
