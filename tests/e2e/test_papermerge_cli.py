"""The real Papermerge client, papermerge-cli 0.3.3 (installed by `scripts/setup.sh --test` in a
virtualenv of its own), against a real dms: every command a user would run works unmodified,
and what it downloads is byte for byte what it imported."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.harness import samples
from tests.harness.users import USER_PASSWORD
from tests.harness.waiting import wait_indexed, wait_processed

pytestmark = pytest.mark.socket  # papermerge-cli talks to the socket; the checks too

CLI = Path(__file__).resolve().parents[2] / ".venv-papermerge-cli" / "bin" / "papermerge-cli"


def cli(server, *args, token=None, cwd=None) -> str:
    command = [str(CLI), "--host", server.url + "/"]
    if token:
        command += ["--token", token]
    # A wide terminal: rich would otherwise shorten the ids in its tables.
    env = {**os.environ, "COLUMNS": "250", "TERM": "dumb"}
    result = subprocess.run(command + list(args), capture_output=True, text=True, env=env,
                            cwd=cwd, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr, result.stdout + result.stderr
    return result.stdout


@pytest.fixture
def folder_to_import(tmp_path):
    root = tmp_path / "scans"
    (root / "2024").mkdir(parents=True)
    files = {"letter.pdf": samples.pdf(["Dear customer, your contract renewal is ready."]),
             "2024/receipt.txt": samples.text("Receipt for the garden chairs\n")}
    for name, data in files.items():
        (root / name).write_bytes(data)
    return root, files


def test_papermerge_cli_commands_work_unmodified(server, alice, folder_to_import, tmp_path):
    token = cli(server, "auth", "--username", "alice", "--password", USER_PASSWORD).strip()
    assert len(token) == 64 and int(token, 16) >= 0

    me = cli(server, "me", token=token)
    assert "Current User (username=alice/email=)" in me
    assert f"│ {alice.user_id} │ {alice.home_id} │ {alice.inbox_id} │" in me

    root, files = folder_to_import
    imported = cli(server, "import", str(root), token=token)
    assert sorted(imported.splitlines()) == sorted(
        f"Importing {root / name}" for name in ("letter.pdf", "2024/receipt.txt"))
    inbox = cli(server, "list", "--inbox", token=token)
    assert "Page=1 of 1. Total nodes=2" in inbox
    rows = [[cell.strip() for cell in line.split("│")[1:4]] for line in inbox.splitlines()
            if line.startswith("│")]
    assert [row[:2] for row in rows] == [["folders", "2024"], ["documents", "letter.pdf"]]
    home = cli(server, "list", token=token)  # .home is still empty (rich wraps the narrow title)
    assert " ".join(home.split()).startswith("Page=1 of 1. Total nodes=0")

    documents = {d["attributes"]["title"]: d["id"] for d in
                 alice.get("/api/documents/").json()["data"]}
    for document_id in documents.values():
        assert wait_processed(alice, document_id)[-1] == "succeeded"
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    saved = cli(server, "download", "--uuid", documents["letter.pdf"], token=token, cwd=downloads)
    assert saved.strip() == "Downloaded to letter.pdf"  # not "letter.pdf", quotes included
    assert (downloads / "letter.pdf").read_bytes() == files["letter.pdf"]
    saved = cli(server, "download", "--uuid", documents["receipt.txt"], token=token, cwd=downloads)
    assert (downloads / "receipt.txt").read_bytes() == files["2024/receipt.txt"]
    assert saved.strip() == "Downloaded to receipt.txt"

    wait_indexed(server.config)
    found = cli(server, "search", "--query", "garden chairs", token=token)
    assert found.splitlines() == [
        f"d\treceipt.txt\t{documents['receipt.txt']}\t/.inbox/2024/receipt.txt\t()"]

    preferences = cli(server, "pref-list", token=token)
    assert "│ ocr     │ language │ eng   │" in preferences
    updated = cli(server, "pref-update", "--section", "ocr", "--name", "language", "--value", "deu",
                  token=token)
    assert updated.strip() == "'ocr__language' successfully set to 'deu'"
    assert "│ ocr     │ language │ deu   │" in cli(server, "pref-list", token=token)
