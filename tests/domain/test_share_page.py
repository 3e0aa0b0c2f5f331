"""The public page of a share link (api.md, "Share links") through real HTTP, without a session or
a token: each state of a link (fresh, wrong password, right password, used up, expired, revoked,
unknown, its node in the trash), the slowing of wrong guesses, a folder's link, the download cap
under many visitors at once, the security headers, that nothing else leaks, and the history."""

from __future__ import annotations

import io
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from tests.domain.test_share_links import ahead, make_link
from tests.harness.documents import make_folder, new_document, upload_accepted

pytestmark = pytest.mark.socket

LETTER = b"Dear landlord, the heating is broken."
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")


def visit(url: str, method: str = "GET", **kwargs) -> requests.Response:
    """A visitor's request: a fresh connection, no session, no token, no redirects followed."""
    return requests.request(method, url, timeout=60, allow_redirects=False, **kwargs)


@pytest.fixture
def letter(alice) -> str:
    document = new_document(alice, "Letter to the landlord")
    upload_accepted(alice, document, "letter.txt", LETTER)
    return document


def share_events(client, node_id: str) -> list[dict]:
    return [event["attributes"]["details"] for event in
            client.get(f"/api/nodes/{node_id}/history/").json()["data"]
            if event["attributes"]["action"] == "share_accessed"]


def test_a_document_link_without_a_password(alice, letter):
    link = make_link(alice, node=letter, expires_at=ahead(2))
    url = link["attributes"]["url"]
    page = visit(url)
    assert page.status_code == 200
    assert page.headers["Content-Type"] == "text/html; charset=utf-8"
    assert page.headers["Content-Security-Policy"] == CSP
    for name, value in (("X-Frame-Options", "DENY"), ("Referrer-Policy", "no-referrer"),
                        ("X-Content-Type-Options", "nosniff"), ("Cache-Control", "no-store"),
                        ("X-Robots-Tag", "noindex, nofollow")):
        assert page.headers[name] == value
    assert "<h1>Letter to the landlord</h1>" in page.text
    assert "letter.txt · 37 bytes" in page.text
    assert f'href="{url}/download/"' in page.text
    assert "alice" not in page.text  # not the owner, nothing else of theirs
    assert "<script" not in page.text
    download = visit(url + "/download/")
    assert download.status_code == 200
    assert download.content == LETTER
    assert download.headers["Content-Disposition"] == "attachment; filename=letter.txt"
    assert download.headers["Content-Security-Policy"] == CSP
    # A HEAD and a resumed download are not counted; a whole one is.
    assert visit(url + "/download/", "HEAD").status_code == 200
    part = visit(url + "/download/", headers={"Range": "bytes=5-"})
    assert (part.status_code, part.content) == (206, LETTER[5:])
    attributes = alice.get(f"/api/share-links/{link['id']}/").json()["data"]["attributes"]
    assert attributes["downloads"] == 1
    assert attributes["last_accessed_at"] is not None
    assert share_events(alice, letter) == [
        {"link": link["id"], "what": "download", "document": letter},
        {"link": link["id"], "what": "page"}]
    # A second view within the minute is not another event.
    assert visit(url).status_code == 200
    assert len(share_events(alice, letter)) == 2


def test_a_password_first_and_wrong_guesses_slowed(alice, letter):
    link = make_link(alice, node=letter, expires_at=ahead(2), password="correct horse")
    url = link["attributes"]["url"]
    form = visit(url)
    assert form.status_code == 200
    assert '<form method="post" action="' + url + '">' in form.text
    assert 'type="password"' in form.text
    assert "Letter to the landlord" not in form.text  # not even the title before the password
    assert visit(url + "/download/").status_code == 404
    wrong = visit(url, "POST", data={"password": "wrong horse"})
    assert wrong.status_code == 403
    assert "That password is not right." in wrong.text
    assert "Set-Cookie" not in wrong.headers
    for _ in range(2):
        assert visit(url, "POST", data={"password": "wrong horse"}).status_code == 403
    # Past three wrong guesses from this address, each must wait: at once is refused.
    refused = visit(url, "POST", data={"password": "correct horse"})
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "1"
    assert "Too many wrong passwords; try again in 1 seconds." in refused.text
    time.sleep(1.1)
    right = visit(url, "POST", data={"password": "correct horse"})
    assert right.status_code == 303
    assert right.headers["Location"] == url
    cookie = right.headers["Set-Cookie"]
    assert cookie.startswith("dms_share=")
    assert "; Path=/s/" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    jar = {"dms_share": cookie.split(";")[0].split("=", 1)[1]}
    page = visit(url, cookies=jar)
    assert "<h1>Letter to the landlord</h1>" in page.text
    assert visit(url + "/download/", cookies=jar).content == LETTER
    # The cookie opens this link only: a forged or another link's one does not.
    assert visit(url, cookies={"dms_share": "99999999999.00"}).text.count('type="password"') == 1
    other = make_link(alice, node=letter, expires_at=ahead(2), password="correct horse")
    assert visit(other["attributes"]["url"] + "/download/", cookies=jar).status_code == 404
    wrongs = [event for event in share_events(alice, letter) if event["what"] == "wrong_password"]
    assert len(wrongs) == 3


def test_each_state_that_no_longer_works(alice, letter):
    base = alice.base_url
    unknown = visit(f"{base}/s/{'A' * 32}")
    assert unknown.status_code == 404
    assert "There is nothing at this address." in unknown.text
    assert visit(f"{base}/s/{'A' * 32}/download/").status_code == 404
    # Used up.
    once = make_link(alice, node=letter, expires_at=ahead(2), max_downloads=1)
    url = once["attributes"]["url"]
    assert "1 download left" in visit(url).text
    assert visit(url + "/download/").status_code == 200
    for path in ("", "/download/"):
        gone = visit(url + path)
        assert gone.status_code == 410
        assert "This link has been used as many times as it allows." in gone.text
    # Revoked.
    revoked = make_link(alice, node=letter, expires_at=ahead(2))
    assert alice.delete(f"/api/share-links/{revoked['id']}/").status_code == 204
    gone = visit(revoked["attributes"]["url"])
    assert gone.status_code == 410
    assert "This link was withdrawn by the person who shared it." in gone.text
    # Expired.
    soon = (time.time() + 2)
    expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(soon + 1))
    expiring = make_link(alice, node=letter, expires_at=expires)
    assert visit(expiring["attributes"]["url"]).status_code == 200
    time.sleep(max(0.0, soon + 1.2 - time.time()))
    gone = visit(expiring["attributes"]["url"])
    assert gone.status_code == 410
    assert "This link expired on" in gone.text
    # Its node in the trash.
    live = make_link(alice, node=letter, expires_at=ahead(2))
    assert alice.delete(f"/api/nodes/{letter}/").status_code == 204
    gone = visit(live["attributes"]["url"])
    assert gone.status_code == 410
    assert "This link no longer works." in gone.text


def test_a_folder_link_serves_what_is_below_and_nothing_else(alice):
    family = make_folder(alice, "Family", alice.home_id)
    claims = make_folder(alice, "Claims", family)
    ids = {}
    for title, parent, body in (("Policy", family, b"policy"), ("Claim", claims, b"claim"),
                                ("Old", family, b"old"), ("Elsewhere", alice.home_id, b"x")):
        ids[title] = new_document(alice, title, parent)
        upload_accepted(alice, ids[title], f"{title.lower()}.txt", body)
    assert alice.delete(f"/api/nodes/{ids['Old']}/").status_code == 204
    link = make_link(alice, node=family, expires_at=ahead(1))
    url = link["attributes"]["url"]
    page = visit(url)
    assert page.status_code == 200
    assert "<h1>Family</h1>" in page.text
    assert page.text.index(">Policy<") < page.text.index(">Claim<")  # by depth, then title
    assert "Old" not in page.text and "Elsewhere" not in page.text
    assert visit(f"{url}/documents/{ids['Claim']}/download/").content == b"claim"
    for outside in (ids["Old"], ids["Elsewhere"], family, "not-an-id"):
        assert visit(f"{url}/documents/{outside}/download/").status_code == 404
    archive = visit(url + "/download/")
    assert archive.headers["Content-Disposition"] == "attachment; filename=Family.zip"
    with zipfile.ZipFile(io.BytesIO(archive.content)) as opened:
        assert {name: opened.read(name) for name in opened.namelist()
                if not name.endswith("/")} == {"Family/Policy.txt": b"policy",
                                                "Family/Claims/Claim.txt": b"claim"}
    assert alice.get(f"/api/share-links/{link['id']}/").json()["data"]["attributes"][
        "downloads"] == 2


def test_the_download_cap_holds_under_many_visitors_at_once(alice, letter):
    link = make_link(alice, node=letter, expires_at=ahead(1), max_downloads=3)
    url = link["attributes"]["url"] + "/download/"
    with ThreadPoolExecutor(12) as pool:
        statuses = sorted(pool.map(lambda _: visit(url).status_code, range(12)))
    assert statuses == [200] * 3 + [410] * 9
    assert alice.get(f"/api/share-links/{link['id']}/").json()["data"]["attributes"][
        "downloads"] == 3
    assert len([e for e in share_events(alice, letter) if e["what"] == "download"]) == 3
