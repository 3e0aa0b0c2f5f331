"""Logging in to a mail server with a username or password that is not ASCII, against the real
Dovecot of tests/intake/conftest.py: imaplib's LOGIN encodes its command as ASCII, so such an
account could never log in (UnicodeEncodeError in every check). dms logs in with AUTHENTICATE PLAIN
(UTF-8) then; a wrong password and a password no login can carry are clean sentences in
last_error."""

from __future__ import annotations

import pytest

from tests.harness import samples
from tests.harness.mail import SEEN, add_account, check, flags, inbox, message, names


@pytest.mark.parametrize("name, password", [
    ("jürgen", "pässwört-✓"),  # both
    ("mailuser", "Kennwort-für-Post"),  # the password only
    ("jürgen", "imap-secret-1"),  # the username only
], ids=["both", "password", "username"])
def test_a_non_ascii_username_or_password_logs_in_and_imports(alice, imap, name, password):
    box = (f"{name}{next(names)}", password)
    imap.add_user(*box)
    uid = imap.append(*box, message("Rechnung", [("rechnung.pdf", samples.pdf(["Rechnung 12"]),
                                                  "application/pdf")])[0])
    account = add_account(alice, box, imap)
    checked = check(alice, account["id"])["attributes"]
    assert (checked["last_error"], checked["imported_count"]) == (None, 1)
    assert list(inbox(alice)) == ["rechnung.pdf"]
    assert flags(imap, box) == {uid: {SEEN}}


def test_a_wrong_non_ascii_password_is_a_refused_login(alice, imap):
    box = (f"jürgen{next(names)}", "pässwört-✓")
    imap.add_user(*box)
    account = add_account(alice, (box[0], "pässwört-✗"), imap)
    checked = check(alice, account["id"])["attributes"]
    assert (checked["last_error"], checked["imported_count"]) == (
        "The mail server refused the username or password.", 0)


def test_a_password_that_no_login_can_carry_is_a_clean_last_error(alice, imap):
    """A NUL separates the fields of AUTHENTICATE PLAIN (and LOGIN takes no control character):
    nothing is sent, and last_error says what to do."""
    account = add_account(alice, (f"mailuser{next(names)}", "pass\x00word"), imap)
    checked = check(alice, account["id"])["attributes"]
    assert (checked["last_error"], checked["imported_count"]) == (
        "The username or password holds a character that cannot be sent to a mail server; set "
        "it again.", 0)
