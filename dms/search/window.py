"""Which part of a search's ranking a request asks for (api.md, "Search": `limit`, or `page` and
`page_size`), and what it found."""

from __future__ import annotations

from dataclasses import dataclass

from dms.errors import Invalid

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 500
# How deep into a ranking a page may reach (page × page_size): each owner's best this many are
# taken from the engine and checked in the database. Past it, more words narrow the search.
MAX_WINDOW = 10_000


@dataclass(frozen=True)
class Window:
    offset: int
    size: int
    counted: bool  # the total is wanted
    number: int = 1  # the page's

    @property
    def reach(self) -> int:
        return self.offset + self.size


@dataclass(frozen=True)
class Found:
    results: list[dict]
    total: int | None  # None: not counted


def _whole(raw: object) -> int | None:
    try:
        return int(str(raw), 10)
    except ValueError:
        return None


def page_window(page: object, page_size: object) -> Window:
    """The window of page `page` (1-based) of `page_size` results; Invalid naming the parameter
    otherwise."""
    size = _whole(page_size)
    if size is None or not 1 <= size <= MAX_PAGE_SIZE:
        raise Invalid(f"page_size must be a whole number from 1 to {MAX_PAGE_SIZE}.",
                      "/page_size")
    number = _whole(page)
    if number is None or number < 1:
        raise Invalid("page must be a whole number from 1 on.", "/page")
    if number * size > MAX_WINDOW:
        raise Invalid(f"A search shows its best {MAX_WINDOW:,} results at most (page × "
                      f"page_size); search for more words to see others.", "/page")
    return Window((number - 1) * size, size, counted=True, number=number)
