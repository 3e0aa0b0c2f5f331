"""The users of a test's server: the passwords the fixtures give the admin and every user, and a
user added through the API by the admin."""

from __future__ import annotations

from tests.harness.client import JSON, Client

ADMIN_PASSWORD = "admin-password-1"
USER_PASSWORD = "user-password-1"


def add_user(admin: Client, username: str, **attributes) -> Client:
    """A new user with USER_PASSWORD, made by `admin`; a Client logged in as that user."""
    body = {"data": {"type": "users", "attributes": {"username": username, **attributes}}}
    response = admin.post("/api/users/", body)
    assert response.status_code == 200, response.text
    user_id = response.json()["data"]["id"]
    response = admin.post(f"/api/users/{user_id}/change-password/", {"password": USER_PASSWORD},
                          media=JSON)
    assert response.status_code == 200, response.text
    return admin.login(username, USER_PASSWORD)
