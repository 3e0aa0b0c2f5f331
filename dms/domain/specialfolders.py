"""A user's special folders (.home and .inbox, made with the account by
dms.domain.accounts.create_user and never changed; .shared is derived, dms.domain.access.sight):
their ids, looked up for several users at once and kept for the life of the process once all of
a user's are read (GET /users/me/ read them on every call: a tenth of its time)."""

from __future__ import annotations

from dms.db import database
from dms.db.models import Node

SPECIAL_FOLDERS_KEPT = 10_000  # users whose ids are kept; past it, all are read again
_special_folders: dict[str, dict[str, str]] = {}


def special_folder_ids(user_ids: list[str]) -> dict[str, dict[str, str]]:
    """{user id: {"home": folder id, "inbox": folder id}} for several users, those not known yet
    in one query."""
    result = {uid: dict(_special_folders.get(uid, {})) for uid in user_ids}
    unknown = [uid for uid in user_ids if uid not in _special_folders]
    if not unknown:
        return result
    # Raw SQL: building it with peewee cost more than the query.
    rows = database.execute_sql(
        f"SELECT owner_id, special, id FROM node "
        f"WHERE owner_id IN ({','.join('?' * len(unknown))}) "
        "AND special IS NOT NULL", unknown)
    for owner_id, special, folder_id in rows:
        result[owner_id][special] = folder_id
    if len(_special_folders) + len(unknown) > SPECIAL_FOLDERS_KEPT:
        _special_folders.clear()
    for uid in unknown:
        if result[uid].keys() == Node.SPECIAL_TITLES.keys():  # all there: they stay so
            _special_folders[uid] = dict(result[uid])
    return result
