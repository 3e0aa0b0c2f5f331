"""Every route of the Paperless-ngx dialect that needs a login (api.md §17) answers an anonymous
caller 401 in Django REST framework's shape and changes nothing — listed from the dialect's own
route tables, so that a route added later is covered by itself."""

from __future__ import annotations

import pytest

from dms.web.paperless.app import ROUTE_TABLES
from tests.harness.database import snapshot

PROTECTED = sorted({(route.method, route.path) for table in ROUTE_TABLES
                    for route in table.routes if route.auth})


def test_every_protected_route_is_401_to_an_anonymous_caller(anon, alice, config):
    before = snapshot(config)
    for method, path in PROTECTED:
        url = "/paperless" + path.replace("{", "").replace("}", "")
        for name in ("document_id", "item_id", "user_id", "group_id", "task_id"):
            url = url.replace(name, "1")
        response = anon.request(method, url, json_body={} if method in ("POST", "PUT", "PATCH")
                                else None, media="application/json")
        assert (response.status_code, response.json(), response.headers["WWW-Authenticate"]) \
            == (401, {"detail": "Authentication credentials were not provided."}, "Token"), \
            (method, path)
    assert snapshot(config) == before


@pytest.mark.parametrize("path", ["/paperless/api/schema/"])
def test_the_open_routes_answer_without_a_login(anon, path):
    assert anon.get(path).status_code == 200
