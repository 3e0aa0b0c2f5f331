"""The fuzzy algorithm's threshold (dms.domain.matching.FUZZY_THRESHOLD), tuned on OCR-style
misreadings: the confusions OCR makes (rn for m, 0 for O, 1 and I for l, vv for w), a missing or
a changed letter in a longer word, a word split in two, must match; near-miss words, which are
other words, must not. Through the dry run (GET /rules/{id}/matches/, on the fast tier: the
domain's functions with the queue's workers, no server) on documents read from text files whose
text is the misreading, so what is tested is what a user gets."""

from __future__ import annotations

from dms.domain.matching import FUZZY_THRESHOLD
from dms.domain.rules import preview
from tests.harness import samples
from tests.harness.domaintier import (
    new_document,
    new_user,
    upload_file,
    wait_read,
)
from tests.harness.rules import make_rule

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



def test_ocr_misreadings_match_and_near_misses_do_not(reading):
    alice = new_user("alice")
    texts = {}  # one read text document per case, titled by its number
    for index, (_, text) in enumerate(MUST_MATCH + MUST_NOT_MATCH):
        texts[index] = new_document(reading, alice, f"case {index}")
        upload_file(reading, alice, texts[index], "case.txt",
                    samples.text(f"Dear customer,\nyour {text} letter of today.\n"))
    for document in texts.values():
        assert wait_read(document)[-1] == "succeeded"
    outcomes = {}
    for index, (pattern, text) in enumerate(MUST_MATCH + MUST_NOT_MATCH):
        rule = make_rule(alice, f"fuzzy {index}", pattern, algorithm="fuzzy",
                         actions={"add_tags": ["x"]})
        result = preview.preview(reading, alice, rule.id)
        assert (result.examined, result.documents, result.complete) == (16, 16, True)
        matched = {hit.document_id: hit.text for hit in result.hits}
        outcomes[(pattern, text)] = matched.get(texts[index])
    assert outcomes == {**{case: case[1] for case in MUST_MATCH},
                        **{case: None for case in MUST_NOT_MATCH}}
