// What a document is about (api.md, "What a document is about"), as several views show it: the
// caller's correspondents, document types and custom fields, their words, a <select> of names, a
// day without a time, the filter bar of folders and searches, and error slots that put the API's
// sentence beside the input its pointer names.

import { listAll } from "./api.js";
import { button, el, field, select } from "./dom.js";

export const ALGORITHMS = [["none", "None: only chosen by hand"], ["any", "Any of the words"], ["all", "All the words"],
  ["exact", "The exact words, in order"], ["regex", "Regular expression (RE2)"], ["fuzzy", "Fuzzy (misspellings, OCR errors)"]];
export const DATA_TYPES = [["string", "Text"], ["longtext", "Long text"], ["url", "Web address"], ["date", "Date"],
  ["boolean", "Yes or no"], ["integer", "Whole number"], ["float", "Number"], ["monetary", "Amount of money"],
  ["documentlink", "Links to documents"], ["select", "Choice from a list"]];
/** The filters of folder listings and searches, named as the API names them. */
export const FILTERS = ["correspondent", "document_type", "document_date_after", "document_date_before"];

const byName = (a, b) => a.attributes.name.localeCompare(b.attributes.name);

/** The caller's resources at `path` ("/correspondents/", "/document-types/", "/custom-fields/"), by name. */
export async function names(path) {
  const { items } = await listAll(path);
  return items.sort(byName);
}

const dayFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeZone: "UTC" });

/** "2024-03-12" as a <time>, in the reader's words. */
export const dayElement = (day) => (day ? el("time", { datetime: day }, dayFormat.format(new Date(`${day}T00:00:00Z`))) : null);

/** A <select> of named resources; `first`: [value, text] choices before them. */
export const nameSelect = (attributes, items, value, first = [["", "—"]]) =>
  select(attributes, [...first, ...items.map((item) => [item.id, item.attributes.name])], value ?? "");

/** The filter bar: correspondent, type and a range of document dates. A choice applies at once, a
 *  date when it is left or on Enter: `apply(values, focus)` gets every filter's value ("" for
 *  none) and the data-focus of the control to focus then. On a phone the fields fold away behind
 *  a button (open while a filter is on). */
export function filterBar({ params, correspondents, types, apply, error = null }) {
  const active = FILTERS.filter((name) => params.get(name)).length;
  const choose = (name, label, items) => field(label, nameSelect({ id: `filter-${name}`, name,
    "data-focus": `filter-${name}` }, items, params.get(name), [["", "Any"], ["none", "None"]]));
  const day = (name, label) => field(label, el("input", { type: "date", id: `filter-${name}`, name,
    value: params.get(name) ?? "", "data-focus": `filter-${name}` }));
  const form = el("form", { class: `filter-bar${active ? " is-open" : ""}`, "aria-label": "Filters", novalidate: true });
  const send = (target) => {
    if (form.isConnected) apply(Object.fromEntries(FILTERS.map((name) => [name, form.elements[name].value])), target.dataset.focus);
  };
  const toggle = button(active ? `Filters (${active} on)` : "Filters", () => {
    toggle.setAttribute("aria-expanded", String(form.classList.toggle("is-open")));
  }, "filter-toggle", { "aria-controls": "filter-fields", "aria-expanded": String(active > 0) });
  form.append(toggle, el("div", { class: "filter-fields", id: "filter-fields" },
    choose("correspondent", "Correspondent", correspondents), choose("document_type", "Document type", types),
    day("document_date_after", "Dated from"), day("document_date_before", "Dated until"),
    active ? button("Clear filters", () => apply(Object.fromEntries(FILTERS.map((name) => [name, ""])), "filter-correspondent")) : null,
    error ? el("p", { class: "field-error", role: "alert" }, error) : null));
  const isDay = (target) => target instanceof HTMLInputElement && target.type === "date";
  form.addEventListener("change", (event) => { if (!isDay(event.target)) send(event.target); });
  form.addEventListener("focusout", (event) => {
    if (isDay(event.target) && event.target.value !== (params.get(event.target.name) ?? "")) send(event.target);
  });
  form.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && isDay(event.target)) {
      event.preventDefault();
      send(event.target);
    }
  });
  form.addEventListener("submit", (event) => event.preventDefault());
  return form;
}

/** The filters of `params` that are set, as API query parameters. */
export const chosenFilters = (params) => Object.fromEntries(FILTERS.map((name) => [name, params.get(name) ?? ""]));

const ATTRIBUTES = "/data/attributes/";
let slotCount = 0;

/** Where a form's refusals go: each key (a pointer below /data/attributes/, "name" or
 *  "custom_fields/2") has an error paragraph beside its control; a pointer without one goes to
 *  the parent key that has one (".../2/value/0" → "custom_fields/2"), else to `general`. */
export class ErrorSlots {
  constructor() {
    this.slots = new Map();
    this.general = el("p", { class: "message message-error", role: "alert" });
  }

  /** A form field (dom.js) with the error paragraph of `key` below its control. */
  field(key, label, control, ...more) {
    return field(label, control, this.slot(key, control), ...more);
  }

  /** A new error paragraph for `key`; `control` gets the focus and the description. */
  slot(key, control) {
    slotCount += 1;
    const entry = { control, error: el("p", { class: "field-error", id: `field-error-${slotCount}`, hidden: true }) };
    this.slots.set(key, entry);
    return entry.error;
  }

  clear() {
    this.general.textContent = "";
    for (const { control, error } of this.slots.values()) {
      if (error.hidden) continue;
      error.hidden = true;
      control.removeAttribute("aria-invalid");
      const described = (control.getAttribute("aria-describedby") ?? "").split(" ").filter((id) => id && id !== error.id);
      if (described.length) control.setAttribute("aria-describedby", described.join(" "));
      else control.removeAttribute("aria-describedby");
    }
  }

  show(error) {
    if (error.name === "AbortError") return; // stopped, or its session ended (api.js): nothing to say
    let key = error.pointer?.startsWith(ATTRIBUTES) ? error.pointer.slice(ATTRIBUTES.length) : null;
    while (key && !this.slots.has(key) && key.includes("/")) key = key.slice(0, key.lastIndexOf("/"));
    const entry = key ? this.slots.get(key) : null;
    if (!entry || !entry.control.isConnected) {
      this.general.textContent = error.message;
      return;
    }
    entry.error.textContent = error.message;
    entry.error.hidden = false;
    if (entry.control.matches("input, select, textarea")) entry.control.setAttribute("aria-invalid", "true");
    const described = entry.control.getAttribute("aria-describedby");
    entry.control.setAttribute("aria-describedby", described ? `${entry.error.id} ${described}` : entry.error.id);
    entry.control.focus();
  }
}
