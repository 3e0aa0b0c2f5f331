"""The HTTP client of the tests (a requests.Session bound to a server's URL, with a token, over
the socket or in-process) and the assert helpers for the API's answers: media types, the whole
error envelope."""

from __future__ import annotations

import json

import requests

from tests.harness.inprocess import mount_point

VND = "application/vnd.api+json"
JSON = "application/json"
NOT_FOUND = {"errors": [{"detail": "Not found.", "status": "404", "code": "not_found"}]}


class Client:
    """requests.Session bound to the server's base URL, with an optional token. `transport`: a
    requests adapter for every URL of that server (tests.harness.inprocess.WsgiAdapter calls the
    app in-process); None goes over the socket. `verify`: the CA file of an https server (a test
    proxy's self-signed certificate). Clients made from this one keep both."""

    def __init__(self, base_url: str, token: str | None = None, transport=None,
                 verify: str | None = None):
        self.base_url = base_url
        self.session = requests.Session()
        self.verify = verify
        self.transport = transport
        if transport is not None:
            self.session.mount(mount_point(base_url), transport)
        self.token = token
        self.user_id: str | None = None
        self.home_id: str | None = None
        self.inbox_id: str | None = None
        self.shared_id: str | None = None
        self.username: str | None = None

    def request(self, method: str, path: str, *, json_body=None, media: str | None = None,
                data: bytes | None = None, headers: dict | None = None, **kwargs):
        headers = dict(headers or {})
        if self.token is not None:
            headers.setdefault("Authorization", f"Token {self.token}")
        if json_body is not None:
            data = json.dumps(json_body).encode()
            headers.setdefault("Content-Type", media or VND)
        url = path if path.startswith("http") else self.base_url + path
        if self.verify is not None:  # per request: REQUESTS_CA_BUNDLE would beat the session's
            kwargs.setdefault("verify", self.verify)
        kwargs.setdefault("timeout", 120)  # a hung server fails the test instead of hanging it
        return self.session.request(method, url, data=data, headers=headers, **kwargs)

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, json_body=body, **kw)

    def patch(self, path, body=None, **kw):
        return self.request("PATCH", path, json_body=body, **kw)

    def put(self, path, **kw):
        return self.request("PUT", path, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)

    def as_anonymous(self) -> Client:
        return Client(self.base_url, transport=self.transport, verify=self.verify)

    def login(self, username: str, password: str) -> Client:
        response = self.as_anonymous().post("/api/auth/login/",
                                            {"username": username, "password": password},
                                            media=JSON)
        assert response.status_code == 200, response.text
        client = Client(self.base_url, response.json()["token"], self.transport, self.verify)
        me = client.get("/api/users/me/").json()["data"]
        client.user_id = me["id"]
        client.username = me["attributes"]["username"]
        client.home_id = me["relationships"]["home_folder"]["data"]["id"]
        client.inbox_id = me["relationships"]["inbox_folder"]["data"]["id"]
        client.shared_id = me["relationships"]["shared_folder"]["data"]["id"]
        return client


def error(status: int, code: str, detail: str, pointer: str | None = None) -> dict:
    """The whole expected error envelope."""
    entry = {"detail": detail, "status": str(status), "code": code}
    if pointer is not None:
        entry["source"] = {"pointer": pointer}
    return {"errors": [entry]}


def assert_error(response, status: int, code: str, detail: str, pointer: str | None = None,
                 media: str = VND) -> None:
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"] == media
    assert response.json() == error(status, code, detail, pointer)
