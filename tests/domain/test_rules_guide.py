"""The guide's three rules (docs/guide.md, "Rules: documents that file themselves") are what a
server accepts: their curl bodies, taken from the guide as they are (the folder ids put in), make
rules, and the invoice rule files the guide's kind of invoice."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.harness import samples
from tests.harness.documents import make_folder, new_document, upload
from tests.harness.rules import filed
from tests.harness.waiting import wait_processed

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide.md"
FOLDER_IDS = ("09d6b22b-a49e-49a2-ac2a-4b271362c3cd", "5e0c7a51-8a3f-4c1e-b5a2-0d9e8f7a6b5c")


def guide_rule_bodies() -> list[str]:
    section = GUIDE.read_text().split("## Rules: documents that file themselves", 1)[1]
    section = section.split("\n## ", 1)[0]
    return re.findall(r"-d '(\{\"data\": \{\"type\": \"rules\".*?\}\}\}\})'", section, re.S)


def test_the_guides_three_rules_are_accepted_and_file_an_invoice(alice):
    bodies = guide_rule_bodies()
    assert len(bodies) == 3
    utilities = make_folder(alice, "Utilities", alice.home_id)
    insurance = make_folder(alice, "Insurance", alice.home_id)
    names = []
    for body in bodies:
        for placeholder, folder in zip(FOLDER_IDS, (utilities, insurance), strict=True):
            body = body.replace(placeholder, folder)
        response = alice.post("/api/rules/", json.loads(body))
        assert response.status_code == 201, response.text
        names.append(response.json()["data"]["attributes"]["name"])
    assert names == ["Utility bills", "Invoices", "Insurance"]

    invoice = samples.pdf(["ACME Tools GmbH", "Invoice INV-2026-0042"])
    document = new_document(alice, "scan", alice.inbox_id)
    assert upload(alice, document, "acme.pdf", invoice).status_code == 201
    assert wait_processed(alice, document)[-1] == "succeeded"
    assert filed(alice, document) == ("Invoice 2026-0042 (scan)", alice.inbox_id,
                                      ["invoice", "to pay"])
    letter = samples.pdf(["Alianz Versichemng AG", "Your policy"])
    document = new_document(alice, "letter", alice.inbox_id)
    assert upload(alice, document, "letter.pdf", letter).status_code == 201
    assert wait_processed(alice, document)[-1] == "succeeded"
    assert filed(alice, document) == ("letter", insurance, ["insurance"])
