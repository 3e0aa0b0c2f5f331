"""Sharing on the web page (api.md, "Users", "Groups and sharing"; the contract's §21), in
Debian's headless Chromium, by accessible names: a superuser adds users (a typed and a generated
password), resets a password, deactivates and activates, makes a superuser and fills groups in
Settings; alice shares a folder with bob in the Share dialog (a person and a group, a role
changed, a grant revoked, a refusal); bob finds it under "Shared with me", as a viewer without
a way to change it. axe-core's checks, light and dark, and phones. The browser and its sessions:
tests/e2e/conftest.py, tests/harness/webpage.py."""

from __future__ import annotations

import re
from unittest.mock import ANY

import pytest
from playwright.sync_api import expect

from tests.harness import samples
from tests.harness.client import JSON
from tests.harness.documents import make_folder, new_document, upload_accepted
from tests.harness.users import ADMIN_PASSWORD, USER_PASSWORD
from tests.harness.waiting import wait_indexed, wait_processed
from tests.harness.webpage import (
    PHONE,
    REFUSED,
    Session,
    axe_violations,
    log_in_home,
    sideways_scroll,
    unnamed_controls,
)

pytestmark = pytest.mark.socket  # the browser talks to the socket; the API calls beside it too

FAILED_LOGIN = 400


def account(username: str, **changes) -> dict:
    """A user's attributes as GET /users/{id}/ gives them, made on the page."""
    return {"username": username, "first_name": "", "last_name": "", "email": "",
            "is_active": True, "is_staff": False, "is_superuser": False, "date_joined": ANY,
            **changes}


def users(admin) -> dict[str, dict]:
    """Every user's attributes by username, and the id of each under "id"."""
    response = admin.get("/api/users/?page[size]=100")
    assert response.status_code == 200, response.text
    return {user["attributes"]["username"]: {**user["attributes"], "id": user["id"]}
            for user in response.json()["data"]}


def attributes_of(admin, user_id: str) -> dict:
    response = admin.get(f"/api/users/{user_id}/")
    assert response.status_code == 200, response.text
    return response.json()["data"]["attributes"]


def login_status(anon, username: str, password: str) -> int:
    return anon.as_anonymous().post("/api/auth/login/", {"username": username,
                                                         "password": password},
                                    media=JSON).status_code


def groups(admin) -> list[dict]:
    response = admin.get("/api/groups/")
    assert response.status_code == 200, response.text
    return [{**group["attributes"], "members": sorted(group["attributes"]["members"])}
            for group in response.json()["data"]]


def grants(client, node_id: str) -> list[dict]:
    response = client.get(f"/api/nodes/{node_id}/access/")
    assert response.status_code == 200, response.text
    return response.json()["data"]["attributes"]["grants"]


def row(page, title: str):
    return page.get_by_role("row", name=re.compile(rf"\bSelect {re.escape(title)}\b"))


def open_settings(page, base_url: str, section: str, heading: str) -> None:
    page.goto(f"{base_url}/#/settings/{section}")
    expect(page.get_by_role("heading", name=heading, level=1)).to_be_visible()
    expect(page.locator("main")).not_to_have_attribute("aria-busy", "true")


def log_out(session) -> None:
    """Logs out and waits until the page has forgotten the token: a page opened before that
    would still find it and be answered 401."""
    session.menu("Log out")
    expect(session.page.get_by_role("status")).to_have_text("You have been logged out.")


def open_share_dialog(page, title: str):
    row(page, title).get_by_role("checkbox").check()
    page.get_by_role("button", name="Share…").click()
    dialog = page.get_by_role("dialog", name=f"Share “{title}”")
    expect(dialog.get_by_text("Owner: alice")).to_be_visible()
    return dialog


def test_a_superuser_adds_users_resets_a_password_deactivates_and_makes_a_superuser(
        session, server, admin, anon):
    page = log_in_home(session, "admin", ADMIN_PASSWORD)
    open_settings(page, server.url, "users", "Users")
    expect(page.get_by_role("row", name=re.compile(r"^admin\b"))).to_contain_text("you")

    # A typed password.
    page.get_by_role("button", name="Add user").click()
    form = page.get_by_role("form", name="New user")
    form.get_by_label("Username").fill("bob")
    form.get_by_label("Password", exact=True).fill("bob-password-1")
    form.get_by_role("button", name="Save user").click()
    expect(page.get_by_role("status")).to_have_text("User bob added.")
    bob = users(admin)["bob"]["id"]
    assert attributes_of(admin, bob) == account("bob")
    assert login_status(anon, "bob", "bob-password-1") == 200

    # A generated one, shown once.
    page.get_by_role("button", name="Add user").click()
    form = page.get_by_role("form", name="New user")
    form.get_by_label("Username").fill("carol")
    form.get_by_role("button", name="Generate").click()
    generated = form.get_by_label("Password", exact=True).input_value()
    assert re.fullmatch(r"[A-Za-z0-9_-]{20}", generated)
    form.get_by_role("button", name="Save user").click()
    shown = page.get_by_role("dialog", name="Password of carol")
    expect(shown.get_by_label("Password")).to_have_value(generated)
    expect(shown).to_contain_text("Pass it on to carol now: it is not shown again.")
    session.screenshot("60-password-shown-once.png", full_page=False)
    shown.get_by_role("button", name="Done").click()
    expect(shown).to_have_count(0)
    carol = users(admin)["carol"]["id"]
    assert attributes_of(admin, carol) == account("carol")
    assert login_status(anon, "carol", generated) == 200

    # A clash refused beside the username: nobody is added.
    page.get_by_role("button", name="Add user").click()
    form = page.get_by_role("form", name="New user")
    form.get_by_label("Username").fill("BOB")
    form.get_by_label("Password", exact=True).fill("another-password")
    form.get_by_role("button", name="Save user").click()
    expect(form.get_by_text("A user with that username already exists.")).to_be_visible()
    assert sorted(users(admin)) == ["admin", "bob", "carol"]
    form.get_by_role("button", name="Cancel").click()

    page.get_by_role("button", name="Reset password: bob").click()
    form = page.get_by_role("form", name="New password for bob")
    form.get_by_label("Password", exact=True).fill("bob-password-2")
    form.get_by_role("button", name="Set password").click()
    expect(page.get_by_role("status")).to_have_text("The password of bob is changed.")
    assert login_status(anon, "bob", "bob-password-1") == FAILED_LOGIN
    assert login_status(anon, "bob", "bob-password-2") == 200
    # Too short: the server's sentence, and the password stays.
    page.get_by_role("button", name="Reset password: bob").click()
    form = page.get_by_role("form", name="New password for bob")
    form.get_by_label("Password", exact=True).fill("short")
    form.get_by_role("button", name="Set password").click()
    expect(form.get_by_role("alert")).not_to_have_text("")
    assert login_status(anon, "bob", "bob-password-2") == 200
    form.get_by_role("button", name="Cancel").click()

    page.get_by_role("button", name="Deactivate: bob").click()
    expect(page.get_by_role("status")).to_have_text("bob can no longer log in.")
    assert attributes_of(admin, bob) == account("bob", is_active=False)
    assert login_status(anon, "bob", "bob-password-2") == FAILED_LOGIN
    expect(page.get_by_role("row", name=re.compile(r"^bob\b"))).to_contain_text("deactivated")
    page.get_by_role("button", name="Activate: bob").click()
    expect(page.get_by_role("status")).to_have_text("bob can log in again.")
    assert attributes_of(admin, bob) == account("bob")
    assert login_status(anon, "bob", "bob-password-2") == 200

    page.get_by_role("button", name="Make superuser: carol").click()
    expect(page.get_by_role("status")).to_have_text("carol is now a superuser.")
    assert attributes_of(admin, carol) == account("carol", is_superuser=True)
    expect(page.get_by_role("button", name="Not superuser: carol")).to_be_focused()
    session.screenshot("61-settings-users.png")
    page.get_by_role("button", name="Not superuser: carol").click()
    expect(page.get_by_role("status")).to_have_text("carol is no longer a superuser.")
    assert attributes_of(admin, carol) == account("carol")
    # Nobody deactivates themselves: no such button on their own row.
    expect(page.get_by_role("button", name="Deactivate: admin")).to_have_count(0)
    assert session.errors == [REFUSED] * 2  # the clash and the short password


def test_a_superuser_makes_renames_fills_and_deletes_a_group(session, server, admin, alice, bob):
    page = log_in_home(session, "admin", ADMIN_PASSWORD)
    open_settings(page, server.url, "groups", "Groups")
    expect(page.get_by_text("There are no groups yet.")).to_be_visible()
    page.get_by_role("button", name="Add group").click()
    form = page.get_by_role("form", name="New group")
    form.get_by_label("Name").fill("Family")
    form.get_by_label("alice").check()
    form.get_by_label("bob").check()
    form.get_by_role("button", name="Save group").click()
    expect(page.get_by_role("status")).to_have_text("Group added.")
    assert groups(admin) == [{"name": "Family", "members": sorted([alice.user_id, bob.user_id]),
                              "created_at": ANY}]
    expect(page.get_by_role("row", name=re.compile(r"^Family\b"))).to_contain_text("alice, bob")

    # A second group of the same name is refused beside the name; nothing changes.
    page.get_by_role("button", name="Add group").click()
    form = page.get_by_role("form", name="New group")
    form.get_by_label("Name").fill("FAMILY")
    form.get_by_role("button", name="Save group").click()
    expect(form.get_by_text("A group with this name already exists.")).to_be_visible()
    assert [group["name"] for group in groups(admin)] == ["Family"]
    form.get_by_role("button", name="Cancel").click()

    page.get_by_role("button", name="Edit: Family").click()
    form = page.get_by_role("form", name="Edit group")
    expect(form.get_by_label("bob")).to_be_checked()
    form.get_by_label("Name").fill("Household")
    form.get_by_label("bob").uncheck()
    form.get_by_role("button", name="Save group").click()
    expect(page.get_by_role("status")).to_have_text("Group saved.")
    assert groups(admin) == [{"name": "Household", "members": [alice.user_id],
                              "created_at": ANY}]
    session.screenshot("62-settings-groups.png")

    page.get_by_role("button", name="Delete: Household").click()
    page.get_by_role("dialog", name="Delete group?").get_by_role("button", name="Delete").click()
    expect(page.get_by_role("status")).to_have_text("Group “Household” deleted.")
    assert groups(admin) == []
    # The members stay.
    assert {"alice", "bob"} <= set(users(admin))
    assert session.errors == [REFUSED]  # the clash


def test_only_superusers_see_users_and_groups(session, server, alice):
    page = log_in_home(session)
    open_settings(page, server.url, "users", "API Tokens")  # an unknown section: the first
    nav = page.get_by_role("navigation", name="Settings")
    expect(nav.get_by_role("link", name="Webhooks")).to_be_visible()
    expect(nav.get_by_role("link", name="Users")).to_have_count(0)
    expect(nav.get_by_role("link", name="Groups")).to_have_count(0)
    assert session.errors == []


def test_alice_shares_a_folder_with_bob_changes_the_role_and_revokes(
        session, server, admin, alice, bob):
    folder = make_folder(alice, "Family papers", alice.home_id)
    inside = new_document(alice, "Insurance policy", folder)
    response = admin.post("/api/groups/", {"data": {"type": "groups", "attributes": {
        "name": "Family", "members": [alice.user_id, bob.user_id]}}})
    assert response.status_code == 201, response.text
    family = response.json()["data"]["id"]
    page = log_in_home(session)
    dialog = open_share_dialog(page, "Family papers")
    expect(dialog.get_by_text("Shared with nobody yet.")).to_be_visible()

    dialog.get_by_label("Username").fill("bob")
    dialog.get_by_role("button", name="Share", exact=True).click()
    expect(dialog.get_by_role("status")).to_have_text("Shared with bob as viewer.")
    [grant] = grants(alice, folder)
    assert grant == {"id": ANY, "node": folder, "user": {"id": bob.user_id, "username": "bob"},
                     "group": None, "role": "viewer", "granted_by": "alice", "created_at": ANY}

    dialog.get_by_label("Role of bob").select_option("editor")
    expect(dialog.get_by_role("status")).to_have_text("bob is an editor now.")
    assert grants(alice, folder) == [{**grant, "role": "editor", "created_at": ANY}]
    expect(dialog.get_by_label("Role of bob")).to_be_focused()

    # Refused: the server's sentence, and nothing changes.
    refusal = alice.post(f"/api/nodes/{folder}/access/", {"username": "nobody", "role": "viewer"},
                         media=JSON)
    assert refusal.status_code == 400, refusal.text
    dialog.get_by_label("Username").fill("nobody")
    dialog.get_by_role("button", name="Share", exact=True).click()
    expect(dialog.get_by_role("alert")).to_have_text(refusal.json()["errors"][0]["detail"])
    expect(dialog.locator("[role=status]").first).to_have_text("")
    assert grants(alice, folder) == [{**grant, "role": "editor", "created_at": ANY}]

    # A group, as editor.
    dialog.get_by_label("Person or group").select_option(label="Family (group)")
    expect(dialog.get_by_label("Username")).to_be_hidden()
    dialog.get_by_label("Role", exact=True).select_option("editor")
    dialog.get_by_role("button", name="Share", exact=True).click()
    expect(dialog.get_by_role("status")).to_have_text("Shared with Family (group) as editor.")
    expect(dialog.locator("[role=alert]").first).to_have_text("")
    by_group = [g for g in grants(alice, folder) if g["group"]]
    assert by_group == [{"id": ANY, "node": folder, "user": None,
                         "group": {"id": family, "name": "Family"}, "role": "editor",
                         "granted_by": "alice", "created_at": ANY}]
    session.screenshot("63-share-dialog.png", full_page=False)

    dialog.get_by_role("button", name="Stop sharing with bob").click()
    expect(dialog.get_by_role("status")).to_have_text("No longer shared with bob.")
    assert [g["group"] for g in grants(alice, folder)] == [{"id": family, "name": "Family"}]
    dialog.get_by_role("button", name="Stop sharing with Family (group)").click()
    expect(dialog.get_by_role("status")).to_have_text("No longer shared with Family (group).")
    expect(dialog.get_by_text("Shared with nobody yet.")).to_be_visible()
    assert grants(alice, folder) == []
    dialog.get_by_role("button", name="Done").click()
    expect(dialog).to_have_count(0)

    # A grant on the folder shows on what is inside it, as the folder's: changed there.
    assert alice.post(f"/api/nodes/{folder}/access/", {"user": bob.user_id, "role": "viewer"},
                      media=JSON).status_code == 201
    page.get_by_role("link", name="Family papers").first.click()
    expect(page.get_by_role("heading", name="Family papers", level=1)).to_be_visible()
    dialog = open_share_dialog(page, "Insurance policy")
    item = dialog.get_by_role("listitem").filter(has_text="bob")
    expect(item).to_contain_text("Viewer: reads, from Family papers")
    expect(item.get_by_role("button")).to_have_count(0)
    assert [g["node"] for g in grants(alice, inside)] == [folder]
    assert session.errors == [REFUSED]  # the unknown username


def shared_setup(alice, bob, role: str = "viewer") -> tuple[str, str]:
    """alice's folder "Family papers" with a read document, shared with bob as `role`."""
    folder = make_folder(alice, "Family papers", alice.home_id)
    document = new_document(alice, "Insurance policy", folder)
    upload_accepted(alice, document, "policy.txt", samples.text("Insurance policy 2026\n"))
    wait_processed(alice, document)
    response = alice.post(f"/api/nodes/{folder}/access/", {"user": bob.user_id, "role": role},
                          media=JSON)
    assert response.status_code == 201, response.text
    return folder, document


def test_bob_finds_what_alice_shares_under_shared_with_me(session, server, config, alice, bob):
    """Needs the backend's `.shared` folder and `attributes.access` / `owner` (§21)."""
    shared_setup(alice, bob)
    wait_indexed(config)
    page = log_in_home(session, "bob", USER_PASSWORD)
    tree = page.get_by_role("navigation", name="Folders")
    tree.get_by_role("link", name="Shared with me").click()
    expect(page.get_by_role("heading", name="Shared with me", level=1)).to_be_visible()
    expect(row(page, "Family papers")).to_contain_text("Owner: alice")
    for name in ("New folder", "Upload", "Move", "Delete", "Share…"):
        expect(page.get_by_role("button", name=name, exact=True)).to_have_count(0)
    session.screenshot("64-shared-with-me.png")

    page.get_by_role("link", name="Family papers").first.click()
    expect(page.get_by_role("heading", name="Family papers", level=1)).to_be_visible()
    expect(page.locator(".view-head")).to_contain_text("Owner: alice")
    expect(page.get_by_role("navigation", name="Breadcrumb").get_by_role(
        "link", name="Shared with me")).to_be_visible()
    for name in ("New folder", "Upload", "Rename", "Move", "Delete", "Share…"):
        expect(page.get_by_role("button", name=name, exact=True)).to_have_count(0)
    expect(page.get_by_text("Upload files, or drop them here.")).to_have_count(0)

    page.get_by_role("link", name="Insurance policy").click()
    expect(page.get_by_role("heading", name="Insurance policy", level=1)).to_be_visible()
    expect(page.locator(".view-head")).to_contain_text("Owner: alice")
    expect(page.get_by_role("button", name="Download", exact=True)).to_be_enabled()
    for name in ("Rename", "Move", "Delete", "Share…", "Save details", "Add note", "Add tag",
                 "Split document"):
        expect(page.get_by_role("button", name=name, exact=True)).to_have_count(0)
    expect(page.get_by_label("Select all pages")).to_have_count(0)
    expect(page.get_by_label("Correspondent", exact=True)).to_be_disabled()
    session.screenshot("65-shared-document.png")

    # Search finds it too, and says whose it is.
    page.get_by_role("searchbox", name="Search").fill("insurance")
    hit = page.get_by_role("main").locator(".result").filter(
        has=page.get_by_role("link", name="Insurance policy"))
    expect(hit).to_contain_text("Owner: alice")
    expect(hit).to_contain_text("Shared with me / Family papers")
    assert session.errors == []


def created(client, kind: str, **attributes) -> str:
    response = client.post(f"/api/{kind}/", {"data": {"type": kind, "attributes": attributes}})
    assert response.status_code == 201, response.text
    return response.json()["data"]["id"]


def test_an_editor_changes_but_does_not_share(session, server, alice, bob):
    """Needs the backend's `attributes.access` (§21). The document's correspondent and custom
    field are alice's, which bob's lists lack: his Save keeps them as they are."""
    _, document = shared_setup(alice, bob, role="editor")
    insurer = created(alice, "correspondents", name="Insurer")
    policy = created(alice, "custom-fields", name="Policy number", data_type="string")
    response = alice.patch(f"/api/documents/{document}/", {"data": {
        "type": "documents", "id": document, "attributes": {
            "correspondent": insurer, "custom_fields": [{"field": policy, "value": "P-42"}]}}})
    assert response.status_code == 200, response.text
    page = log_in_home(session, "bob", USER_PASSWORD, path=f"/#/doc/{document}")
    expect(page.get_by_role("heading", name="Insurance policy", level=1)).to_be_visible()
    for name in ("Rename", "Move", "Delete", "Save details", "Add tag"):
        expect(page.get_by_role("button", name=name, exact=True)).to_be_visible()
    expect(page.get_by_role("button", name="Share…")).to_have_count(0)

    details = page.get_by_role("form", name="Details")
    expect(details.get_by_label("Correspondent").locator("option:checked")).to_have_text(
        "The owner’s")
    details.get_by_label("Serial number").fill("7")
    details.get_by_role("button", name="Save details").click()
    expect(page.get_by_role("status")).to_have_text("Details saved.")
    attributes = alice.get(f"/api/documents/{document}/").json()["data"]["attributes"]
    assert (attributes["correspondent"], attributes["archive_serial_number"],
            attributes["custom_fields"]) == (insurer, 7, [{"field": policy, "value": "P-42"}])
    assert session.errors == []


def check_view(page, name: str, found: dict) -> None:
    found[name] = axe_violations(page)
    assert unnamed_controls(page) == [], name


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_new_views_pass_axe_and_name_every_control(browser, server, admin, alice, bob, scheme):
    folder = make_folder(alice, "Family papers", alice.home_id)
    assert alice.post(f"/api/nodes/{folder}/access/", {"user": bob.user_id, "role": "viewer"},
                      media=JSON).status_code == 201
    assert admin.post("/api/groups/", {"data": {"type": "groups", "attributes": {
        "name": "Family", "members": [alice.user_id]}}}).status_code == 201
    found: dict[str, list] = {}
    session = Session(browser, server.url, bypass_csp=True, color_scheme=scheme)
    try:
        page = log_in_home(session, "admin", ADMIN_PASSWORD)
        open_settings(page, server.url, "users", "Users")
        check_view(page, "users", found)
        page.get_by_role("button", name="Add user").click()
        check_view(page, "user form", found)
        open_settings(page, server.url, "groups", "Groups")
        page.get_by_role("button", name="Edit: Family").click()
        check_view(page, "groups", found)
        session.screenshot(f"66-{scheme}-settings-groups.png")
        log_out(session)

        page = log_in_home(session)
        dialog = open_share_dialog(page, "Family papers")
        expect(dialog.get_by_label("Role of bob")).to_be_visible()
        check_view(page, "share dialog", found)
        session.screenshot(f"66-{scheme}-share-dialog.png", full_page=False)
        assert {name: violations for name, violations in found.items() if violations} == {}
        assert session.errors == [] and session.foreign == []
    finally:
        session.close()


def test_the_new_views_on_a_phone(browser, server, admin, alice, bob):
    """At 390 × 844 nothing scrolls sideways: Settings › Users and Groups, the Share dialog."""
    folder = make_folder(alice, "Family papers with a rather long name", alice.home_id)
    assert alice.post(f"/api/nodes/{folder}/access/", {"user": bob.user_id, "role": "viewer"},
                      media=JSON).status_code == 201
    assert admin.post("/api/groups/", {"data": {"type": "groups", "attributes": {
        "name": "Family", "members": [alice.user_id, bob.user_id]}}}).status_code == 201
    phone = Session(browser, server.url, **PHONE)
    try:
        page = log_in_home(phone, "admin", ADMIN_PASSWORD)
        for section, heading in (("users", "Users"), ("groups", "Groups")):
            open_settings(page, server.url, section, heading)
            page.get_by_role("button", name=f"Add {heading[:-1].lower()}").click()
            assert sideways_scroll(page) == 0, section
            phone.screenshot(f"67-phone-{section}.png")
        log_out(phone)
        page = log_in_home(phone)
        open_share_dialog(page, "Family papers with a rather long name")
        assert sideways_scroll(page) == 0
        phone.screenshot("67-phone-share-dialog.png", full_page=False)
        assert phone.errors == []
    finally:
        phone.close()
