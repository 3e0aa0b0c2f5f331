"""The date printed on the paper, read from a document's OCR or text-layer text: a document's
`document_date` is this date when one can be read with confidence, else the upload date.

`read_document_date` returns the first date in text order that is read with confidence and is
plausible. The first, because letters, invoices and payslips carry their date in the header,
above due dates, periods and references. Formats, English and German:

- ISO `2024-03-12`;
- German numeric `12.03.2024`, `12.3.2024`, `1.3.24` (a two-digit year is 20yy unless that is
  after today, then 19yy);
- day, month name, year: `12. März 2024`, `12 Maerz 2024`, `3. Okt. 2024`, `12th March 2024`,
  `12-Mar-2024`; month name, day, year: `March 12, 2024`, `Mar. 12th 2024`. Month names and
  their abbreviations (MONTHS) in either language, in any case;
- slash dates `25/03/2024` and `03/25/2024` only when a number above 12 tells the day from the
  month (or both are equal): `04/05/2024` is 4 May in the UK and April 5 in the US, and a wrong
  date is worse than the upload date, so it is skipped and the reading goes on.

A date that does not exist (30 February), before 1900 or after today (a due date) is skipped.
Numbers glued to other digits are not dates (`112.03.2024`, `12.03.20245`, `2024-03-12-0001`),
and spaces do not separate a numeric date's parts (`0221 12 03 2024` is a phone number). Words
may touch a date: OCR drops spaces (`Rechnung12.03.2024`).

Only the first MAX_CHARS_READ characters are read, with patterns compiled once whose
quantifiers are bounded and never nested: linear time whatever the text. The text is never
logged (it is the user's document).
"""

from __future__ import annotations

import datetime
import re
import unicodedata
from collections.abc import Callable

# A document's own date is on its first page; reading further only finds later dates (due
# dates, periods) and costs time on text layers of many megabytes.
MAX_CHARS_READ = 20_000
EARLIEST_YEAR = 1900
MAX_MONTH = 12  # a slash date's number above this is its day

# Month names and abbreviations, English and German (with Austrian Jänner and Feber, and März
# written without its umlaut), matched after casefold().
_MONTH_NAMES = (
    "january jan januar jänner jän",
    "february feb februar feber",
    "march mar märz mär maerz marz mrz",
    "april apr",
    "may mai",
    "june jun juni",
    "july jul juli",
    "august aug",
    "september sep sept",
    "october oct oktober okt",
    "november nov",
    "december dec dezember dez",
)
MONTHS = {name: number
          for number, names in enumerate(_MONTH_NAMES, start=1) for name in names.split()}

# The longest look past a date's end (_NOT_BEFORE_NUMBER): read beyond MAX_CHARS_READ so that
# a date cut at the limit (`12.03.20|24`) is not read as another one (12 March 2020).
_LOOKAHEAD = 2
_SPACE = r"[ \t\u00a0\u202f]"  # no-break spaces are common in PDF text layers
_NOT_AFTER_NUMBER = r"(?<![0-9])(?<![0-9][./-])"
_NOT_BEFORE_NUMBER = r"(?![0-9])(?![./-][0-9])"
_MONTH_WORD = r"(?P<month>[^\W\d_]{3,10})"  # a word of letters, looked up in MONTHS
_ORDINAL = r"(?:st|nd|rd|th)"

_ISO = re.compile(_NOT_AFTER_NUMBER + r"(?P<year>[0-9]{4})-(?P<month>[0-9]{2})-(?P<day>[0-9]{2})"
                  + _NOT_BEFORE_NUMBER)
_DOTTED = re.compile(_NOT_AFTER_NUMBER
                     + r"(?P<day>[0-9]{1,2})\.(?P<month>[0-9]{1,2})\.(?P<year>[0-9]{4}|[0-9]{2})"
                     + _NOT_BEFORE_NUMBER)
_SLASHED = re.compile(_NOT_AFTER_NUMBER
                      + r"(?P<first>[0-9]{1,2})/(?P<second>[0-9]{1,2})/(?P<year>[0-9]{4})"
                      + _NOT_BEFORE_NUMBER)
_DAY_MONTH_YEAR = re.compile(
    _NOT_AFTER_NUMBER + r"(?P<day>[0-9]{1,2})"
    + rf"(?:\.{_SPACE}{{0,3}}|{_ORDINAL}?{_SPACE}{{1,3}}|-)" + _MONTH_WORD
    + rf"\.?(?:{_SPACE}{{1,3}}|-|,{_SPACE}{{0,3}})(?P<year>[0-9]{{4}})" + _NOT_BEFORE_NUMBER,
    re.IGNORECASE)
_MONTH_DAY_YEAR = re.compile(
    r"(?<![^\W\d_])" + _MONTH_WORD + rf"\.?{_SPACE}{{1,3}}(?P<day>[0-9]{{1,2}}){_ORDINAL}?"
    + rf"(?:,{_SPACE}{{0,3}}|{_SPACE}{{1,3}})(?P<year>[0-9]{{4}})" + _NOT_BEFORE_NUMBER,
    re.IGNORECASE)

Reader = Callable[[re.Match[str], datetime.date], datetime.date | None]


def read_document_date(text: str, today: datetime.date) -> datetime.date | None:
    """The first date in `text` read with confidence, not after `today`; None if there is none
    (the caller then uses the upload date)."""
    head = unicodedata.normalize("NFC", text[:MAX_CHARS_READ])  # März in one code point
    window = head + text[MAX_CHARS_READ:MAX_CHARS_READ + _LOOKAHEAD]
    hits = [hit for pattern, reader in _FORMATS
            if (hit := _first_date(pattern, reader, window, len(head), today)) is not None]
    return min(hits, key=lambda hit: hit[0])[1] if hits else None


def _first_date(pattern: re.Pattern[str], reader: Reader, window: str, limit: int,
                today: datetime.date) -> tuple[int, datetime.date] | None:
    """Where the first confident date of one format starts in `window[:limit]`, and that date."""
    position = 0
    while (match := pattern.search(window, position)) is not None:
        if match.end() <= limit and (found := reader(match, today)) is not None:
            return match.start(), found
        position = match.start() + 1  # a refused match may overlap a date further on
    return None


def _from_iso(match: re.Match[str], today: datetime.date) -> datetime.date | None:
    return _plausible(int(match["year"]), int(match["month"]), int(match["day"]), today)


def _from_dotted(match: re.Match[str], today: datetime.date) -> datetime.date | None:
    day, month = int(match["day"]), int(match["month"])
    return _plausible(_full_year(match["year"], month, day, today), month, day, today)


def _from_slashed(match: re.Match[str], today: datetime.date) -> datetime.date | None:
    first, second = int(match["first"]), int(match["second"])
    if first == second:
        day = month = first
    elif first > MAX_MONTH >= second:
        day, month = first, second
    elif second > MAX_MONTH >= first:
        day, month = second, first
    else:
        return None  # UK or US order cannot be told apart
    return _plausible(int(match["year"]), month, day, today)


def _from_month_name(match: re.Match[str], today: datetime.date) -> datetime.date | None:
    month = MONTHS.get(match["month"].casefold())
    if month is None:
        return None
    return _plausible(int(match["year"]), month, int(match["day"]), today)


def _full_year(digits: str, month: int, day: int, today: datetime.date) -> int:
    if len(digits) == 4:
        return int(digits)
    year = 2000 + int(digits)
    # This century unless that puts the date after today: `1.3.99` is 1999.
    return year if (year, month, day) <= (today.year, today.month, today.day) else year - 100


def _plausible(year: int, month: int, day: int, today: datetime.date) -> datetime.date | None:
    if year < EARLIEST_YEAR:
        return None
    try:
        found = datetime.date(year, month, day)
    except ValueError:  # 30 February, 31 April, month 13
        return None
    return found if found <= today else None  # after today: a due date, not the paper's date


_FORMATS: tuple[tuple[re.Pattern[str], Reader], ...] = (
    (_ISO, _from_iso),
    (_DOTTED, _from_dotted),
    (_SLASHED, _from_slashed),
    (_DAY_MONTH_YEAR, _from_month_name),
    (_MONTH_DAY_YEAR, _from_month_name),
)
