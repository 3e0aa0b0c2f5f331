// Settings › API Tokens (api.md, "Tokens"), this browser's own marked: a new token's secret is
// shown once; revoking this browser's own logs out.

import { api, id as encoded, sessionTokenId } from "./api.js";
import { confirmDialog } from "./dialogs.js";
import { button, clearMessages, el, field, parseDate, showFailure, showStatus, timeElement } from "./dom.js";
import { formButtons, onSubmit } from "./parts.js";

export async function render(ctx) {
  const current = await sessionTokenId();
  const body = el("tbody", { id: "tokens-body" });
  const table = el("table", { id: "tokens-table", class: "table" },
    el("caption", { class: "visually-hidden" }, "Your API tokens, newest first"),
    el("thead", {}, el("tr", {}, ["ID", "Name", "Created", "Expires", el("span", { class: "visually-hidden" }, "Actions")]
      .map((head) => el("th", { scope: "col" }, head)))),
    body);
  const empty = el("p", { id: "tokens-empty", class: "muted empty", hidden: true });
  const secret = el("input", { id: "token-secret", type: "text", class: "mono", readonly: true, spellcheck: "false",
    "aria-describedby": "secret-warning" });
  const secretPanel = el("div", { id: "secret-panel", class: "card card-highlight", hidden: true },
    el("h2", {}, "Your new token"),
    el("p", { class: "warning", id: "secret-warning" }, "Copy this token now: you will not see it again."),
    el("div", { class: "field" }, el("label", { for: "token-secret" }, "Token secret"),
      el("div", { class: "copy-row" }, secret,
        button("Copy", () => copy(secret), "button-primary"))),
    el("div", { class: "actions" }, button("Done", () => {
      hideSecret();
      clearMessages();
      newButton.focus();
    })));
  let shownId = null; // the token whose secret the panel shows
  const hideSecret = () => {
    // The secret must not linger in the page once the user moved on, or once it is revoked.
    secret.value = "";
    secretPanel.hidden = true;
    shownId = null;
  };

  const list = async () => {
    const tokens = await api("GET", "/tokens/?page[size]=100");
    body.replaceChildren(...tokens.data.map((token) => row(token, token.id === current, revoke)));
    const count = tokens.meta?.pagination?.count ?? tokens.data.length;
    empty.hidden = tokens.data.length > 0 && count <= tokens.data.length;
    empty.textContent = tokens.data.length === 0 ? "You have no tokens."
      : `Showing the newest ${tokens.data.length} of ${count} tokens.`;
    table.hidden = tokens.data.length === 0;
  };
  const revoke = async (token, mine) => {
    clearMessages();
    const label = token.attributes.name ? `${token.id} (“${token.attributes.name}”)` : token.id;
    const text = mine ? `Token ${label} is the one this browser uses: you will be logged out.`
      : `Token ${label} will stop working at once; scripts that use it will be refused.`;
    if (!(await confirmDialog({ title: "Revoke token?", text, ok: "Revoke", danger: true }))) return;
    try {
      await api("DELETE", `/tokens/${encoded(token.id)}/`);
      if (token.id === shownId) hideSecret(); // a revoked token's secret leaves the screen (§22)
      if (mine) {
        ctx.endSession("You revoked this session's token and have been logged out.");
        return;
      }
      await list();
      showStatus(`Token ${token.id} revoked.`);
      newButton.focus();
    } catch (error) {
      showFailure(error);
    }
  };

  const form = newTokenForm(async (attributes) => {
    const created = await api("POST", "/tokens/", { data: { type: "tokens", attributes } });
    toggle(false, false);
    secret.value = created.data.attributes.token;
    shownId = created.data.id;
    secretPanel.hidden = false;
    secret.focus();
    secret.select();
    await list();
  }, () => toggle(false, true));
  const newButton = button("New Token", () => toggle(form.hidden, true), "button-primary",
    { "aria-controls": "new-token-form", "aria-expanded": "false" });
  const toggle = (open, moveFocus) => {
    form.hidden = !open;
    newButton.setAttribute("aria-expanded", String(open));
    if (open) {
      clearMessages();
      form.reset();
      form.expiry_hours.focus();
    } else if (moveFocus) newButton.focus();
  };

  await list();
  return el("div", {},
    el("div", { class: "view-head" }, el("h1", { id: "tokens-title" }, "API Tokens"), newButton),
    el("p", { class: "muted" }, "Tokens let scripts and scanners use the API as you. Send one as ",
      el("code", {}, "Authorization: Token <secret>"), "."),
    form, secretPanel, el("div", { class: "table-wrap" }, table, empty));
}

function newTokenForm(create, cancel) {
  const form = el("form", { id: "new-token-form", class: "card", "aria-labelledby": "new-token-title", hidden: true, novalidate: true },
    el("h2", { id: "new-token-title" }, "New token"),
    el("div", { class: "field-row" },
      field("Validity (hours)", el("input", { id: "token-hours", name: "expiry_hours", type: "number", inputmode: "numeric",
        min: "1", max: "87600", step: "1", value: "4464", required: true, "aria-describedby": "token-hours-hint" }),
      el("small", { id: "token-hours-hint", class: "hint" }, "4464 hours is about six months.")),
      el("div", { class: "field field-grow" }, el("label", { for: "token-name" }, "Name"),
        el("input", { id: "token-name", name: "name", type: "text", maxlength: "100", placeholder: "optional, e.g. scanner",
          autocomplete: "off" }))),
    formButtons("Create", cancel));
  onSubmit(form, () => {
    const attributes = { expiry_hours: Number(form.expiry_hours.value) };
    if (form.name.value.trim()) attributes.name = form.name.value.trim();
    return create(attributes);
  });
  return form;
}

function row(token, mine, revoke) {
  const { name, created, expiry } = token.attributes;
  const expired = expiry !== null && parseDate(expiry).getTime() <= Date.now();
  return el("tr", { "data-token-id": token.id, class: expired ? "is-expired" : null },
    el("td", { "data-label": "ID" }, el("code", { class: "token-id" }, token.id),
      mine ? el("span", { class: "badge badge-info" }, "this session") : null),
    el("td", { "data-label": "Name", class: name ? "cell-name" : "cell-name muted" }, name || "(no name)"),
    el("td", { "data-label": "Created" }, timeElement(created)),
    el("td", { "data-label": "Expires" }, expiry === null ? "never" : timeElement(expiry),
      expired ? el("span", { class: "badge badge-danger" }, "expired") : null),
    el("td", { class: "cell-actions" }, button("Revoke", () => revoke(token, mine), "button-small button-danger-outline",
      { "aria-label": `Revoke token ${token.id}` })));
}

async function copy(input) {
  input.focus();
  input.select();
  try {
    await navigator.clipboard.writeText(input.value);
    showStatus("Token copied to the clipboard.");
  } catch {
    // navigator.clipboard exists only on https and localhost; the text stays selected instead.
    const copied = document.queryCommandSupported?.("copy") && document.execCommand("copy");
    showStatus(copied ? "Token copied to the clipboard." : "The token is selected: press Ctrl+C (⌘C on a Mac) to copy it.");
  }
}
