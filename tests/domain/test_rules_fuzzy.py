"""The fuzzy algorithm's threshold (dms.domain.rules.matching.FUZZY_THRESHOLD), tuned on OCR-style
misreadings: the confusions OCR makes (rn for m, 0 for O, 1 and I for l, vv for w), a missing or
a changed letter in a longer word, a word split in two, must match; near-miss words, which are
other words, must not. Through the API's dry run on documents whose text is the misreading, so
what is tested is what a user gets."""

from __future__ import annotations

import pytest

from dms.domain.rules.matching import FUZZY_THRESHOLD
from tests.harness import samples
from tests.harness.documents import new_document, upload
from tests.harness.rules import add_rule
from tests.harness.waiting import wait_processed

MUST_MATCH = [
    ("Hamburg", "Harnburg"),  # rn for m
    ("Policy number", "P0licy nurnber"),  # 0 for O, rn for m
    ("Insurance", "lnsurance"),  # l for I
    ("Allianz", "A11ianz"),  # 1 for l
    ("Swiss Life", "Svviss Life"),  # vv for w
    ("Insurance", "Insurnce"),  # a missing letter
    ("Versicherung", "Versichemng"),  # ru read as m
    ("Stadtwerke", "Stadtwcrke"),  # a changed letter in a long word
    ("Allianz Versicherung", "Al lianz Versicherung"),  # a word split in two
    ("Krankenversicherung", "Kranken versicherung"),
]
MUST_NOT_MATCH = [
    ("Allianz", "Alliance"),
    ("Krankenkasse", "Krankenhaus"),
    ("Invoice", "invoke"),
    ("Versicherung", "Verwaltung"),
    ("Generali", "Generation"),
    ("Allianz Versicherung", "Alliance Verwaltung"),
]


def test_the_threshold_is_documented():
    assert FUZZY_THRESHOLD == 85


@pytest.fixture
def texts(alice):
    """One processed text document per case, titled by its number."""
    ids = {}
    for index, (_, text) in enumerate(MUST_MATCH + MUST_NOT_MATCH):
        document = new_document(alice, f"case {index}", alice.inbox_id)
        content = samples.text(f"Dear customer,\nyour {text} letter of today.\n")
        assert upload(alice, document, "case.txt", content).status_code == 201
        ids[index] = document
    for document in ids.values():
        assert wait_processed(alice, document)[-1] == "succeeded"
    return ids


def test_ocr_misreadings_match_and_near_misses_do_not(alice, texts):
    outcomes = {}
    for index, (pattern, text) in enumerate(MUST_MATCH + MUST_NOT_MATCH):
        rule = add_rule(alice, f"fuzzy {index}", pattern, algorithm="fuzzy",
                        actions={"add_tags": ["x"]})
        hits = alice.get(f"/api/rules/{rule['id']}/matches/?page[size]=100").json()["data"]
        matched = {hit["id"]: hit["attributes"]["rule_match"]["text"] for hit in hits}
        outcomes[(pattern, text)] = matched.get(texts[index])
    assert outcomes == {**{case: case[1] for case in MUST_MATCH},
                        **{case: None for case in MUST_NOT_MATCH}}
