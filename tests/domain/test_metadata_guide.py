"""The guide's invoice (docs/guide.md, "What a document is about"): its bodies, taken from the
guide as they are, make the names and fields; an invoice is filed as the guide files it; the
guide's query for every unpaid invoice of 2024 finds exactly those. Through the API."""

from __future__ import annotations

import re
from pathlib import Path

from tests.harness.documents import new_document

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide.md"


def guide_section() -> str:
    section = GUIDE.read_text().split("## What a document is about", 1)[1]
    return section.split("\n## ", 1)[0]


def test_the_guides_invoices_are_filed_and_the_unpaid_ones_of_2024_found(alice):
    section = guide_section()
    bodies = re.findall(r"(api/[a-z-]+/) \\\n  -d '(\{.*?\}\}\})'", section)
    assert [path for path, _ in bodies] == ["api/correspondents/", "api/document-types/",
                                            "api/custom-fields/", "api/custom-fields/",
                                            "api/custom-fields/"]
    made = []
    for path, body in bodies:
        response = alice.request("POST", f"/{path}", data=body.encode(),
                                 headers={"Content-Type": "application/vnd.api+json"})
        assert response.status_code == 201, response.text
        made.append(response.json()["data"]["id"])
    _, invoice, amount, due, paid = made
    titles = {}
    for title, date, is_paid in (("Strom 2024-03", "2024-03-12", False),
                                 ("Strom 2024-02", "2024-02-12", True),
                                 ("Strom 2023-12", "2023-12-12", False)):
        document = new_document(alice, title)
        response = alice.patch(f"/api/documents/{document}/", {"data": {
            "type": "documents", "attributes": {
                "document_type": invoice, "document_date": date, "custom_fields": [
                    {"field": amount, "value": "80.00"}, {"field": due, "value": "2024-04-30"},
                    {"field": paid, "value": is_paid}]}}})
        assert response.status_code == 200, response.text
        titles[document] = title
    assert response.json()["data"]["attributes"]["custom_fields"] == [
        {"field": amount, "value": "EUR80.00"}, {"field": due, "value": "2024-04-30"},
        {"field": paid, "value": False}]
    parameters = {name: value for _, name, value in re.findall(
        r"--data-urlencode (['\"])([a-z_]+)=(.*?)\1", section)}
    assert parameters.pop("document_type") == "$invoice"
    found = alice.get("/api/documents/", params={**parameters, "document_type": invoice})
    assert found.status_code == 200, found.text
    assert [item["attributes"]["title"] for item in found.json()["data"]] == ["Strom 2024-03"]
