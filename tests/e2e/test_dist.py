"""The PyInstaller one-dir build: it builds, and `dist/dms/dms serve` runs the whole appliance
(migrations, API, web page, OCR with the system's Tesseract, PDFs in the bundle's own reader
processes, the tantivy search index) from inside the bundle."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest
import requests

from tests.harness import samples
from tests.harness.client import Client
from tests.harness.waiting import wait_for, wait_processed

# The executable with its defaults.
# Sockets (pytest-socket): the executable serves, asked over HTTP.
pytestmark = [pytest.mark.sqlite_only, pytest.mark.enable_socket]

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_built_executable_serves_and_ocrs(tmp_path):
    build = subprocess.run([str(ROOT / "scripts" / "dist"), "--distpath", str(tmp_path / "dist"),
                            "--workpath", str(tmp_path / "build")],
                           capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-2000:]
    executable = tmp_path / "dist" / "dms" / "dms"
    assert executable.is_file() and os.access(executable, os.X_OK)

    env = {k: v for k, v in os.environ.items() if not k.startswith("DMS_")}
    env["DMS_ADMIN_PASSWORD"] = "bundle-password"
    process = subprocess.Popen([str(executable), "serve", "--port", "0", "--data-dir",
                                str(tmp_path / "data")], env=env, cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        def listening():  # each look reads one line (blocking): no pause between looks
            match = re.search(r"dms listening on (http://\S+)", process.stdout.readline())
            return match.group(1) if match else None

        url = wait_for(listening, timeout=60, interval=0, message="the executable did not start")
        assert url, "the executable did not start"
        admin = Client(url).login("admin", "bundle-password")
        scan = admin.put("/api/document/upload/scan.png",
                         data=samples.png("Bundled Tesseract Works"))
        assert scan.status_code == 201
        assert wait_processed(admin, scan.json()["id"])[-1] == "succeeded"
        assert admin.get(f"/api/documents/{scan.json()['id']}/ocr-text").json() == {
            "text": "Bundled Tesseract Works"}
        # PDFs are read by the bundle's own PDF reader processes (the executable runs them).
        paper = admin.put("/api/document/upload/paper.pdf",
                          data=samples.pdf(["Read by the bundled PDF reader"]))
        assert paper.status_code == 201, paper.text
        assert wait_processed(admin, paper.json()["id"])[-1] == "succeeded"
        assert admin.get(f"/api/documents/{paper.json()['id']}/ocr-text").json() == {
            "text": "Read by the bundled PDF reader"}

        def found_words():  # the indexer catches up in moments
            response = admin.get("/api/search/", params={"q": "bundled tess"})
            return response.json() if response.status_code == 200 else []

        # The bundled tantivy index finds the OCRed words.
        found = wait_for(found_words, timeout=30, interval=0.1, message="search found nothing")
        assert [(r["title"], r["highlight"]) for r in found] == [
            ("scan.png", "<em>Bundled</em> <em>Tesseract</em> Works")]
        page = requests.get(url + "/")
        assert page.status_code == 200 and "<title>dms</title>" in page.text
        app = re.search(r'src="(static/[0-9a-f]{16}/app\.js)"', page.text).group(1)
        assert requests.get(f"{url}/{app}").status_code == 200
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    assert process.returncode == 0
