// Settings › Correspondents and Settings › Document types (api.md, "Correspondents and document
// types"): the caller's names with how dms matches them in a document's text and how many
// documents carry each (a link to those documents); add, edit (in one form above the list, as
// webhooks are) and delete, which takes the name off its documents and leaves them.

import { api, id as encoded } from "./api.js";
import { confirmDialog } from "./dialogs.js";
import { attempt, busy, clearMessages, el, showStatus } from "./dom.js";
import { ALGORITHMS, dayElement, ErrorSlots, names } from "./metadata.js";
import { formSlot } from "./parts.js";

const HOW = new Map(ALGORITHMS);

export const correspondents = { render: (ctx) => render(ctx, {
  type: "correspondents", path: "/correspondents/", noun: "Correspondent", filter: "correspondent", title: "Correspondents",
  intro: "Who sent a document. dms gives a new document the correspondent whose words it finds in its text.",
}) };

export const documentTypes = { render: (ctx) => render(ctx, {
  type: "document-types", path: "/document-types/", noun: "Document type", filter: "document_type", title: "Document types",
  intro: "What a document is: a bill, a contract, a payslip. dms gives a new document the type whose words it finds in its text.",
}) };

async function render(ctx, kind) {
  const items = await names(kind.path);
  const { add, slot, edit } = formSlot(ctx, { type: kind.type, path: kind.path, noun: kind.noun,
    addLabel: `Add ${kind.noun.toLowerCase()}`, form: (item, save, cancel) => labelForm(kind, item, save, cancel) });
  const dated = kind.type === "correspondents";
  const heads = ["Name", "Matching", "Documents", dated ? "Last document" : null].filter(Boolean);
  return el("div", {},
    el("div", { class: "view-head" }, el("h1", {}, kind.title), add),
    el("p", { class: "muted" }, kind.intro),
    slot,
    items.length ? el("div", { class: "table-wrap" }, el("table", { class: "table" },
      el("caption", { class: "visually-hidden" }, `Your ${kind.title.toLowerCase()}`),
      el("thead", {}, el("tr", {}, heads.map((head) => el("th", { scope: "col" }, head)),
        el("th", { scope: "col" }, el("span", { class: "visually-hidden" }, "Actions")))),
      el("tbody", {}, items.map((item) => labelRow(ctx, kind, item, edit, dated)))))
      : el("p", { class: "muted" }, `You have no ${kind.title.toLowerCase()} yet.`));
}

function labelRow(ctx, kind, item, edit, dated) {
  const a = item.attributes;
  const count = a.document_count === 1 ? "1 document" : `${a.document_count} documents`;
  const remove = async () => {
    const sure = await confirmDialog({ title: `Delete ${kind.noun.toLowerCase()}?`, ok: "Delete", danger: true,
      text: `“${a.name}” is taken off its ${count}; the documents stay.` });
    if (sure && await attempt(() => api("DELETE", `${kind.path}${encoded(item.id)}/`)) !== undefined) {
      showStatus(`${kind.noun} “${a.name}” deleted.`);
      ctx.refresh();
    }
  };
  return el("tr", {},
    el("td", { "data-label": "Name", class: "cell-wrap" }, a.name),
    el("td", { "data-label": "Matching" }, a.matching_algorithm === "none" ? "By hand" : HOW.get(a.matching_algorithm),
      a.match && a.matching_algorithm !== "none" ? el("div", {}, el("code", { class: "rule-pattern" }, a.match),
        a.is_insensitive ? null : el("span", { class: "hint" }, " (case-sensitive)")) : null),
    el("td", { "data-label": "Documents" }, a.document_count
      ? el("a", { href: `#/search?${kind.filter}=${encoded(item.id)}`, "aria-label": `${count}: ${a.name}` }, count) : count),
    dated ? el("td", { "data-label": "Last" }, dayElement(a.last_correspondence) ?? el("span", { class: "muted" }, "—")) : null,
    el("td", { class: "cell-actions" },
      el("button", { type: "button", class: "button button-small", "aria-label": `Edit: ${a.name}`, onclick: () => edit(item) }, "Edit"),
      el("button", { type: "button", class: "button button-small button-danger-outline", "aria-label": `Delete: ${a.name}`,
        onclick: remove }, "Delete")));
}

function labelForm(kind, item, save, cancel) {
  const a = item?.attributes ?? { name: "", match: "", matching_algorithm: "none", is_insensitive: true };
  const errors = new ErrorSlots();
  const titleId = `${kind.type}-form-title`;
  const name = el("input", { id: "label-name", type: "text", value: a.name, maxlength: "128", autocomplete: "off", required: true });
  const algorithm = el("select", { id: "label-algorithm" },
    ALGORITHMS.map(([code, text]) => el("option", { value: code, selected: code === a.matching_algorithm }, text)));
  const match = el("input", { id: "label-match", type: "text", value: a.match, maxlength: "256", autocomplete: "off",
    spellcheck: "false", class: "mono", "aria-describedby": "label-match-hint" });
  const insensitive = el("input", { id: "label-insensitive", type: "checkbox", checked: a.is_insensitive });
  const field = (key, control, label, ...more) => el("div", { class: "field" },
    el("label", { for: control.id }, label), control, errors.slot(key, control), ...more);
  const form = el("form", { class: "card", "aria-labelledby": titleId, novalidate: true },
    el("h2", { id: titleId }, item ? `Edit ${kind.noun.toLowerCase()}` : `New ${kind.noun.toLowerCase()}`),
    field("name", name, "Name"),
    el("div", { class: "field-row" },
      el("div", { class: "field-grow" }, field("matching_algorithm", algorithm, "Matching")),
      el("div", { class: "field-grow" }, field("match", match, "Words to find",
        el("small", { class: "hint", id: "label-match-hint" }, "Looked for in the text of new documents; empty: never matches.")))),
    el("div", { class: "check" }, insensitive, el("label", { for: insensitive.id }, "Ignore case")),
    errors.slot("is_insensitive", insensitive), errors.general,
    el("div", { class: "actions" }, el("button", { type: "submit", class: "button button-primary" }, `Save ${kind.noun.toLowerCase()}`),
      el("button", { type: "button", class: "button", onclick: cancel }, "Cancel")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearMessages();
    errors.clear();
    const attributes = { name: name.value.trim(), matching_algorithm: algorithm.value, match: match.value,
      is_insensitive: insensitive.checked };
    try {
      await busy(form, () => save(attributes));
    } catch (error) {
      if (error.status !== 401) errors.show(error);
    }
  });
  return form;
}
