// @ts-check
// Public share links (api.md, "Share links") in the Share dialog, for the node's owner: the links
// to it (their address to copy, until when, password, downloads) revoked here, and a new one made
// with an expiry date, an optional password and download limit, and (a document) which file.

import { api, id as encoded } from "./api.js";
import { busy, button, el, field, formatDate, select } from "./dom.js";

/** A new link's expiry, days ahead, unless changed. */
const DEFAULT_DAYS = 14;
let counter = 0;

const isoDay = (date) => date.toISOString().slice(0, 10);
const daysAhead = (days) => isoDay(new Date(Date.now() + days * 86400000));

/** Copies `text`; the clipboard API needs a secure context, else the selected input's copy. */
async function copy(text, input) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    input.select();
    document.execCommand("copy");
  }
}

/** The section: its links listed, a form for a new one, and what became of the last action beside
 *  them (the dialog is long: its own messages at its top would be out of sight). */
export function linksSection(node) {
  const number = ++counter;
  const error = el("p", { class: "message message-error", role: "alert" });
  const said = el("p", { class: "message message-success", role: "status" });
  const isDocument = node.type === "documents" || node.attributes.node_type === "document";
  const list = el("ul", { class: "plain-list share-links", "aria-label": "Public links" });
  const show = async () => {
    const links = (await api("GET", `/share-links/?node=${encoded(node.id)}&page[size]=100`)).data;
    list.replaceChildren(...(links.length ? links.map(item) : [el("li", { class: "muted" }, "No public links.")]));
  };
  const act = async (task, done) => {
    try {
      await busy(section, task);
      await show();
      error.textContent = "";
      said.textContent = done;
    } catch (failure) {
      said.textContent = "";
      error.textContent = failure.message;
    }
  };
  const item = (link) => {
    const { url, expires_at: expires, has_password: locked, downloads, max_downloads: most } = link.attributes;
    const expired = new Date(expires) <= new Date();
    const input = el("input", { type: "text", readonly: true, value: url, class: "share-url",
      "aria-label": `Address of the link until ${formatDate(expires)}` });
    const facts = [expired ? `Expired ${formatDate(expires)}` : `Until ${formatDate(expires)}`,
      locked ? "password" : "no password",
      most ? `${downloads} of ${most} downloads` : `${downloads} downloads`].join(" · ");
    return el("li", { class: "share-link" }, input,
      el("div", { class: "line" }, el("span", { class: "hint" }, facts), el("div", { class: "line-actions" },
        button("Copy", () => copy(url, input).then(() => { said.textContent = "Link copied."; }), "button-small",
          { "aria-label": `Copy the link until ${formatDate(expires)}` }),
        button("Revoke", () => act(() => api("DELETE", `/share-links/${encoded(link.id)}/`), "The link no longer works."),
          "button-small button-danger-outline", { "aria-label": `Revoke the link until ${formatDate(expires)}` }))));
  };

  const expires = el("input", { type: "date", id: `link-expires-${number}`, required: true, value: daysAhead(DEFAULT_DAYS),
    min: daysAhead(1) });
  const password = el("input", { type: "password", id: `link-password-${number}`, autocomplete: "new-password",
    minlength: "8", "aria-describedby": `link-password-hint-${number}` });
  const most = el("input", { type: "number", id: `link-most-${number}`, min: "1", step: "1", inputmode: "numeric" });
  const version = select({ id: `link-version-${number}` }, [["original", "The original file"], ["searchable", "The searchable PDF"]], "original");
  const form = el("form", { novalidate: true, "aria-label": "New public link" },
    el("div", { class: "field-row" }, field("Works until", expires),
      field("Password (optional)", password, el("small", { class: "hint", id: `link-password-hint-${number}` }, "8 characters or more")),
      field("Downloads (optional)", most), isDocument ? field("File", version) : null),
    el("button", { type: "submit", class: "button button-primary" }, "Make link"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const attributes = { node: node.id, expires_at: expires.value, password: password.value || null,
      max_downloads: most.value ? Number(most.value) : null, file_version: isDocument ? version.value : "original" };
    act(() => api("POST", "/share-links/", { data: { type: "share-links", attributes } }),
      "Link made: copy it below and send it.").then(() => { password.value = ""; most.value = ""; });
  });
  const section = el("section", { class: "share-links-section", "aria-labelledby": `links-title-${number}` },
    el("h3", { id: `links-title-${number}` }, "Public links"),
    el("p", { class: "hint" }, "Anyone with the address opens it without an account, until it expires or you revoke it."),
    error, said, list, form);
  show().catch((failure) => { error.textContent = failure.message; });
  return section;
}
