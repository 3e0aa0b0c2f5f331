"""A route's JSON answer goes to WSGI as it is (dms.web.answers.AnsweringBottle), without
Bottle's request and response objects, in dms's API and in the Paperless-ngx dialect: on the
wire, the status lines and headers clients read (HEAD as GET without the body, 204 without content
headers, errors with their own headers), and a header value that would end its line is never
written."""

from __future__ import annotations

import json
import select
import socket

import pytest

from dms import __version__
from dms.web.answers import Answer, answer
from dms.web.endpoints import render
from dms.web.jsonapi import VND, Reply
from tests.harness.documents import make_folder
from tests.harness.paperless import dialect, make


def ask(port: int, method: str, path: str, token: str | None) -> tuple[str, dict, bytes]:
    """One request on a new connection: (status line, headers but Date, the bytes after the
    headers, read until the server has sent nothing more for 0.3 s)."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close"]
    if token:
        lines.append(f"Authorization: Token {token}")
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        data = b""
        while select.select([sock], [], [], 0.3)[0]:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status, *fields = head.decode("latin-1").split("\r\n")
    headers = dict(field.split(": ", 1) for field in fields)
    headers.pop("Date")
    return status, headers, body


@pytest.mark.socket
def test_json_answers_head_no_content_and_errors_on_the_wire(server, alice):
    status, headers, body = ask(server.port, "GET", "/api/users/me/", alice.token)
    assert status == "HTTP/1.1 200 OK"
    assert json.loads(body)["data"]["attributes"]["username"] == "alice"
    assert headers == {"Content-Type": VND, "Content-Length": str(len(body)),
                       "X-Content-Type-Options": "nosniff", "Server": "dms",
                       "Connection": "close"}
    assert ask(server.port, "HEAD", "/api/users/me/", alice.token) == (status, headers, b"")

    folder = make_folder(alice, "Old letters", alice.home_id)
    assert ask(server.port, "DELETE", f"/api/nodes/{folder}/", alice.token) == (
        "HTTP/1.1 204 No Content",
        {"X-Content-Type-Options": "nosniff", "Server": "dms", "Connection": "close"}, b"")

    status, headers, body = ask(server.port, "GET", "/api/users/me/", "wrong")
    assert status == "HTTP/1.1 401 Unauthorized"
    assert headers == {"Content-Type": VND, "Www-Authenticate": "Token",  # waitress' spelling
                       "Content-Length": str(len(body)), "X-Content-Type-Options": "nosniff",
                       "Server": "dms", "Connection": "close"}
    assert json.loads(body) == {"errors": [{"status": "401", "code": "authentication_failed",
                                            "detail": "Invalid token."}]}
    # Bottle's own refusals (no route; a route without the method) still go through it.
    status, headers, body = ask(server.port, "PUT", "/api/users/me/", alice.token)
    assert (status, headers["Content-Type"]) == ("HTTP/1.1 405 Method Not Allowed", VND)
    assert json.loads(body)["errors"][0]["code"] == "method_not_allowed"
    status, _, body = ask(server.port, "GET", "/api/n%C3%B6where/", alice.token)
    assert status == "HTTP/1.1 404 Not Found"
    assert json.loads(body)["errors"][0]["code"] == "not_found"


@pytest.mark.socket
def test_the_dialects_answers_on_the_wire(server, alice):
    path = "/paperless/api/tags/"
    status, headers, body = ask(server.port, "GET", path, alice.token)
    assert status == "HTTP/1.1 200 OK"
    assert json.loads(body) == {"count": 0, "next": None, "previous": None, "all": [],
                                "results": []}
    dialect_headers = {"X-Api-Version": "10", "X-Version": headers["X-Version"],
                       "X-Dms-Version": __version__}  # waitress' spelling of X-DMS-Version
    assert headers == {**dialect_headers, "Content-Type": "application/json",
                       "Content-Length": str(len(body)), "X-Content-Type-Options": "nosniff",
                       "Server": "dms", "Connection": "close"}
    assert ask(server.port, "HEAD", path, alice.token) == (status, headers, b"")
    tag = make(dialect(alice, 10), "tags", name="Old")["id"]
    assert ask(server.port, "DELETE", f"{path}{tag}/", alice.token) == (
        "HTTP/1.1 204 No Content", {**dialect_headers, "X-Content-Type-Options": "nosniff",
                                    "Server": "dms", "Connection": "close"}, b"")
    status, headers, body = ask(server.port, "GET", path, "wrong")
    assert (status, json.loads(body)) == ("HTTP/1.1 401 Unauthorized",
                                          {"detail": "Invalid token."})
    status, headers, body = ask(server.port, "PUT", path, alice.token)
    assert (status, json.loads(body)) == ("HTTP/1.1 405 Method Not Allowed",
                                          {"detail": 'Method "PUT" not allowed.'})


def test_an_answer_has_its_type_and_length_and_a_bodiless_one_neither():
    assert render({"data": []}, VND) == Answer(
        200, [("Content-Type", VND), ("Content-Length", "11")], b'{"data":[]}')
    assert render(Reply({"a": 1}, status=201, media_type="application/json",
                        headers={"Location": "http://127.0.0.1/api/nodes/1/"}), VND) == Answer(
        201, [("Content-Type", "application/json"),
              ("Location", "http://127.0.0.1/api/nodes/1/"), ("Content-Length", "7")], b'{"a":1}')
    assert render(Reply(None, status=204, headers={"Retry-After": 5}), VND) == Answer(
        204, [("Retry-After", "5")], b"")


@pytest.mark.parametrize("value", ["a\r\nSet-Cookie: x=1", "a\nb", "a\rb", "a\0b"])
def test_a_header_value_that_would_end_its_line_is_refused(value):
    with pytest.raises(ValueError, match="the Location header's value holds a line break"):
        answer(201, {"Location": value}, b"{}")
