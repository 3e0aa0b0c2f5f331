"""Events and webhooks reach everyone with access to the node (api.md §21, §14), over real
sockets and a real receiver, on both engines: a grantee's stream and webhook get the owner's
events about what is shared (the grant itself first, with the shared root's parent shown as their
.shared folder) and none about the rest; a stream opened before the grant learns of it; the
stream's `id:` is the grantee's place in each owner's events and resumes exactly; a revocation
stops them at once, for streams and webhooks; a group's new member gets what the group is shared
from joining on; a webhook made after a grant starts from then; the owner gets an editor's
change."""

from __future__ import annotations

import pytest
import requests

from tests.harness.client import assert_error
from tests.harness.documents import create_node, make_folder
from tests.harness.webhooks import EventStream, Receiver, add_webhook

pytestmark = pytest.mark.socket

FAST = dict(outbound_allow=("127.0.0.1",), webhook_retry_seconds=0.2, webhook_timeout_seconds=1)
TYPES = ["node.created", "node.renamed", "node.access_changed"]


def share(owner, node_id: str, role: str = "viewer", **grantee) -> str:
    response = owner.post(f"/api/nodes/{node_id}/access/", {**grantee, "role": role})
    assert response.status_code in (200, 201), response.text
    return response.json()["data"]["id"]


def shared_folder_of(client) -> str:
    me = client.get("/api/users/me/").json()["data"]
    return me["relationships"]["shared_folder"]["data"]["id"]


def seen(event: dict) -> tuple:
    return (event["type"], event["user_id"], event["node"]["title"], event["node"]["parent_id"],
            event["details"]["action"])


def test_a_grantees_stream_gets_what_is_shared_from_the_grant_on_and_resumes_exactly(
        server, alice, bob):
    bills = make_folder(alice, "Bills", alice.home_id)
    create_node(alice, "documents", "before", bills)  # before the grant: never bob's
    stream = EventStream(server.url, bob.token)  # opened before anything is shared with bob
    try:
        share(alice, bills, username="bob")
        place, event = stream.next_event()
        assert seen(event) == ("node.access_changed", alice.user_id, "Bills",
                               shared_folder_of(bob), "access_granted")
        assert event["details"] == {"action": "access_granted", "user": "bob", "role": "viewer"}
        own, other = place.split(" ")
        assert (own, other) == ("0", f"{alice.user_id}:{event['id']}")

        create_node(alice, "folders", "Private", alice.home_id)  # not shared: never bob's
        create_node(alice, "documents", "gas", bills)
        mine = create_node(bob, "folders", "Bob's", bob.home_id)
        gas_place, gas = stream.next_event()
        assert seen(gas) == ("node.created", alice.user_id, "gas", bills, "created")
        bobs_place, bobs = stream.next_event()
        assert (bobs["node"]["id"], bobs["user_id"]) == (mine, bob.user_id)
        assert bobs_place == f"{bobs['id']} {alice.user_id}:{gas['id']}"
    finally:
        stream.close()

    # Resumed after the gas bill: bob's own folder, then only what is shared again.
    resumed = EventStream(server.url, bob.token, last_event_id=gas_place)
    try:
        create_node(alice, "folders", "Private 2", alice.home_id)
        create_node(alice, "documents", "water", bills)
        assert [seen(event)[2] for _, event in resumed.events(2)] == ["Bob's", "water"]
    finally:
        resumed.close()


def test_a_revocation_stops_the_events_at_once(server, alice, bob):
    bills = make_folder(alice, "Bills", alice.home_id)
    grant = share(alice, bills, username="bob")
    stream = EventStream(server.url, bob.token)
    try:
        create_node(alice, "documents", "gas", bills)
        assert seen(stream.next_event()[1])[2] == "gas"
        response = alice.delete(f"/api/nodes/{bills}/access/{grant}/")
        assert response.status_code == 204, response.text
        create_node(alice, "documents", "water", bills)  # after the revocation: not bob's
        create_node(bob, "folders", "Bob's", bob.home_id)
        assert seen(stream.next_event()[1]) == ("node.created", bob.user_id, "Bob's",
                                                bob.home_id, "created")
    finally:
        stream.close()


def test_a_groups_new_member_gets_its_shares_from_joining_on(server, admin, alice, bob,
                                                             make_user):
    carol = make_user("carol")
    group = admin.post("/api/groups/", {"data": {"type": "groups", "attributes": {
        "name": "Family", "members": [bob.user_id]}}}).json()["data"]
    bills = make_folder(alice, "Bills", alice.home_id)
    share(alice, bills, group=group["id"])
    create_node(alice, "documents", "before carol", bills)
    stream = EventStream(server.url, carol.token)
    try:
        response = admin.patch(f"/api/groups/{group['id']}/", {"data": {
            "type": "groups", "id": group["id"],
            "attributes": {"members": [bob.user_id, carol.user_id]}}})
        assert response.status_code == 200, response.text
        create_node(alice, "documents", "after carol", bills)
        assert seen(stream.next_event()[1]) == ("node.created", alice.user_id, "after carol",
                                                bills, "created")
    finally:
        stream.close()


def test_a_resume_point_is_a_place_the_stream_wrote(server, alice):
    for given in ("12  abc:3", "12 abc", "12 abc:", "12 :3", "x 12",
                  "12 " + " ".join(f"owner{n}:1" for n in range(51))):
        answer = requests.get(f"{server.url}/api/events/", timeout=30, headers={
            "Authorization": f"Token {alice.token}", "Last-Event-ID": given})
        assert_error(answer, 400, "invalid", "Last-Event-ID must be the id of an event (a whole "
                                             "number such as 1234) or the id: of the stream's "
                                             "last event.")


@pytest.mark.config(**FAST)
def test_webhooks_reach_grantees_and_the_owner_gets_an_editors_change(server, alice, bob,
                                                                      make_user):
    receiver = Receiver()
    try:
        bills = make_folder(alice, "Bills", alice.home_id)
        add_webhook(alice, receiver.url("/alice"), TYPES)
        add_webhook(bob, receiver.url("/bob"), TYPES)
        bobs_grant = share(alice, bills, "editor", username="bob")
        create_node(alice, "folders", "Private", alice.home_id)  # not shared
        gas = create_node(alice, "documents", "gas", bills)
        response = bob.patch(f"/api/documents/{gas}/", {"data": {
            "type": "documents", "id": gas, "attributes": {"title": "gas 2026"}}})
        assert response.status_code == 200, response.text
        # A webhook made after the grant starts from then: carol's gets only what follows.
        carol = make_user("carol")
        share(alice, bills, username="carol")
        add_webhook(carol, receiver.url("/carol"), TYPES)
        create_node(alice, "documents", "water", bills)

        receiver.wait_for_count(6 + 5 + 1)
        by_path: dict[str, list[tuple]] = {}
        for delivery in receiver.deliveries:
            by_path.setdefault(delivery.path, []).append(seen(delivery.event))
        granted = ("node.access_changed", alice.user_id, "Bills")
        in_bills = [("node.created", alice.user_id, "gas", bills, "created"),
                    ("node.renamed", alice.user_id, "gas 2026", bills, "renamed")]
        water = ("node.created", alice.user_id, "water", bills, "created")
        assert by_path == {
            "/alice": [(*granted, alice.home_id, "access_granted"),
                       ("node.created", alice.user_id, "Private", alice.home_id, "created"),
                       *in_bills, (*granted, alice.home_id, "access_granted"), water],
            "/bob": [(*granted, shared_folder_of(bob), "access_granted"), *in_bills,
                     (*granted, shared_folder_of(bob), "access_granted"), water],
            "/carol": [water],
        }

        # Taken back: bob's webhook gets nothing more of alice's, his own still.
        assert alice.delete(f"/api/nodes/{bills}/access/{bobs_grant}/").status_code == 204
        create_node(alice, "documents", "sewage", bills)
        create_node(bob, "folders", "Bob's", bob.home_id)
        receiver.wait_for_count(12 + 2 + 2 + 1)
        assert [seen(d.event)[2] for d in receiver.deliveries if d.path == "/bob"][5:] == \
            ["Bob's"]
        assert [seen(d.event)[2:] for d in receiver.deliveries if d.path == "/carol"][1:] == \
            [("Bills", shared_folder_of(carol), "access_revoked"),
             ("sewage", bills, "created")]
    finally:
        receiver.stop()
