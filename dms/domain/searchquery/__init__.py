"""The query language of `q=` and of saved searches (api.md, "The query language"): words as
always, phrases, AND/OR/NOT/-, parentheses, fields, comparisons and dates, read into a tree
(`tree`) by a small grammar (`grammar`); its names made SQL conditions on the node row
(`resolve`), so that a query without words is one condition of the document list; the search
engines are to execute the words (dms.search)."""

from dms.domain.searchquery.grammar import MAX_DEPTH, MAX_LEAVES, QueryError, parse
from dms.domain.searchquery.resolve import Meta, condition, has_words, resolve
from dms.domain.searchquery.tree import (
    All,
    Any,
    Custom,
    Named,
    Not,
    Number,
    Query,
    Span,
    Words,
    is_plain,
    leaves,
)

__all__ = ["MAX_DEPTH", "MAX_LEAVES", "All", "Any", "Custom", "Meta", "Named", "Not", "Number",
           "Query", "QueryError", "Span", "Words", "condition", "has_words", "is_plain", "leaves",
           "parse", "resolve"]
