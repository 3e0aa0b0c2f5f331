// Settings › Correspondents and Settings › Document types (api.md, "Correspondents and document
// types"): the caller's names, how dms matches them in a document's text and how many documents
// carry each; add, edit, delete (which takes the name off its documents and leaves them).

import { id as encoded } from "./api.js";
import { el, plural, select } from "./dom.js";
import { ALGORITHMS, dayElement, ErrorSlots, names } from "./metadata.js";
import { confirmDelete, dataTable, formButtons, formSlot, onSubmit, rowActions, sectionPage } from "./parts.js";

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
  const kinds = kind.title.toLowerCase();
  return sectionPage(kind.title, add, kind.intro, slot, dataTable(`Your ${kinds}`, heads,
    items.map((item) => labelRow(ctx, kind, item, edit, dated)), `You have no ${kinds} yet.`));
}

function labelRow(ctx, kind, item, edit, dated) {
  const a = item.attributes;
  const count = plural(a.document_count, "document");
  const remove = () => confirmDelete(ctx, { title: `Delete ${kind.noun.toLowerCase()}?`, path: `${kind.path}${encoded(item.id)}/`,
    text: `“${a.name}” is taken off its ${count}; the documents stay.`, done: `${kind.noun} “${a.name}” deleted.` });
  return el("tr", {},
    el("td", { "data-label": "Name", class: "cell-wrap" }, a.name),
    el("td", { "data-label": "Matching" }, a.matching_algorithm === "none" ? "By hand" : HOW.get(a.matching_algorithm),
      a.match && a.matching_algorithm !== "none" ? el("div", {}, el("code", { class: "rule-pattern" }, a.match),
        a.is_insensitive ? null : el("span", { class: "hint" }, " (case-sensitive)")) : null),
    el("td", { "data-label": "Documents" }, a.document_count
      ? el("a", { href: `#/search?${kind.filter}=${encoded(item.id)}`, "aria-label": `${count}: ${a.name}` }, count) : count),
    dated ? el("td", { "data-label": "Last" }, dayElement(a.last_correspondence) ?? el("span", { class: "muted" }, "—")) : null,
    rowActions(a.name, () => edit(item), remove));
}

function labelForm(kind, item, save, cancel) {
  const a = item?.attributes ?? { name: "", match: "", matching_algorithm: "none", is_insensitive: true };
  const errors = new ErrorSlots();
  const titleId = `${kind.type}-form-title`;
  const name = el("input", { id: "label-name", type: "text", value: a.name, maxlength: "128", autocomplete: "off", required: true });
  const algorithm = select({ id: "label-algorithm" }, ALGORITHMS, a.matching_algorithm);
  const match = el("input", { id: "label-match", type: "text", value: a.match, maxlength: "256", autocomplete: "off",
    spellcheck: "false", class: "mono", "aria-describedby": "label-match-hint" });
  const insensitive = el("input", { id: "label-insensitive", type: "checkbox", checked: a.is_insensitive });
  const form = el("form", { class: "card", "aria-labelledby": titleId, novalidate: true },
    el("h2", { id: titleId }, item ? `Edit ${kind.noun.toLowerCase()}` : `New ${kind.noun.toLowerCase()}`),
    errors.field("name", "Name", name),
    el("div", { class: "field-row" },
      el("div", { class: "field-grow" }, errors.field("matching_algorithm", "Matching", algorithm)),
      el("div", { class: "field-grow" }, errors.field("match", "Words to find", match,
        el("small", { class: "hint", id: "label-match-hint" }, "Looked for in the text of new documents; empty: never matches.")))),
    el("div", { class: "check" }, insensitive, el("label", { for: insensitive.id }, "Ignore case")),
    errors.slot("is_insensitive", insensitive), errors.general, formButtons(`Save ${kind.noun.toLowerCase()}`, cancel));
  onSubmit(form, () => save({ name: name.value.trim(), matching_algorithm: algorithm.value, match: match.value,
    is_insensitive: insensitive.checked }), errors);
  return form;
}
