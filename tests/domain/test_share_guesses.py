"""The limits on guessing a share link's password (dms.domain.sharelinks.visits), in the fast tier
with a clock the test moves: past three wrong guesses from one address each waits (1 s, 2 s, 4 s,
...); ten in five minutes from one address stop that address for the link; thirty from anywhere stop
the link; fifty from one address stop it for every link; the right password clears its own count;
a refused guess is not even checked (the right password is refused too)."""

from __future__ import annotations

import datetime as dt

import pytest

from dms.domain import sharelinks
from dms.domain.credentials import LoginThrottle
from dms.errors import Throttled
from tests.harness.domaintier import home_id, new_document, new_user

PASSWORD = "correct horse"


@pytest.fixture
def clock():
    return [1_000_000.0]


@pytest.fixture
def throttle(clock):
    return LoginThrottle(clock=lambda: clock[0])


def new_link(services, user) -> str:
    document = new_document(services, user, "Letter", home_id(user))
    expires = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    _, slug = sharelinks.create_link(user, {"node": document, "expires_at": expires,
                                            "password": PASSWORD},
                                     services.config.data_dir, 90)
    return slug


def guess(services, throttle, slug: str, password: str, address: str) -> str | int:
    """The token, "" for a wrong password, or the seconds to wait."""
    visit = sharelinks.open_visit(slug, services.config.data_dir)
    try:
        return visit.unlock(password, address, throttle)
    except Throttled as refused:
        return refused.retry_after


def test_wrong_guesses_are_slowed_then_stopped(services, throttle, clock):
    slug = new_link(services, new_user("alice"))
    assert [guess(services, throttle, slug, "wrong", "192.0.2.1") for _ in range(3)] == [""] * 3
    assert guess(services, throttle, slug, PASSWORD, "192.0.2.1") == 1  # not even checked
    waits = []
    for _ in range(7):  # the 4th to the 10th wrong guess, each after its wait
        clock[0] += 2 ** len(waits)
        assert guess(services, throttle, slug, "wrong", "192.0.2.1") == ""
        clock[0] += 0.5
        waits.append(guess(services, throttle, slug, "wrong", "192.0.2.1"))
    assert waits[:5] == [2, 4, 8, 16, 32]
    # Ten wrong guesses within five minutes: this address waits for the oldest to leave them.
    clock[0] += 300
    assert guess(services, throttle, slug, "wrong", "192.0.2.1") == ""
    # Another address is not slowed by this one's guesses.
    assert isinstance(guess(services, throttle, slug, PASSWORD, "198.51.100.7"), str)
    assert guess(services, throttle, slug, PASSWORD, "198.51.100.7") != ""


def test_a_link_guessed_from_many_addresses_stops(services, throttle, clock):
    slug = new_link(services, new_user("alice"))
    for number in range(30):
        assert guess(services, throttle, slug, "wrong", f"192.0.2.{number + 1}") == ""
    assert guess(services, throttle, slug, PASSWORD, "198.51.100.7") == 300
    clock[0] += 301
    assert guess(services, throttle, slug, PASSWORD, "198.51.100.7") not in ("", 300)


def test_an_address_guessing_many_links_stops(services, throttle, clock):
    alice = new_user("alice")
    slugs = [new_link(services, alice) for _ in range(17)]
    for slug in slugs:
        for _ in range(3):
            if guess(services, throttle, slug, "wrong", "2001:db8::1") != "":
                break
    # 50 wrong guesses from one address (an IPv6 /64 counts as one): every link refuses it.
    fresh = new_link(services, alice)
    assert guess(services, throttle, fresh, PASSWORD, "2001:db8::99") == 300
    assert guess(services, throttle, fresh, PASSWORD, "192.0.2.1") not in ("", 300)
