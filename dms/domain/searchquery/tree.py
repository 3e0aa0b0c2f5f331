"""What a query of the query language (api.md, "The query language") means, as a tree: words and
phrases (anywhere, or in one field), comparisons of a field with a value, date spans, and NOT,
AND, OR over them. Each leaf keeps where it starts in the query (1-based), so that a value that
cannot be used later — a number for a custom field of dates — is told at its place."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Union

# Fields of words: matched as words are (each a prefix, folded), but only in that field.
WORD_FIELDS = ("title", "text", "notes")
# Fields that name things: a tag, correspondent or type by name, a folder by path, a type of file.
NAME_FIELDS = ("tag", "correspondent", "type", "folder", "mime")
DATE_FIELDS = ("created", "added")
NUMBER_FIELDS = ("asn",)
FIELDS = WORD_FIELDS + NAME_FIELDS + DATE_FIELDS + NUMBER_FIELDS  # and cf.<name>
OPERATORS = ("=", ">", ">=", "<", "<=")


@dataclass(frozen=True)
class Words:
    """A word, or a phrase (its words in this order, next to each other), anywhere (title, tag
    names, text) or in one of WORD_FIELDS."""
    text: str
    field: str | None
    phrase: bool
    at: int


@dataclass(frozen=True)
class Named:
    """One of NAME_FIELDS is `value`: a tag (with the tags below it), correspondent or type by
    name, a folder by its path (with what is below it), a file type (`pdf`, `image/png`)."""
    field: str
    value: str
    at: int


@dataclass(frozen=True)
class Number:
    """The serial number compared with a whole number."""
    field: str
    operator: str
    value: int
    at: int


@dataclass(frozen=True)
class Span:
    """A date field within [start, end] (days, both included; None: open on that side)."""
    field: str
    start: dt.date | None
    end: dt.date | None
    at: int


@dataclass(frozen=True)
class Custom:
    """A custom field, by name, compared with a value as the query wrote it (its meaning depends
    on the field's type: dms.domain.searchquery.resolve). `high`: the end of a range."""
    name: str
    operator: str
    value: str
    at: int
    high: str | None = None


@dataclass(frozen=True)
class Not:
    part: Query


@dataclass(frozen=True)
class All:
    parts: tuple[Query, ...]


@dataclass(frozen=True)
class Any:
    parts: tuple[Query, ...]


Query = Union[Words, Named, Number, Span, Custom, Not, All, Any]  # noqa: UP007 -- a type alias


def leaves(query: Query) -> list[Query]:
    """Every leaf of the tree, left to right."""
    if isinstance(query, Not):
        return leaves(query.part)
    if isinstance(query, (All, Any)):
        return [leaf for part in query.parts for leaf in leaves(part)]
    return [query]


def is_plain(query: Query) -> bool:
    """Whether the query is only words ANDed, as every query was before the query language: it
    then means exactly what it meant."""
    return all(isinstance(leaf, Words) and leaf.field is None and not leaf.phrase
               for leaf in leaves(query)) and not _has(query, (Not, Any))


def _has(query: Query, kinds: tuple[type, ...]) -> bool:
    if isinstance(query, kinds):
        return True
    if isinstance(query, Not):
        return _has(query.part, kinds)
    if isinstance(query, (All, Any)):
        return any(_has(part, kinds) for part in query.parts)
    return False
