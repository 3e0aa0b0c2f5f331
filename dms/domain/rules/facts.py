"""What rules look at in a document, read outside any write transaction and bounded: its title,
file name, creation time, the message it came by (sender, subject), and the first
`rules_max_text_chars` characters of its latest version's text (api.md, "How rules run": a document
of 10,000 pages still finishes; matching reads its first pages, not all of them).

Pages are read a few at a time and each cut in SQL (`substr`), so a text file of 100 MB, one
page, costs no more than the limit."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from dms.db import database
from dms.db.models import PAGE_SEPARATOR, Node
from dms.domain.matching import Words

IDS_PER_QUERY = 500  # SQLite binds at most 32,766 values in one statement
PAGES_PER_READ = 20
LATEST = ("(SELECT v.id FROM document_version AS v WHERE v.document_id = n.id "
          "ORDER BY v.number DESC LIMIT 1)")


@dataclass
class Document:
    id: str
    owner_id: str
    parent_id: str
    title: str
    file_name: str | None
    created_at: dt.datetime
    version_id: str | None
    mail_from: str = ""
    mail_subject: str = ""
    text: str = ""
    _fields: dict[str, Words] = field(default_factory=dict, repr=False)

    def fields(self) -> dict[str, Words]:
        """The matchable fields, each split into words once, when a rule first looks at it."""
        if not self._fields:
            self._fields.update(text=Words(self.text), title=Words(self.title),
                                file_name=Words(self.file_name or ""),
                                mail_from=Words(self.mail_from),
                                mail_subject=Words(self.mail_subject))
        return self._fields

    def retitled(self, title: str) -> None:
        """A rule gave it a new title: later rules see that one."""
        self.title = title
        if self._fields:
            self._fields["title"] = Words(title)


def load(document_ids: list[str], max_chars: int) -> dict[str, Document]:
    """The live documents among `document_ids`, by id, with what rules look at."""
    found: dict[str, Document] = {}
    for start in range(0, len(document_ids), IDS_PER_QUERY):
        chunk = document_ids[start:start + IDS_PER_QUERY]
        marks = ",".join("?" * len(chunk))
        for row in database.execute_sql(
                f"SELECT n.id, n.owner_id, n.parent_id, n.title, n.file_name, n.created_at, "
                f"{LATEST} FROM node AS n WHERE n.id IN ({marks}) AND n.kind = ? "
                f"AND n.trash_id IS NULL", (*chunk, Node.DOCUMENT)):
            found[row[0]] = Document(row[0], row[1], row[2], row[3], row[4],
                                     Node.created_at.python_value(row[5]),  # type: ignore[arg-type]
                                     row[6])
        for document_id, subject, sender in database.execute_sql(
                f"SELECT document_id, subject, sender FROM document_mail "
                f"WHERE document_id IN ({marks})", chunk):
            if document_id in found:
                found[document_id].mail_subject = subject
                found[document_id].mail_from = sender
    for document in found.values():
        document.text = text_of(document.version_id, max_chars)
    return found


def text_of(version_id: str | None, max_chars: int) -> str:
    """The version's text, pages joined as everywhere (PAGE_SEPARATOR), cut at `max_chars`."""
    if version_id is None:
        return ""
    parts: list[str] = []
    left, first = max_chars, 1
    while left > 0:
        rows = database.execute_sql(
            "SELECT number, substr(text, 1, ?) FROM page WHERE version_id = ? AND number >= ? "
            "AND number < ? ORDER BY number",
            (left, version_id, first, first + PAGES_PER_READ)).fetchall()
        if not rows:
            break
        for _, text in rows:
            if not text:
                continue
            piece = (PAGE_SEPARATOR if parts else "") + text
            parts.append(piece[:left])
            left -= len(parts[-1])
            if left <= 0:
                break
        first += PAGES_PER_READ
    return "".join(parts)
