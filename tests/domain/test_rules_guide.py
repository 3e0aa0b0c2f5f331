"""The guide's three rules (docs/guide.md, "Rules: documents that file themselves") are what a
server accepts: their curl bodies, taken from the guide as they are (the folder ids put in) and read
as POST /rules/ reads a body (dms.web.jsonapi), make rules, and the invoice rule files the guide's
kind of invoice. On the fast tier: the domain's functions with the queue's workers, no server."""

from __future__ import annotations

import json
import re
from pathlib import Path

from dms.domain.rules import store
from dms.web.jsonapi import attributes_of, resource_data
from tests.harness import samples
from tests.harness.domaintier import (
    filed,
    home_id,
    inbox_id,
    new_folder,
    new_user,
    read_document,
)

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide.md"
FOLDER_IDS = ("09d6b22b-a49e-49a2-ac2a-4b271362c3cd", "5e0c7a51-8a3f-4c1e-b5a2-0d9e8f7a6b5c")


def guide_rule_bodies() -> list[str]:
    section = GUIDE.read_text().split("## Rules: documents that file themselves", 1)[1]
    section = section.split("\n## ", 1)[0]
    return re.findall(r"-d '(\{\"data\": \{\"type\": \"rules\".*?\}\}\}\})'", section, re.S)



def test_the_guides_three_rules_are_accepted_and_file_an_invoice(reading):
    bodies = guide_rule_bodies()
    assert len(bodies) == 3
    alice = new_user("alice")
    utilities = new_folder(reading, alice, "Utilities", home_id(alice))
    insurance = new_folder(reading, alice, "Insurance", home_id(alice))
    names = []
    for body in bodies:
        for placeholder, folder in zip(FOLDER_IDS, (utilities, insurance), strict=True):
            body = body.replace(placeholder, folder)
        attributes = attributes_of(resource_data(json.loads(body), "rules"))
        names.append(store.create_rule(alice, attributes).name)
    assert names == ["Utility bills", "Invoices", "Insurance"]

    invoice = samples.pdf(["ACME Tools GmbH", "Invoice INV-2026-0042"])
    document = read_document(reading, alice, "scan", "acme.pdf", invoice)
    assert filed(alice, document) == ("Invoice 2026-0042 (scan)", inbox_id(alice),
                                      ["invoice", "to pay"])
    letter = samples.pdf(["Alianz Versichemng AG", "Your policy"])
    document = read_document(reading, alice, "letter", "letter.pdf", letter)
    assert filed(alice, document) == ("letter", insurance, ["insurance"])
