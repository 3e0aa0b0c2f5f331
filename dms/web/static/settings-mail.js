// Settings › Mail accounts (api.md, "Mail accounts"): add, edit (an empty password keeps the old
// one), delete, and check now (in the background: the row follows it until `checking` is false).

import { api, id as encoded } from "./api.js";
import { attempt, busy, button, clearMessages, el, field, select, showStatus, timeElement } from "./dom.js";
import { confirmDelete, dataTable, formButtons, formSlot, onSubmit, rowActions, sectionPage } from "./parts.js";

/** How often, and how many times, a running check is read again (2 minutes in all). */
const CHECK_POLL_MS = 1000;
const CHECK_POLLS = 120;
const SECURITY = [["ssl", "SSL/TLS"], ["starttls", "STARTTLS"], ["none", "None (only on this machine)"]];
const AFTER_IMPORT = [["mark_seen", "Mark as read"], ["flag", "Flag"], ["move", "Move to another mailbox"]];

export async function render(ctx) {
  const list = await api("GET", "/mail-accounts/?page[size]=100");
  const { add, slot, edit } = formSlot(ctx, { type: "mail-accounts", path: "/mail-accounts/", noun: "Mail account",
    addLabel: "Add mail account", form: accountForm });
  const rows = list.data.map((account) => accountRow(ctx, account, edit));
  return sectionPage("Mail accounts", add, "Attachments of new messages in these mailboxes become documents in your Inbox.",
    slot, dataTable("Your mail accounts", ["Account", "Last checked", "Result", "Imported"], rows, "You have no mail accounts."));
}

function accountRow(ctx, account, edit) {
  const a = account.attributes;
  const name = `${a.username} on ${a.host}`;
  const result = a.checking ? "Checking…" : a.last_error ?? (a.last_checked_at ? "OK" : "Not checked yet");
  const check = async (target) => {
    clearMessages();
    const started = await busy(target, () => attempt(() => api("POST", `/mail-accounts/${encoded(account.id)}/check/`)));
    if (!started) return;
    showStatus(`Checking ${name}…`);
    for (let poll = 0; poll < CHECK_POLLS; poll += 1) {
      await new Promise((resolve) => { setTimeout(resolve, CHECK_POLL_MS); });
      const now = await attempt(() => api("GET", `/mail-accounts/${encoded(account.id)}/`));
      if (!now) return;
      if (!now.data.attributes.checking) {
        await ctx.refresh();
        showStatus(now.data.attributes.last_error ? `Checked ${name}: ${now.data.attributes.last_error}` : `Checked ${name}.`);
        return;
      }
    }
  };
  const remove = () => confirmDelete(ctx, { title: "Delete mail account?", path: `/mail-accounts/${encoded(account.id)}/`,
    text: `${name} will not be checked any more. The documents it brought stay.`, done: "Mail account deleted." });
  return el("tr", {},
    el("td", { "data-label": "Account" }, name, a.enabled ? null : el("span", { class: "badge badge-muted" }, "off")),
    el("td", { "data-label": "Last checked" }, timeElement(a.last_checked_at)),
    el("td", { "data-label": "Result", class: a.last_error ? "text-danger" : null }, result),
    el("td", { "data-label": "Imported" }, String(a.imported_count)),
    rowActions(name, () => edit(account), remove,
      button("Check now", (event) => check(event.currentTarget), "button-small", { "aria-label": `Check now: ${name}` })));
}

function accountForm(account, save, cancel) {
  const a = account?.attributes ?? {};
  const text = (id, name, value, extra = {}) => el("input", { id, name, type: "text", value: value ?? "", autocomplete: "off", ...extra });
  const box = (id, name, label, checked) => el("label", { class: "check" },
    el("input", { id, name, type: "checkbox", checked }), label);
  const form = el("form", { class: "card", "aria-labelledby": "mail-form-title", novalidate: true },
    el("h2", { id: "mail-form-title" }, account ? "Edit mail account" : "New mail account"),
    el("div", { class: "field-row" },
      el("div", { class: "field-grow" }, field("IMAP server", text("mail-host", "host", a.host, { spellcheck: "false" }))),
      field("Port", el("input", { id: "mail-port", name: "port", type: "number", min: "1", max: "65535",
        value: a.port ?? "", placeholder: "993" })),
      field("Security", select({ id: "mail-security", name: "security" }, SECURITY, a.security ?? "ssl"))),
    el("div", { class: "field-row" },
      el("div", { class: "field-grow" }, field("Mail username", text("mail-username", "username", a.username, { spellcheck: "false" }))),
      el("div", { class: "field-grow" }, field("Mail password", el("input", { id: "mail-password", name: "password",
        type: "password", autocomplete: "new-password" }), account ? el("small", { class: "hint" }, "Leave empty to keep the current password.") : null))),
    el("div", { class: "field-row" },
      el("div", { class: "field-grow" }, field("Mailbox", text("mail-mailbox", "mailbox", a.mailbox ?? "INBOX"))),
      field("After import", select({ id: "mail-after", name: "after_import" }, AFTER_IMPORT, a.after_import ?? "mark_seen")),
      el("div", { class: "field-grow" }, field("Move to mailbox", text("mail-move-to", "move_to", a.move_to)))),
    box("mail-per-sender", "folder_per_sender", "A folder in the Inbox for each sender", a.folder_per_sender ?? false),
    box("mail-enabled", "enabled", "Check this account every few minutes", a.enabled ?? true),
    formButtons("Save mail account", cancel));
  onSubmit(form, () => {
    const attributes = {
      host: form.host.value.trim(), security: form.security.value, username: form.username.value.trim(),
      mailbox: form.mailbox.value.trim() || "INBOX", after_import: form.after_import.value,
      move_to: form.move_to.value.trim() || null, folder_per_sender: form.folder_per_sender.checked,
      enabled: form.enabled.checked,
    };
    if (form.port.value) attributes.port = Number(form.port.value);
    if (form.password.value) attributes.password = form.password.value;
    return save(attributes);
  });
  return form;
}
