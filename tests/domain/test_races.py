"""Concurrency: check-then-write sequences hold under many threads, and no write undoes another.
Each test runs real clients in threads against a real server, then checks the whole data dir with
`dms verify`'s own checks (loops, unreachable nodes, documents whose attributes disagree with their
latest version)."""

from __future__ import annotations

import random
import threading
import time

import pytest

from dms.ops import verify
from tests.harness import samples
from tests.harness.client import JSON, Client
from tests.harness.database import unreachable
from tests.harness.documents import make_folder, new_document, upload

pytestmark = pytest.mark.socket  # racing requests on real threads through waitress

SECONDS = 6


def run_threads(targets) -> list[str]:
    """Run each callable in its own thread until SECONDS have passed; returns what went wrong."""
    problems: list[str] = []
    deadline = time.monotonic() + SECONDS
    threads = [threading.Thread(target=target, args=(deadline, problems)) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return problems


def clean(config) -> list[str]:
    """The problems `dms verify` finds in the data dir (stored files included)."""
    report = verify.run(config.data_dir)
    return [] if report.ok else report.lines()


def test_renames_during_moves_never_make_a_loop(alice, config):
    folders = [make_folder(alice, f"F{i}", alice.home_id) for i in range(5)]

    def mover(seed):
        def run(deadline, problems):
            client, rnd = Client(alice.base_url, alice.token), random.Random(seed)
            while time.monotonic() < deadline:
                moved, target = rnd.sample(folders, 2)
                if rnd.random() < 0.3:
                    target = alice.home_id
                response = client.post("/api/nodes/move/", {"nodes": [{"id": moved}],
                                                            "target_parent": {"id": target}},
                                       media=JSON)
                if response.status_code not in (200, 400):
                    problems.append(f"move: {response.status_code} {response.text}")
        return run

    def renamer(seed):
        def run(deadline, problems):
            client, rnd = Client(alice.base_url, alice.token), random.Random(seed)
            while time.monotonic() < deadline:
                folder = rnd.choice(folders)
                response = client.patch(f"/api/nodes/{folder}/", {"data": {
                    "type": "folders", "id": folder, "attributes": {"title": f"T{rnd.random()}"}}})
                if response.status_code != 200:
                    problems.append(f"rename: {response.status_code} {response.text}")
        return run

    assert run_threads([mover(1), mover(2), mover(3), renamer(4), renamer(5), renamer(6)]) == []
    assert unreachable(config) == []
    assert clean(config) == []
    for folder in folders:  # every folder still hangs below .home, with a finite breadcrumb
        crumb = alice.get(
            f"/api/folders/{folder}/", timeout=10).json()["data"]["attributes"]["breadcrumb"]
        assert crumb[0] == [".home", alice.home_id] and crumb[-1][1] == folder
    assert alice.get("/health").status_code == 200


def test_renames_during_uploads_keep_the_latest_versions_attributes(alice, config):
    document_id = new_document(alice, "report")
    bodies = [samples.text("x" * size + "\n") for size in (10, 200, 3000)]

    def uploader(deadline, problems):
        """The only thread that uploads: right after each upload, nothing may have written the
        document's attributes back from before it (a rename's stale read once did)."""
        client, rnd = Client(alice.base_url, alice.token), random.Random(7)
        while time.monotonic() < deadline:
            size = rnd.randrange(len(bodies))
            response = upload(client, document_id, f"v{size}.txt", bodies[size])
            if response.status_code != 201:
                problems.append(f"upload: {response.status_code} {response.text}")
            attributes = client.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]
            latest = attributes["versions"][-1]
            if (attributes["file_name"], attributes["size"]) != (latest["file_name"],
                                                                 latest["size"]):
                problems.append(f"stale attributes {attributes['file_name']} {attributes['size']} "
                                f"after uploading version {latest['number']}")

    def renamer(seed):
        def run(deadline, problems):
            client, rnd = Client(alice.base_url, alice.token), random.Random(seed)
            while time.monotonic() < deadline:
                response = client.patch(f"/api/nodes/{document_id}/", {"data": {
                    "type": "documents", "attributes": {"title": f"T{rnd.random()}",
                                                        "ocr": rnd.random() < 0.5}}})
                if response.status_code != 200:
                    problems.append(f"rename: {response.status_code} {response.text}")
        return run

    assert run_threads([uploader, renamer(1), renamer(2), renamer(3)]) == []
    document = alice.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]
    latest = document["versions"][-1]
    assert (document["file_name"], document["size"], document["page_count"]) == \
        (latest["file_name"], latest["size"], latest["page_count"])
    assert [v["number"] for v in document["versions"]] == \
        list(range(1, len(document["versions"]) + 1))
    assert clean(config) == []


def test_uploads_into_a_document_whose_folder_is_deleted_meanwhile(alice, config):
    """Each round: a folder with a document, deleted while uploads go into the document. Every
    upload answers 201 or 404 (never 500) and nothing is left behind."""
    problems = []
    for round_number in range(15):
        folder = make_folder(alice, f"round {round_number}", alice.home_id)
        document_id = new_document(alice, "doc", folder)
        barrier = threading.Barrier(4)

        def uploader(seed, barrier=barrier, document_id=document_id,
                     round_number=round_number):
            client = Client(alice.base_url, alice.token)
            barrier.wait()
            for attempt in range(3):
                response = upload(client, document_id, f"{seed}-{attempt}.txt",
                                  samples.text(f"round {round_number}\n"))
                if response.status_code not in (201, 404):
                    problems.append(f"upload: {response.status_code} {response.text}")

        def deleter(barrier=barrier, round_number=round_number, folder=folder):
            barrier.wait()
            time.sleep(0.002 * round_number)
            response = Client(alice.base_url, alice.token).delete(f"/api/nodes/{folder}/")
            if response.status_code != 204:
                problems.append(f"delete: {response.status_code} {response.text}")

        threads = [threading.Thread(target=uploader, args=(n,)) for n in range(3)]
        threads.append(threading.Thread(target=deleter))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert problems == []
    assert alice.get("/api/documents/").json()["meta"]["pagination"]["count"] == 0
    assert clean(config) == []


def test_usernames_that_differ_only_by_case_cannot_be_created_at_once(admin):
    names = ["carol", "Carol", "CAROL", "cArOl", "caroL", "CaRoL"]
    answers = {}

    def create(name):
        client = Client(admin.base_url, admin.token)
        answers[name] = client.post("/api/users/", {"data": {"type": "users",
                                                             "attributes": {"username": name}}})

    threads = [threading.Thread(target=create, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses = sorted(response.status_code for response in answers.values())
    assert statuses == [200] + [400] * (len(names) - 1)
    for response in answers.values():
        if response.status_code == 400:
            assert response.json() == {"errors": [{
                "detail": "A user with that username already exists.", "status": "400",
                "code": "invalid", "source": {"pointer": "/data/attributes/username"}}]}
    listed = [u["attributes"]["username"]
              for u in admin.get("/api/users/?page[size]=100").json()["data"]]
    assert len([name for name in listed if name.lower() == "carol"]) == 1


@pytest.mark.config(max_tokens_per_user=5)
def test_the_token_cap_holds_under_concurrent_creation(alice, config):
    held = alice.get("/api/tokens/").json()["meta"]["pagination"]["count"]  # alice's login token
    answers = []

    def create(number):
        client = Client(alice.base_url, alice.token)
        answers.append(client.post("/api/tokens/", {"data": {"type": "tokens", "attributes": {
            "name": f"t{number}"}}}).status_code)

    threads = [threading.Thread(target=create, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answers) == [201] * (5 - held) + [400] * (12 - 5 + held)
    assert alice.get("/api/tokens/").json()["meta"]["pagination"]["count"] == 5
    refused = alice.post("/api/tokens/", {"expiry_hours": 1}, media=JSON)
    assert refused.json() == {"errors": [{
        "detail": "You already have 5 API tokens, the most one user may hold; revoke the ones you "
                  "no longer use first.", "status": "400", "code": "invalid"}]}
    # A login at the cap still works: it revokes the oldest login token (alice's first one).
    again = alice.login("alice", "user-password-1")
    tokens = again.get("/api/tokens/").json()
    assert tokens["meta"]["pagination"]["count"] == 5
    assert alice.get("/api/users/me/").status_code == 401  # the oldest login token went
