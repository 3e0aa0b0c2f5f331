"""The real Paperless-ngx clients against a real dms's Paperless-ngx dialect (api.md §17, issue
42), unchanged, in their own virtualenv (tests/harness/paperless_clients.py): pypaperless 6.0.2
(Accept version 10) and easypaperless 0.7.1 (no version) each drive a whole session — a token,
a tag and a correspondent, uploads with post_document and their tasks, reading, updating,
filtering, full-text search, downloads, notes, deleting (easypaperless's also behind a proxy
prefix) — and Home Assistant's calls through pypaperless (statistics, status,
remote_version). A session runs in two scripts with a wait between, as a user waits for dms to
read the uploads before searching them. Afterwards dms's own API must show the same rows: both
dialects are one library."""

from __future__ import annotations

import hashlib
import shutil

import pytest

from tests.harness import samples
from tests.harness.documents import new_document, upload_accepted
from tests.harness.paperless import API, dialect
from tests.harness.paperless_clients import run
from tests.harness.users import USER_PASSWORD
from tests.harness.waiting import wait_indexed, wait_processed

pytestmark = pytest.mark.socket  # the clients talk to the socket; the checks too

INVOICE_PDF = samples.pdf([["ACME Corporation", "Invoice 4711 for the garden chairs",
                            "Total 93.20 EUR"]])
LETTER_TXT = samples.text("Dear customer, your contract renewal is ready.\n")
RECEIPT_TXT = samples.text("Garden Centre receipt: one lawnmower, 249.00 EUR\n")
WARRANTY_PDF = samples.pdf([["Warranty certificate", "Garden chairs, two years"]])


def dialect_url(server) -> str:
    return f"{server.url}/paperless"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def documents_by_title(client) -> dict[str, dict]:
    """The caller's live documents in dms's own API, by title."""
    return {item["attributes"]["title"]: item for item in client.get("/api/documents/").json()[
        "data"]}


def names(client, path: str) -> list[str]:
    return sorted(item["attributes"]["name"] for item in client.get(path).json()["data"])


def dialect_numbers(client) -> dict[str, int]:
    """The numbers of the caller's documents in the dialect, by title."""
    listed = dialect(client).get(f"{API}/documents/?page_size=100").json()["results"]
    return {item["title"]: item["id"] for item in listed}


def text_of(client, document_id: str) -> str:
    return client.get(f"/api/documents/{document_id}/ocr-text").json()["text"]


def processed_and_indexed(server, client, titles: list[str]) -> dict[str, dict]:
    """Wait, as a user waits between uploading and searching, until dms read the documents
    `titles` and its index caught up; the documents by title."""
    found = documents_by_title(client)
    for title in titles:
        assert wait_processed(client, found[title]["id"])[-1] == "succeeded"
    wait_indexed(server.config)
    return documents_by_title(client)


# -- pypaperless ----------------------------------------------------------------------------------
PYPAPERLESS_UPLOAD = r'''
import datetime

import httpx
from pypaperless import PaperlessClient
from pypaperless.models.types import MatchingAlgorithm, TaskStatus
from pypaperless.transport import generate_api_token


async def main():
    token = await generate_api_token(URL, PARAMS["username"], PARAMS["password"])
    async with PaperlessClient(URL, token, timeout=60) as paperless:
        out = {"token": token, "host": [paperless.host_api_version, paperless.host_version],
               "agent": f"python-httpx/{httpx.__version__}"}
        # pypaperless insists on every matching field of a new tag or correspondent.
        tag_id = await paperless.tags.save(paperless.tags.create(
            name="Invoices", color="#a6cee3", is_inbox_tag=False, match="",
            matching_algorithm=MatchingAlgorithm.NONE, is_insensitive=True))
        acme_id = await paperless.correspondents.save(paperless.correspondents.create(
            name="ACME Corporation", match="", matching_algorithm=MatchingAlgorithm.NONE,
            is_insensitive=True))
        tag = await paperless.tags(tag_id)
        acme = await paperless.correspondents(acme_id)
        out["tag"] = {"id": tag.id, "name": tag.name, "color": tag.color,
                      "is_inbox_tag": tag.is_inbox_tag, "document_count": tag.document_count,
                      "matching_algorithm": tag.matching_algorithm
                      and tag.matching_algorithm.name}
        out["correspondent"] = {"id": acme.id, "name": acme.name,
                                "document_count": acme.document_count,
                                "matching_algorithm": acme.matching_algorithm
                                and acme.matching_algorithm.name}
        uploads = {
            "Invoice 4711": dict(filename="invoice.pdf"),
            "Contract renewal": dict(filename="letter.txt", tags=[tag_id], correspondent=acme_id,
                                     created=datetime.datetime(2024, 5, 2)),
        }
        task_ids = {}
        for title, fields in uploads.items():
            with open(PARAMS["files"][fields["filename"]], "rb") as file:
                draft = paperless.documents.create(document=file.read(), title=title, **fields)
            task_ids[title] = await paperless.documents.save(draft)
        out["tasks"] = {}
        for title, task_id in task_ids.items():
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 60
            while True:  # how a pypaperless script follows its upload
                task = await paperless.tasks(task_id)
                if task.status in (TaskStatus.SUCCESS, TaskStatus.FAILURE):
                    break
                assert loop.time() < deadline, f"task {task_id} still {task.status}"
                await asyncio.sleep(0.2)
            out["tasks"][title] = {"task_id": task.task_id == task_id,
                                   "status": task.status.value,
                                   "task_type": task.task_type.value,
                                   "related_document_ids": task.related_document_ids}
        return out
'''

PYPAPERLESS_SESSION = r'''
import hashlib

from pypaperless import PaperlessClient
from pypaperless.exceptions import NotFoundError


def seen(document):
    # Optional fields the server left out stay None: only what the model requires raises.
    return {"title": document.title, "content": document.content, "tags": document.tags,
            "correspondent": document.correspondent, "document_type": document.document_type,
            "created": document.created and document.created.isoformat(),
            "owner": document.owner, "original_file_name": document.original_file_name,
            "mime_type": document.mime_type, "page_count": document.page_count,
            "notes": None if document.notes_ is None else len(document.notes_),
            "custom_fields": None if document.custom_fields is None
            else len(document.custom_fields.root)}


async def titles(service, **filters):
    async with service.filter(**filters) as filtered:
        return sorted([document.title async for document in filtered])


async def main():
    invoice_id, letter_id = PARAMS["invoice"], PARAMS["letter"]
    tag_id, acme_id = PARAMS["tag"], PARAMS["correspondent"]
    out = {}
    async with PaperlessClient(URL, TOKEN, timeout=60) as paperless:
        out["listed"] = sorted([seen(document) async for document in paperless.documents],
                               key=lambda shown: shown["title"])
        invoice = await paperless.documents(invoice_id)
        invoice.title = "Invoice 4711 paid"
        invoice.tags = [tag_id]
        invoice.correspondent = acme_id
        out["changed"] = await paperless.documents.update(invoice)  # a PATCH of what changed
        out["updated"] = seen(invoice)
        out["reread"] = seen(await paperless.documents(invoice_id))
        out["filtered"] = {
            "by tag": await titles(paperless.documents, tags__id__all=str(tag_id)),
            "by correspondent": await titles(paperless.documents, correspondent__id=acme_id),
            "by title": await titles(paperless.documents, title__icontains="4711"),
        }
        with open(PARAMS["files"]["invoice.pdf"], "rb") as file:  # checksum__iexact=<MD5>
            duplicate = await paperless.documents.find_duplicate(file.read(),
                                                                 filename="invoice.pdf")
        out["duplicate"] = duplicate and duplicate.title
        hits = [document async for document in paperless.documents.search("garden")]
        out["search"] = [[hit.title, hit.has_search_hit] for hit in hits]
        out["search renewal"] = [hit.title async for hit in paperless.documents.search("renewal")]
        original = await paperless.documents.download(invoice_id, original=True)
        archived = await paperless.documents.download(invoice_id)
        out["downloads"] = {
            "original": [original.content_type, original.disposition_type,
                         hashlib.sha256(original.content).hexdigest()],
            "default": [archived.content_type, archived.disposition_type,
                        archived.content[:5].decode("latin-1")]}
        first = await invoice.notes.save(invoice.notes.create(note="Paid by bank transfer"))
        second = await invoice.notes.save(invoice.notes.create(note="Receipt filed"))
        listed = await invoice.notes(force_request=True)
        out["notes"] = sorted([note.note, note.user is not None, note.created is not None,
                               note.document == invoice_id] for note in listed)
        out["note ids"] = sorted(note.id for note in listed) == sorted([first, second])
        await invoice.notes.delete(first)
        out["notes after delete"] = [note.note for note in await invoice.notes(
            force_request=True)]
        letter = await paperless.documents(letter_id)
        await paperless.documents.delete(letter)
        try:
            await paperless.documents(letter_id)
            out["deleted"] = False
        except NotFoundError:
            out["deleted"] = True
        out["left"] = sorted([document.title async for document in paperless.documents])
    return out
'''


def test_pypaperless_session(server, alice, tmp_path):
    files = {"invoice.pdf": INVOICE_PDF, "letter.txt": LETTER_TXT}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    paths = {name: str(tmp_path / name) for name in files}
    uploaded = run(PYPAPERLESS_UPLOAD, dialect_url(server), params={
        "username": "alice", "password": USER_PASSWORD, "files": paths})
    out = uploaded.result
    tag_id, acme_id = out["tag"]["id"], out["correspondent"]["id"]
    ours = processed_and_indexed(server, alice, ["Invoice 4711", "Contract renewal"])
    numbers = dialect_numbers(alice)
    assert out == {
        "token": out["token"], "host": [10, "3.0.0"], "agent": out["agent"],
        "tag": {"id": tag_id, "name": "Invoices", "color": "#a6cee3", "is_inbox_tag": False,
                "document_count": 0, "matching_algorithm": "NONE"},
        "correspondent": {"id": acme_id, "name": "ACME Corporation", "document_count": 0,
                          "matching_algorithm": "NONE"},
        "tasks": {title: {"task_id": True, "status": "success", "task_type": "consume_file",
                          "related_document_ids": [numbers[title]]}
                  for title in ("Invoice 4711", "Contract renewal")}}, uploaded.trace()
    # The token pypaperless asked for is one of alice's dms tokens, named after the client (the
    # User-Agent of whichever httpx the client's virtualenv holds).
    assert names(alice, "/api/tokens/") == sorted([f"Paperless-ngx API: {out['agent']}", "login"])
    # Both uploads landed in alice's inbox.
    assert {title: ours[title]["relationships"]["parent"]["data"]["id"] for title in ours} == {
        "Invoice 4711": alice.inbox_id, "Contract renewal": alice.inbox_id}

    texts = {title: text_of(alice, ours[title]["id"]) for title in ours}  # before any deletion
    session = run(PYPAPERLESS_SESSION, dialect_url(server), out["token"], params={
        "invoice": numbers["Invoice 4711"], "letter": numbers["Contract renewal"],
        "tag": tag_id, "correspondent": acme_id, "files": paths})
    me = dialect(alice).get(f"{API}/ui_settings/").json()["user"]["id"]
    invoice = {"title": "Invoice 4711", "content": texts["Invoice 4711"],
               "tags": [], "correspondent": None, "document_type": None,
               "created": ours["Invoice 4711"]["attributes"]["document_date"], "owner": me,
               "original_file_name": "invoice.pdf", "mime_type": "application/pdf",
               "page_count": 1, "notes": 0, "custom_fields": 0}
    letter = {**invoice, "title": "Contract renewal",
              "content": texts["Contract renewal"], "tags": [tag_id],
              "correspondent": acme_id, "created": "2024-05-02",
              "original_file_name": "letter.txt", "mime_type": "text/plain"}
    paid = {**invoice, "title": "Invoice 4711 paid", "tags": [tag_id], "correspondent": acme_id}
    both = ["Contract renewal", "Invoice 4711 paid"]
    assert session.result == {
        "listed": [letter, invoice], "changed": True, "updated": paid, "reread": paid,
        "filtered": {"by tag": both, "by correspondent": both, "by title": ["Invoice 4711 paid"]},
        "duplicate": "Invoice 4711 paid",
        "search": [["Invoice 4711 paid", True]], "search renewal": ["Contract renewal"],
        "downloads": {"original": ["application/pdf", "attachment", sha256(INVOICE_PDF)],
                      "default": ["application/pdf", "attachment", "%PDF-"]},
        "notes": [["Paid by bank transfer", True, True, True],
                  ["Receipt filed", True, True, True]],
        "note ids": True, "notes after delete": ["Receipt filed"],
        "deleted": True, "left": ["Invoice 4711 paid"]}, session.trace()

    # dms's own API sees the same rows.
    assert names(alice, "/api/tags/") == ["Invoices"]
    assert names(alice, "/api/correspondents/") == ["ACME Corporation"]
    ours = documents_by_title(alice)
    assert list(ours) == ["Invoice 4711 paid"]
    attributes = ours["Invoice 4711 paid"]["attributes"]
    acme = alice.get("/api/correspondents/").json()["data"][0]["id"]
    assert ([tag["name"] for tag in attributes["tags"]], attributes["correspondent"],
            attributes.get("paperless_id")) == (["Invoices"], acme, numbers["Invoice 4711"])
    notes = alice.get(f"/api/documents/{ours['Invoice 4711 paid']['id']}/notes/").json()["data"]
    assert [(note["attributes"]["note"], note["attributes"]["user"]) for note in notes] == [
        ("Receipt filed", "alice")]
    assert [item["attributes"]["title"] for item in alice.get("/api/trash/").json()["data"]] == [
        "Contract renewal"]


# -- Home Assistant's calls, through pypaperless ------------------------------------------------
HOME_ASSISTANT = r'''
from pypaperless import PaperlessClient
from pypaperless.exceptions import ForbiddenError
from pypaperless.models.status import StatusType


def state(value):
    """What a status sensor of Home Assistant's integration shows (sensor.py's value_fn)."""
    return value.value.lower() if value is not None and value != StatusType.UNKNOWN else None


async def main():
    out = {}
    async with PaperlessClient(URL, TOKEN, timeout=60) as paperless:
        out["host"] = [paperless.host_api_version, paperless.host_version]
        statistic = await paperless.statistics()
        status = await paperless.status()
        remote = await paperless.remote_version()
        out["statistics"] = {
            "documents_total": statistic.documents_total,
            "documents_inbox": statistic.documents_inbox,
            "characters_count": statistic.character_count, "tag_count": statistic.tag_count,
            "correspondent_count": statistic.correspondent_count,
            "document_type_count": statistic.document_type_count,
            "file_types": [[count.mime_type, count.mime_type_count]
                           for count in statistic.document_file_type_counts]}
        out["status"] = {
            "pngx_version": status.pngx_version,
            "storage": None if status.storage is None else [status.storage.total,
                                                            status.storage.available],
            "database_status": state(status.database and status.database.status),
            "index_status": state(status.tasks and status.tasks.index_status),
            "classifier_status": state(status.tasks and status.tasks.classifier_status),
            "celery_status": state(status.tasks and status.tasks.celery_status),
            "redis_status": state(status.tasks and status.tasks.redis_status),
            "sanity_check_status": state(status.tasks and status.tasks.sanity_check_status),
            "has_errors": status.has_errors}
        out["remote_version"] = [remote.version, remote.update_available]
    # A user who is not a superuser: Home Assistant reports "forbidden" for the status.
    async with PaperlessClient(URL, PARAMS["user_token"], timeout=60) as paperless:
        out["user statistics"] = (await paperless.statistics()).documents_total
        try:
            await paperless.status()
            out["user status"] = "answered"
        except ForbiddenError:
            out["user status"] = "forbidden"
    return out
'''


def test_home_assistant_calls(server, admin, alice):
    # admin's library, made in dms's own API: one text in the inbox, a tag, a correspondent.
    assert admin.post("/api/tags/", {"data": {"type": "tags", "attributes": {
        "name": "Utilities"}}}).status_code == 201
    assert admin.post("/api/correspondents/", {"data": {"type": "correspondents", "attributes": {
        "name": "Stadtwerke"}}}).status_code == 201
    document = new_document(admin, "Electricity", parent=admin.inbox_id)
    upload_accepted(admin, document, "electricity.txt",
                    samples.text("Stadtwerke electricity invoice, total 93.20 EUR\n"))
    assert wait_processed(admin, document)[-1] == "succeeded"

    done = run(HOME_ASSISTANT, dialect_url(server), admin.token,
               params={"user_token": alice.token})
    out = done.result
    # Storage is the disk of dms's data dir, as Paperless-ngx reports its media dir's; what is
    # free changes while the test runs.
    total = shutil.disk_usage(server.config.data_dir).total
    storage = out["status"]["storage"]
    if storage is not None and storage[0] == total and 0 < storage[1] <= total:
        out["status"]["storage"] = "the data dir's disk"
    assert out == {
        "host": [10, "3.0.0"],
        "statistics": {"documents_total": 1, "documents_inbox": 1,
                       "characters_count": len(text_of(admin, document)), "tag_count": 1,
                       "correspondent_count": 1, "document_type_count": 0,
                       "file_types": [["text/plain", 1]]},
        # The sensors Home Assistant shows: dms answers OK for the parts of Paperless-ngx it
        # does its own way (its queue, its matching, `dms verify`), so none shows a problem.
        "status": {"pngx_version": "3.0.0", "storage": "the data dir's disk",
                   "database_status": "ok", "index_status": "ok", "classifier_status": "ok",
                   "celery_status": "ok", "redis_status": "ok", "sanity_check_status": "ok",
                   "has_errors": False},
        "remote_version": ["3.0.0", False],
        "user statistics": 0, "user status": "forbidden"}, done.trace()


# -- easypaperless --------------------------------------------------------------------------------
EASYPAPERLESS_UPLOAD = r'''
from easypaperless import PaperlessClient


async def main():
    out = {}
    async with PaperlessClient(URL, TOKEN, poll_interval=0.2, poll_timeout=60) as client:
        out["version"] = await client.server_version()
        tag = await client.tags.create(name="Receipts", color="#ff7f00")
        centre = await client.correspondents.create(name="Garden Centre")
        out["tag"] = tag.model_dump(mode="json", include={
            "id", "name", "color", "is_inbox_tag", "document_count", "matching_algorithm"})
        out["correspondent"] = centre.model_dump(mode="json", include={
            "id", "name", "document_count"})
        with open(PARAMS["files"]["receipt.txt"], "rb") as file:
            receipt = await client.documents.upload(
                file.read(), filename="receipt.txt", title="Garden receipt",
                tags=["Receipts"], correspondent="Garden Centre", created="2024-05-02",
                wait=True)  # follows the task to the document
        out["receipt"] = receipt.model_dump(mode="json", include={
            "id", "title", "tags", "correspondent", "created", "original_file_name"})
        with open(PARAMS["files"]["warranty.pdf"], "rb") as file:
            task_id = await client.documents.upload(file.read(), filename="warranty.pdf",
                                                     title="Warranty")
        task = await client.tasks.wait(task_id)
        out["task"] = {"task_id": task.task_id == task_id, "status": task.status,
                       "related_document": task.related_document}
        listed = await client.tasks.list(task_id=task_id)
        out["tasks listed"] = [[item.task_id == task_id, item.status, item.task_name]
                               for item in listed.results]
    return out
'''

EASYPAPERLESS_SESSION = r'''
import hashlib

from easypaperless import NotFoundError, PaperlessClient


def titles(page):
    return sorted(document.title for document in page.results)


async def main():
    receipt_id, warranty_id = PARAMS["receipt"], PARAMS["warranty"]
    out = {}
    async with PaperlessClient(URL, TOKEN) as client:
        receipt = await client.documents.get(receipt_id)
        out["receipt"] = receipt.model_dump(mode="json", include={
            "title", "content", "tags", "correspondent", "created", "original_file_name",
            "notes", "custom_fields"})
        updated = await client.documents.update(
            warranty_id, title="Warranty for the garden chairs", tags=["Receipts"],
            correspondent="Garden Centre")
        out["updated"] = updated.model_dump(mode="json", include={
            "title", "tags", "correspondent"})
        out["filtered"] = {
            "by tag": titles(await client.documents.list(tags=["Receipts"])),
            "by correspondent": titles(await client.documents.list(
                correspondent="Garden Centre")),
            "by title": titles(await client.documents.list(search="warranty",
                                                           search_mode="title")),
            "full text": titles(await client.documents.list(search="lawnmower",
                                                            search_mode="query")),
            "title or content": titles(await client.documents.list(search="lawnmower")),
        }
        original = await client.documents.download(receipt_id, original=True)
        archived = await client.documents.download(warranty_id)
        out["downloads"] = [hashlib.sha256(original).hexdigest(),
                            archived[:5].decode("latin-1")]
        first = await client.documents.notes.create(receipt_id, note="Refund requested")
        second = await client.documents.notes.create(receipt_id, note="Refund paid")
        notes = await client.documents.notes.list(receipt_id)
        out["notes"] = sorted(note.note for note in notes.results)
        out["note ids"] = sorted(note.id for note in notes.results) == sorted(
            [first.id, second.id])
        await client.documents.notes.delete(receipt_id, first.id)
        out["notes after delete"] = [note.note for note in (
            await client.documents.notes.list(receipt_id)).results]
        await client.documents.delete(warranty_id)
        try:
            await client.documents.get(warranty_id)
            out["deleted"] = False
        except NotFoundError:
            out["deleted"] = True
        out["left"] = titles(await client.documents.list())
    return out
'''


@pytest.mark.parametrize("prefix", [
    "", pytest.param("/dms", marks=pytest.mark.config(url_prefix="/dms"))])
def test_easypaperless_session(prefix, server, alice, tmp_path):
    """The whole session, also behind a proxy prefix (the client is given
    http://host:port/dms/paperless)."""
    assert dialect_url(server).split("/", 3)[3] == f"{prefix}/paperless".lstrip("/")
    files = {"receipt.txt": RECEIPT_TXT, "warranty.pdf": WARRANTY_PDF}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    uploaded = run(EASYPAPERLESS_UPLOAD, dialect_url(server), alice.token,
                   params={"files": {name: str(tmp_path / name) for name in files}})
    out = uploaded.result
    numbers = dialect_numbers(alice)
    tag_id, centre_id = out["tag"]["id"], out["correspondent"]["id"]
    assert out == {
        "version": "3.0.0",
        "tag": {"id": tag_id, "name": "Receipts", "color": "#ff7f00", "is_inbox_tag": False,
                "document_count": 0, "matching_algorithm": 0},
        "correspondent": {"id": centre_id, "name": "Garden Centre", "document_count": 0},
        "receipt": {"id": numbers["Garden receipt"], "title": "Garden receipt",
                    "tags": [tag_id], "correspondent": centre_id, "created": "2024-05-02",
                    "original_file_name": "receipt.txt"},
        # Version 9's task (no Accept version): upper-case status, the document as a string.
        "task": {"task_id": True, "status": "SUCCESS",
                 "related_document": str(numbers["Warranty"])},
        "tasks listed": [[True, "SUCCESS", "consume_file"]]}, uploaded.trace()

    ours = processed_and_indexed(server, alice, ["Garden receipt", "Warranty"])
    session = run(EASYPAPERLESS_SESSION, dialect_url(server), alice.token, params={
        "receipt": numbers["Garden receipt"], "warranty": numbers["Warranty"]})
    both = ["Garden receipt", "Warranty for the garden chairs"]
    assert session.result == {
        "receipt": {"title": "Garden receipt",
                    "content": text_of(alice, ours["Garden receipt"]["id"]), "tags": [tag_id],
                    "correspondent": centre_id, "created": "2024-05-02",
                    "original_file_name": "receipt.txt", "notes": [], "custom_fields": []},
        "updated": {"title": "Warranty for the garden chairs", "tags": [tag_id],
                    "correspondent": centre_id},
        # easypaperless's default search mode sends search=, DRF's search of Paperless-ngx.
        "filtered": {"by tag": both, "by correspondent": both,
                     "by title": ["Warranty for the garden chairs"],
                     "full text": ["Garden receipt"], "title or content": ["Garden receipt"]},
        "downloads": [sha256(RECEIPT_TXT), "%PDF-"],
        "notes": ["Refund paid", "Refund requested"], "note ids": True,
        "notes after delete": ["Refund paid"],
        "deleted": True, "left": ["Garden receipt"]}, session.trace()

    # dms's own API sees the same rows.
    assert names(alice, "/api/tags/") == ["Receipts"]
    assert names(alice, "/api/correspondents/") == ["Garden Centre"]
    ours = documents_by_title(alice)
    assert list(ours) == ["Garden receipt"]
    receipt = ours["Garden receipt"]["attributes"]
    centre = alice.get("/api/correspondents/").json()["data"][0]["id"]
    assert ([tag["name"] for tag in receipt["tags"]], receipt["correspondent"],
            receipt["document_date"], receipt.get("paperless_id")) == (
        ["Receipts"], centre, "2024-05-02", numbers["Garden receipt"])
    notes = alice.get(f"/api/documents/{ours['Garden receipt']['id']}/notes/").json()["data"]
    assert [(note["attributes"]["note"], note["attributes"]["user"]) for note in notes] == [
        ("Refund paid", "alice")]
    assert [item["attributes"]["title"] for item in alice.get("/api/trash/").json()["data"]] == [
        "Warranty for the garden chairs"]


# -- pypaperless: saved views and share links ----------------------------------------------------
PYPAPERLESS_VIEWS_AND_LINKS = r'''
import urllib.request

from pypaperless import PaperlessClient
from pypaperless.models.share_links import ShareLinkFileVersion


async def main():
    out = {}
    async with PaperlessClient(URL, TOKEN, timeout=60) as paperless:
        views = [view async for view in paperless.saved_views]
        out["views"] = [[view.name, view.sort_field, view.sort_reverse,
                         [[rule.rule_type, rule.value] for rule in view.filter_rules]]
                        for view in views]
        one = await paperless.saved_views(views[0].id)
        out["view"] = one.name
        draft = paperless.share_links.create(document=PARAMS["document"],
                                             file_version=ShareLinkFileVersion.ORIGINAL)
        link_id = await paperless.share_links.save(draft)
        link = await paperless.share_links(link_id)
        out["link"] = [link.document, link.file_version.value, link.expiration is not None,
                       len(link.slug)]
        with urllib.request.urlopen(f"{URL}/share/{link.slug}", timeout=60) as answer:
            out["shared file"] = answer.read().decode()
        out["listed"] = [item.id async for item in paperless.share_links] == [link_id]
        await paperless.share_links.delete(link)
        out["left"] = [item.id async for item in paperless.share_links]
    return out
'''


def test_pypaperless_saved_views_and_share_links(server, alice):
    """A saved search made in dms's own API is a saved view to pypaperless; a share link it
    makes is one of dms's, whose public URL serves the file without a login."""
    response = alice.post("/api/saved-searches/", {"data": {"type": "saved-searches",
                                                            "attributes": {
        "name": "Renewals", "query": "renewal", "sort": "-created_at"}}})
    assert response.status_code == 201, response.text
    document = new_document(alice, "Contract renewal")
    upload_accepted(alice, document, "letter.txt", LETTER_TXT)
    number = dialect_numbers(alice)["Contract renewal"]
    session = run(PYPAPERLESS_VIEWS_AND_LINKS, dialect_url(server), alice.token,
                  params={"document": number})
    assert session.result == {
        "views": [["Renewals", "added", True, [[20, "renewal"]]]], "view": "Renewals",
        "link": [number, "original", True, 32],
        "shared file": LETTER_TXT.decode(), "listed": True, "left": []}, session.trace()
    history = alice.get(f"/api/nodes/{document}/history/").json()["data"]
    assert [event["attributes"]["action"] for event in history
            if event["attributes"]["action"].startswith("share_")] == [
        "share_revoked", "share_accessed", "share_created"]
