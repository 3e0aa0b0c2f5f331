"""Passwords, API tokens and login throttling (api.md, "Authentication and tokens").

Secrets are never stored or logged: passwords as salted scrypt hashes, tokens as SHA-512 digests.
Every comparison of secret material is constant-time.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import ipaddress
import logging
import secrets
import time
from collections.abc import Callable, Hashable, Iterable

from peewee import IntegrityError, ModelSelect

from dms.config import Config
from dms.db import database, owner_scope, with_space_reserve, write_transaction
from dms.db.models import Token, User, utcnow
from dms.errors import Invalid, NotFound, StorageFull, Unavailable
from dms.text import has_refused_characters

log = logging.getLogger("dms.auth")

# scrypt cost: 32 MiB and ~0.1 s per hash on a small server; stored with each hash so it can rise.
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**15, 8, 1
SCRYPT_MAXMEM = 64 * 1024 * 1024
MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 1024

DEFAULT_TOKEN_HOURS = 4464  # spec: "defaults to 4464" hours, about six months
MAX_TOKEN_HOURS = 87600  # ten years
TOKEN_KEY_LENGTH = 16  # spec: tokens are listed by "the first 16 characters of its digest"
LOGIN_TOKEN_NAME = "login"
# A token's kind (api.md §22, "Sessions"): the web page's login is a SESSION, which expires after
# DMS_SESSION_IDLE_DAYS without use and is not listed among the API tokens; every other is API.
API, SESSION = "api", "session"
SESSION_NAME = "web page"
DEFAULT_SESSION_IDLE = dt.timedelta(days=Config.session_idle_days)
DEFAULT_MAX_TOKENS = 1000  # per user (DMS_MAX_TOKENS_PER_USER)
MAX_TOKEN_NAME_LENGTH = 100
LOGIN_FAILED = "Unable to log in with provided credentials."


def hash_password(password: str) -> str:
    salt = secrets.token_bytes(16)
    derived = _scrypt(password, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${_b64(salt)}${_b64(derived)}"


def verify_password(password: str, encoded: str | None) -> bool:
    """True if `password` matches; an account without a password never matches. Besides dms's
    own scrypt hashes, Django's `pbkdf2_sha256$<iterations>$<salt>$<hash>` (the hashes of users
    imported from Paperless-ngx, api.md §18) match: `outdated` tells to hash it again."""
    if not encoded:
        # Spend the same time as a real check, so timing does not tell which accounts exist.
        _scrypt(password, b"0" * 16, SCRYPT_N, SCRYPT_R, SCRYPT_P)
        return False
    if encoded.startswith(DJANGO_PBKDF2 + "$"):
        return _verify_django(password, encoded)
    try:
        algorithm, n, r, p, salt, expected = encoded.split("$")
        if algorithm != "scrypt":
            return False
        derived = _scrypt(password, _unb64(salt), int(n), int(r), int(p))
    except ValueError:
        return False
    return hmac.compare_digest(derived, _unb64(expected))


DJANGO_PBKDF2 = "pbkdf2_sha256"
MAX_PBKDF2_ITERATIONS = 10_000_000  # Django 5.1 uses 870,000; a hostile row cannot cost more


def outdated(encoded: str | None) -> bool:
    """Whether a matching password should be hashed again with dms's own scheme."""
    return encoded is not None and encoded != "" and not encoded.startswith("scrypt$")


def _verify_django(password: str, encoded: str) -> bool:
    try:
        _, iterations, salt, expected = encoded.split("$")
        rounds = int(iterations)
        if not 1 <= rounds <= MAX_PBKDF2_ITERATIONS:
            return False
        derived = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt.encode("utf-8"),
                                      rounds)
        return hmac.compare_digest(derived, _unb64(expected))
    except (ValueError, UnicodeEncodeError):
        return False


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(password.encode("utf-8"), salt=salt, n=n, r=r, p=p,
                          maxmem=SCRYPT_MAXMEM, dklen=32)


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"), validate=True)


def token_digest(secret: str) -> str:
    return hashlib.sha512(secret.encode("utf-8")).hexdigest()


def issue_token(user: User, expiry_hours: int | None, name: str = "",
                max_tokens: int = DEFAULT_MAX_TOKENS, make_room: bool = False,
                kind: str = API) -> tuple[Token, str]:
    """Create a token for `user`; returns the row and the secret, which exists only in this return
    value. `expiry_hours=None` makes a token that lasts until revoked (tokens from login).

    A user holds at most `max_tokens`. Past it, an explicit new token is refused; a login
    (`make_room`) instead revokes the user's oldest token of the same name (a login's, or one
    app's of the Paperless-ngx dialect), so scripts that log in on every run keep working without
    piling up tokens. Count and insert share one write transaction. A SESSION starts its idle
    time now."""
    while True:
        secret = secrets.token_hex(32)
        digest = token_digest(secret)
        now = utcnow()
        expiry = None if expiry_hours is None else now + dt.timedelta(hours=expiry_hours)
        try:
            with write_transaction(owner_scope(user.id)):
                held = Token.select().where(Token.user == user.id).count()
                if held >= max_tokens:
                    oldest = (Token.select(Token.digest)
                              .where(Token.user == user.id, Token.name == name,
                                     Token.kind == kind)
                              .order_by(Token.created).limit(held - max_tokens + 1))
                    if not make_room or not oldest.count():
                        raise Invalid(f"You already have {held} API tokens, the most one user "
                                      "may hold; revoke the ones you no longer use first.")
                    Token.delete().where(Token.digest.in_([t.digest for t in oldest])).execute()
                token = Token.create(digest=digest, token_key=digest[:TOKEN_KEY_LENGTH],
                                     user=user.id, name=name, created=now, expiry=expiry,
                                     kind=kind, last_used=now if kind == SESSION else None)
        except IntegrityError:
            continue  # two digests sharing their first 16 characters: astronomically rare, retry
        return token, secret


def create_token(user: User, expiry_hours: object, name: object,
                 max_tokens: int) -> tuple[Token, str]:
    """POST /tokens/: a named token valid for `expiry_hours` (default 4464)."""
    hours = DEFAULT_TOKEN_HOURS if expiry_hours is None else expiry_hours
    if isinstance(hours, bool) or not isinstance(hours, int) or not 1 <= hours <= MAX_TOKEN_HOURS:
        raise Invalid(f"expiry_hours must be a whole number of hours from 1 to {MAX_TOKEN_HOURS}.",
                      "expiry_hours")
    name = "" if name is None else name  # 0, false, [] are not text: refused below
    if not isinstance(name, str) or len(name) > MAX_TOKEN_NAME_LENGTH \
            or has_refused_characters(name):
        raise Invalid(f"name must be text of at most {MAX_TOKEN_NAME_LENGTH} characters, without "
                      "control or invisible formatting characters.", "name")
    return issue_token(user, expiry_hours=hours, name=name.strip(), max_tokens=max_tokens)


def revoke(token: Token) -> None:
    def delete() -> None:
        with write_transaction():
            Token.delete().where(Token.digest == token.digest).execute()
    with_space_reserve(delete)


def revoke_all(user: User) -> None:
    with write_transaction():
        Token.delete().where(Token.user == user.id).execute()


def revoke_by_key(user: User, token_key: str) -> None:
    """DELETE /tokens/{id}/: one of the caller's own API tokens; anyone else's, and a session
    (not listed among them), is "not found"."""
    with write_transaction():
        deleted = (Token.delete()
                   .where(Token.token_key == token_key, Token.user == user.id,
                          Token.kind == API).execute())
    if not deleted:
        raise NotFound()


def tokens_of(user: User) -> ModelSelect[Token]:
    """The user's API tokens (their sessions are not listed: api.md §22)."""
    return (Token.select().where(Token.user == user.id, Token.kind == API)
            .order_by(Token.created.desc(), Token.token_key))


# The keys failed logins are counted by, and how many a key may have within the window. A key
# (ADDRESS_AND_USER, address, username) stops one client guessing one account's password; the
# username alone was once the key, and then anyone could keep any account, the admin's too, locked
# out of password login with 5 requests every 5 minutes: now that lock needs MAX_FAILURES of USER's
# failures, from several addresses (an address alone stops at ADDRESS's). ADDRESS stops one client
# spraying many usernames. USER stops a guesser spread over many addresses, and would lock the owner
# out with it: so a login from an address the user logged in from before (a known address,
# remembered by LoginThrottle.remember) is not refused for USER's count, only for the other two. An
# address is counted as address_key() says (IPv6 by its /64).
ADDRESS_AND_USER, ADDRESS, USER = "addr+user", "addr", "user"
KNOWN_ADDRESS = "known"  # the kind of a known address's digest (with the user's id)
MAX_FAILURES = {ADDRESS_AND_USER: Config.login_failures_per_address_user,  # the settings' defaults
                ADDRESS: Config.login_failures_per_address, USER: Config.login_failures_per_user}


def max_failures(config: Config) -> dict[str, int]:
    """The failures each kind of key may have (DMS_LOGIN_FAILURES_PER_...)."""
    return {ADDRESS_AND_USER: config.login_failures_per_address_user,
            ADDRESS: config.login_failures_per_address, USER: config.login_failures_per_user}


class LoginThrottle:
    """Counts failed logins per key (see ADDRESS_AND_USER) in a sliding window, in the database
    (table `login_failure`), so that every node of a cluster counts the same failures.

    After `max_failures[kind]` failures (MAX_FAILURES unless the settings say otherwise) within
    WINDOW seconds a key is refused until its oldest failure leaves the window. Keys are stored
    as SHA-256 digests (a username field sometimes holds a password typed in the wrong box).
    Bounded: failures older than the window are deleted as new ones come in, and a refused key
    records nothing more. The clock (seconds since the epoch, the same on every node) is
    injected so tests can move time instead of sleeping.

    It also remembers each user's known addresses (table `login_address`, by digest too): the
    address keys of their successful password logins, at most KNOWN_ADDRESSES per user (the
    least recently used dropped), each forgotten KNOWN_ADDRESS_SECONDS after its last login.
    """

    MAX_FAILURES = MAX_FAILURES
    WINDOW = 300.0
    # Enough for a user's home, work, phone networks and a few trips; a bound, so that a stolen
    # password's logins from everywhere cannot grow the table.
    KNOWN_ADDRESSES = 20
    # A network not logged in from for this long is new again (a phone's /64 changes often).
    KNOWN_ADDRESS_SECONDS = 90 * 86400.0

    def __init__(self, clock: Callable[[], float] = time.time,
                 max_failures: dict[str, int] | None = None):
        self._clock = clock
        self.max_failures = max_failures or self.MAX_FAILURES

    def retry_after(self, keys: Iterable[tuple[str, ...]],
                    limits: dict[str, int] | None = None) -> int | None:
        """Seconds until a login for these keys is allowed again, or None if allowed now;
        `limits`: the failures each kind of key may have, if not the logins' (share links')."""
        now = self._clock()
        wait = 0.0
        for key in keys:
            allowed = (limits or self.max_failures)[key[0]]
            recent = [row[0] for row in database.execute_sql(
                "SELECT failed_at FROM login_failure WHERE key = ? AND failed_at > ? "
                "ORDER BY failed_at DESC LIMIT ?",
                (_throttle_key(key), now - self.WINDOW, allowed))]
            if len(recent) >= allowed:
                wait = max(wait, recent[-1] + self.WINDOW - now)
        return max(1, int(wait + 0.999)) if wait > 0 else None

    def record_failure(self, keys: Iterable[Hashable]) -> None:
        now = self._clock()
        try:
            with write_transaction():
                database.execute_sql("DELETE FROM login_failure WHERE failed_at <= ?",
                                     (now - self.WINDOW,))
                for key in keys:
                    database.execute_sql(
                        "INSERT INTO login_failure (key, failed_at) VALUES (?, ?)",
                        (_throttle_key(key), now))
        except (StorageFull, Unavailable) as error:  # the login is refused all the same
            log.warning("could not count a failed login: %s", error.message)

    def reset(self, keys: Iterable[Hashable]) -> None:
        digests = [_throttle_key(key) for key in keys]
        try:
            with write_transaction():
                database.execute_sql(
                    f"DELETE FROM login_failure WHERE key IN ({', '.join('?' * len(digests))})",
                    digests)
        except (StorageFull, Unavailable) as error:
            log.warning("could not clear failed logins: %s", error.message)


    def slowed(self, key: tuple[str, ...], free: int) -> int | None:
        """Seconds to wait before the next try of `key` once it has `free` failures in the
        window: 1 s after the last of them, then twice as long after each more (share links'
        passwords, dms.domain.sharelinks.visits); None if it may try now."""
        count, last = database.execute_sql(
            "SELECT count(*), max(failed_at) FROM login_failure WHERE key = ? AND failed_at > ?",
            (_throttle_key(key), self._clock() - self.WINDOW)).fetchone()
        if count < free:
            return None
        wait = last + min(2.0 ** (count - free), self.WINDOW) - self._clock()
        return max(1, int(wait + 0.999)) if wait > 0 else None

    def is_known(self, user_id: str, address: str) -> bool:
        """Did `user_id` log in with a password from `address` (an address_key) within
        KNOWN_ADDRESS_SECONDS?"""
        return database.execute_sql(
            "SELECT 1 FROM login_address WHERE user_id = ? AND key = ? AND last_success_at > ?",
            (user_id, _throttle_key((KNOWN_ADDRESS, user_id, address)),
             self._clock() - self.KNOWN_ADDRESS_SECONDS)).fetchone() is not None

    def remember(self, user_id: str, address: str) -> None:
        """`user_id` logged in with a password from `address` (an address_key) just now: known
        from now on; the user's addresses past KNOWN_ADDRESSES and the stale ones go."""
        now = self._clock()
        try:
            with write_transaction(owner_scope(user_id)):
                database.execute_sql(
                    "INSERT INTO login_address (user_id, key, last_success_at) VALUES (?, ?, ?) "
                    "ON CONFLICT (user_id, key) DO UPDATE SET "
                    "last_success_at = excluded.last_success_at",
                    (user_id, _throttle_key((KNOWN_ADDRESS, user_id, address)), now))
                database.execute_sql(
                    "DELETE FROM login_address WHERE user_id = ? AND (last_success_at <= ? OR key "
                    "NOT IN (SELECT key FROM login_address WHERE user_id = ? "
                    "ORDER BY last_success_at DESC LIMIT ?))",
                    (user_id, now - self.KNOWN_ADDRESS_SECONDS, user_id, self.KNOWN_ADDRESSES))
        except (StorageFull, Unavailable) as error:  # the login succeeds all the same
            log.warning("could not remember a login's address: %s", error.message)


def address_key(address: str) -> str:
    """The part of a client address that failed logins and known addresses are counted by: an
    IPv4 address as it is; an IPv6 address by its /64, the network one subscriber (one home,
    one phone) is given, in which it may choose any of the 2^64 addresses; an IPv4-mapped IPv6
    address (a dual-stack socket's IPv4 client) as its IPv4 address. Anything else (no IP
    address: a Unix socket's peer) as it is."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if ip.version == 4:
        return str(ip)
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return f"{ipaddress.IPv6Address(int(ip) >> 64 << 64)}/64"


def _throttle_key(key: Hashable) -> str:
    return hashlib.sha256(repr(key).encode("utf-8")).hexdigest()
