"""OCR languages (api.md §22, "Languages"): DMS_OCR_LANG's default read from the installed
languages, several languages (`deu+eng`) wherever a language is accepted — the caller's
preference, a new document, "Read again" — and the refusals naming the part at fault."""

from __future__ import annotations

import pytest

from dms.config import Config
from dms.processing import languages
from tests.harness import samples
from tests.harness.client import JSON, assert_error
from tests.harness.database import snapshot
from tests.harness.documents import new_document, upload_accepted
from tests.harness.waiting import wait_processed

INSTALLED = "installed languages: deu, eng (combine them with +, e.g. eng+deu)."


def document_body(parent: str, **attributes) -> dict:
    return {"data": {"type": "documents", "attributes": {"title": "Bescheid", **attributes},
                     "relationships": {"parent": {"data": {"type": "folders", "id": parent}}}}}


def test_the_default_is_every_installed_language_among_eng_and_deu():
    # This machine's set-up installs both (scripts/setup.sh): the default reads both.
    assert languages.installed_languages() == ("deu", "eng")
    assert languages.default_lang() == "eng+deu"
    assert Config.load({}, {}).ocr_lang == ""  # unset: resolved by the runtime
    assert Config.load({}, {"DMS_OCR_LANG": "deu"}).ocr_lang == "deu"


@pytest.mark.config(ocr_lang="")
def test_an_unset_dms_ocr_lang_reads_english_and_german(alice):
    assert alice.get("/api/ocr-languages/").json() == {"languages": ["deu", "eng"],
                                                       "default": "eng+deu"}
    created = alice.post("/api/nodes/", document_body(alice.home_id))
    assert created.json()["data"]["attributes"]["lang"] == "eng+deu"
    preference = alice.get("/api/preferences/ocr__language/").json()["data"]["attributes"]
    assert (preference["default"], preference["value"]) == ("eng+deu", "eng+deu")


@pytest.mark.config(ocr_lang="deu")
def test_an_explicit_dms_ocr_lang_wins(alice):
    assert alice.get("/api/ocr-languages/").json()["default"] == "deu"
    created = alice.post("/api/nodes/", document_body(alice.home_id))
    assert created.json()["data"]["attributes"]["lang"] == "deu"


def test_the_preference_takes_several_languages(alice, bob):
    changed = alice.patch("/api/preferences/ocr__language/",
                          {"data": {"type": "preferences", "attributes": {"value": "deu+eng"}}})
    assert changed.status_code == 200
    assert changed.json()["data"]["attributes"]["value"] == "deu+eng"
    created = alice.post("/api/nodes/", document_body(alice.home_id))
    assert created.json()["data"]["attributes"]["lang"] == "deu+eng"
    # Bob's own preference is untouched.
    assert bob.get("/api/preferences/ocr__language/").json()["data"]["attributes"]["value"] == \
        "eng"


def test_bad_languages_are_refused_naming_the_part_at_fault_and_change_nothing(alice, config):
    alice.post("/api/preferences/bulk/", {"ocr__language": "deu+eng"}, media=JSON)
    document_id = new_document(alice)
    upload_accepted(alice, document_id, "note.txt", samples.text("a note\n"))
    wait_processed(alice, document_id)
    refusals = [
        ("deu+xx", "Unknown OCR language 'xx'; " + INSTALLED),
        ("osd", "Unknown OCR language 'osd'; " + INSTALLED),
        ("eng+", "Unknown OCR language ''; " + INSTALLED),
        ("eng+eng", "'eng+eng' names a language twice; name each once."),
        ("eng+deu+eng+deu+eng+deu",
         "At most 5 OCR languages may be combined; 'eng+deu+eng+deu+eng+deu' names 6."),
        ("", "An OCR language is required, e.g. eng, or deu+eng for several."),
        (7, "An OCR language is required, e.g. eng, or deu+eng for several."),
    ]
    before = snapshot(config)
    for value, detail in refusals:
        assert_error(alice.patch("/api/preferences/ocr__language/", {
            "data": {"type": "preferences", "attributes": {"value": value}}}),
            400, "invalid", detail, "/data/attributes/value")
        assert_error(alice.post("/api/preferences/bulk/", {"ocr__language": value}, media=JSON),
                     400, "invalid", detail, "/ocr__language", media=JSON)
        assert_error(alice.post("/api/nodes/", document_body(alice.home_id, lang=value)),
                     400, "invalid", detail, "/data/attributes/lang")
        assert_error(alice.post("/api/ocr/", {"doc_id": document_id, "lang": value}, media=JSON),
                     400, "invalid", detail, "/lang", media=JSON)
    assert snapshot(config) == before
    assert alice.get("/api/preferences/ocr__language/").json()["data"]["attributes"]["value"] == \
        "deu+eng"


def test_a_german_letter_read_in_german_and_english_keeps_its_umlauts(alice):
    """Uploaded into a document made with lang deu+eng, then read again in English alone: the
    point of the languages is the difference."""
    created = alice.post("/api/nodes/", document_body(alice.home_id, lang="deu+eng"))
    document_id = created.json()["data"]["id"]
    upload_accepted(alice, document_id, "bescheid.png", samples.letter())
    assert wait_processed(alice, document_id)[-1] == "succeeded"
    text = alice.get(f"/api/documents/{document_id}/ocr-text").json()["text"]
    assert [line for line in text.splitlines() if line.strip()] == list(samples.GERMAN_LETTER)

    rerun = alice.post("/api/ocr/", {"doc_id": document_id, "lang": "eng"}, media=JSON)
    assert rerun.json() == {"status": "queued", "doc_id": document_id, "lang": "eng"}
    assert wait_processed(alice, document_id)[-1] == "succeeded"
    english = alice.get(f"/api/documents/{document_id}/ocr-text").json()["text"]
    lines = [line for line in english.splitlines() if line.strip()]
    assert len(lines) == 3 and lines[2] == "berechnen wir die Gebuhren wie folgt."
    assert not any(letter in english for letter in "äöüß")

    again = alice.post("/api/ocr/", {"doc_id": document_id, "lang": "eng+deu"}, media=JSON)
    assert again.json()["lang"] == "eng+deu"
    assert wait_processed(alice, document_id)[-1] == "succeeded"
    text = alice.get(f"/api/documents/{document_id}/ocr-text").json()["text"]
    assert [line for line in text.splitlines() if line.strip()] == list(samples.GERMAN_LETTER)
