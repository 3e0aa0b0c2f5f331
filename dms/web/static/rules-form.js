// Settings › Rules: the dialog that creates or edits a rule (api.md, "Rules"), and the words for
// a rule's parts, which the list shows too. The server checks everything: a refusal's sentence is
// shown next to the field its source.pointer names (/data/attributes/match/pattern → the pattern).
// What a rule sets of a document's metadata (correspondent, type, a custom field, the date read
// from the text) is chosen among the caller's own names and fields, a value in the field's input.

import { api, id as encoded } from "./api.js";
import { folderDialog, formActions, modal } from "./dialogs.js";
import { fieldInput } from "./doc-details.js";
import { busy, button, el, folderPath, select } from "./dom.js";
import { ALGORITHMS, ErrorSlots, nameSelect, names } from "./metadata.js";
import { tagList, tagSuggestions } from "./parts.js";

export const FIELDS = [["text", "Text"], ["title", "Title"], ["file_name", "File name"], ["mail_from", "Mail sender"],
  ["mail_subject", "Mail subject"], ["any", "Any field"]];
export const SOURCES = [["api", "Uploads"], ["import", "dms import"], ["consume", "The consume folder"],
  ["mail", "Mail attachments"]];
const PATTERN_HINTS = {
  any: "Words separated by spaces; one of them is enough. Punctuation between words does not matter.",
  all: "Words separated by spaces; the field must have every one of them.",
  exact: "These words, next to each other, in this order.",
  regex: "An RE2 expression, searched anywhere in the field, e.g. INV-(\\d{4}); no backreferences or lookaround.",
  fuzzy: "Words as they should read; small misspellings and OCR errors still match. Case never matters.",
};
/** The API's bounds (api.md, "Rules"), so that the fields stop where the server would refuse. */
const MAX_NAME = 100;
const MAX_PATTERN = 1000;
const MAX_TEMPLATE = 500;
const MAX_ORDER = 1_000_000;

/** A select's first choice: the rule leaves that part of the document as it is. */
const LEAVE = [["", "— (left as it is)"]];

/** The caller's correspondents, document types and the custom fields a rule can set (all but
 *  links to documents, api.md "Rules"), by name: {correspondents, types, fields}. */
export async function ruleLabels() {
  const [correspondents, types, fields] = await Promise.all([names("/correspondents/"),
    names("/document-types/"), names("/custom-fields/")]);
  return { correspondents, types, fields: fields.filter((item) => item.attributes.data_type !== "documentlink") };
}

/** A custom field's value in words (`field` the field's resource, undefined if it was deleted):
 *  a choice's label, yes or no, "empty" for none. */
export function fieldValueText(field, value) {
  if (value === null || value === undefined || value === "") return "empty";
  const type = field?.attributes.data_type;
  if (type === "boolean") return value ? "yes" : "no";
  if (type === "select") {
    return (field.attributes.extra_data.select_options ?? []).find((option) => option.id === value)?.label ?? "a deleted choice";
  }
  return String(value);
}

/** Creates (`rule` null) or edits a rule; `folders`: a Map of folder ids to their paths;
 *  `labels`: ruleLabels(). Resolves with the saved rule resource, or null. */
export function ruleDialog({ rule = null, folders = new Map(), labels }) {
  const a = rule?.attributes ?? { enabled: true, order: 0, sources: SOURCES.map(([code]) => code),
    match: { field: "text", algorithm: "any", pattern: "", case_sensitive: false },
    actions: { add_tags: [], move_to: null, set_title: null, stop: false, set_correspondent: null,
      set_document_type: null, set_custom_field: null, set_document_date_from_text: false } };
  return modal(rule ? `Edit rule “${a.name}”` : "New rule", (dialog, close) => {
    dialog.classList.add("dialog-wide");
    const form = new RuleForm(a, folders, labels, close);
    form.node.addEventListener("submit", async (event) => {
      event.preventDefault();
      form.errors.clear();
      const attributes = form.attributes();
      try {
        const saved = await busy(form.node, () => (rule
          ? api("PATCH", `/rules/${encoded(rule.id)}/`, { data: { type: "rules", id: rule.id, attributes } })
          : api("POST", "/rules/", { data: { type: "rules", attributes } })));
        close(saved.data);
      } catch (error) {
        form.errors.show(error); // (a 401 closed the dialog already: app.js endSession)
      }
    });
    dialog.append(form.node);
  });
}

class RuleForm {
  constructor(a, folders, labels, close) {
    this.folders = folders;
    this.fields = labels.fields;
    this.tags = [...a.actions.add_tags];
    this.moveTo = a.actions.move_to;
    this.errors = new ErrorSlots();
    const slot = this.errors.slot.bind(this.errors);
    const text = (id, value, extra = {}) => el("input", { id, type: "text", value: value ?? "", autocomplete: "off", ...extra });
    const check = (id, label, checked, extra = {}) => el("div", { class: "check" },
      el("input", { id, type: "checkbox", checked, ...extra }), el("label", { for: id }, label));

    this.name = text("rule-name", a.name, { maxlength: String(MAX_NAME), required: true });
    this.order = el("input", { id: "rule-order", type: "number", step: "1", min: String(-MAX_ORDER), max: String(MAX_ORDER),
      value: String(a.order), "aria-describedby": "rule-order-hint" });
    const enabled = check("rule-enabled", "Enabled: files new documents", a.enabled);
    this.enabled = enabled.querySelector("input");
    this.field = select({ id: "rule-field" }, FIELDS, a.match.field);
    this.algorithm = select({ id: "rule-algorithm" }, ALGORITHMS.slice(1), a.match.algorithm); // all but "none"
    this.pattern = text("rule-pattern", a.match.pattern, { class: "mono", maxlength: String(MAX_PATTERN), spellcheck: "false",
      required: true, "aria-describedby": "rule-pattern-hint" });
    const patternHint = el("small", { class: "hint", id: "rule-pattern-hint" });
    const caseBox = check("rule-case", "Case-sensitive", a.match.case_sensitive);
    this.caseSensitive = caseBox.querySelector("input");
    const sourceBoxes = SOURCES.map(([code, label]) => check(`rule-source-${code}`, label, a.sources.includes(code),
      { value: code, name: "source" }));
    this.sources = sourceBoxes.map((box) => box.querySelector("input"));

    this.tagInput = text("rule-tag", "", { list: "rule-tag-names", maxlength: "100", "aria-describedby": "rule-tag-hint" });
    this.chips = el("div", { class: "rule-tags" });
    const addTag = button("Add tag", () => this.addTags());
    this.tagInput.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === ",") {
        event.preventDefault(); // Enter would save the whole rule
        this.addTags();
      }
    });
    // The button is described by the path itself (the output's own name is its label).
    this.folderName = el("span", { id: "rule-folder-path" });
    this.chooseFolder = button("Choose folder…", () => this.pickFolder(), "", { "aria-describedby": "rule-folder-path" });
    this.noFolder = button("Don’t move", () => {
      this.setFolder(null);
      this.chooseFolder.focus(); // the focused button is hidden now
    });
    this.title = text("rule-title", a.actions.set_title, { maxlength: String(MAX_TEMPLATE), spellcheck: "false",
      "aria-describedby": "rule-title-hint" });
    const stop = check("rule-stop", "Stop: later rules leave a matched document alone", a.actions.stop);
    this.stop = stop.querySelector("input");
    this.correspondent = nameSelect({ id: "rule-correspondent" }, labels.correspondents, a.actions.set_correspondent, LEAVE);
    this.type = nameSelect({ id: "rule-type" }, labels.types, a.actions.set_document_type, LEAVE);
    const custom = a.actions.set_custom_field;
    this.customField = nameSelect({ id: "rule-custom-field" }, labels.fields, custom?.field, LEAVE);
    this.customValue = null; // the chosen field's input (doc-details.js fieldInput)
    this.valuePlace = el("div", {});
    this.customField.addEventListener("change", () => this.showValue(null));
    const dateBox = check("rule-date", "Set the date on the paper to the date read from the text",
      a.actions.set_document_date_from_text);
    this.dateFromText = dateBox.querySelector("input");

    // The error goes right below its field, above the field's hint.
    const field = this.errors.field.bind(this.errors);
    const matchSet = el("fieldset", { class: "group" }, el("legend", {}, "What it matches"),
      el("div", { class: "field-row" },
        el("div", { class: "field-grow" }, field("match/field", "Look in", this.field)),
        el("div", { class: "field-grow" }, field("match/algorithm", "How", this.algorithm))),
      field("match/pattern", "Pattern", this.pattern, patternHint),
      caseBox, slot("match/case_sensitive", this.caseSensitive), slot("match", this.pattern));
    const sourceSet = el("fieldset", { class: "group" },
      el("legend", {}, "New documents it looks at"), el("div", { class: "check-row" }, sourceBoxes),
      slot("sources", this.sources[0]));
    const actionSet = el("fieldset", { class: "group" }, el("legend", {}, "What it does"),
      el("div", { class: "field" }, el("label", { for: "rule-tag" }, "Add tags"), this.chips,
        el("div", { class: "copy-row" }, this.tagInput, addTag),
        el("small", { class: "hint", id: "rule-tag-hint" }, "One of your tags, or a new name (it is created)."),
        tagSuggestions("rule-tag-names"), slot("actions/add_tags", this.tagInput)),
      el("div", { class: "field" }, el("span", { class: "field-label", id: "rule-folder-label" }, "Move to a folder"),
        el("output", { "aria-labelledby": "rule-folder-label" }, this.folderName),
        el("div", { class: "actions" }, this.chooseFolder, this.noFolder),
        slot("actions/move_to", this.chooseFolder)),
      field("actions/set_title", "New title", this.title, el("small", { class: "hint", id: "rule-title-hint" },
        "Empty: the title stays. Takes {title}, {file_name}, {created} or {created:%Y}, {mail_from}, {mail_subject} and {match}.")),
      stop, slot("actions/stop", this.stop), slot("actions", this.tagInput));
    const missing = [["correspondents", labels.correspondents], ["document types", labels.types],
      ["custom fields", labels.fields]].filter(([, items]) => !items.length).map(([name]) => name);
    const listed = missing.length > 1 ? `${missing.slice(0, -1).join(", ")} and ${missing.at(-1)}` : missing[0];
    const metadataSet = el("fieldset", { class: "group" }, el("legend", {}, "What it sets"),
      missing.length ? el("p", { class: "hint" }, `You have no ${listed} yet: make them in Settings.`) : null,
      el("div", { class: "field-row" },
        el("div", { class: "field-grow" }, field("actions/set_correspondent", "Correspondent", this.correspondent)),
        el("div", { class: "field-grow" }, field("actions/set_document_type", "Document type", this.type))),
      field("actions/set_custom_field/field", "Custom field", this.customField), this.valuePlace,
      dateBox, slot("actions/set_document_date_from_text", this.dateFromText));
    this.node = el("form", { class: "rule-form", novalidate: true },
      el("div", { class: "field-row" },
        el("div", { class: "field-grow" }, field("name", "Name", this.name)),
        field("order", "Order", this.order, el("small", { class: "hint", id: "rule-order-hint" }, "Lower runs first."))),
      enabled, slot("enabled", this.enabled),
      a.last_error ? el("p", { class: "message message-error" }, a.last_error) : null, matchSet, sourceSet, actionSet, metadataSet, this.errors.general,
      formActions(close, "Save rule"));
    this.name.setAttribute("autofocus", "");

    const algorithmChanged = () => {
      patternHint.textContent = PATTERN_HINTS[this.algorithm.value] ?? "";
      const fuzzy = this.algorithm.value === "fuzzy";
      this.caseSensitive.disabled = fuzzy; // fuzzy is always case-blind (the API refuses true)
      if (fuzzy) this.caseSensitive.checked = false;
    };
    this.algorithm.addEventListener("change", algorithmChanged);
    algorithmChanged();
    this.showTags();
    this.setFolder(this.moveTo);
    this.showValue(custom?.value ?? null);
  }

  /** The input of the chosen custom field's value (none without a field), holding `value`. */
  showValue(value) {
    const chosen = this.fields.find((item) => item.id === this.customField.value);
    this.customValue = chosen ? fieldInput(chosen, value, null) : null;
    if (!this.customValue) {
      this.errors.slots.delete("actions/set_custom_field/value");
      this.valuePlace.replaceChildren();
      return;
    }
    const { label, control, hint, focus } = this.customValue;
    this.valuePlace.replaceChildren(el("div", { class: "field" }, label, control,
      this.errors.slot("actions/set_custom_field/value", focus), hint ?? null));
  }

  showTags() {
    this.chips.replaceChildren(tagList(this.tags, (name) => {
      this.tags = this.tags.filter((tag) => tag !== name);
      this.showTags();
      this.tagInput.focus();
    }) ?? el("p", { class: "hint" }, "No tags."));
  }

  /** The names typed so far (commas separate them; tag names have none) become chips. */
  addTags() {
    for (const name of this.tagInput.value.split(",").map((part) => part.trim()).filter(Boolean)) {
      if (!this.tags.some((tag) => tag.toLowerCase() === name.toLowerCase())) this.tags.push(name);
    }
    this.tagInput.value = "";
    this.showTags();
  }

  async pickFolder() {
    const chosen = await folderDialog({ title: "Move matched documents to", ok: "Choose", selected: this.moveTo });
    if (chosen === null) return;
    if (!this.folders.has(chosen)) {
      const folder = await api("GET", `/folders/${encoded(chosen)}/`).catch(() => null);
      if (folder) this.folders.set(chosen, folderPath(folder.data));
    }
    this.setFolder(chosen);
  }

  setFolder(folderId) {
    this.moveTo = folderId;
    this.folderName.textContent = folderId ? (this.folders.get(folderId) ?? "A deleted folder") : "It stays where it is.";
    this.noFolder.hidden = !folderId;
  }

  attributes() {
    this.addTags(); // a name typed but not added is meant all the same
    const order = this.order.value.trim();
    return {
      name: this.name.value.trim(), enabled: this.enabled.checked,
      // Something the browser cannot read as a number goes as it is, for the server to refuse.
      order: this.order.validity.badInput ? "" : (order === "" ? 0 : Number(order)),
      match: { field: this.field.value, algorithm: this.algorithm.value, pattern: this.pattern.value,
        case_sensitive: this.caseSensitive.checked },
      sources: this.sources.filter((box) => box.checked).map((box) => box.value),
      actions: { add_tags: this.tags, move_to: this.moveTo, set_title: this.title.value.trim() || null, stop: this.stop.checked,
        set_correspondent: this.correspondent.value || null, set_document_type: this.type.value || null,
        set_custom_field: this.customValue ? { field: this.customField.value, value: this.customValue.value() } : null,
        set_document_date_from_text: this.dateFromText.checked },
    };
  }
}
