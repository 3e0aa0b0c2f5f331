"""Webhooks as resources (api.md, "Webhooks"): the caller's own (another user's and an unknown id
are the same 404, admins included; anonymous 401), the secret write-only (sealed in the database,
never in an answer or a log), refused settings and targets change nothing."""

from __future__ import annotations

import logging

import pytest

from tests.harness.client import assert_error
from tests.harness.database import query_sql, snapshot
from tests.harness.webhooks import SECRET, add_webhook

URL = "https://hooks.example.org/dms?key=1"
NOT_FOUND = ("not_found", "Not found.")


def body(**attributes) -> dict:
    return {"data": {"type": "webhooks", "attributes": attributes}}


def test_webhooks_are_private_and_the_secret_is_never_shown(alice, bob, anon, admin, config,
                                                            caplog):
    caplog.set_level(logging.DEBUG)
    created = alice.post("/api/webhooks/", body(url=URL, events=["document.processed",
                                                                "node.created"], secret=SECRET))
    assert created.status_code == 201, created.text
    webhook = created.json()["data"]
    attributes = dict(webhook["attributes"])
    assert attributes.pop("created_at").endswith("Z")
    assert (webhook["type"], attributes) == ("webhooks", {
        "url": URL, "events": ["document.processed", "node.created"], "enabled": True,
        "last_delivery_at": None, "last_status": None, "last_error": None,
        "failures_in_a_row": 0})
    path = f"/api/webhooks/{webhook['id']}/"
    assert alice.get(path).json() == {"data": webhook}
    assert alice.get("/api/webhooks/").json()["data"] == [webhook]

    for other in (bob, admin):
        for response in (other.get(path), other.patch(path, body(enabled=False)),
                         other.delete(path), other.post(path + "test/")):
            assert_error(response, 404, *NOT_FOUND)
        assert other.get("/api/webhooks/").json()["data"] == []
    for response in (anon.get("/api/webhooks/"), anon.post("/api/webhooks/", body(url=URL)),
                     anon.get(path), anon.patch(path, body(enabled=False)), anon.delete(path),
                     anon.post(path + "test/")):
        assert_error(response, 401, "not_authenticated",
                     "Authentication credentials were not provided.")
    unknown = "/api/webhooks/8c0ba1a1-5ba8-4b53-a6c2-111111111111/"
    assert_error(alice.get(unknown), 404, *NOT_FOUND)
    assert_error(alice.get("/api/webhooks/not-a-uuid/"), 404, *NOT_FOUND)

    # Sealed: the secret is in no column and no answer, and was never logged.
    rows = query_sql(config, "SELECT secret, url FROM webhook")
    assert len(rows) == 1 and SECRET not in rows[0][0] and rows[0][0].startswith("aesgcm1:")
    changed = alice.patch(path, body(secret="another-secret-1234", events=["node.moved"],
                                     enabled=False, last_status=500, colour="red"))
    assert changed.status_code == 200, changed.text
    assert {k: changed.json()["data"]["attributes"][k] for k in
            ("events", "enabled", "last_status")} == {
        "events": ["node.moved"], "enabled": False, "last_status": None}
    for answer in (created, changed, alice.get(path), alice.get("/api/webhooks/")):
        assert SECRET not in answer.text and "another-secret" not in answer.text
        assert "secret" not in answer.text
    assert SECRET not in caplog.text and "another-secret" not in caplog.text

    assert alice.delete(path).status_code == 204
    assert_error(alice.get(path), 404, *NOT_FOUND)
    # A deleted user's webhooks go with them.
    add_webhook(alice, URL, ["node.created"])
    assert admin.delete(f"/api/users/{alice.user_id}/").status_code == 204
    assert query_sql(config, "SELECT count(*) FROM webhook") == [(0,)]


REFUSED = [
    ({"url": None}, "url", "required", "url is required."),
    ({"url": "ftp://example.org/"}, "url", "invalid",
     "url must be an http or https URL, such as https://example.org/dms-hook."),
    ({"url": "https:///no-host"}, "url", "invalid",
     "url must be an http or https URL, such as https://example.org/dms-hook."),
    ({"url": "https://user:pw@example.org/"}, "url", "invalid",
     "url must not hold a user name or password; put a token in its path or query, or check "
     "the signature instead."),
    ({"url": "https://example.org:99999/"}, "url", "invalid",
     "url has a port that is not a number from 1 to 65535."),
    ({"url": "https://example.org/" + "a" * 2000}, "url", "invalid",
     "url must be at most 2000 characters without spaces or control characters."),
    # 400 characters, 2,420 as stored (each ü is %C3%BC)
    ({"url": "https://example.org/" + "ü" * 400}, "url", "invalid",
     "url must be at most 2000 characters without spaces or control characters."),
    ({"url": "http://[::1/hook"}, "url", "invalid",
     "url must be an http or https URL, such as https://example.org/dms-hook."),
    ({"url": "https://☃.example/hook"}, "url", "invalid",
     "url: the host name ☃.example is not a valid domain name (IDNA, UTS #46)."),
    ({"url": "https://a..b/hook"}, "url", "invalid",
     "url: the host name a..b is not a valid domain name (empty labels, or longer than DNS "
     "allows)."),
    ({"events": None}, "events", "required",
     'events is required: a list of event types, such as ["document.processed"].'),
    ({"events": []}, "events", "invalid", "events must be a non-empty list of event types."),
    ({"events": "node.created"}, "events", "invalid",
     "events must be a non-empty list of event types."),
    ({"events": ["node.created", "node.exploded"]}, "events", "invalid",
     "events has an unknown event type 'node.exploded'; the types are node.created, "
     "document.uploaded, document.processed, node.renamed, node.moved, node.tagged, "
     "node.deleted, node.restored, document.pages_changed, rule.applied, document.updated, "
     "node.access_changed, share.changed, share.accessed."),
    ({"secret": None}, "secret", "required",
     "secret is required: the key the deliveries are signed with."),
    ({"secret": "short"}, "secret", "invalid",
     "secret must have 16 to 256 characters without control characters."),
    ({"enabled": "yes"}, "enabled", "invalid", "enabled must be true or false."),
]


@pytest.mark.parametrize("change, field, code, detail", REFUSED)
def test_refused_settings_change_nothing(alice, config, change, field, code, detail):
    before = snapshot(config)
    attributes = {"url": URL, "events": ["node.created"], "secret": SECRET, **change}
    response = alice.post("/api/webhooks/", body(**attributes))
    assert_error(response, 400, code, detail, f"/data/attributes/{field}")
    if field != "secret":  # a PATCH may leave out what a POST needs, but not say it wrong
        webhook_id = add_webhook(alice, URL, ["node.created"])
        before = snapshot(config)
        patched = alice.patch(f"/api/webhooks/{webhook_id}/", body(**change))
        assert_error(patched, 400, code, detail, f"/data/attributes/{field}")
    assert snapshot(config) == before


def internal(host: str, resolved: str | None = None) -> str:
    shown = "" if resolved is None else f" resolves to {resolved}, which"
    return (f"{host}{shown} is an internal address (loopback, private, link-local or a cloud's "
            "metadata service): dms connects there only for a superuser or when the "
            "administrator allows it (DMS_OUTBOUND_ALLOW).")


# Written as addresses, internal targets are refused at once for a user who is not a superuser
# (names are checked at each delivery: test_deliveries.py).
INTERNAL = ["127.0.0.1", "10.1.2.3", "169.254.169.254", "[::1]", "[fd00:ec2::254]",
            "100.64.0.1", "192.168.1.10", "0.0.0.0", "[::ffff:10.0.0.1]", "[::127.0.0.1]",
            "[::7f00:1]"]


def test_internal_addresses_are_refused_for_users_but_not_for_superusers(alice, admin, config):
    before = snapshot(config)
    for host in INTERNAL:
        response = alice.post("/api/webhooks/", body(url=f"http://{host}:8080/hook",
                                                     events=["node.created"], secret=SECRET))
        assert_error(response, 400, "invalid", f"url: {internal(host.strip('[]'))}",
                     "/data/attributes/url")
    assert snapshot(config) == before
    for host in ("127.0.0.1", "[::1]", "10.1.2.3"):
        add_webhook(admin, f"http://{host}:8080/hook", ["node.created"])


def test_urls_are_stored_in_ascii(alice, admin, config):
    """Host names in other scripts in their IDNA form, other characters percent-encoded (issue
    38); an address written in other digits or full stops is the address it is."""
    for url, stored in (
            ("https://Bücher.Example/dokumente/über?name=Bücher#teil-ü",
             "https://xn--bcher-kva.example/dokumente/%C3%BCber?name=B%C3%BCcher#teil-%C3%BC"),
            ("https://hooks.example.org/a%20b/€", "https://hooks.example.org/a%20b/%E2%82%AC")):
        created = alice.post("/api/webhooks/", body(url=url, events=["node.created"],
                                                    secret=SECRET))
        assert created.status_code == 201, created.text
        assert created.json()["data"]["attributes"]["url"] == stored
        path = f"/api/webhooks/{created.json()['data']['id']}/"
        assert alice.get(path).json()["data"]["attributes"]["url"] == stored
        patched = alice.patch(path, body(url=url.replace("https:", "http:")))
        assert patched.json()["data"]["attributes"]["url"] == stored.replace("https:", "http:")
    assert sorted(row[0] for row in query_sql(config, "SELECT url FROM webhook")) == [
        "http://hooks.example.org/a%20b/%E2%82%AC",
        "http://xn--bcher-kva.example/dokumente/%C3%BCber?name=B%C3%BCcher#teil-%C3%BC"]

    before = snapshot(config)
    for host in ("127。0。0。1", "１２７.０.０.１", "127．0．0．1"):
        response = alice.post("/api/webhooks/", body(url=f"http://{host}:8080/hook",
                                                     events=["node.created"], secret=SECRET))
        assert_error(response, 400, "invalid", f"url: {internal('127.0.0.1')}",
                     "/data/attributes/url")
    assert snapshot(config) == before
    webhook_id = add_webhook(admin, "http://127。0。0。1:8080/hook", ["node.created"])
    assert admin.get(f"/api/webhooks/{webhook_id}/").json()["data"]["attributes"]["url"] == (
        "http://127.0.0.1:8080/hook")


@pytest.mark.config(outbound_allow=("10.0.0.0/8", "127.0.0.1"))
def test_the_allow_list_lets_users_reach_what_it_names(alice):
    for host in ("10.1.2.3", "127.0.0.1"):
        add_webhook(alice, f"http://{host}:8080/hook", ["node.created"])
    response = alice.post("/api/webhooks/", body(url="http://192.168.1.1/", secret=SECRET,
                                                 events=["node.created"]))
    assert_error(response, 400, "invalid", f"url: {internal('192.168.1.1')}",
                 "/data/attributes/url")


def test_a_user_has_at_most_twenty_webhooks(alice, config):
    for number in range(20):
        add_webhook(alice, f"{URL}&n={number}", ["node.created"])
    before = snapshot(config)
    response = alice.post("/api/webhooks/", body(url=URL, events=["node.created"],
                                                 secret=SECRET))
    assert_error(response, 400, "invalid", "One user may have at most 20 webhooks.")
    assert snapshot(config) == before


def test_a_webhook_body_needs_its_type(alice):
    response = alice.post("/api/webhooks/", {"data": {"type": "mail-accounts", "attributes": {}}})
    assert_error(response, 409, "conflict",
                 'The resource type "mail-accounts" does not match `webhooks`.', "/data/type")
    response = alice.post("/api/webhooks/", {"url": URL}, media="application/json")
    assert_error(response, 415, "unsupported_media_type",
                 "Unsupported media type 'application/json' in the request; use "
                 "application/vnd.api+json.")
