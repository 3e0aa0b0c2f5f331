"""dms behind a reverse proxy: through a real nginx (Debian's nginx-light, started here on loopback
with TLS on a port other than 443) running the recipes exactly as docs/operations.md and
docs/scaling.md show them, every link the API returns — pagination links, a version's download_url,
the /ui/ redirect — is the public URL and answers. Without nginx: forged X-Forwarded-* headers from
anyone but the trusted proxy change no link, and what Caddy sends (no X-Forwarded-Port; the port
inside X-Forwarded-Host) is understood."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import socket
import subprocess
import time
from pathlib import Path

import pytest

from dms.cli.parser import build_parser
from dms.config import Config
from tests.harness import samples
from tests.harness.client import Client
from tests.harness.processes import free_port
from tests.harness.users import ADMIN_PASSWORD

NGINX = Path("/usr/sbin/nginx")
DOCS = Path(__file__).resolve().parent.parent.parent / "docs"
LIST_PATHS = ("/api/users/", "/api/tokens/", "/api/tags/", "/api/documents/", "/api/folders/",
              "/api/nodes/", "/api/mail-accounts/", "/api/preferences/")


def documented(doc: str, after: str, language: str) -> str:
    """The first ```language block after the text `after` in docs/<doc>, as it is."""
    text = (DOCS / doc).read_text(encoding="utf-8")
    block = re.compile(rf"^```{language}\n(.*?)^```$", re.S | re.M).search(text, text.index(after))
    assert block is not None, f"no {language} block after {after!r} in docs/{doc}"
    return block.group(1)


def replaced(text: str, changes: dict[str, str]) -> str:
    """`text` with each key replaced, each found exactly once: the rest stays the docs' own."""
    for old, new in changes.items():
        assert text.count(old) == 1, f"{old!r} is not in the documented recipe exactly once"
        text = text.replace(old, new)
    return text


@pytest.fixture
def certificate(tmp_path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (the name clients check) and its key."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec",
                    "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    return cert, key


@contextlib.contextmanager
def nginx(tmp_path: Path, port: int, http_block: str):
    """nginx in the foreground with `http_block` in its http block, everything it writes in
    tmp_path; stopped (SIGTERM, its fast shutdown) and waited for at the end."""
    if not NGINX.exists():
        pytest.fail(f"{NGINX} is missing: `scripts/setup.sh --test` installs it (Debian's "
                    "nginx-light package: sudo apt-get install nginx-light)")
    root = tmp_path / "nginx"
    root.mkdir()
    # As root, workers would run as nobody, who cannot enter pytest's private tmp dirs.
    user = "user root;\n" if os.geteuid() == 0 else ""
    temp_paths = "".join(f"    {kind}_temp_path {root / kind};\n"
                         for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    config = (f"{user}worker_processes 1;\npid {root / 'nginx.pid'};\n"
              f"error_log {root / 'error.log'} info;\nevents {{ worker_connections 64; }}\n"
              f"http {{\n    access_log {root / 'access.log'};\n{temp_paths}{http_block}}}\n")
    (root / "nginx.conf").write_text(config)
    with open(root / "output.log", "wb") as output:
        process = subprocess.Popen(
            [str(NGINX), "-p", str(root), "-e", str(root / "error.log"),
             "-c", str(root / "nginx.conf"), "-g", "daemon off;"],
            stdout=output, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                pytest.fail(f"nginx exited with {process.returncode}:\n"
                            + (root / "output.log").read_text() + (root / "error.log").read_text())
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            assert time.monotonic() < deadline, "nginx did not start listening"
            time.sleep(0.05)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def make_folder(client: Client, title: str) -> str:
    body = {"data": {"type": "folders", "attributes": {"title": title},
                     "relationships": {"parent": {"data": {"type": "folders",
                                                           "id": client.home_id}}}}}
    response = client.post("/api/nodes/", body)
    assert response.status_code == 201, response.text
    return response.json()["data"]["id"]


def uploaded_version(client: Client, data: bytes) -> dict:
    """A new document in the caller's home with `data` as its one version: that version."""
    body = {"data": {"type": "documents", "attributes": {"title": "via proxy"},
                     "relationships": {"parent": {"data": {"type": "folders",
                                                           "id": client.home_id}}}}}
    document = client.post("/api/nodes/", body)
    assert document.status_code == 201, document.text
    response = client.put(f"/api/documents/{document.json()['data']['id']}/upload/note.txt",
                          data=data, headers={"Content-Type": "application/octet-stream",
                                              "Content-Disposition": "attachment; filename=x"})
    assert response.status_code == 201, response.text
    [version] = response.json()["data"]["attributes"]["versions"]
    return version


def page_links(url: str, pages: int, number: int, size: int | None = None) -> dict:
    """The whole `links` of page `number` of `pages` at `url`."""
    sized = f"page[size]={size}&" if size else ""

    def link(n):
        return f"{url}?{sized}page[number]={n}" if n is not None else None

    return {"first": link(1), "last": link(pages),
            "next": link(number + 1 if number < pages else None),
            "prev": link(number - 1 if number > 1 else None)}


def assert_every_link_answers(client: Client, base: str) -> None:
    """What a client of `base` (the public URL, prefix included) sees: every link the API
    returns is `base` + the path, and answers."""
    for index in range(12):
        make_folder(client, f"folder {index:02d}")
    url = f"{base}/api/nodes/{client.home_id}/"
    listing = client.get(f"/api/nodes/{client.home_id}/?page[size]=5")
    assert listing.status_code == 200, listing.text
    assert listing.json()["links"] == page_links(url, 3, 1, size=5)
    following = client.get(listing.json()["links"]["next"])
    assert (following.status_code, following.json()["links"]) == (200, page_links(url, 3, 2, 5))
    last = client.get(listing.json()["links"]["last"])
    assert (last.status_code, last.json()["links"]) == (200, page_links(url, 3, 3, 5))
    assert [node["attributes"]["title"] for node in last.json()["data"]] == \
        ["folder 10", "folder 11"]

    data = samples.text("through the proxy\n")
    version = uploaded_version(client, data)
    assert version["download_url"] == f"{base}/api/document-versions/{version['id']}/download/"
    download = client.get(version["download_url"])
    assert (download.status_code, download.content) == (200, data)
    again = client.get(f"/api/document-versions/{version['id']}/").json()["data"]["attributes"]
    assert again["download_url"] == version["download_url"]

    for path in LIST_PATHS:
        response = client.get(path)
        assert response.status_code == 200, (path, response.text)
        links = response.json()["links"]
        pages = response.json()["meta"]["pagination"]["pages"]
        assert links == page_links(base + path, pages, 1), path
        assert client.get(links["last"]).status_code == 200, path

    page = client.get("/ui/", allow_redirects=False)
    assert (page.status_code, page.headers["Location"]) == (302, f"{base}/")
    assert client.get(page.headers["Location"]).status_code == 200


def documented_serve() -> Config:
    """The settings of the `dms serve` line beside the nginx recipe."""
    line = documented("operations.md", "## Behind a reverse proxy", "sh").strip()
    argv = shlex.split(line)
    assert argv[:2] == [".venv/bin/dms", "serve"], line
    return Config.load(vars(build_parser().parse_args(argv[1:])), environ={})


@pytest.mark.config(trusted_proxy="127.0.0.1", url_prefix="/dms")
def test_through_nginx_under_a_prefix_on_another_port(server, config, certificate, tmp_path):
    served = documented_serve()
    assert (served.trusted_proxy, served.url_prefix) == (config.trusted_proxy, config.url_prefix)
    location = replaced(documented("operations.md", "## Behind a reverse proxy", "nginx"),
                        {"127.0.0.1:8000": f"127.0.0.1:{server.port}"})
    cert, key = certificate
    port = free_port()
    assert port != 443
    block = (f"server {{\n    listen 127.0.0.1:{port} ssl;\n    server_name 127.0.0.1;\n"
             f"    ssl_certificate {cert};\n    ssl_certificate_key {key};\n{location}}}\n")
    with nginx(tmp_path, port, block):
        base = f"https://127.0.0.1:{port}/dms"
        admin = Client(base, verify=str(cert)).login("admin", ADMIN_PASSWORD)
        assert_every_link_answers(admin, base)
        # nginx's own redirect of the bare prefix keeps the port too.
        page = admin.get(f"https://127.0.0.1:{port}/dms")
        assert (page.status_code, page.url) == (200, f"{base}/")


@pytest.mark.config(trusted_proxy="127.0.0.1")
def test_through_the_load_balancer_recipe(server, certificate, tmp_path):
    cert, key = certificate
    port = free_port()
    node = f"127.0.0.1:{server.port}"  # both nodes of the recipe: the one test server
    block = replaced(documented("scaling.md", "**nginx in front of the web nodes**", "nginx"), {
        "10.0.0.11:8000": node, "10.0.0.12:8000": node,
        "listen 443 ssl;": f"listen 127.0.0.1:{port} ssl;",
        "/etc/ssl/certs/dms.example.lan.pem": str(cert),
        "/etc/ssl/private/dms.example.lan.key": str(key)})
    with nginx(tmp_path, port, block):
        base = f"https://127.0.0.1:{port}"
        admin = Client(base, verify=str(cert)).login("admin", ADMIN_PASSWORD)
        assert_every_link_answers(admin, base)


def links_seen(client: Client, headers: dict) -> tuple[str, str, str]:
    """The first page link of the users, a version's download_url and the /ui/ redirect, as
    answered to a request carrying `headers`."""
    first = client.get("/api/users/", headers=headers).json()["links"]["first"]
    body = {"data": {"type": "documents", "attributes": {"title": "d"},
                     "relationships": {"parent": {"data": {"type": "folders",
                                                           "id": client.home_id}}}}}
    document_id = client.post("/api/nodes/", body).json()["data"]["id"]
    upload = client.put(f"/api/documents/{document_id}/upload/n.txt",
                        data=samples.text("forwarded\n"),
                        headers={**headers, "Content-Type": "application/octet-stream",
                                 "Content-Disposition": "attachment; filename=n.txt"})
    download_url = upload.json()["data"]["attributes"]["versions"][0]["download_url"]
    redirect = client.get("/ui/", headers=headers, allow_redirects=False).headers["Location"]
    return first, download_url, redirect


FORGED = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example:8443",
          "X-Forwarded-Port": "9999", "X-Forwarded-For": "203.0.113.9"}


def test_forged_forwarded_headers_change_nothing_without_a_trusted_proxy(admin, server):
    first, download_url, redirect = links_seen(admin, FORGED)
    origin = f"http://127.0.0.1:{server.port}"
    version_id = download_url.split("/")[-3]
    assert (first, download_url, redirect) == (
        f"{origin}/api/users/?page[number]=1",
        f"{origin}/api/document-versions/{version_id}/download/", f"{origin}/")
    assert admin.get(download_url).status_code == 200


@pytest.mark.config(trusted_proxy="127.0.0.1")
@pytest.mark.parametrize("headers, origin", [
    # Caddy on 8443: no X-Forwarded-Port; Host and X-Forwarded-Host carry the port.
    ({"Host": "docs.example.org:8443", "X-Forwarded-Host": "docs.example.org:8443",
      "X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"},
     "https://docs.example.org:8443"),
    # Caddy on 443, and a client that wrote the default port: it is left out.
    ({"Host": "docs.example.org", "X-Forwarded-Host": "docs.example.org",
      "X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"}, "https://docs.example.org"),
    ({"Host": "docs.example.org:443", "X-Forwarded-Host": "docs.example.org:443",
      "X-Forwarded-Proto": "https"}, "https://docs.example.org"),
    # The nginx recipe's headers, on 8443 and on 443.
    ({"Host": "docs.example.org", "X-Forwarded-Host": "docs.example.org",
      "X-Forwarded-Port": "8443", "X-Forwarded-Proto": "https"}, "https://docs.example.org:8443"),
    ({"Host": "docs.example.org", "X-Forwarded-Host": "docs.example.org",
      "X-Forwarded-Port": "443", "X-Forwarded-Proto": "https"}, "https://docs.example.org"),
    # X-Forwarded-Port without X-Forwarded-Host (waitress then leaves Host alone).
    ({"Host": "docs.example.org", "X-Forwarded-Port": "8443", "X-Forwarded-Proto": "https"},
     "https://docs.example.org:8443"),
    # Plain http on port 80, and an IPv6 literal.
    ({"Host": "docs.example.org", "X-Forwarded-Host": "docs.example.org",
      "X-Forwarded-Port": "80", "X-Forwarded-Proto": "http"}, "http://docs.example.org"),
    ({"Host": "[2001:db8::1]:8443", "X-Forwarded-Host": "[2001:db8::1]:8443",
      "X-Forwarded-Proto": "https"}, "https://[2001:db8::1]:8443"),
], ids=["caddy-8443", "caddy-443", "default-port-written", "nginx-8443", "nginx-443",
        "port-without-host", "http-80", "ipv6"])
def test_what_the_trusted_proxy_forwards_makes_the_links(admin, headers, origin):
    first, download_url, redirect = links_seen(admin, headers)
    version_id = download_url.split("/")[-3]
    assert (first, download_url, redirect) == (
        f"{origin}/api/users/?page[number]=1",
        f"{origin}/api/document-versions/{version_id}/download/", f"{origin}/")
