// Settings › Users and Settings › Groups, for superusers (api.md, "Users", "Groups"): accounts (a
// new one with a typed or generated password, shown once to pass on; a reset; deactivate; superuser
// or not) and groups with their members.

import { api, id as encoded, JSON_MEDIA, listAll } from "./api.js";
import { modal } from "./dialogs.js";
import { attempt, button, clearMessages, el, field, showStatus, timeElement } from "./dom.js";
import { ErrorSlots } from "./metadata.js";
import { confirmDelete, dataTable, formButtons, formSlot, onSubmit, rowActions, sectionPage } from "./parts.js";

/** Random bytes of a generated password: 15 make 20 characters of base64 (120 bits). */
const PASSWORD_BYTES = 15;

const newPassword = () => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(PASSWORD_BYTES))))
  .replaceAll("+", "-").replaceAll("/", "_");

export const users = { render: async (ctx) => {
  const { items } = await listAll("/users/");
  // The form sets the password itself (after making the user): formSlot's save is not its way.
  const { add, slot, edit } = formSlot(ctx, { addLabel: "Add user", form: (user, save, cancel) => userForm(ctx, user, cancel) });
  return sectionPage("Users", add, "Everyone who logs in to this dms. Their papers are their own unless they share them.",
    slot, dataTable("Users", ["Username"], items.map((user) => userRow(ctx, user, edit))));
} };

function userRow(ctx, user, edit) {
  const a = user.attributes;
  const me = user.id === ctx.me().id;
  const name = a.username;
  const change = (attributes, done) => async () => {
    clearMessages();
    if (await attempt(() => api("PATCH", `/users/${encoded(user.id)}/`, { data: { type: "users", id: user.id, attributes } }))) {
      await ctx.refresh();
      showStatus(done);
    }
  };
  const act = (label, action, key, kind = "button-small") => button(label, action, kind,
    { "aria-label": `${label}: ${name}`, "data-focus": `${key}-${user.id}` });
  const badge = (text, kind = "badge-info") => el("span", { class: `badge ${kind}` }, text);
  return el("tr", { class: a.is_active ? null : "is-expired" },
    el("td", { "data-label": "Username" }, el("span", {}, name), me ? badge("you") : null,
      a.is_superuser ? badge("superuser") : null, a.is_active ? null : badge("deactivated", "badge-muted"),
      el("div", { class: "hint" }, "Joined ", timeElement(a.date_joined))),
    el("td", { class: "cell-actions" },
      act("Reset password", () => edit(user), "password"),
      me ? null : act(a.is_active ? "Deactivate" : "Activate", change({ is_active: !a.is_active },
        `${name} ${a.is_active ? "can no longer log in" : "can log in again"}.`), "active",
      a.is_active ? "button-small button-danger-outline" : undefined),
      act(a.is_superuser ? "Not superuser" : "Make superuser", change({ is_superuser: !a.is_superuser },
        `${name} is ${a.is_superuser ? "no longer" : "now"} a superuser.`), "super")));
}

/** A new user (`user` null) with their password, or a new password for `user`. */
function userForm(ctx, user, cancel) {
  const errors = new ErrorSlots();
  const username = el("input", { id: "user-name", type: "text", maxlength: "150", autocomplete: "off", autocapitalize: "none",
    spellcheck: "false" });
  const superuser = el("input", { id: "user-super", type: "checkbox" });
  const password = el("input", { id: "user-password", type: "password", autocomplete: "new-password", "aria-describedby": "user-password-hint" });
  let generated = false;
  password.addEventListener("input", () => { generated = false; });
  const generate = button("Generate", () => {
    password.type = "text"; // to be read and passed on
    password.value = newPassword();
    generated = true;
    password.select();
  });
  const titleId = "user-form-title";
  const form = el("form", { class: "card", "aria-labelledby": titleId, novalidate: true },
    el("h2", { id: titleId }, user ? `New password for ${user.attributes.username}` : "New user"),
    user ? null : errors.field("username", "Username", username),
    user ? null : el("div", { class: "check" }, superuser, el("label", { for: superuser.id }, "Superuser: manages users and groups")),
    el("div", { class: "field" }, el("label", { for: password.id }, "Password"),
      el("div", { class: "copy-row" }, password, generate),
      el("small", { class: "hint", id: "user-password-hint" }, "At least 8 characters; Generate makes a random one.")),
    errors.general, formButtons(user ? "Set password" : "Save user", cancel));
  let target = user; // once made, a new user whose password was refused is not made again
  onSubmit(form, async () => {
    if (!password.value) throw new Error("Type a password, or generate one.");
    target ??= (await api("POST", "/users/", { data: { type: "users",
      attributes: { username: username.value.trim(), is_superuser: superuser.checked } } })).data;
    await api("POST", `/users/${encoded(target.id)}/change-password/`, { password: password.value }, { media: JSON_MEDIA });
    const name = target.attributes.username;
    await ctx.refresh(user ? `password-${user.id}` : "add");
    if (generated) shownOnce(name, password.value);
    else showStatus(user ? `The password of ${name} is changed.` : `User ${name} added.`);
  }, errors);
  return form;
}

/** The generated password, shown this once for the administrator to pass on. */
function shownOnce(name, password) {
  return modal(`Password of ${name}`, (dialog, close) => {
    const shown = el("input", { id: "shown-password", type: "text", class: "mono", readonly: true, value: password });
    dialog.append(el("p", { class: "warning" }, `Pass it on to ${name} now: it is not shown again.`),
      field("Password", shown),
      el("div", { class: "actions actions-end" }, button("Done", () => close(null), "button-primary")));
    setTimeout(() => shown.select(), 0);
  });
}

export const groups = { render: async (ctx) => {
  const [{ items }, { items: people }] = await Promise.all([listAll("/groups/"), listAll("/users/")]);
  const names = new Map(people.map((user) => [user.id, user.attributes.username]));
  const { add, slot, edit } = formSlot(ctx, { type: "groups", path: "/groups/", noun: "Group", addLabel: "Add group",
    form: (group, save, cancel) => groupForm(group, people, save, cancel) });
  const row = (group) => {
    const { name, members } = group.attributes;
    return el("tr", {},
      el("td", { "data-label": "Name", class: "cell-wrap" }, name),
      el("td", { "data-label": "Members", class: "cell-wrap" }, members.map((id) => names.get(id) ?? "?").sort().join(", ")
        || el("span", { class: "muted" }, "nobody")),
      rowActions(name, () => edit(group), () => confirmDelete(ctx, { title: "Delete group?", path: `/groups/${encoded(group.id)}/`,
        text: `“${name}” is deleted; its members stay, and what was shared with the group is no longer shared with them.`,
        done: `Group “${name}” deleted.` })));
  };
  return sectionPage("Groups", add, "Share a folder or document with a group, and everyone in it may read it (or change it).",
    slot, dataTable("Groups", ["Name", "Members"], items.map(row), "There are no groups yet."));
} };

function groupForm(group, people, save, cancel) {
  const a = group?.attributes ?? { name: "", members: [] };
  const errors = new ErrorSlots();
  const name = el("input", { id: "group-name", type: "text", value: a.name, maxlength: "150", autocomplete: "off" });
  const boxes = people.map((user) => el("input", { type: "checkbox", id: `member-${user.id}`, value: user.id,
    checked: a.members.includes(user.id) }));
  const form = el("form", { class: "card", "aria-labelledby": "group-form-title", novalidate: true },
    el("h2", { id: "group-form-title" }, group ? "Edit group" : "New group"),
    errors.field("name", "Name", name),
    el("fieldset", { class: "group" }, el("legend", {}, "Members"), el("div", { class: "check-row" },
      boxes.map((box, index) => el("div", { class: "check" }, box, el("label", { for: box.id }, people[index].attributes.username)))),
    errors.slot("members", boxes[0] ?? name)),
    errors.general, formButtons("Save group", cancel));
  onSubmit(form, () => save({ name: name.value.trim(), members: boxes.filter((box) => box.checked).map((box) => box.value) }), errors);
  return form;
}
