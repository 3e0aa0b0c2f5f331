"""A Paperless-ngx library imported (api.md §18) and read back through the Paperless-ngx dialect
(§17) by the person who owned it there, logging in with their Paperless-ngx password: the same
documents with the same titles, dates, serial numbers, tags, correspondents, types, notes and
custom field values — the answers a Paperless-ngx server gave."""

from __future__ import annotations

import subprocess
import sys

from tests.harness.paperless import API, dialect
from tests.harness.paperless_export import Doc, write_export
from tests.harness.processes import config_args, environment


def test_the_library_reads_back_the_same_through_the_dialect(admin, config, tmp_path):
    docs = [Doc(1, "ACME invoice", "Invoice 4711 from ACME", tags=[1, 2], correspondent=1,
                document_type=1, asn=7, notes=[(2, "Call back on Monday")],
                values={1: "EUR120.50", 2: "Paid"}),
            Doc(2, "Power bill", "Electricity bill for March", tags=[1], created="2024-11-02")]
    path = write_export(tmp_path / "export", "2.20.15", docs,
                        tags=[(1, "Finance"), (2, "paid", 1)], correspondents=[(1, "ACME")],
                        document_types=[(1, "Invoice")],
                        fields={1: ("Amount", "monetary", None),
                                2: ("Status", "select", ["Open", "Paid"])})
    result = subprocess.run([sys.executable, "-m", "dms", "import", "--from", "paperless",
                             str(path), *config_args(config)], env=environment(),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    alice = dialect(admin.login("alice", "alice-password"), 9)
    listed = alice.get(f"{API}/documents/?ordering=title&fields=title,created,"
                       "archive_serial_number,tags,correspondent,document_type,notes,"
                       "custom_fields,content,original_file_name").json()
    names = {kind: {item["id"]: item["name"] for item in alice.get(
        f"{API}/{kind}/").json()["results"]} for kind in ("tags", "correspondents",
                                                         "document_types", "custom_fields")}
    shown = [{**document,
              "tags": sorted(names["tags"][tag] for tag in document["tags"]),
              "correspondent": names["correspondents"].get(document["correspondent"]),
              "document_type": names["document_types"].get(document["document_type"]),
              "notes": [note["note"] for note in document["notes"]],
              "custom_fields": {names["custom_fields"][value["field"]]: value["value"]
                                for value in document["custom_fields"]}}
             for document in listed["results"]]
    assert listed["count"] == 2
    assert shown == [
        {"title": "ACME invoice", "created": "2024-05-01", "archive_serial_number": 7,
         "tags": ["Finance", "paid"], "correspondent": "ACME", "document_type": "Invoice",
         "notes": ["Call back on Monday"], "content": "Invoice 4711 from ACME",
         "original_file_name": "scan-1.pdf",
         "custom_fields": {"Amount": "EUR120.50", "Status": "opt0000000000001"}},
        {"title": "Power bill", "created": "2024-11-02", "archive_serial_number": None,
         "tags": ["Finance"], "correspondent": None, "document_type": None, "notes": [],
         "content": "Electricity bill for March", "original_file_name": "scan-2.pdf",
         "custom_fields": {}}]
