"""The in-process transport of the tests' Client: a requests adapter that hands each request to
the callable waitress serves (`Server.wsgi_app`: the Bottle app behind the CORS and nosniff
middleware) in the calling thread, without a socket.

The WSGI environ is what waitress would build for the same request from 127.0.0.1 (path
unquoted, url_prefix split off into SCRIPT_NAME, HTTP_HOST, SERVER_NAME and SERVER_PORT of the
server's URL, so that absolute links are the same as over the socket), and the answer's headers
are completed as waitress completes them (Content-Length of a one-piece body, otherwise chunked,
Server, Date, names capitalised and sorted). The body is read from the app's iterable as the
client reads it, so streamed downloads and zips work.

What it does not do is what waitress itself does: limits on headers and bodies, parsing errors,
connection handling, proxies' headers, worker threads and their number. Tests about those use
the socket (`@pytest.mark.socket`, see tests/README.md)."""

from __future__ import annotations

import io
import sys
from email.utils import formatdate
from urllib.parse import unquote_to_bytes, urlsplit

import requests
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict
from requests.utils import get_encoding_from_headers

IDENT = "dms"  # the Server header; dms.web.server gives waitress ident="dms"
NOT_HTTP = {"CONTENT_TYPE", "CONTENT_LENGTH"}  # headers that are not HTTP_* in WSGI


def mount_point(base_url: str) -> str:
    """The prefix of every URL of the server at `base_url` (with the slash: port 80 is not 8080)."""
    parts = urlsplit(base_url)
    return f"{parts.scheme}://{parts.netloc}/"


class WsgiAdapter(BaseAdapter):
    """requests' transport for one server: `app` is the WSGI callable, `url_prefix` the server's
    DMS_URL_PREFIX (waitress' url_prefix)."""

    def __init__(self, app, url_prefix: str = ""):
        super().__init__()
        self.app = app
        self.url_prefix = url_prefix

    def send(self, request: requests.PreparedRequest, stream=False, timeout=None, verify=True,
             cert=None, proxies=None) -> requests.Response:
        environ = self.environ(request)
        answer = {}

        def start_response(status, headers, exc_info=None):
            answer["status"], answer["headers"] = status, list(headers)
            return lambda data: answer.setdefault("written", []).append(data)

        body = self.app(environ, start_response)
        chunks = iter(body)
        # As waitress does: the headers go out with the first piece of the body, so an app may
        # call start_response late; a one-piece body gets its Content-Length.
        first = b""
        for first in chunks:
            if first:
                break
        pieces = answer.pop("written", []) + [first]
        one_piece = hasattr(body, "__len__") and len(body) == 1
        headers = self.complete(answer["status"], answer["headers"],
                                len(first) if one_piece else None, request)
        response = requests.Response()
        response.status_code = int(answer["status"].split(" ", 1)[0])
        response.reason = answer["status"].partition(" ")[2]
        response.headers = CaseInsensitiveDict(headers)
        response.encoding = get_encoding_from_headers(response.headers)
        response.raw = Body(b"".join(pieces), chunks, body,
                            empty=request.method == "HEAD" or not has_body(answer["status"]))
        response.url = request.url
        response.request = request
        response.connection = self
        return response

    def environ(self, request: requests.PreparedRequest) -> dict:
        parts = urlsplit(request.url)
        path = unquote_to_bytes(parts.path or "/").decode("latin-1")
        path = "/" + path.lstrip("/")
        if self.url_prefix:
            if path == self.url_prefix:
                path = ""
            elif path.startswith(self.url_prefix + "/"):
                path = path[len(self.url_prefix):]
        data = body_bytes(request.body)
        environ = {
            "REMOTE_ADDR": "127.0.0.1",
            "REMOTE_HOST": "127.0.0.1",
            "REQUEST_METHOD": request.method.upper(),
            "SERVER_PORT": str(parts.port or (443 if parts.scheme == "https" else 80)),
            "SERVER_NAME": parts.hostname,
            "SERVER_SOFTWARE": IDENT,
            "SERVER_PROTOCOL": "HTTP/1.1",
            "SCRIPT_NAME": self.url_prefix,
            "PATH_INFO": path,
            "REQUEST_URI": request.path_url,
            "QUERY_STRING": parts.query,
            "wsgi.url_scheme": parts.scheme,
            "wsgi.version": (1, 0),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
            "wsgi.input": io.BytesIO(data),
            "wsgi.input_terminated": True,
            # The in-process client never leaves while its request is served.
            "waitress.client_disconnected": lambda: False,
        }
        # http.client sends Host first (the URL's host and port) unless the request names its
        # own; then the request's headers.
        own_host = any(name.lower() == "host" for name in request.headers)
        headers = [*([] if own_host else [("Host", parts.netloc)]), *request.headers.items()]
        chunked = False
        for name, value in headers:
            if "_" in name:  # waitress drops them (they would pose as another header)
                continue
            key = name.upper().replace("-", "_")
            if key == "TRANSFER_ENCODING":
                chunked = value.lower().endswith("chunked")
                continue  # waitress reads the chunks and hides the header
            key = key if key in NOT_HTTP else "HTTP_" + key
            environ[key] = f"{environ[key]}, {value}" if key in environ else value
        if chunked:
            environ["CONTENT_LENGTH"] = str(len(data))
        return environ

    @staticmethod
    def complete(status: str, headers: list, one_piece: int | None,
                 request: requests.PreparedRequest) -> list[tuple[str, str]]:
        """The app's headers as waitress sends them (waitress.task.Task.build_response_header)."""
        body = has_body(status)
        named = [("-".join(word.capitalize() for word in name.split("-")), value)
                 for name, value in headers]
        names = {name for name, _ in named}
        named = [(name, value) for name, value in named if body or name != "Content-Length"]
        if "Content-Length" not in names and one_piece is not None and body:
            named.append(("Content-Length", str(one_piece)))
        close = request.headers.get("Connection", "").lower() == "close"
        if not any(name == "Content-Length" for name, _ in named):
            if body:
                named.append(("Transfer-Encoding", "chunked"))
            close = True
        if close and "Connection" not in names:
            named.append(("Connection", "close"))
        named.append(("Via", IDENT) if "Server" in names else ("Server", IDENT))
        if "Date" not in names:
            named.append(("Date", formatdate(usegmt=True)))
        return sorted(named, key=lambda header: header[0])

    def close(self) -> None:
        pass


def has_body(status: str) -> bool:
    return not status.startswith(("1", "204", "304"))


def body_bytes(body) -> bytes:
    """The request's body as the socket would carry it (http.client sends str as Latin-1)."""
    if body is None:
        return b""
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode("iso-8859-1")
    if hasattr(body, "read"):
        return body.read()
    return b"".join(piece.encode() if isinstance(piece, str) else piece for piece in body)


class Body(io.RawIOBase):
    """Response.raw: the app's iterable read as the client reads it (closed, as WSGI asks,
    when the client is done or closes the response)."""

    def __init__(self, first: bytes, rest, iterable, empty: bool):
        super().__init__()
        self.buffer = bytearray() if empty else bytearray(first)
        self.rest = iter(()) if empty else rest
        self.iterable = iterable

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        while size < 0 or len(self.buffer) < size:
            piece = next(self.rest, None)
            if piece is None:
                break
            self.buffer += piece
        if size < 0:
            size = len(self.buffer)
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        if not data:
            self.close()
        return data

    def readinto(self, target) -> int:
        data = self.read(len(target))
        target[:len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            close = getattr(self.iterable, "close", None)
            if close is not None:
                close()
        super().close()
