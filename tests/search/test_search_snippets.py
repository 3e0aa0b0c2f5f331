"""A search's snippets (api.md, "Search": `highlight`): a document's from the text of its latest
version's pages, read for the first ten results in one statement, a document's later pages on
their own when its first ones hold less than a snippet looks at, never past it; a title's where
the text has none or is not read, and none where neither holds the words."""

from __future__ import annotations

import pytest

from dms import search
from dms.db import write_transaction
from dms.db.models import DocumentVersion, Node, Page, new_id, utcnow
from dms.search import highlight, service
from dms.search.highlight import Highlighter
from tests.harness.domaintier import home_id, new_user
from tests.harness.waiting import wait_indexed


def add_pages(owner_id: str, parent_id: str, title: str, versions: list[list[str]]) -> str:
    """A processed document whose versions hold these pages' texts, the last one its latest."""
    now = utcnow()
    node_id = new_id()
    latest = versions[-1]
    with write_transaction():
        Node.insert(id=node_id, owner=owner_id, parent=parent_id, kind=Node.DOCUMENT, title=title,
                    title_sort=title.casefold(), lang="eng", ocr=True, ocr_status="succeeded",
                    file_name="x.txt", size=1, page_count=len(latest), created_at=now,
                    updated_at=now).execute()
        for number, pages in enumerate(versions, start=1):
            version_id = new_id()
            DocumentVersion.insert(id=version_id, document=node_id, number=number,
                                   file_name="x.txt", mime_type="text/plain", size=1,
                                   page_count=len(pages), sha256="0" * 64, lang="eng",
                                   created_at=now).execute()
            for page_number, text in enumerate(pages, start=1):
                Page.insert(id=new_id(), version=version_id, number=page_number, text=text,
                            method="text").execute()
    return node_id


def highlights(services, user, text: str) -> dict[str, str | None]:
    return {hit["title"]: hit["highlight"] for hit in search.query(services.search, user, text)}


def test_snippets_come_from_the_latest_versions_pages_in_order(reading):
    alice = new_user("alice")
    home = home_id(alice)
    blank = [f"blank page {number}" for number in range(1, 12)]
    add_pages(alice.id, home, "Old and new", [
        ["the walrus of the first version"],
        [*blank[:10], "a walrus on page eleven", "and a walrus on page twelve"]])
    add_pages(alice.id, home, "One page", [["one walrus alone"]])
    add_pages(alice.id, home, "Walrus in the title", [["nothing to see"]])
    add_pages(alice.id, home, "Empty", [[]])
    wait_indexed(reading.config)
    assert highlights(reading, alice, "empty") == {"Empty": "<em>Empty</em>"}
    assert highlights(reading, alice, "walrus") == {
        # page 11 of version 2: past the pages read at once, the words before it from page 10
        "Old and new": "…blank page 10\n\na <em>walrus</em> on page eleven\n\nand a "
                       "<em>walrus</em> on…",
        "One page": "one <em>walrus</em> alone",
        "Walrus in the title": "<em>Walrus</em> in the title",
    }
    assert highlights(reading, alice, "blank") == {
        "Old and new": "<em>blank</em> page 1\n\n<em>blank</em> page 2\n\n<em>blank</em> page "
                       "3\n\n<em>blank</em> page 4…"}


def test_later_pages_are_not_read_past_what_a_snippet_looks_at(reading, monkeypatch):
    monkeypatch.setattr(highlight, "SCAN_CHARS", 100)
    monkeypatch.setattr(service, "PAGES_AT_ONCE", 2)
    alice = new_user("alice")
    # 3 pages of 40 characters reach the 100 a snippet looks at: page 4 is not read.
    filler = "x" * 39
    long = add_pages(alice.id, home_id(alice), "Long", [[filler, filler, filler, "the needle"]])
    short = add_pages(alice.id, home_id(alice), "Short", [[filler, filler, "a needle"]])
    wait_indexed(reading.config)
    assert highlights(reading, alice, "needle") == {
        "Long": None, "Short": "\n\n".join([filler, filler, "a <em>needle</em>"])}
    assert service._texts_start([long, short]) == {
        long: "\n\n".join([filler] * 3), short: "\n\n".join([filler, filler, "a needle"])}


@pytest.mark.sqlite_only  # no database: the same in both lanes
def test_titles_are_highlighted_in_one_pass_as_one_by_one():
    titles = ["Rechnung März", "Käse", "nothing here", "", "Steuerbescheid", "line\nrechnung",
              "Ärger mit der RECHNUNG und der Rechnerei", "Bescheid zum Steuerbescheid"]
    outside, inside = [False] * len(titles), [True] * len(titles)
    assert Highlighter(["rech"]).titles(titles, outside) == {
        0: "<em>Rechnung</em> März", 5: "line\n<em>rechnung</em>",
        6: "Ärger mit der <em>RECHNUNG</em> und der <em>Rechnerei</em>"}
    assert Highlighter(["bescheid"]).titles(titles, outside) == {
        7: "<em>Bescheid</em> zum Steuerbescheid"}
    assert Highlighter(["bescheid"]).titles(titles, inside) == {
        4: "<em>Steuerbescheid</em>", 7: "<em>Bescheid</em> zum <em>Steuerbescheid</em>"}
    assert Highlighter(["bescheid"]).titles(titles, [i == 4 for i in range(len(titles))]) == {
        4: "<em>Steuerbescheid</em>", 7: "<em>Bescheid</em> zum Steuerbescheid"}
    assert Highlighter(["kase", "arg"]).titles(titles, outside) == {
        1: "<em>Käse</em>", 6: "<em>Ärger</em> mit der RECHNUNG und der Rechnerei"}
    assert Highlighter([]).titles(titles, outside) == {}
    for words in (["rech"], ["bescheid"], ["kase", "arg"], ["der"]):
        for flags in (outside, inside):
            marks = Highlighter(words)
            one_by_one = {index: marks.snippet(title, whole=True, inside=flag)
                          for index, (title, flag) in enumerate(zip(titles, flags, strict=True))}
            assert marks.titles(titles, flags) == {
                index: found for index, found in one_by_one.items() if found is not None}
