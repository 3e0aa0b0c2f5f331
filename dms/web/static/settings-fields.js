// Settings › Custom fields (api.md, "Custom fields"): add, edit, delete. The type is chosen once
// (the API keeps it); a money field has a default currency, a choice field its options (the
// documents that chose a removed option keep the field without a value).

import { id as encoded } from "./api.js";
import { button, el, plural, select } from "./dom.js";
import { DATA_TYPES, ErrorSlots, names } from "./metadata.js";
import { confirmDelete, dataTable, formButtons, formSlot, onSubmit, rowActions, sectionPage } from "./parts.js";

const TYPES = new Map(DATA_TYPES);
/** The API's bounds: options of a choice field. */
const MAX_OPTIONS = 200;

export async function render(ctx) {
  const fields = await names("/custom-fields/");
  const { add, slot, edit } = formSlot(ctx, { type: "custom-fields", path: "/custom-fields/", noun: "Custom field",
    addLabel: "Add custom field", form: fieldForm });
  return sectionPage("Custom fields", add, "Facts your documents carry: an amount, a due date, a contract number, links to "
    + "other documents. Add them to a document in its Details.", slot, dataTable("Your custom fields", ["Name", "Type", "Documents"],
    fields.map((field) => fieldRow(ctx, field, edit)), "You have no custom fields yet."));
}

function describe(a) {
  const options = a.extra_data.select_options ?? [];
  if (a.data_type === "monetary" && a.extra_data.default_currency) return `, in ${a.extra_data.default_currency} unless said`;
  if (a.data_type === "select") return `: ${options.map((option) => option.label).join(", ") || "no options"}`;
  return "";
}

function fieldRow(ctx, field, edit) {
  const a = field.attributes;
  const remove = () => confirmDelete(ctx, { title: "Delete custom field?", path: `/custom-fields/${encoded(field.id)}/`,
    text: `“${a.name}” and its values on ${plural(a.document_count, "document")} are deleted.`,
    done: `Custom field “${a.name}” deleted.` });
  return el("tr", {},
    el("td", { "data-label": "Name", class: "cell-wrap" }, a.name),
    el("td", { "data-label": "Type", class: "cell-wrap" }, `${TYPES.get(a.data_type) ?? a.data_type}${describe(a)}`),
    el("td", { "data-label": "Documents" }, String(a.document_count)),
    rowActions(a.name, () => edit(field), remove));
}

function fieldForm(field, save, cancel) {
  const a = field?.attributes ?? { name: "", data_type: "string", extra_data: {} };
  const errors = new ErrorSlots();
  const name = el("input", { id: "cf-name", type: "text", value: a.name, maxlength: "128", autocomplete: "off", required: true });
  const type = select({ id: "cf-type", disabled: Boolean(field), "aria-describedby": "cf-type-hint" }, DATA_TYPES, a.data_type);
  const currency = el("input", { id: "cf-currency", type: "text", class: "currency", maxlength: "3", autocomplete: "off",
    spellcheck: "false", autocapitalize: "characters", value: a.extra_data.default_currency ?? "", "aria-describedby": "cf-currency-hint" });
  const options = el("ol", { class: "plain-list options", "aria-label": "Options" });
  const addOption = button("Add option", () => option({ label: "" }).querySelector("input").focus(), "button-small");
  const renumber = () => {
    [...options.children].forEach((row, index) => {
      row.querySelector("input").setAttribute("aria-label", `Option ${index + 1}`);
      row.querySelector("button").setAttribute("aria-label", `Remove option ${index + 1}`);
    });
    addOption.disabled = options.childElementCount >= MAX_OPTIONS;
  };
  const option = ({ id = "", label }) => {
    const row = el("li", { class: "copy-row" }, el("input", { type: "text", value: label, "data-id": id, maxlength: "128", autocomplete: "off" }),
      button("Remove", () => {
        const next = row.nextElementSibling ?? row.previousElementSibling;
        row.remove();
        renumber();
        (next?.querySelector("input") ?? addOption).focus();
      }, "button-small button-danger-outline"));
    options.append(row);
    renumber();
    return row;
  };
  (a.extra_data.select_options ?? []).forEach(option);
  renumber();
  const money = errors.field("extra_data/default_currency", "Default currency", currency,
    el("small", { class: "hint", id: "cf-currency-hint" }, "A three-letter code such as EUR, taken when an amount has none. Optional."));
  const choices = el("fieldset", { class: "group" }, el("legend", {}, "Options"), options,
    errors.slot("extra_data/select_options", addOption), addOption,
    el("p", { class: "hint" }, field ? "Removing an option clears it on the documents that chose it." : "The choices a document can have."));
  errors.slots.set("extra_data", errors.slots.get("extra_data/select_options"));
  const shown = () => {
    money.hidden = type.value !== "monetary";
    choices.hidden = type.value !== "select";
  };
  type.addEventListener("change", shown);
  shown();
  const titleId = "cf-form-title";
  const form = el("form", { class: "card", "aria-labelledby": titleId, novalidate: true },
    el("h2", { id: titleId }, field ? "Edit custom field" : "New custom field"),
    el("div", { class: "field-row" }, el("div", { class: "field-grow" }, errors.field("name", "Name", name)),
      el("div", { class: "field-grow" }, errors.field("data_type", "Type", type,
        el("small", { class: "hint", id: "cf-type-hint" }, field ? "A field’s type stays as it was made." : "It cannot be changed later.")))),
    money, choices, errors.general, formButtons("Save custom field", cancel));
  onSubmit(form, () => {
    const attributes = { name: name.value.trim() };
    if (!field) attributes.data_type = type.value;
    if (type.value === "monetary") {
      const code = currency.value.trim().toUpperCase();
      attributes.extra_data = code ? { default_currency: code } : {};
    } else if (type.value === "select") {
      attributes.extra_data = { select_options: [...options.querySelectorAll("input")].map((input) => (
        input.dataset.id ? { id: input.dataset.id, label: input.value.trim() } : { label: input.value.trim() })) };
    }
    return save(attributes);
  }, errors);
  return form;
}
