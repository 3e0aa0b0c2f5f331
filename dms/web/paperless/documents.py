"""The dialect's documents (api.md §17): every document the caller may read, whatever its folder
(their own and what is shared with them, §21), in Paperless-ngx's JSON by number — version 9's
shape (Paperless-ngx 2.20) or 10's (3.0: `versions`, `root_document`, `duplicate_documents`).
The list and the detail read the same facts of a page of documents at once
(dms.domain.documents.facts)."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any, cast

import bottle

from dms import search
from dms.domain import (
    docfilters,
    documents,
    history,
    listings,
    matching,
    numbers,
    previews,
    statistics,
    trash,
)
from dms.domain.access.rule import EDITOR, role_of, shared_among
from dms.domain.documents import edit as documentedit
from dms.domain.documents import facts as documentfacts
from dms.domain.metadata import autofill, notes
from dms.domain.rows import DOCUMENT
from dms.files.storage import original as stored_original
from dms.files.storage import searchable_pdf
from dms.web.downloads import file_response
from dms.web.paperless import sharing, translate
from dms.web.paperless.finding import conditions, field_query
from dms.web.paperless.protocol import Call, Reply, Routes, not_found, number

routes = Routes()

# ordering= name: dms's sort (api.md §16); Paperless-ngx's default is the newest paper first.
ORDERINGS = {"created": "document_date", "added": "created_at", "modified": "updated_at",
             "title": "title", "archive_serial_number": "asn",
             "correspondent__name": "correspondent", "document_type__name": "document_type"}
DEFAULT_ORDERING = "-created"
MAX_HISTORY = 1000  # the newest events of a document's history shown


def _time(stored: str) -> str:
    """A stored UTC time as Django REST framework writes one."""
    return stored.replace(" ", "T", 1) + "Z"


def shapes(call: Call, ids: list[str]) -> list[dict[str, Any]]:
    """The documents `ids`, in that order, as Paperless-ngx's JSON for the caller."""
    return _shapes(call, ids, documentfacts.facts(ids, call.user.id))


def _shapes(call: Call, ids: list[str], found: dict[str, documentfacts.DocumentFacts]) -> \
        list[dict[str, Any]]:
    user = call.user
    label_ids: dict[str, set[str]] = {"tag": set(), "correspondent": set(),
                                      "document_type": set(), "custom_field": set(),
                                      "user": {user.id}}
    for fact in found.values():
        label_ids["tag"].update(fact.tag_ids)
        label_ids["user"].add(fact.owner_id)
        label_ids["user"].update(note.user_id for note in fact.notes if note.user_id)
        for name in ("correspondent", "document_type"):
            if fact.about.get(name):
                label_ids[name].add(fact.about[name])
        label_ids["custom_field"].update(value["field"] for value in
                                         fact.about.get("custom_fields", []))
    numbered = {kind: numbers.numbers_of(kind, list(values)) for kind, values in label_ids.items()}
    linked = {target for fact in found.values() for value in fact.about.get("custom_fields", [])
              if isinstance(value["value"], list) for target in value["value"]}
    numbered["document"] = numbers.numbers_of("document", list(linked))
    shares = sharing.Shares(user, {fact.id: fact.owner_id for fact in found.values()})
    full = sharing.full_perms(call)
    editable = shared_among(user.id, [fact.id for fact in found.values()
                                      if fact.owner_id != user.id], EDITOR)
    return [_shape(call, found[node_id], numbered, shares, full, node_id in editable)
            for node_id in ids if node_id in found]


def _shape(call: Call, fact: documentfacts.DocumentFacts, numbered: dict[str, dict[str, int]],
           shares: sharing.Shares, full_perms: bool, editor: bool) -> dict[str, Any]:
    """One document's JSON; `editor`: the caller may change it by a grant."""
    about, latest = fact.about, fact.latest
    mine = fact.owner_id == call.user.id
    can_change = mine or editor
    created = about.get("document_date") or fact.created_at[:10]
    shown: dict[str, Any] = {
        "id": fact.number,
        "correspondent": numbered["correspondent"].get(about.get("correspondent") or ""),
        "document_type": numbered["document_type"].get(about.get("document_type") or ""),
        "storage_path": None, "title": fact.title, "content": fact.text,
        "tags": [numbered["tag"][tag_id] for tag_id in fact.tag_ids],
        "created": created, "created_date": created, "modified": _time(fact.updated_at),
        "added": _time(fact.created_at), "deleted_at": None,
        "archive_serial_number": about.get("archive_serial_number"),
        "original_file_name": latest.file_name if latest else None,
        "archived_file_name": None,
        "owner": numbered["user"][fact.owner_id],
        "notes": [{"id": note.number, "note": note.note, "created": _time(note.created_at),
                   "user": {"id": numbered["user"].get(note.user_id or ""),
                            "username": note.username, "first_name": "", "last_name": ""}
                   if note.user_id else None} for note in fact.notes],
        "custom_fields": [{"value": _field_value(value["value"], numbered),
                           "field": numbered["custom_field"][value["field"]]}
                          for value in about.get("custom_fields", [])],
        "page_count": fact.page_count or None,
        "mime_type": latest.mime_type if latest else None,
    }
    if full_perms:
        shown["permissions"] = shares.permissions(fact.id)
    else:
        shown["user_can_change"] = can_change
        shown["is_shared_by_requester"] = mine and shares.shared(fact.id)
    if latest is not None and latest.searchable:
        shown["archived_file_name"] = f"{fact.title}.pdf"
    if call.version >= 10:
        shown["duplicate_documents"] = []
        shown["root_document"] = None
        shown["versions"] = [] if latest is None else [{
            "id": fact.number, "added": _time(fact.created_at), "version_label": None,
            "checksum": latest.sha256, "is_root": True}]
    shown["dms_id"] = fact.id
    return shown


def _field_value(value: Any, numbered: dict[str, dict[str, int]]) -> Any:
    """A custom field's value as Paperless-ngx writes it: documents linked by their numbers."""
    if isinstance(value, list):
        return [numbered["document"][target] for target in value
                if target in numbered["document"]]
    return value


def _ordering(call: Call) -> str:
    given = (call.arg("ordering") or DEFAULT_ORDERING).strip()
    name = given.lstrip("-")
    sort = ORDERINGS.get(name)
    if sort is None:  # Paperless-ngx ignores what it does not know
        given, sort = DEFAULT_ORDERING, ORDERINGS["created"]
    return ("-" if given.startswith("-") else "") + sort


@routes.add("GET", "/api/documents/", fields={"custom_field_query": "custom_field_query"})
def list_documents(call: Call) -> dict[str, Any]:
    """Every document the caller may read that the filters keep, in `ordering`; with `query=`,
    the best matches of dms's search first, each with its `__search_hit__`."""
    if call.arg("more_like_id") is not None:  # dms finds no "similar" documents: none, not all
        translate.pk("more_like_id", call.arg("more_like_id"))
        return call.page(0, lambda offset, limit: [], lambda: [])
    about = {"sort": _ordering(call)}
    query = field_query(call)
    if query is not None:
        about["custom_field_query"] = query
    found = conditions(call)
    # `query=` is the query language (api.md §20), as Paperless-ngx's is Whoosh's; the others
    # are words.
    language = bool((call.arg("query") or "").strip())
    text = (call.arg("query") or call.arg("title_content") or call.arg("search") or "").strip()
    if text:
        return _searched(call, text, about, found, language)
    listing = listings.of_kind(call.user, DOCUMENT, about=about, extra=found)

    def page(offset: int, limit: int) -> list[dict[str, Any]]:
        rows = listing.fetch(offset, limit)
        return _trimmed(call, _shapes(call, [row.id for row in rows],
                                      documentfacts.facts_of_rows(rows, call.user.id)))

    if call.version < 10:  # `all` is every number: its length is the count
        every = listing.numbers()
        return call.page(every.count(",") + 1 if every else 0, page, lambda: every)
    return call.page(listing.count(), page)


def _searched(call: Call, text: str, about: dict[str, str], found: list[Any],
              language: bool) -> dict[str, Any]:
    """`query=` (and `title_content=`): dms's search, its best MAX_LIMIT matches that the other
    filters keep, best first."""
    # Services names the engine by a narrower protocol than the search takes (as in dms's own
    # GET /search/, a known gap of the type hints listed in mypy-baseline.txt).
    engine = cast("search.Indexer", call.services.search)
    hits = [hit for hit in search.query(engine, call.user, text, search.MAX_LIMIT,
                                        call.config.search_timeout_seconds, language=language,
                                        field="query")
            if hit["node_type"] == DOCUMENT]
    kept = {row.id for row in listings.of_kind(
        call.user, DOCUMENT, about=about,
        extra=[*found, docfilters.among([hit["id"] for hit in hits])]).fetch(0, len(hits))} \
        if hits else set()
    hits = [hit for hit in hits if hit["id"] in kept]

    def page(offset: int, limit: int) -> list[dict[str, Any]]:
        chosen = hits[offset:offset + limit]
        shown = shapes(call, [hit["id"] for hit in chosen])
        for rank, (document, hit) in enumerate(zip(shown, chosen, strict=True), offset):
            document["__search_hit__"] = {
                "score": round(1.0 - rank / max(len(hits), 1), 6),
                "highlights": hit["highlight"] or "", "note_highlights": "", "rank": rank}
        return _trimmed(call, shown)

    by_id = numbers.numbers_of("document", [hit["id"] for hit in hits])
    return call.page(len(hits), page, lambda: [by_id[hit["id"]] for hit in hits])


def _trimmed(call: Call, shown: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`fields=` keeps only those keys; `truncate_content` the first 300 characters of the
    text."""
    if (call.arg("truncate_content") or "").lower() in ("true", "1"):
        for document in shown:
            document["content"] = document["content"][:300]
    wanted = [name.strip() for name in (call.arg("fields") or "").split(",") if name.strip()]
    if wanted:
        shown = [{key: value for key, value in document.items() if key in wanted}
                 for document in shown]
    return shown


@routes.add("GET", "/api/documents/{document_id}/")
def get_document(call: Call, document_id: str) -> dict[str, Any]:
    return _trimmed(call, shapes(call, [_reached(call, document_id)]))[0]


def reached_document(call: Call, given: int) -> str:
    """The id of the document numbered `given` if the caller may read it; else DRF's 404."""
    found = numbers.id_of("document", given)
    reached = role_of(call.user, found) if found is not None else None
    if reached is None or reached.node.kind != DOCUMENT:
        raise not_found("Document")
    return reached.node.id


def _reached(call: Call, raw: str) -> str:
    """reached_document of a number in a path (what a viewer may not change is refused by the
    domain: 403 with its sentence)."""
    return reached_document(call, number(raw))


def apply_change(call: Call, document_id: str, change: translate.DocumentChange) -> None:
    """What a client wrote about a document, through the same domain functions as dms's own
    PATCH, tag and access routes, in one write transaction (dms.domain.documents.edit)."""
    documentedit.change(call.user, document_id, change.attributes, change.tag_names,
                        change.grants)


@routes.add("PATCH", "/api/documents/{document_id}/", fields=translate.FIELDS)
def update_document(call: Call, document_id: str) -> dict[str, Any]:
    found = _reached(call, document_id)
    body = call.body()
    change = translate.change_of(call.user, body)
    if "set_permissions" in body:
        change.grants = sharing.wanted_grants(body["set_permissions"])
    if "owner" in body:
        sharing.owner_unchanged(found, body["owner"])
    apply_change(call, found, change)
    return shapes(call, [found])[0]


@routes.add("PUT", "/api/documents/{document_id}/", fields=translate.FIELDS)
def replace_document(call: Call, document_id: str) -> dict[str, Any]:
    return update_document(call, document_id)


@routes.add("DELETE", "/api/documents/{document_id}/")
def delete_document(call: Call, document_id: str) -> Reply:
    """To the trash, as in Paperless-ngx and dms."""
    trash.delete(call.services, call.user, _reached(call, document_id), DOCUMENT)
    return Reply(None, 204)


# -- files ----------------------------------------------------------------------------------------
def _file(call: Call, document_id: str, inline: bool) -> Any:
    """The searchable PDF when there is one (Paperless-ngx's archived file), else the original;
    `?original=true` the original."""
    version = documents.latest_file(call.user, _reached(call, document_id))
    store = call.services.store
    original = (call.arg("original") or "").lower() in ("true", "1")
    disposition = "inline" if inline else "attachment"
    if version.searchable_size is not None and not original:
        answer = file_response(store, searchable_pdf(version), "application/pdf",
                               documents.searchable_name(version.file_name),
                               etag=version.searchable_sha256 or version.sha256)
    else:
        answer = file_response(store, stored_original(version), version.mime_type,
                               version.file_name, etag=version.sha256)
    if inline:
        answer.set_header("Content-Disposition", answer.headers["Content-Disposition"]
                          .replace("attachment", disposition, 1))
    return answer


@routes.add("GET", "/api/documents/{document_id}/download/")
def download(call: Call, document_id: str) -> Any:
    return _file(call, document_id, inline=False)


@routes.add("GET", "/api/documents/{document_id}/preview/")
def preview(call: Call, document_id: str) -> Any:
    return _file(call, document_id, inline=True)


@routes.add("GET", "/api/documents/{document_id}/thumb/")
def thumbnail(call: Call, document_id: str) -> Any:
    """The first page's preview image."""
    version = documents.latest_file(call.user, _reached(call, document_id))
    first = documents.page_ids([version.id])[version.id][:1]
    if not first:
        raise not_found()
    page, version = documents.reached_page(call.user, first[0])
    path = previews.preview(call.services, page, version)
    return bottle.static_file(path.name, root=str(path.parent), mimetype="image/jpeg")


# -- notes ----------------------------------------------------------------------------------------
def _notes(call: Call, document_id: str) -> list[dict[str, Any]]:
    return shapes(call, [document_id])[0]["notes"]


@routes.add("GET", "/api/documents/{document_id}/notes/")
def list_notes(call: Call, document_id: str) -> list[dict[str, Any]]:
    return _notes(call, _reached(call, document_id))


@routes.add("POST", "/api/documents/{document_id}/notes/", fields={"note": "note"})
def add_note(call: Call, document_id: str) -> list[dict[str, Any]]:
    found = _reached(call, document_id)
    notes.add_note(call.user, found, call.body().get("note"))
    return _notes(call, found)


@routes.add("DELETE", "/api/documents/{document_id}/notes/")
def delete_note(call: Call, document_id: str) -> list[dict[str, Any]]:
    found = _reached(call, document_id)
    note_id = numbers.id_of("note", number(call.arg("id") or ""))
    if note_id is None or note_id not in notes.note_ids_of(found):
        raise not_found()
    notes.delete_note(call.user, note_id)
    return _notes(call, found)


# -- about one document ---------------------------------------------------------------------
@routes.add("GET", "/api/documents/next_asn/")
def next_asn(call: Call) -> int:
    return (statistics.highest_asn(call.user) or 0) + 1


@routes.add("GET", "/api/documents/{document_id}/metadata/")
def file_metadata(call: Call, document_id: str) -> dict[str, Any]:
    found = _reached(call, document_id)
    version = documents.latest_file(call.user, found)
    archived = version.searchable_size is not None
    return {"original_checksum": version.sha256, "original_size": version.size,
            "original_mime_type": version.mime_type, "media_filename": version.file_name,
            "has_archive_version": archived, "original_metadata": [],
            "archive_checksum": version.searchable_sha256 if archived else None,
            "archive_media_filename": documents.searchable_name(version.file_name)
            if archived else None,
            "original_filename": version.file_name,
            "archive_size": version.searchable_size, "archive_metadata": [] if archived else None,
            "lang": version.lang}


@routes.add("GET", "/api/documents/{document_id}/suggestions/")
def suggestions(call: Call, document_id: str) -> dict[str, Any]:
    """What dms's matching (api.md §16) would set from the text: the owner's correspondents and
    types whose patterns match, and the date read."""
    found = _reached(call, document_id)
    owner_id = next(iter(documentfacts.facts([found], call.user.id, with_text=False).values())) \
        .owner_id
    suggestion = autofill.suggest(owner_id, matching.Words(documents.latest_text(found)),
                                  dt.date.today(),
                                  time.monotonic() + call.config.rules_max_seconds)
    labels = {name: numbers.numbers_of(name, [chosen[0]]).get(chosen[0]) if chosen else None
              for name, chosen in (("correspondent", suggestion.correspondent),
                                   ("document_type", suggestion.document_type))}
    return {"correspondents": [labels["correspondent"]] if labels["correspondent"] else [],
            "tags": [],
            "document_types": [labels["document_type"]] if labels["document_type"] else [],
            "storage_paths": [],
            "dates": [suggestion.document_date] if suggestion.document_date else []}


@routes.add("GET", "/api/documents/{document_id}/history/")
def document_history(call: Call, document_id: str) -> list[dict[str, Any]]:
    """dms's history of the document (api.md §12), newest first, as Paperless-ngx's audit log:
    its creation `create`, every other change `update` with the history's details."""
    found = _reached(call, document_id)
    rows = history.history_of(call.user, found).fetch(0, MAX_HISTORY)
    actors = numbers.numbers_of("user", list({row.actor_id for row in rows if row.actor_id}))
    return [{"id": row.id, "timestamp": _time(row.at),
             "action": "create" if row.action in ("created", "imported") else "update",
             "changes": {"action": row.action, **row.details},
             "actor": {"id": actors.get(row.actor_id), "username": row.actor_username}
             if row.actor_id else None} for row in rows]


