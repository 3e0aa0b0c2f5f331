"""insert_row and update_rows (dms.db.models): the statements peewee would build, made once and
kept — the same row as `Model.insert(...)` (defaults filled, values turned by their fields: a
foreign key by its id, a datetime as stored text), the same columns changed as
`Model.update(...)` and only those, on both engines; and from_row, the model of a row read by
hand: the same values as peewee's own read (text as it comes, the others turned by their
fields), on both engines."""

from __future__ import annotations

import datetime as dt

from dms.db import database, write_transaction
from dms.db.models import (
    DocumentVersion,
    Node,
    OcrStatus,
    User,
    columns_of,
    from_row,
    insert_row,
    update_rows,
)
from dms.domain import accounts

COLUMNS = ("owner_id", "parent_id", "kind", "special", "title", "title_sort", "lang", "ocr",
           "ocr_status", "ocr_error", "ocr_attempts", "ocr_seconds", "file_name", "size",
           "page_count", "created_at", "updated_at", "trash_id")


def row_of(node_id: str) -> tuple:
    return database.execute_sql(f"SELECT {', '.join(COLUMNS)} FROM node WHERE id = ?",
                                (node_id,)).fetchone()


def home_of(username: str) -> Node:
    user = accounts.create_user(username, "a-long-password-1")
    return Node.get((Node.owner == user.id) & (Node.special == Node.HOME))


def test_the_same_rows_as_peewee_builds(services):
    home = home_of("alice")
    when = dt.datetime(2026, 12, 1, 5, 50, 7, 123456)
    values = dict(owner=home.owner_id, parent=home.id, kind=Node.DOCUMENT, title="Rechnung",
                  title_sort="rechnung", lang="deu", ocr=False, ocr_status=OcrStatus.RECEIVED,
                  file_name=None, created_at=when, updated_at=when)
    with write_transaction():
        Node.insert(id="by-peewee", **values).execute()
        insert_row(Node, {"id": "by-insert-row", **values})
        insert_row(Node, {"owner": home.owner_id, "parent": home.id, "kind": Node.FOLDER,
                          "title": "Ordner", "title_sort": "ordner"})  # the defaults fill in
    assert row_of("by-insert-row") == row_of("by-peewee") == (
        home.owner_id, home.id, "document", None, "Rechnung", "rechnung", "deu", False, "received",
        None, 0, 0.0, None, 0, 0, "2026-12-01 05:50:07.123456", "2026-12-01 05:50:07.123456", None)
    folder = Node.get(Node.title == "Ordner")
    assert (folder.kind, folder.ocr_attempts, folder.size, folder.page_count) == ("folder", 0, 0, 0)
    assert abs(folder.created_at - dt.datetime.now(dt.UTC).replace(tzinfo=None)) < \
        dt.timedelta(minutes=1)
    assert len(folder.id) == 36  # new_id(), the field's default

    with write_transaction():
        insert_row(DocumentVersion, dict(
            id="version-1", document="by-insert-row", number=1, file_name="a.pdf",
            mime_type="application/pdf", size=3, page_count=1, sha256="0" * 64, md5=None,
            lang="deu", created_at=when))
    version = DocumentVersion.get_by_id("version-1")
    assert (version.document_id, version.number, version.created_at) == ("by-insert-row", 1, when)


def test_only_the_given_columns_of_the_given_rows_change(services):
    home = home_of("alice")
    with write_transaction():
        for name in ("a", "b", "c"):
            insert_row(Node, {"id": name, "owner": home.owner_id, "parent": home.id,
                              "kind": Node.FOLDER, "title": name, "title_sort": name})
    before = {name: row_of(name) for name in ("a", "b", "c")}
    later = dt.datetime(2027, 1, 2, 3, 4, 5)
    with write_transaction():
        changed = update_rows(Node, ["a", "b", "missing"], {"title": "neu", "updated_at": later})
        assert update_rows(Node, [], {"title": "nichts"}) == 0
    assert changed == 2
    for name in ("a", "b"):
        expected = list(before[name])
        expected[COLUMNS.index("title")] = "neu"
        expected[COLUMNS.index("updated_at")] = "2027-01-02 03:04:05.000000"
        assert row_of(name) == tuple(expected)
    assert row_of("c") == before["c"]

    # By column name as well as by field name, as peewee takes them.
    with write_transaction():
        insert_row(Node, {"id": "d", "owner_id": home.owner_id, "parent_id": "a",
                          "kind": Node.FOLDER, "title": "d", "title_sort": "d"})
        assert update_rows(Node, ["d"], {"parent_id": "b"}) == 1
    assert row_of("d")[:3] == (home.owner_id, "b", "folder")


def test_a_row_read_by_hand_is_the_model_peewee_reads(services):
    home = home_of("alice")
    when = dt.datetime(2026, 12, 2, 4, 40, 1, 654321)
    with write_transaction():
        insert_row(Node, {"id": "n", "owner": home.owner_id, "parent": home.id,
                          "kind": Node.DOCUMENT, "title": "Käse", "title_sort": "käse",
                          "ocr": True, "size": 12, "ocr_seconds": 1.5, "created_at": when,
                          "updated_at": when})
    for model, row_id in ((Node, "n"), (Node, home.id), (User, home.owner_id)):
        columns = columns_of(model)
        row = database.execute_sql(
            f"SELECT {', '.join(columns)} FROM \"{model._meta.table_name}\" WHERE id = ?",
            (row_id,)).fetchone()
        by_hand, by_peewee = from_row(model, columns, row), model.get_by_id(row_id)
        assert by_hand.__data__ == by_peewee.__data__
        assert {type(value) for value in by_hand.__data__.values()} == {
            type(value) for value in by_peewee.__data__.values()}
    node = from_row(Node, columns_of(Node), database.execute_sql(
        f"SELECT {', '.join(columns_of(Node))} FROM node WHERE id = 'n'").fetchone())
    assert (node.title, node.ocr, node.size, node.ocr_seconds, node.created_at, node.parent_id) \
        == ("Käse", True, 12, 1.5, when, home.id)
