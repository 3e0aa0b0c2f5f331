// Settings › Profile: the account (username, the ids of .home and .inbox that scripts need) and a
// change of password (api.md, "Users").

import { api, id as encoded, JSON_MEDIA } from "./api.js";
import { busy, clearMessages, el, field, showError, showStatus } from "./dom.js";

export async function render() {
  const me = (await api("GET", "/users/me/")).data; // fresh, in case an admin changed the account
  const detail = (term, id, value, code = true) => [el("dt", {}, term),
    el("dd", {}, code ? el("code", { id, class: "selectable" }, value) : el("span", { id }, value))];
  const form = el("form", { id: "password-form", class: "card", "aria-labelledby": "password-title", novalidate: true },
    el("h2", { id: "password-title" }, "Change password"),
    field("New password", el("input", { id: "new-password", name: "password", type: "password", autocomplete: "new-password",
      "aria-describedby": "new-password-hint" }), el("small", { id: "new-password-hint", class: "hint" }, "At least 8 characters.")),
    field("Repeat new password", el("input", { id: "repeat-password", name: "repeat", type: "password", autocomplete: "new-password" })),
    el("div", { class: "actions" }, el("button", { type: "submit", class: "button button-primary" }, "Change password")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearMessages();
    if (form.password.value !== form.repeat.value) {
      showError("The two passwords do not match.");
      form.repeat.select();
      return;
    }
    // Length and other rules are the server's: its error detail is shown as it is.
    try {
      await busy(form, () => api("POST", `/users/${encoded(me.id)}/change-password/`,
        { password: form.password.value }, { media: JSON_MEDIA }));
      form.reset();
      showStatus("Your password has been changed.");
    } catch (error) {
      showError(error.message);
      if (error.status !== 401) form.password.select();
    }
  });
  return el("div", {},
    el("h1", { id: "profile-title" }, "Profile"),
    el("div", { class: "card" }, el("h2", {}, "Account"),
      el("dl", { class: "details" },
        detail("Username", "profile-username", me.attributes.username, false),
        detail("User id", "profile-user-id", me.id),
        detail(".home folder id", "profile-home-id", me.relationships.home_folder.data.id),
        detail(".inbox folder id", "profile-inbox-id", me.relationships.inbox_folder.data.id))),
    form);
}
