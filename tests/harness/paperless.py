"""The Paperless-ngx dialect in tests: a client of the same user speaking it (its token, an API
version in the Accept header), and making one of its objects."""

from __future__ import annotations

from tests.harness.client import Client

API = "/paperless/api"
JSON = "application/json"


def dialect(client: Client, version: int | None = None, **headers: str) -> Client:
    """The client's user over the dialect (its token), asking for `version` (None: none)."""
    twin = Client(client.base_url, client.token, client.transport)
    twin.user_id, twin.username = client.user_id, client.username
    if version is not None:
        twin.session.headers["Accept"] = f"application/json; version={version}"
    twin.session.headers.update(headers)
    return twin


def make(client: Client, path: str, **body) -> dict:
    """POST /paperless/api/<path>/ that must be created; its JSON."""
    response = client.post(f"{API}/{path}/", body, media=JSON)
    assert response.status_code == 201, response.text
    return response.json()
