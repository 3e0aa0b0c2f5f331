"""The dates of the query language: `2024` (that year), `2024-03` (that month), `2024-03-15`,
and the words `today`, `yesterday`, `this week|month|year`, `previous week|month|quarter|year`
(weeks begin on Monday), each a span of days relative to the day the query runs; and what a
comparison with one keeps."""

from __future__ import annotations

import datetime as dt
import re

YEAR = re.compile(r"(\d{4})\Z")
MONTH = re.compile(r"(\d{4})-(\d{2})\Z")
DAY = re.compile(r"(\d{4})-(\d{2})-(\d{2})\Z")
WORDS = ("today", "yesterday", "this week", "this month", "this year", "previous week",
         "previous month", "previous quarter", "previous year")
EXPECTED = ("a date such as 2024, 2024-03 or 2024-03-15, or today, yesterday, this week, this "
            "month, this year, previous week, previous month, previous quarter or previous year")


def _month_end(year: int, month: int) -> dt.date:
    following = dt.date(year + month // 12, month % 12 + 1, 1)
    return following - dt.timedelta(days=1)


def span(text: str, today: dt.date) -> tuple[dt.date, dt.date]:
    """The first and last day `text` names; ValueError if it names none."""
    word = " ".join(text.lower().split())
    if word in WORDS:
        return _relative(word, today)
    if found := YEAR.match(text):
        year = int(found[1])
        return dt.date(year, 1, 1), dt.date(year, 12, 31)
    if found := MONTH.match(text):
        year, month = int(found[1]), int(found[2])
        return dt.date(year, month, 1), _month_end(year, month)
    if found := DAY.match(text):
        day = dt.date(int(found[1]), int(found[2]), int(found[3]))
        return day, day
    raise ValueError(text)


def _relative(word: str, today: dt.date) -> tuple[dt.date, dt.date]:
    monday = today - dt.timedelta(days=today.weekday())
    if word == "today":
        return today, today
    if word == "yesterday":
        day = today - dt.timedelta(days=1)
        return day, day
    if word == "this week":
        return monday, monday + dt.timedelta(days=6)
    if word == "previous week":
        return monday - dt.timedelta(days=7), monday - dt.timedelta(days=1)
    if word == "this month":
        return today.replace(day=1), _month_end(today.year, today.month)
    if word == "previous month":
        last = today.replace(day=1) - dt.timedelta(days=1)
        return last.replace(day=1), last
    if word == "this year":
        return dt.date(today.year, 1, 1), dt.date(today.year, 12, 31)
    if word == "previous year":
        return dt.date(today.year - 1, 1, 1), dt.date(today.year - 1, 12, 31)
    # previous quarter
    first_month = (today.month - 1) // 3 * 3 + 1
    start_this = dt.date(today.year, first_month, 1)
    end_previous = start_this - dt.timedelta(days=1)
    return dt.date(end_previous.year, end_previous.month - 2, 1), end_previous


def compared(operator: str, start: dt.date,
             end: dt.date) -> tuple[dt.date | None, dt.date | None]:
    """The days a comparison with the span [start, end] keeps (None: open on that side):
    `:` the span, `:>` after it, `:>=` from its first day, `:<` before it, `:<=` to its last."""
    one = dt.timedelta(days=1)
    return {"=": (start, end), ">": (end + one, None), ">=": (start, None),
            "<": (None, start - one), "<=": (None, end)}[operator]
