"""The titles a rule's `set_title` makes (api.md, "Rules"): a tiny template language of exactly the
named fields below, parsed and checked when the rule is saved and rendered when it applies.

Never `str.format` on what a user wrote: `{title.__class__...}` and friends reach into Python
objects. Here a template is literal text, `{{` and `}}` for braces, and `{field}` or, for the one
date field, `{created:<strftime format>}` with a small set of directives. Anything else is
refused at creation with a sentence naming what is allowed. What a rendered template gives is
made a valid title: `/` and `\\` become `-`, control and invisible characters spaces, runs of
spaces one, trimmed and cut to the title limit; an empty result leaves the title as it was.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from dms.domain.tree import FORBIDDEN_TITLE_CHARACTERS, MAX_TITLE_LENGTH
from dms.errors import Invalid
from dms.text import has_refused_characters, is_refused_character

FIELDS = ("title", "file_name", "created", "mail_from", "mail_subject", "match")
DATE_FIELD = "created"
DEFAULT_DATE_FORMAT = "%Y-%m-%d"
# strftime directives a date format may use: the same on every platform, no locale surprises
# beyond month and day names. `%%` is a literal percent sign.
DATE_DIRECTIVES = "YymdHMSjbBaApIUW%"
MAX_TEMPLATE_LENGTH = 500
MAX_DATE_FORMAT_LENGTH = 50
POINTER = "actions/set_title"


@dataclass(frozen=True)
class Field:
    name: str
    date_format: str | None = None


Part = str | Field


def parse(template: str, pointer: str = POINTER) -> tuple[Part, ...]:
    """The template's parts: literal text and fields; Invalid (at `pointer`) when it is not one
    dms can render."""
    if len(template) > MAX_TEMPLATE_LENGTH:
        raise Invalid(f"A title template has at most {MAX_TEMPLATE_LENGTH} characters.", pointer)
    if has_refused_characters(template):
        raise Invalid("A title template may not contain control characters or invisible "
                      "formatting characters.", pointer)
    parts: list[Part] = []
    literal: list[str] = []
    index = 0
    while index < len(template):
        character = template[index]
        pair = template[index:index + 2]
        if pair in ("{{", "}}"):
            literal.append(character)
            index += 2
        elif character == "}":
            raise Invalid("A title template has a `}` without its `{`; write `}}` for a brace.",
                          pointer)
        elif character == "{":
            end = template.find("}", index)
            if end < 0:
                raise Invalid("A title template has a `{` without its `}`; write `{{` for a "
                              "brace.", pointer)
            if literal:
                parts.append("".join(literal))
                literal = []
            parts.append(_field(template[index + 1:end], pointer))
            index = end + 1
        else:
            literal.append(character)
            index += 1
    if literal:
        parts.append("".join(literal))
    return tuple(parts)


def _field(inside: str, pointer: str) -> Field:
    name, colon, date_format = inside.partition(":")
    if name not in FIELDS:
        known = ", ".join(f"{{{field}}}" for field in FIELDS)
        raise Invalid(f"A title template may use {known} (and {{created:%d.%m.%Y}} for another "
                      f"date format); {{{inside[:40]}}} is none of them.", pointer)
    if not colon:
        return Field(name)
    if name != DATE_FIELD:
        raise Invalid(f"Only {{created}} takes a format (as in {{created:%Y-%m-%d}}); "
                      f"{{{name}}} does not.", pointer)
    _check_date_format(date_format, pointer)
    return Field(name, date_format)


def _check_date_format(date_format: str, pointer: str) -> None:
    if not date_format or len(date_format) > MAX_DATE_FORMAT_LENGTH:
        raise Invalid(f"A date format has 1 to {MAX_DATE_FORMAT_LENGTH} characters, as in "
                      "{created:%Y-%m-%d}.", pointer)
    index = 0
    while index < len(date_format):
        if date_format[index] == "%":
            directive = date_format[index + 1:index + 2]
            if not directive or directive not in DATE_DIRECTIVES:
                allowed = " ".join(f"%{d}" for d in DATE_DIRECTIVES)
                raise Invalid(f"A date format may use the directives {allowed}; "
                              f"%{directive} is not one of them.", pointer)
            index += 2
        else:
            index += 1


def render(parts: tuple[Part, ...], values: dict[str, object]) -> str | None:
    """The title the template makes from `values` (text for each field; a datetime for
    `created`), made a valid title; None when nothing is left of it."""
    pieces = []
    for part in parts:
        if isinstance(part, str):
            pieces.append(part)
            continue
        value = values.get(part.name)
        if isinstance(value, dt.datetime):
            value = value.strftime(part.date_format or DEFAULT_DATE_FORMAT)
        pieces.append("" if value is None else str(value))
    return as_title("".join(pieces))


def as_title(text: str) -> str | None:
    """`text` made a valid title (dms.domain.tree.check_title's rules), or None if empty."""
    cleaned = "".join("-" if c in FORBIDDEN_TITLE_CHARACTERS
                      else " " if c.isspace() or is_refused_character(c) else c
                      for c in text[:MAX_TITLE_LENGTH * 4])
    title = " ".join(cleaned.split())[:MAX_TITLE_LENGTH].strip()
    return title or None
