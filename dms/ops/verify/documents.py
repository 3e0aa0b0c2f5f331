"""What `dms verify` reads of each document's rows (dms.ops.verify): its page rows against its
latest version's page count (the runs of numbers missing, and numbers beyond it), and its
attributes against that version. Reads only."""

from __future__ import annotations

from dms.ops.verify._queries import DOCUMENT_ATTRIBUTES, PAGE_ROWS
from dms.ops.verify.tree import Execute


def gaps(numbers: list[int], page_count: int) -> list[tuple[int, int]]:
    """The runs of 1..page_count missing from the sorted `numbers` (never builds 1..page_count:
    a corrupt page_count may be huge)."""
    found, expected = [], 1
    for number in numbers:
        if number > page_count:
            break
        if number > expected:
            found.append((expected, number - 1))
        expected = max(expected, number + 1)
    if expected <= page_count:
        found.append((expected, page_count))
    return found


def _page_numbers(execute: Execute, version_id: str) -> list[int]:
    return [row[0] for row in execute(
        "SELECT number FROM page WHERE version_id = ? ORDER BY number", (version_id,)).fetchall()]


def page_problems(execute: Execute) -> list[tuple[str, str, list[tuple[int, int]], list[int],
                                                   int]]:
    """(document, version, runs of missing numbers, numbers beyond 1..page_count, page_count)."""
    found = []
    for document_id, version_id, page_count in execute(PAGE_ROWS, ()).fetchall():
        numbers = _page_numbers(execute, version_id)
        missing = gaps(numbers, page_count)
        extra = [number for number in numbers if not 1 <= number <= page_count]
        found.append((document_id, version_id, missing, extra, page_count))
    return found


def attribute_problems(execute: Execute) -> list[tuple[str, list[tuple[str, object, object]]]]:
    """(document, [(attribute, value, what the latest version says)])."""
    found = []
    for row in execute(DOCUMENT_ATTRIBUTES, ()).fetchall():
        document_id, actual, version_id, expected = row[0], row[1:4], row[4], row[5:8]
        if version_id is None:
            expected = (None, 0, 0)
        differences = [(name, value, should) for name, value, should
                       in zip(("file_name", "size", "page_count"), actual, expected, strict=True)
                       if value != should]
        found.append((document_id, differences))
    return found
