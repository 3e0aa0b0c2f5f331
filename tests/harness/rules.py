"""Rules through the API (api.md, "Rules"): a rule's body, making one, the rule_applied events of a
document's history, a document's title, folder and tag names, a run followed to its end."""

from __future__ import annotations

from dms.db.models import Rule, User
from dms.domain.rules import store
from tests.harness.waiting import wait_for


def rule_body(name: str, pattern: str, *, algorithm: str = "any", field: str = "text",
              case_sensitive: bool = False, **attributes) -> dict:
    """A POST /rules/ body; `attributes` go in as they are (actions, order, sources, ...)."""
    match = {"field": field, "algorithm": algorithm, "pattern": pattern,
             "case_sensitive": case_sensitive}
    return {"data": {"type": "rules", "attributes": {"name": name, "match": match,
                                                     **attributes}}}


def add_rule(client, name: str, pattern: str, **options) -> dict:
    """Create a rule that must be accepted; its resource."""
    response = client.post("/api/rules/", rule_body(name, pattern, **options))
    assert response.status_code == 201, response.text
    return response.json()["data"]


def applied(client, document_id: str) -> list[dict]:
    """The details of the document's rule_applied events, oldest first."""
    events = client.get(f"/api/nodes/{document_id}/history/?page[size]=100").json()["data"]
    return [event["attributes"]["details"] for event in reversed(events)
            if event["attributes"]["action"] == "rule_applied"]


def actions(client, document_id: str) -> list[str]:
    """The actions of the document's history, oldest first."""
    events = client.get(f"/api/nodes/{document_id}/history/?page[size]=100").json()["data"]
    return [event["attributes"]["action"] for event in reversed(events)]


def filed(client, document_id: str) -> tuple[str, str, list[str]]:
    """(title, parent folder id, tag names) of a document as the API shows it."""
    data = client.get(f"/api/documents/{document_id}/").json()["data"]
    return (data["attributes"]["title"], data["relationships"]["parent"]["data"]["id"],
            [tag["name"] for tag in data["attributes"]["tags"]])


def finished_run(client, run_id: str, timeout: float = 120) -> dict:
    """The run's attributes once it succeeded or failed."""
    def ended():
        attributes = client.get(f"/api/rule-runs/{run_id}/").json()["data"]["attributes"]
        return attributes if attributes["state"] in ("succeeded", "failed") else None
    return wait_for(ended, timeout=timeout, interval=0.2, message="the run did not finish")


def many_documents(client, texts: list[str]) -> list[str]:
    """A processed text document in the inbox for each of `texts` (legacy uploads: no Tesseract,
    no second request), titled doc-0000.txt, doc-0001.txt, ...; their ids in that order."""
    ids = []
    for index, text in enumerate(texts):
        response = client.put(f"/api/document/upload/doc-{index:04d}.txt",
                              data=text.encode("utf-8"), headers={"Content-Type": "text/plain"})
        assert response.status_code == 201, response.text
        ids.append(response.json()["id"])

    def all_read():
        ended = {item["id"] for item in client.get("/api/documents").json()
                 if item["ocr_status"] in ("succeeded", "failed")}
        return ended.issuperset(ids)
    wait_for(all_read, timeout=60 + len(texts) / 5, interval=0.5,
             message="the documents were not all read")
    return ids


def make_rule(user: User, name: str, pattern: str, **options) -> Rule:
    """The fast tier's add_rule: the same body's attributes given to the domain (no server), as
    POST /rules/ gives them; the rule must be accepted."""
    return store.create_rule(user, rule_body(name, pattern, **options)["data"]["attributes"])
