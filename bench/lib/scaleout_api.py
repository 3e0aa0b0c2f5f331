"""bench/scaleout.py's clients of the web nodes: a logged-in keep-alive session per node, polling
until documents are processed, and the words and statuses of what they send and get."""

from __future__ import annotations

import math
import random
import time

import requests

PASSWORD = "bench-scaleout-pw-1"
JSONAPI = "application/vnd.api+json"
TIMEOUT = 120  # seconds, per HTTP request
POLL_SECONDS = 0.2
WORDS = ("invoice insurance contract payment reminder statement pension tax receipt warranty "
         "delivery mortgage salary rental deposit refund license premium account balance "
         "electricity telephone garage doctor pharmacy school holiday membership donation "
         "vehicle registration passport certificate subscription appliance landlord notary "
         "transfer quarterly annual").split()


class Api:
    """A keep-alive requests.Session on one web node, logged in with a token."""

    def __init__(self, url: str, token: str):
        self.url = url
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Token {token}"

    def call(self, method: str, path: str, expect: int = 200, **kwargs) -> requests.Response:
        response = self.session.request(method, self.url + path, timeout=TIMEOUT, **kwargs)
        if response.status_code != expect:
            raise RuntimeError(f"{method} {path} on {self.url}: {response.status_code} "
                               f"{response.text[:300]}")
        return response

    def get(self, path: str) -> dict:
        return self.call("GET", path).json()

    def create(self, kind: str, title: str, parent: str) -> str:
        body = {"data": {"type": kind, "attributes": {"title": title},
                         "relationships": {"parent": {"data": {"type": "folders",
                                                               "id": parent}}}}}
        response = self.call("POST", "/api/nodes/", 201, json=body,
                             headers={"Content-Type": JSONAPI})
        return response.json()["data"]["id"]

    def upload(self, document_id: str, name: str, content: bytes) -> str:
        """PUT the file; the new version's id."""
        response = self.call("PUT", f"/api/documents/{document_id}/upload/{name}", 201,
                             data=content,
                             headers={"Content-Type": "application/octet-stream",
                                      "Content-Disposition": f"attachment; filename={name}"})
        return response.json()["data"]["attributes"]["versions"][-1]["id"]

    def children(self, folder: str) -> list[dict]:
        """Every child of the folder (pages of 100)."""
        found, number = [], 1
        while True:
            body = self.get(f"/api/nodes/{folder}/?page[size]=100&page[number]={number}")
            found += body["data"]
            if len(found) >= body["meta"]["pagination"]["count"] or not body["data"]:
                return found
            number += 1

    def close(self) -> None:
        self.session.close()


def login(url: str) -> str:
    response = requests.post(url + "/api/auth/login/",
                             json={"username": "admin", "password": PASSWORD}, timeout=TIMEOUT)
    response.raise_for_status()
    return response.json()["token"]


def wait_processed(api: Api, folder: str, count: int, timeout: float) -> dict[str, int]:
    """Poll the folder's listing until `count` documents are succeeded or failed; the statuses."""
    deadline = time.monotonic() + timeout
    statuses: dict[str, int] = {}
    while time.monotonic() < deadline:
        statuses = {}
        for child in api.children(folder):
            status = child["attributes"].get("ocr_status")
            statuses[status] = statuses.get(status, 0) + 1
        if statuses.get("succeeded", 0) + statuses.get("failed", 0) >= count:
            return statuses
        time.sleep(POLL_SECONDS)
    raise RuntimeError(f"not processed within {timeout:.0f} s: {statuses}")


def percentile(ordered: list[float], fraction: float) -> float:
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


def texts_of(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(count))


def status_text(statuses: dict[str, int]) -> str:
    return ", ".join(f"{count} {status}" for status, count in sorted(statuses.items()))
