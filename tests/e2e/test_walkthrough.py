"""docs/walkthrough.sh, the script of docs/guide.md's "A script, start to finish", runs verbatim:
bash runs the file itself, with curl and jq, against a real server of the suite, and the guide shows
exactly the file's text, so neither can drift from the API."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.harness import samples
from tests.harness.users import USER_PASSWORD

ROOT = Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "docs" / "walkthrough.sh"
GUIDE = ROOT / "docs" / "guide.md"
# The script's text sits in the guide between these two lines, in a ```sh block.
OPENING = b"<!-- walkthrough.sh -->\n```sh\n"
CLOSING = b"```\n<!-- /walkthrough.sh -->\n"
# What the script needs besides bash and coreutils (mktemp, seq, sha256sum).
TOOLS = ("curl", "jq")
TEXT = "Electricity invoice November 2026, Stadtwerke"


@pytest.mark.sqlite_only  # no database
def test_the_guide_shows_the_script_byte_for_byte():
    guide = GUIDE.read_bytes()
    assert guide.count(OPENING) == 1 and guide.count(CLOSING) == 1, (
        f"docs/guide.md needs the script once, between {OPENING!r} and {CLOSING!r}")
    start = guide.index(OPENING) + len(OPENING)
    shown = guide[start:guide.index(CLOSING, start)]
    assert shown == SCRIPT.read_bytes(), (
        "the script in docs/guide.md differs from docs/walkthrough.sh: copy the file into the "
        "block between the markers")


def test_the_walkthrough_runs_against_a_real_server(server, alice, tmp_path):
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    assert not missing, (f"{' and '.join(missing)} missing: the walkthrough test runs "
                         f"docs/walkthrough.sh with them; scripts/setup.sh --test installs them")
    letter = tmp_path / "letter.pdf"
    letter.write_bytes(samples.pdf([TEXT]))
    environment = {key: value for key, value in os.environ.items() if not key.startswith("DMS_")}
    environment.update(DMS_URL=server.url, DMS_USER="alice", DMS_PASSWORD=USER_PASSWORD,
                       FILE=str(letter))

    run = subprocess.run(["bash", str(SCRIPT)], env=environment, cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)

    assert run.returncode == 0, f"stdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    assert run.stderr == ""
    folders = alice.get(f"/api/nodes/{alice.home_id}/").json()["data"]
    assert [(node["type"], node["attributes"]["title"]) for node in folders] == [
        ("folders", "Walkthrough")]
    children = alice.get(f"/api/nodes/{folders[0]['id']}/").json()["data"]
    assert [(node["type"], node["attributes"]["title"]) for node in children] == [
        ("documents", "letter.pdf")]
    document_id = children[0]["id"]
    lines = run.stdout.splitlines()
    assert lines[-1] == f"OK {document_id}"
    assert 'searching for "Electricity" found "letter.pdf"' in lines
    document = alice.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]
    assert (document["ocr_status"], document["file_name"], document["size"]) == (
        "succeeded", "letter.pdf", letter.stat().st_size)
    text = alice.get(f"/api/documents/{document_id}/ocr-text").json()["text"]
    assert TEXT in text
