"""Days as terms (dms.search.days): a day is the terms of its year, month and itself, and a
closed range the fewest of those whose days are exactly the range — or, past MAX_TERMS, none
(the range of numbers then). The queries' answers are in test_query_language.py's table."""

from __future__ import annotations

import datetime as dt
import random

import pytest

from dms.search import days


def days_of(term: str) -> set[int]:
    """The days a term stands for."""
    parts = [int(part) for part in term.split("-")]
    first = dt.date(parts[0], parts[1] if len(parts) > 1 else 1, parts[2] if len(parts) > 2 else 1)
    if len(parts) == 3:
        last = first
    elif len(parts) == 2:
        last = (dt.date(first.year + 1, 1, 1) if first.month == 12
                else dt.date(first.year, first.month + 1, 1)) - dt.timedelta(days=1)
    else:
        last = dt.date(first.year, 12, 31)
    return set(range(first.toordinal(), last.toordinal() + 1))


def on(text: str) -> int:
    return dt.date.fromisoformat(text).toordinal()


def test_a_day_is_its_year_month_and_itself():
    assert days.day_terms(on("2024-03-05")) == ["2024", "2024-03", "2024-03-05"]
    assert days.day_terms(on("0099-12-31")) == ["0099", "0099-12", "0099-12-31"]


@pytest.mark.parametrize(("low", "high", "terms"), [
    ("2019-01-01", "2019-12-31", ["2019"]),
    ("2019-01-01", "2019-06-30", ["2019-01", "2019-02", "2019-03", "2019-04", "2019-05",
                                  "2019-06"]),
    ("2018-12-31", "2021-01-01", ["2018-12-31", "2019", "2020", "2021-01-01"]),
    ("2024-02-28", "2024-03-01", ["2024-02-28", "2024-02-29", "2024-03-01"]),
    ("9999-12-01", "9999-12-31", ["9999-12"]),
    ("2019-03-05", "2019-03-04", []),
])
def test_a_range_is_the_fewest_terms(low, high, terms):
    assert days.covering(on(low), on(high)) == terms


def test_a_range_past_the_limit_stays_a_range_of_numbers():
    assert days.covering(on("0001-01-01"), on("9999-12-31")) is None
    # 30 days, 11 months, 18 years, 11 months, 30 days: at the limit; a year more is past it
    assert len(days.covering(on("1900-01-02"), on("1919-12-30"))) == days.MAX_TERMS == 100
    assert days.covering(on("1900-01-02"), on("1920-12-30")) is None


@pytest.mark.parametrize("seed", range(10))
def test_random_ranges_are_covered_exactly(seed):
    chance = random.Random(seed)
    for _ in range(200):
        low = on("2000-01-01") + chance.randrange(9000)
        high = low + chance.choice([0, 1, 27, 30, 364, 365, 800, chance.randrange(3000)])
        covered = days.covering(low, high)
        if covered is None:
            assert high - low > 365 * 3
            continue
        assert len(covered) <= days.MAX_TERMS
        found = [day for term in covered for day in days_of(term)]
        assert sorted(found) == list(range(low, high + 1))
