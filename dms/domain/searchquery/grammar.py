"""The query language's grammar (api.md, "The query language"), read by recursive descent:

    query    := either END
    either   := both ("OR" both)*
    both     := negated (["AND"] negated)*          words side by side are ANDed
    negated  := "NOT" negated | "-" primary | primary
    primary  := "(" either ")" | PHRASE | FIELD OPERATOR value | WORD
    value    := PHRASE | "[" BARE "to" BARE "]" | BARE

`AND`, `OR` and `NOT` are operators only in capitals (`and` is a word); a `-` starts a negation
only at the beginning of a term. A FIELD is one of tree.FIELDS or `cf.<name>` (`cf."two
words"`), followed by `:`, `:>`, `:>=`, `:<` or `:<=` and a value with no space between. A
`name:value` whose name is no field is refused (a misspelt field never silently means words),
but a colon with nothing after it (`Re: invoice`), after digits (`10:30`) or before `//` (a URL
pasted in: `https://example.org/a`) is part of the words, as before the language.

A query that cannot be read is a QueryError (an Invalid: a 400) naming the position (1-based; one
past the last character for "the end") and what was expected there. Bounded: at most MAX_LEAVES
terms and MAX_DEPTH levels of parentheses and negations.
"""

from __future__ import annotations

import datetime as dt
import re

from dms.domain.searchquery import dates
from dms.domain.searchquery.tree import (
    DATE_FIELDS,
    FIELDS,
    NAME_FIELDS,
    NUMBER_FIELDS,
    WORD_FIELDS,
    All,
    Any,
    Custom,
    Named,
    Not,
    Number,
    Query,
    Span,
    Words,
)
from dms.errors import Invalid
from dms.text import is_whole_number

MAX_LEAVES = 32
MAX_DEPTH = 8
MAX_NUMBER = 2**63 - 1
KEYWORDS = ("AND", "OR", "NOT")
STOPS = set(' \t\r\n()"')
FIELD = re.compile(r'(cf\.(?:"[^"]*"|[^\s:()"]+)|[A-Za-z_]+)(:>=|:<=|:>|:<|:)')
RANGE_SPLIT = re.compile(r"\s+to\s+", re.IGNORECASE)
A_TERM = "a word, a phrase in quotes, a field such as tag:paid, or “(”"
OPERATOR_NAMES = {":": "=", ":>": ">", ":>=": ">=", ":<": "<", ":<=": "<="}


class QueryError(Invalid):
    def __init__(self, at: int, expected: str, field: str):
        super().__init__(f"The query cannot be read at position {at}: {expected}.", field)
        self.at = at


def parse(text: str, today: dt.date, field: str = "q") -> Query | None:
    """The tree of `text`; None for a query without terms (blank)."""
    return _Reader(text, today, field).query()


class _Reader:
    def __init__(self, text: str, today: dt.date, field: str):
        self.text, self.today, self.field = text, today, field
        self.at = 0  # 0-based; errors say at + 1
        self.leaves = 0
        self.depth = 0
        self.range_at = (0, 0)  # where the last range's two ends start

    # -- the characters ----------------------------------------------------------------------
    def fail(self, at: int, expected: str) -> QueryError:
        return QueryError(at + 1, expected, self.field)

    def skip_spaces(self) -> None:
        while self.at < len(self.text) and self.text[self.at].isspace():
            self.at += 1

    def at_end(self) -> bool:
        self.skip_spaces()
        return self.at >= len(self.text)

    def bare_end(self, start: int) -> int:
        end = start
        while end < len(self.text) and self.text[end] not in STOPS:
            end += 1
        return end

    def keyword(self) -> str | None:
        """The operator at the cursor, if one is there (not consumed)."""
        self.skip_spaces()
        end = self.bare_end(self.at)
        word = self.text[self.at:end]
        return word if word in KEYWORDS else None

    # -- the grammar ---------------------------------------------------------------------------
    def query(self) -> Query | None:
        if self.at_end():
            return None
        found = self.either()
        if not self.at_end():
            if self.text[self.at] == ")":
                raise self.fail(self.at, "“)” closes no “(”")
            raise self.fail(self.at, A_TERM)  # an operator where a term belongs
        return found

    def either(self) -> Query:
        parts = [self.both()]
        while self.keyword() == "OR":
            operator = self.at
            self.at += 2
            if self.at_end() or self.text[self.at] == ")" or self.keyword() in ("AND", "OR"):
                raise self.fail(self.at if not self.at_end() else len(self.text),
                                f"{A_TERM} after the OR at position {operator + 1}")
            parts.append(self.both())
        return parts[0] if len(parts) == 1 else Any(tuple(parts))

    def both(self) -> Query:
        parts = [self.negated()]
        while not self.at_end() and self.text[self.at] != ")":
            word = self.keyword()
            if word == "OR":
                break
            if word == "AND":
                operator = self.at
                self.at += 3
                if self.at_end() or self.text[self.at] == ")" or self.keyword() in ("AND",
                                                                                    "OR"):
                    raise self.fail(self.at if not self.at_end() else len(self.text),
                                    f"{A_TERM} after the AND at position {operator + 1}")
            parts.append(self.negated())
        parts = [part for part in parts if part is not None]
        return parts[0] if len(parts) == 1 else All(tuple(parts))

    def deeper(self, at: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail(at, f"no more than {MAX_DEPTH} levels of parentheses and negations")

    def negated(self) -> Query:
        self.skip_spaces()
        start = self.at
        word = self.keyword()
        if word in ("AND", "OR"):
            raise self.fail(start, f"{A_TERM} before the {word}")
        if word == "NOT":
            self.at += 3
            if self.at_end() or self.text[self.at] == ")" or self.keyword() in ("AND", "OR"):
                raise self.fail(self.at if not self.at_end() else len(self.text),
                                f"{A_TERM} after the NOT at position {start + 1}")
            self.deeper(start)
            part = Not(self.negated())
            self.depth -= 1
            return part
        if self.text[self.at] == "-" and self.at + 1 < len(self.text) \
                and not self.text[self.at + 1].isspace() and self.text[self.at + 1] != "-":
            self.at += 1
            self.deeper(start)
            part = Not(self.primary())
            self.depth -= 1
            return part
        return self.primary()

    def primary(self) -> Query:
        self.skip_spaces()
        start, char = self.at, self.text[self.at]
        if char == "(":
            self.at += 1
            self.deeper(start)
            if self.at_end():
                raise self.fail(len(self.text), f"{A_TERM} after the “(” at position {start + 1}")
            if self.text[self.at] == ")":
                raise self.fail(self.at, f"{A_TERM} between “(” and “)”")
            inner = self.either()
            if self.at_end() or self.text[self.at] != ")":
                raise self.fail(self.at if not self.at_end() else len(self.text),
                                f"“)” to close the “(” at position {start + 1}")
            self.at += 1
            self.depth -= 1
            return inner
        if char == ")":
            raise self.fail(start, A_TERM)
        if char == '"':
            return self.leaf(Words(self.phrase(), None, True, start + 1))
        if self.text[start:start + 4].lower() == "cf.:":
            raise self.fail(start + 3, "a custom field’s name after “cf.”")
        fielded = FIELD.match(self.text, start)
        if fielded:
            name, operator = fielded[1], fielded[2]
            after = fielded.end()
            known = name.lower() in FIELDS or name.lower().startswith("cf.")
            follows = after < len(self.text) and not self.text[after].isspace()
            if known:
                self.at = after
                return self.leaf(self.fielded(name, operator, start))
            url = operator == ":" and self.text.startswith("//", after)
            if follows and not name.isdigit() and not url:
                raise self.fail(start, f"a field name, not “{name}”: fields are "
                                       f"{', '.join(FIELDS)} and cf.<custom field>; put words "
                                       "with a colon in quotes")
        end = self.bare_end(start)
        self.at = end
        return self.leaf(Words(self.text[start:end], None, False, start + 1))

    def leaf(self, found: Query) -> Query:
        self.leaves += 1
        if self.leaves > MAX_LEAVES:
            raise self.fail(found.at - 1 if hasattr(found, "at") else self.at,
                            f"no more than {MAX_LEAVES} words and fields in one query")
        return found

    def phrase(self) -> str:
        start = self.at
        end = self.text.find('"', start + 1)
        if end < 0:
            raise self.fail(len(self.text), f"a closing quote for the one at position {start + 1}")
        self.at = end + 1
        return self.text[start + 1:end]

    # -- fields ----------------------------------------------------------------------------------
    def value(self, label: str) -> tuple[str, str | None, int]:
        """The value after `label` (a field and its operator): text, the end of a range or
        None, and where it starts (a range's ends: self.range_at)."""
        start = self.at
        if start >= len(self.text) or self.text[start].isspace() or self.text[start] == ")":
            raise self.fail(start, f"a value after {label}")
        if self.text[start] == '"':
            return self.phrase(), None, start
        if self.text[start] == "[":
            end = self.text.find("]", start)
            if end < 0:
                raise self.fail(len(self.text), f"“]” to close the range at position {start + 1}")
            inner = self.text[start + 1:end]
            parts = RANGE_SPLIT.split(inner.strip())
            if len(parts) != 2 or not all(part.strip() for part in parts):
                raise self.fail(start + 1, "a range such as [2024-01-01 to 2024-06-30]")
            separator = RANGE_SPLIT.search(inner)
            assert separator is not None  # two parts: a separator between them
            self.range_at = (start + 1 + len(inner) - len(inner.lstrip()),
                             start + 1 + separator.end())
            self.at = end + 1
            return parts[0].strip().strip('"'), parts[1].strip().strip('"'), start
        end = self.bare_end(start)
        self.at = end
        return self.text[start:end], None, start

    def fielded(self, name: str, operator_text: str, start: int) -> Query:
        field = name.lower()
        label = f"{name}{operator_text}"
        operator = OPERATOR_NAMES[operator_text]
        if field.startswith("cf."):
            custom = name[3:].strip('"').strip()
            if not custom:
                raise self.fail(start + 3, "a custom field’s name after “cf.”")
            value, high, _ = self.value(label)
            if high is not None and operator != "=":
                raise self.fail(start, f"either a comparison or a range after cf.{custom}")
            return Custom(custom, operator, value, start + 1, high)
        if operator != "=" and field not in DATE_FIELDS + NUMBER_FIELDS:
            raise self.fail(start + len(name), f"“:” after {name}: only dates, serial numbers "
                                                "and custom fields take >, >=, < and <=")
        value, high, value_at = self.value(label)
        if field in WORD_FIELDS:
            if high is not None:
                raise self.fail(value_at, f"words or a phrase after {label}, not a range")
            quoted = self.text[value_at] == '"'
            return Words(value, field, quoted, start + 1)
        if field in NAME_FIELDS:
            if high is not None:
                raise self.fail(value_at, f"a name after {label}, not a range")
            return Named(field, value, start + 1)
        if field in NUMBER_FIELDS:
            return self.numbers(field, operator, value, high, value_at, start, label)
        return self.days(field, operator, value, high, value_at, start, label)

    def number(self, value: str, at: int, label: str) -> int:
        if not is_whole_number(value):
            raise self.fail(at, f"a whole number after {label}")
        return int(value)

    def numbers(self, field: str, operator: str, value: str, high: str | None, value_at: int,
                start: int, label: str) -> Query:
        if high is None:
            return Number(field, operator, self.number(value, value_at, label), start + 1)
        if operator != "=":
            raise self.fail(start, f"either a comparison or a range after {field}")
        low_at, high_at = self.range_at
        low, top = self.number(value, low_at, label), self.number(high, high_at, label)
        return All((Number(field, ">=", low, start + 1), Number(field, "<=", top, start + 1)))

    def day_span(self, value: str, at: int) -> tuple[dt.date, dt.date]:
        try:
            return dates.span(value, self.today)
        except ValueError:
            raise self.fail(at, dates.EXPECTED) from None

    def days(self, field: str, operator: str, value: str, high: str | None, value_at: int,
             start: int, label: str) -> Query:
        if high is not None:
            if operator != "=":
                raise self.fail(start, f"either a comparison or a range after {field}")
            low_at, high_at = self.range_at
            first, _ = self.day_span(value, low_at)
            _, last = self.day_span(high, high_at)
            if last < first:
                raise self.fail(high_at, "a range whose end is not before its start")
            return Span(field, first, last, start + 1)
        first, last = self.day_span(value, value_at)
        low, top = dates.compared(operator, first, last)
        return Span(field, low, top, start + 1)
