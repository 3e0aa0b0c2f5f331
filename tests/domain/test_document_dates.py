"""The date printed on the paper (dms.domain.metadata.dates): each format read, English and German
letters whose date is not their first number, ambiguous, impossible and future dates skipped,
and the reading bounded to the text's first MAX_CHARS_READ characters."""

from __future__ import annotations

import datetime

import pytest

from dms.domain.metadata.dates import MAX_CHARS_READ, read_document_date

TODAY = datetime.date(2026, 11, 28)
date = datetime.date

READ = [
    ("2024-03-12", date(2024, 3, 12)),
    ("12.03.2024", date(2024, 3, 12)),
    ("12.3.2024", date(2024, 3, 12)),
    ("1.3.24", date(2024, 3, 1)),
    ("28.11.26", date(2026, 11, 28)),  # today
    ("29.11.26", date(1926, 11, 29)),  # 2026 would be after today
    ("1.3.99", date(1999, 3, 1)),
    ("12. März 2024", date(2024, 3, 12)),
    ("12 März 2024", date(2024, 3, 12)),
    ("12.März 2024", date(2024, 3, 12)),
    ("12. Maerz 2024", date(2024, 3, 12)),
    ("12. Marz 2024", date(2024, 3, 12)),
    ("12. Mrz. 2024", date(2024, 3, 12)),
    ("12. Ma\u0308rz 2024", date(2024, 3, 12)),  # a decomposed ä
    ("12. MÄRZ 2024", date(2024, 3, 12)),
    ("3. Okt. 2024", date(2024, 10, 3)),
    ("1. Jänner 2024", date(2024, 1, 1)),
    ("1. Jän. 2024", date(2024, 1, 1)),
    ("29. Feber 2024", date(2024, 2, 29)),
    ("12 March 2024", date(2024, 3, 12)),
    ("12th March 2024", date(2024, 3, 12)),
    ("1st May 2024", date(2024, 5, 1)),
    ("2nd June 2024", date(2024, 6, 2)),
    ("3rd July, 2024", date(2024, 7, 3)),
    ("12 march 2024", date(2024, 3, 12)),
    ("March 12, 2024", date(2024, 3, 12)),
    ("March 12th 2024", date(2024, 3, 12)),
    ("March 12th, 2024", date(2024, 3, 12)),
    ("Mar. 12, 2024", date(2024, 3, 12)),
    ("SEPT. 3, 2024", date(2024, 9, 3)),
    ("12-Mar-2024", date(2024, 3, 12)),
    ("25/03/2024", date(2024, 3, 25)),
    ("03/25/2024", date(2024, 3, 25)),
    ("05/05/2024", date(2024, 5, 5)),
    ("Datum: 12.03.2024", date(2024, 3, 12)),
    ("Rechnung12.03.2024", date(2024, 3, 12)),
    ("am 12.03.2024.", date(2024, 3, 12)),
    ("Köln,\u00a012.\u00a0März\u00a02024", date(2024, 3, 12)),
    ("vom 1.-3. März 2024", date(2024, 3, 3)),
]

NOT_READ = [
    "",
    "Sehr geehrte Damen und Herren",
    "112.03.2024",
    "12.03.20245",
    "2024-03-12-0001",
    "12.03.2024.5",
    "0221 12 03 2024",
    "12/03/2024",  # 12 March or December 3
    "13/13/2024",
    "30.02.2024",
    "2024-02-30",
    "31 April 2024",
    "29.02.2023",
    "12.13.2024",
    "12.03.1899",
    "1899-12-31",
    "12 Marktag 2024",
    "12. Mär 20245",
    "Version 1.2.3",
    "29.11.2026",  # tomorrow
    "Fällig am 15. Dezember 2026",
]

GERMAN_MONTHS = [
    "Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September",
    "Oktober", "November", "Dezember",
]
GERMAN_ABBREVIATIONS = [
    ("Jan.", 1), ("Feb.", 2), ("Mär.", 3), ("Apr.", 4), ("Jun.", 6), ("Jul.", 7), ("Aug.", 8),
    ("Sep.", 9), ("Sept.", 9), ("Okt.", 10), ("Nov.", 11), ("Dez.", 12),
]
ENGLISH_MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
]
ENGLISH_ABBREVIATIONS = [
    ("Jan", 1), ("Feb", 2), ("Mar", 3), ("Apr", 4), ("Jun", 6), ("Jul", 7), ("Aug", 8),
    ("Sep", 9), ("Oct", 10), ("Nov", 11), ("Dec", 12),
]

GERMAN_LETTER = """Stadtwerke Musterstadt GmbH
Postfach 10 12 34, 50667 Köln
Tel. 0221 12 03 2024
Kundennummer 123456
Rechnungsnummer 2024-0042

Köln, 14. Oktober 2026

Ihre Rechnung für Oktober 2026
Bitte überweisen Sie den Betrag von 1.234,56 EUR bis zum 28.12.2026.
"""

ENGLISH_LETTER = """ACME Supplies Ltd
Customer no. 4711-0815
Phone +44 20 7946 0958
Invoice 2026/11/001

November 3rd, 2026

Dear customer,
please pay the amount of 1,234.56 GBP by 3 December 2026.
"""


@pytest.mark.parametrize(("text", "expected"), READ, ids=[text for text, _ in READ])
def test_reads_each_format(text, expected):
    assert read_document_date(text, TODAY) == expected


@pytest.mark.parametrize("text", NOT_READ, ids=[repr(text) for text in NOT_READ])
def test_reads_no_date_without_confidence(text):
    assert read_document_date(text, TODAY) is None


def test_reads_every_month_name():
    names = ([(name, number) for number, name in enumerate(GERMAN_MONTHS, start=1)]
             + GERMAN_ABBREVIATIONS)
    for name, number in names:
        assert read_document_date(f"Köln, 7. {name} 2025", TODAY) == date(2025, number, 7), name
    names = ([(name, number) for number, name in enumerate(ENGLISH_MONTHS, start=1)]
             + ENGLISH_ABBREVIATIONS)
    for name, number in names:
        assert read_document_date(f"London, 7 {name} 2025", TODAY) == date(2025, number, 7), name
        assert read_document_date(f"{name} 7, 2025", TODAY) == date(2025, number, 7), name


def test_reads_a_german_letter_date_after_its_other_numbers():
    assert read_document_date(GERMAN_LETTER, TODAY) == date(2026, 10, 14)


def test_reads_an_english_letter_date_after_its_other_numbers():
    assert read_document_date(ENGLISH_LETTER, TODAY) == date(2026, 11, 3)


def test_skips_an_ambiguous_slash_date_for_a_later_one():
    text = "Order date 04/05/2026\nDelivered 17/05/2026\nThank you"
    assert read_document_date(text, TODAY) == date(2026, 5, 17)


def test_skips_an_impossible_date_for_a_later_one():
    assert read_document_date("30.02.2024 oder 01.03.2024", TODAY) == date(2024, 3, 1)
    assert read_document_date("31 April 2024, then 2 May 2024", TODAY) == date(2024, 5, 2)


def test_skips_a_future_date_for_a_later_one():
    text = "Zahlbar bis 15.12.2026\nErstellt am 01.11.2026"
    assert read_document_date(text, TODAY) == date(2026, 11, 1)


def test_reads_the_first_date_of_several_formats():
    text = "Invoice 12 March 2025, delivered 2025-03-01, paid 01.02.2025"
    assert read_document_date(text, TODAY) == date(2025, 3, 12)


def test_reads_a_date_ending_at_the_limit():
    text = "x" * (MAX_CHARS_READ - len("12.03.2024")) + "12.03.2024"
    assert read_document_date(text, TODAY) == date(2024, 3, 12)


def test_reads_no_date_beyond_the_limit():
    assert read_document_date("x" * MAX_CHARS_READ + " 12.03.2024", TODAY) is None


def test_reads_no_date_cut_at_the_limit():
    # Cut after `12.03.20`, the rest would read as 12 March 2020.
    text = "x" * (MAX_CHARS_READ - len("12.03.20")) + "12.03.2024"
    assert read_document_date(text, TODAY) is None


def test_reads_megabytes_of_digits_and_dots():
    assert read_document_date("12.3.45." * 655_360, TODAY) is None  # 5 MiB
    assert read_document_date("1." * 2_621_440 + "12.03.2024", TODAY) is None
