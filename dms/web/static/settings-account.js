// Settings › Profile: the account (username, the ids of .home and .inbox that scripts need), a
// change of password (api.md, "Users") and the browsers signed in, with "sign out everywhere"
// (api.md, "Sessions").

import { api, id as encoded, JSON_MEDIA } from "./api.js";
import { confirmDialog } from "./dialogs.js";
import { busy, button, clearMessages, el, field, showError, showFailure, showStatus } from "./dom.js";

export async function render(ctx) {
  const me = (await api("GET", "/users/me/")).data; // fresh, in case an admin changed the account
  const { count } = await api("GET", "/auth/sessions/");
  const browsers = count === 1 ? "1 browser (this one)" : `${count} browsers, this one among them`;
  const signOut = async () => {
    clearMessages();
    if (!(await confirmDialog({ title: "Sign out everywhere?", ok: "Sign out everywhere", danger: true,
      text: "Every browser signed in as you is logged out, this one too. API tokens keep working." }))) return;
    try {
      await api("DELETE", "/auth/sessions/");
      ctx.endSession("You signed out everywhere.");
    } catch (error) {
      showFailure(error);
    }
  };
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
      showFailure(error);
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
    form,
    el("div", { class: "card", role: "group", "aria-labelledby": "sessions-title" },
      el("h2", { id: "sessions-title" }, "Signed in"),
      el("p", { id: "sessions-count" }, `You are signed in on ${browsers}. Each login is a session that ends when you log out there, or after some days unused.`),
      el("div", { class: "actions" }, button("Sign out everywhere", signOut, "button-danger-outline"))));
}
