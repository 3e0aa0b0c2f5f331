// The document view's Details panel (api.md, "A document's metadata"): correspondent, type, date,
// serial number and custom fields (added and taken off here), each with an input fitting its type.
// One Save sends everything in one PATCH; a refusal's sentence goes beside the input its pointer
// names and nothing typed is lost, not even when the view is drawn again before Save (its reading
// done, a tag added: the new form takes over what was changed in the old one). Read-only (inputs
// disabled, no Save) for a viewer.

import { api, id as encoded } from "./api.js";
import { documentDialog } from "./doc-pickers.js";
import { busy, button, el, showStatus } from "./dom.js";
import { ErrorSlots, nameSelect } from "./metadata.js";

/** The API's largest serial number (api.md, "A document's metadata"). */
const MAX_ASN = 4_294_967_295;
const MONEY = /^([A-Za-z]{3})?(.*)$/;

/** The form on the screen for each document id: a form drawn again for the same document takes
 *  over the values changed and not saved in the one it replaces (still there until the view
 *  it was part of is disposed, after the new one is built: app.js route). */
const shown = new Map();

/** The panel {node, dispose}; `labels`: the caller's {correspondents, types, fields}. */
export async function detailsPanel(ctx, document, labels, writable) {
  const a = document.attributes;
  const fields = new Map(labels.fields.map((field) => [field.id, field]));
  const linked = [...new Set(a.custom_fields.filter((item) => fields.get(item.field)?.attributes.data_type === "documentlink")
    .flatMap((item) => item.value ?? []))];
  const titles = new Map(await Promise.all(linked.map((id) => api("GET", `/documents/${encoded(id)}/`)
    .then((answer) => [id, answer.data.attributes.title], () => [id, "A document"]))));
  const form = new DetailsForm(ctx, document, labels, fields, titles);
  if (!writable) {
    for (const control of form.form.elements) control.disabled = true;
    for (const part of [form.addArea, form.none, form.form.lastElementChild]) if (part) part.hidden = true;
  } else {
    const replaced = shown.get(document.id);
    if (replaced) form.takeOver(replaced);
  }
  shown.set(document.id, form);
  const dispose = () => { if (shown.get(document.id) === form) shown.delete(document.id); };
  return { node: form.node, dispose };
}

class DetailsForm {
  constructor(ctx, document, labels, fields, titles) {
    const a = document.attributes;
    this.ctx = ctx;
    this.document = document;
    this.fields = fields;
    this.titles = titles;
    this.errors = new ErrorSlots();
    this.rows = [];
    // A shared document's names and fields are its owner's, which the caller's lists may lack: they
    // are kept as they are (a PATCH replaces all of them).
    const kept = (items, id) => (id && !items.some((item) => item.id === id) ? [...items, { id, attributes: { name: "The owner’s" } }] : items);
    const correspondent = nameSelect({ id: "details-correspondent" }, kept(labels.correspondents, a.correspondent), a.correspondent);
    const type = nameSelect({ id: "details-type" }, kept(labels.types, a.document_type), a.document_type);
    const others = a.custom_fields.filter((item) => !fields.has(item.field));
    const date = el("input", { type: "date", id: "details-date", value: a.document_date ?? "", "aria-describedby": "details-date-hint" });
    const asn = el("input", { type: "number", id: "details-asn", min: "0", max: String(MAX_ASN), step: "1",
      value: a.archive_serial_number ?? "" });
    this.controls = { correspondent, document_type: type, document_date: date, archive_serial_number: asn };
    this.read = () => ({
      correspondent: correspondent.value || null,
      document_type: type.value || null,
      document_date: date.validity.badInput ? "" : date.value || null,
      // Something the browser cannot read as a number goes as "", for the server to refuse.
      archive_serial_number: asn.validity.badInput ? "" : (asn.value === "" ? null : Number(asn.value)),
      custom_fields: [...this.rows.map((row) => ({ field: row.field.id, value: row.value() })), ...others],
    });
    this.list = el("div", { class: "custom-fields" });
    for (const item of a.custom_fields) if (fields.has(item.field)) this.addRow(fields.get(item.field), item.value);

    this.adding = el("select", { id: "details-add-field" });
    const add = button("Add field", () => this.addChosen());
    this.addArea = el("div", { class: "field" }, el("label", { for: "details-add-field" }, "Add a custom field"),
      el("div", { class: "copy-row" }, this.adding, add), this.errors.slot("custom_fields", this.adding));
    this.none = fields.size ? null : el("p", { class: "hint" }, "You have no custom fields yet. ",
      el("a", { href: "#/settings/custom-fields" }, "Make one in Settings."));
    this.offer();

    this.node = el("section", { class: "panel", "aria-labelledby": "details-title" }, el("h2", { id: "details-title" }, "Details"));
    this.form = el("form", { class: "details-form", "aria-labelledby": "details-title", novalidate: true },
      el("div", { class: "field-pair" },
        this.errors.field("correspondent", "Correspondent", correspondent),
        this.errors.field("document_type", "Document type", type)),
      el("div", { class: "field-pair" },
        this.errors.field("document_date", "Document date", date, el("small", { class: "hint", id: "details-date-hint" }, "Empty: the upload day.")),
        this.errors.field("archive_serial_number", "Serial number", asn)),
      this.list, this.addArea, this.none, this.errors.general,
      el("div", { class: "actions" }, el("button", { type: "submit", class: "button button-primary", "data-focus": "details-save" },
        "Save details")));
    this.form.addEventListener("submit", (event) => this.save(event));
    this.node.append(this.form);
    this.saved = this.read();
  }

  /** The values changed since the form was drawn or saved: {attribute: value}. */
  changes() {
    const now = this.read();
    return Object.fromEntries(Object.entries(now).filter(([key, value]) => JSON.stringify(value) !== JSON.stringify(this.saved[key])));
  }

  /** Takes over what `old` (this document's form drawn before) has changed and not saved; the rest
   *  shows what the server holds now (a rule may have set it meanwhile). */
  takeOver(old) {
    const changes = old.changes();
    for (const [key, control] of Object.entries(this.controls)) if (key in changes) control.value = String(changes[key] ?? "");
    if (!("custom_fields" in changes)) return;
    for (const [id, title] of old.titles) if (!this.titles.has(id)) this.titles.set(id, title);
    for (const row of this.rows) row.node.remove();
    this.rows = [];
    for (const item of changes.custom_fields) if (this.fields.has(item.field)) this.addRow(this.fields.get(item.field), item.value);
    this.offer();
  }

  /** The fields not on the document yet, in the Add select; the select hides when there are none. */
  offer() {
    const taken = new Set(this.rows.map((row) => row.field.id));
    const free = [...this.fields.values()].filter((field) => !taken.has(field.id));
    this.adding.replaceChildren(...free.map((field) => el("option", { value: field.id }, field.attributes.name)));
    this.addArea.hidden = free.length === 0;
  }

  addChosen() {
    const field = this.fields.get(this.adding.value);
    if (!field) return;
    const row = this.addRow(field, null);
    this.offer();
    row.focus.focus();
  }

  addRow(field, value) {
    const row = { field, ...fieldInput(field, value, this) };
    const name = field.attributes.name;
    const remove = button("Remove", () => {
      this.rows = this.rows.filter((other) => other !== row);
      row.node.remove();
      this.offer();
      (this.addArea.hidden ? this.form.querySelector("[type=submit]") : this.adding).focus();
    }, "button-small button-danger-outline", { "aria-label": `Remove field ${name}` });
    row.error = this.errors.slot(`field-${field.id}`, row.focus);
    row.node = el("div", { class: `field custom-field cf-${field.attributes.data_type}` },
      el("div", { class: "custom-field-head" }, row.label, remove), row.control, row.error, row.hint);
    this.rows.push(row);
    this.list.append(row.node);
    return row;
  }

  async save(event) {
    event.preventDefault();
    this.errors.clear();
    // The pointers name the rows by their place in the list sent.
    this.rows.forEach((row, index) => this.errors.slots.set(`custom_fields/${index}`, this.errors.slots.get(`field-${row.field.id}`)));
    const { document, ctx } = this;
    try {
      await busy(this.form, () => api("PATCH", `/documents/${encoded(document.id)}/`,
        { data: { type: "documents", id: document.id, attributes: this.read() } }));
    } catch (error) {
      if (error.status !== 401) this.errors.show(error);
      return;
    } finally {
      for (const key of [...this.errors.slots.keys()]) if (key.startsWith("custom_fields/")) this.errors.slots.delete(key);
    }
    this.saved = this.read(); // nothing left for the form drawn next to take over
    await ctx.refresh("details-save");
    showStatus("Details saved.");
  }
}

/** One custom field's input: {label, control, focus (what takes the focus), value(), hint?}; also
 *  the value a rule sets (rules-form.js; `form`, the document's, only for a documentlink). */
export function fieldInput(field, value, form) {
  const { name, data_type: type, extra_data: extra } = field.attributes;
  const id = `cf-${field.id}`;
  const label = el("label", { for: id }, name);
  const input = (attributes) => el("input", { id, value: value ?? "", autocomplete: "off", ...attributes });
  const text = (control) => ({ label, control, focus: control, value: () => control.value.trim() || null });
  switch (type) {
    case "longtext": return text(el("textarea", { id, rows: "4" }, value ?? ""));
    case "url": return text(input({ type: "url", spellcheck: "false" }));
    case "date": return text(input({ type: "date" }));
    case "integer": case "float": {
      const control = input({ type: "number", step: type === "integer" ? "1" : "any" });
      return { label, control, focus: control,
        value: () => (control.validity.badInput ? "" : (control.value === "" ? null : Number(control.value))) };
    }
    case "boolean": {
      // No value yet shows as neither ticked nor not ticked, and stays so until the box is clicked.
      const control = el("input", { type: "checkbox", id, checked: value === true });
      control.indeterminate = value === null || value === undefined;
      return { label: el("div", { class: "check" }, control, label), control: null, focus: control,
        value: () => (control.indeterminate ? null : control.checked) };
    }
    case "select": {
      const options = (extra.select_options ?? []).map((option) => ({ id: option.id, attributes: { name: option.label } }));
      const control = nameSelect({ id }, options, value);
      return { label, control, focus: control, value: () => control.value || null };
    }
    case "monetary": {
      const [, currency, amount] = MONEY.exec(value ?? "") ?? [];
      const code = el("input", { type: "text", id: `${id}-currency`, class: "currency", value: currency ?? extra.default_currency ?? "",
        maxlength: "3", autocomplete: "off", spellcheck: "false", autocapitalize: "characters", "aria-label": `${name}: currency` });
      const sum = el("input", { type: "text", id, inputmode: "decimal", value: amount ?? "", autocomplete: "off",
        placeholder: "0.00", "aria-describedby": `${id}-hint` });
      return { label, focus: sum, control: el("div", { class: "money" }, code, sum),
        hint: el("small", { class: "hint", id: `${id}-hint` }, "A currency code such as EUR, and an amount such as 12.30."),
        value: () => (sum.value.trim() ? code.value.trim().toUpperCase() + sum.value.trim() : null) };
    }
    case "documentlink": return linksInput(field, value, form);
    default: return text(input({ type: "text", maxlength: "128" }));
  }
}

/** A documentlink's documents as chips (a link each, and a button that takes it away) and a
 *  button that picks another in the document picker. */
function linksInput(field, value, form) {
  const name = field.attributes.name;
  const ids = [...(value ?? [])];
  const { document, titles } = form;
  const labelId = `cf-${field.id}-label`;
  const chips = el("ul", { class: "tags links", "aria-labelledby": labelId });
  const pick = button("Link a document…", async () => {
    const chosen = await documentDialog({ title: `Link a document: ${name}`, ok: "Link", exclude: document.id,
      folderId: document.attributes.breadcrumb.at(-2)?.[1] });
    if (chosen && !ids.includes(chosen.id)) {
      ids.push(chosen.id);
      titles.set(chosen.id, chosen.title);
      show();
    }
  }, "button-small", { id: `cf-${field.id}`, "aria-describedby": labelId });
  const show = () => chips.replaceChildren(...(ids.length ? [] : [el("li", { class: "muted" }, "No document linked.")]), ...ids.map((linked) => {
    const title = titles.get(linked) ?? "A document";
    return el("li", { class: "tag" }, el("a", { href: `#/doc/${encoded(linked)}` }, title),
      el("button", { type: "button", class: "tag-remove", "aria-label": `Remove link to ${title}`, onclick: () => {
        ids.splice(ids.indexOf(linked), 1);
        show();
        pick.focus();
      } }, "×"));
  }));
  show();
  return { label: el("span", { class: "field-label", id: labelId }, name), focus: pick,
    control: el("div", { class: "links-field" }, chips, pick), value: () => [...ids] };
}
