"""The values of a restored database's rows, checked with the API's own rules: a backup is hostile
input, and a row the API would refuse — a title with a slash, NUL or a right-to-left override, an
integer where a title belongs, `created_at = "garbage"`, `ALICE` beside `alice` — must not land in a
data dir only to break listings, downloads or logins later.

`check_values(execute)` reads each table in batches (bounded memory, whatever its size) and raises
BackupError naming the table, the row and what is wrong, at the first such row. The tree's shape,
foreign keys and files are dms.ops.backup.restore's checks; these are the values.

A document's metadata (migration 0021, dms.domain.metadata) is checked the same way, by the
domain's own checks, in _metadatarows: correspondents, document types and custom fields as the
API would create them, each custom field value exactly the columns `encode` writes for its
field's type, links only through documentlink fields between documents of the field's owner,
notes, and a document's date, serial number and names (its owner's). That a link has its mirror
is `dms verify`'s to report; a restore keeps what the backup holds. The building blocks (a table
in batches, a refusal) are _rowrules'.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from dms.db import events
from dms.db.models import Node, OcrStatus
from dms.domain import savedsearches, sharelinks
from dms.domain.access import groups
from dms.domain.accounts import check_username
from dms.domain.rules import checks as rule_checks
from dms.domain.tagfilter import name_key
from dms.domain.tags import check_name
from dms.domain.tree import check_title
from dms.domain.turnpool import FAILED, QUEUED, RUNNING, SUCCEEDED
from dms.domain.uploads import check_file_name
from dms.domain.webhooks import check_events, check_url
from dms.errors import DomainError
from dms.files.outbound import Policy
from dms.ops.backup._metadatarows import metadata_values
from dms.ops.backup._rowrules import moment, refuse, rows, rule
from dms.text import username_key

SHA256 = re.compile(r"[0-9a-f]{64}\Z")
MAX_DESCRIPTION = 1000  # a version's short_description: dms writes a sentence naming two titles
TEXT_COLUMNS = {  # besides those checked by a rule below: text, or null where allowed
    "user": ("first_name", "last_name", "email"),
    "tag": ("bg_color", "fg_color", "description"),
}


def check_values(execute: Callable[..., Any]) -> None:
    _users(execute)
    _groups(execute)
    _nodes(execute)
    _versions(execute)
    _tags(execute)
    metadata_values(execute)
    _tokens(execute)
    _trash(execute)
    _events(execute)
    _rules(execute)
    _webhooks(execute)
    _share_links(execute)
    _saved_searches(execute)


def _users(execute: Callable[..., Any]) -> None:
    seen: dict[str, str] = {}
    for user_id, username, key, joined, *texts in rows(
            execute, 'SELECT id, username, username_key, date_joined, '
                     f'{", ".join(TEXT_COLUMNS["user"])} FROM "user"'):
        rule("user", user_id, "username", username, check_username)
        folded = username_key(username)
        if folded in seen:
            raise refuse("user", user_id, f"has the username {username!r}, which differs only "
                                           f"by case from that of user {seen[folded]}")
        seen[folded] = user_id
        if key != folded:
            raise refuse("user", user_id, "has a username_key that does not match its username")
        moment("user", user_id, "date_joined", joined)
        for column, value in zip(TEXT_COLUMNS["user"], texts, strict=True):
            if not isinstance(value, str):
                raise refuse("user", user_id, f"has a {column} that is not text")


def _groups(execute: Callable[..., Any]) -> None:
    for group_id, name, key, created in rows(
            execute, "SELECT id, name, name_key, created_at FROM user_group"):
        rule("user_group", group_id, "name", name, groups.check_name)
        if key != name_key(name):
            raise refuse("user_group", group_id, "has a name_key that is not its name's")
        moment("user_group", group_id, "created_at", created)
    for grant_id, special, to_owner, created in rows(
            execute, "SELECT g.id, n.special, g.user_id = n.owner_id, g.created_at "
                     "FROM node_grant AS g JOIN node AS n ON n.id = g.node_id"):
        if special is not None:
            raise refuse("node_grant", grant_id, f"shares the special folder .{special}")
        if to_owner:
            raise refuse("node_grant", grant_id, "shares a node with its own owner")
        moment("node_grant", grant_id, "created_at", created)


def _nodes(execute: Callable[..., Any]) -> None:
    for node_id, kind, special, title, file_name, status, created, updated in rows(
            execute, "SELECT id, kind, special, title, file_name, ocr_status, created_at, "
                     "updated_at FROM node"):
        if kind not in (Node.FOLDER, Node.DOCUMENT):
            raise refuse("node", node_id, f"has an unknown kind ({kind!r:.40})")
        if special is not None:
            if kind != Node.FOLDER or Node.SPECIAL_TITLES.get(special) != title:
                raise refuse("node", node_id, "is a special folder without its title")
        else:
            rule("node", node_id, "title", title, check_title)
        if file_name is not None:
            rule("node", node_id, "file_name", file_name, check_file_name)
        if (kind == Node.DOCUMENT) != (status in OcrStatus.ALL):
            raise refuse("node", node_id,
                          f"has an ocr_status its kind cannot have ({status!r:.40})")
        moment("node", node_id, "created_at", created)
        moment("node", node_id, "updated_at", updated)


def _versions(execute: Callable[..., Any]) -> None:
    for version_id, file_name, number, size, sha256, created, description, source in rows(
            execute, "SELECT id, file_name, number, size, sha256, created_at, short_description, "
                     "source_sha256 FROM document_version"):
        rule("document_version", version_id, "file_name", file_name, check_file_name)
        for column, value in (("number", number), ("size", size)):
            if not isinstance(value, int) or value < (1 if column == "number" else 0):
                raise refuse("document_version", version_id, f"has a {column} that is not a "
                                                              "whole number")
        if not isinstance(sha256, str) or not SHA256.match(sha256):
            raise refuse("document_version", version_id, "has a sha256 that is not 64 "
                                                          "hexadecimal digits")
        if source is not None and (not isinstance(source, str) or not SHA256.match(source)):
            raise refuse("document_version", version_id, "has a source_sha256 that is not 64 "
                                                          "hexadecimal digits")
        if not isinstance(description, str) or len(description) > MAX_DESCRIPTION:
            raise refuse("document_version", version_id, "has a short_description that is not "
                                                          f"text of at most {MAX_DESCRIPTION} "
                                                          "characters")
        moment("document_version", version_id, "created_at", created)


def _tags(execute: Callable[..., Any]) -> None:
    for tag_id, name, created, *texts in rows(
            execute, f'SELECT id, name, created_at, {", ".join(TEXT_COLUMNS["tag"])} FROM tag'):
        rule("tag", tag_id, "name", name, check_name)
        moment("tag", tag_id, "created_at", created)
        for column, value in zip(TEXT_COLUMNS["tag"], texts, strict=True):
            if not isinstance(value, str):
                raise refuse("tag", tag_id, f"has a {column} that is not text")


def _trash(execute: Callable[..., Any]) -> None:
    for node_id, deleted, purge, parent_title in rows(
            execute, "SELECT node_id, deleted_at, purge_at, original_parent_title "
                     "FROM trash_entry"):
        moment("trash_entry", node_id, "deleted_at", deleted)
        moment("trash_entry", node_id, "purge_at", purge)
        if parent_title is not None and not isinstance(parent_title, str):
            raise refuse("trash_entry", node_id, "has an original_parent_title that is not text")


def _events(execute: Callable[..., Any]) -> None:
    """The history as the API shows it: a known action, details a small JSON object."""
    for event_id, action, details, at in rows(
            execute, "SELECT id, action, details, at FROM event"):
        if action not in events.ACTIONS:
            raise refuse("event", str(event_id), f"has an unknown action ({action!r:.40})")
        try:
            parsed = json.loads(details) if isinstance(details, str) else None
        except (ValueError, RecursionError):
            parsed = None
        if not isinstance(parsed, dict) or len(details.encode("utf-8")) > events.DETAIL_LIMIT:
            raise refuse("event", str(event_id), "has details that are not a small JSON object")
        moment("event", str(event_id), "at", at)


def _webhooks(execute: Callable[..., Any]) -> None:
    """What the API shows of a webhook and its deliverer reads: a URL and event types the API
    would take (whether its owner may reach the URL's address is checked at each delivery)."""
    anywhere = Policy(exempt=True)
    for webhook_id, url, kinds, created in rows(
            execute, "SELECT id, url, events, created_at FROM webhook"):
        rule("webhook", webhook_id, "url", url, lambda value: check_url(value, anywhere))
        try:
            check_events(json.loads(kinds) if isinstance(kinds, str) else None)
        except (ValueError, RecursionError, DomainError):
            raise refuse("webhook", webhook_id, "has events that are not a list of event "
                                                 "types") from None
        moment("webhook", webhook_id, "created_at", created)


def _share_links(execute: Callable[..., Any]) -> None:
    """What the public page reads of a link: its times, which file, its counts."""
    for link_id, version, expires, created, accessed, revoked, downloads, cap in rows(
            execute, "SELECT id, file_version, expires_at, created_at, last_accessed_at, "
                     "revoked_at, downloads, max_downloads FROM share_link"):
        if version not in sharelinks.FILE_VERSIONS:
            raise refuse("share_link", link_id, "has a file_version other than original or "
                                                "searchable")
        for column, value, nullable in (("expires_at", expires, False),
                                        ("created_at", created, False),
                                        ("last_accessed_at", accessed, True),
                                        ("revoked_at", revoked, True)):
            moment("share_link", link_id, column, value, nullable)
        if not isinstance(downloads, int) or downloads < 0 or \
                (cap is not None and (not isinstance(cap, int) or cap < 1)):
            raise refuse("share_link", link_id, "has downloads or max_downloads that are not "
                                                "counts")


def _saved_searches(execute: Callable[..., Any]) -> None:
    """Saved searches as the API would take them, and their names' keys."""
    for search_id, name, key, query, created in rows(
            execute, "SELECT id, name, name_key, query, created_at FROM saved_search"):
        rule("saved_search", search_id, "name", name, savedsearches.check_name)
        if key != name_key(name):
            raise refuse("saved_search", search_id, "has a name_key that does not match its name")
        rule("saved_search", search_id, "query", query, savedsearches.check_query)
        moment("saved_search", search_id, "created_at", created)


def _tokens(execute: Callable[..., Any]) -> None:
    for key, created, expiry in rows(execute, "SELECT token_key, created, expiry FROM token"):
        moment("token", key, "created", created)
        moment("token", key, "expiry", expiry, nullable=True)


def _rules(execute: Callable[..., Any]) -> None:
    """Rules as the API would take them (a pattern RE2 refuses, a template with an unknown
    field, ...), pending markers and runs with values dms knows."""
    for (rule_id, name, position, field, algorithm, pattern, case_sensitive, sources, add_tags,
         move_to, set_title, stop, set_metadata, created, updated) in rows(
            execute, "SELECT id, name, position, match_field, match_algorithm, match_pattern, "
                     "case_sensitive, sources, add_tags, move_to, set_title, stop, set_metadata, "
                     "created_at, updated_at FROM rule"):
        try:
            names = json.loads(add_tags) if isinstance(add_tags, str) else None
            sets = json.loads(set_metadata) if isinstance(set_metadata, str) else None
        except (ValueError, RecursionError):
            names = sets = None
        if not isinstance(names, list) or not isinstance(sources, str) \
                or not isinstance(sets, dict) or not set(sets) <= set(rule_checks.METADATA_ACTIONS):
            raise refuse("rule", rule_id, "has add_tags, set_metadata or sources dms did not "
                                           "write")
        attributes = {"name": name, "order": position, "sources": sources.split(","),
                      "match": {"field": field, "algorithm": algorithm, "pattern": pattern,
                                "case_sensitive": bool(case_sensitive)},
                      "actions": {"add_tags": names, "move_to": move_to, "set_title": set_title,
                                  "stop": bool(stop), **sets}}
        try:
            rule_checks.check(attributes, None)
        except DomainError as error:
            raise refuse("rule", rule_id, f"is a rule the API would refuse "
                                           f"({error.message.rstrip('.')})") from None
        moment("rule", rule_id, "created_at", created)
        moment("rule", rule_id, "updated_at", updated)
    for document_id, source in rows(execute, "SELECT document_id, source FROM rule_pending"):
        if source not in rule_checks.SOURCES:
            raise refuse("rule_pending", document_id, f"has an unknown source ({source!r:.40})")
    for run_id, state, *counts in rows(
            execute, "SELECT id, state, examined, matched, changed FROM rule_run"):
        if state not in (QUEUED, RUNNING, SUCCEEDED, FAILED) or not all(
                isinstance(count, int) and count >= 0 for count in counts):
            raise refuse("rule_run", run_id, "has a state or counts dms did not write")
