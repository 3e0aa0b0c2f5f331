// @ts-check
// Settings › Tags (api.md §22): the caller's tags with how many documents each labels; rename and
// recolour (colour pickers for the dot and the tag's text colour), merge one into another (its
// documents get the other; POST /tags/{id}/merge/), delete (the documents stay).

import { api, id as encoded, JSON_MEDIA, listAll } from "./api.js";
import { formActions, modal } from "./dialogs.js";
import { attempt, button, el, field, plural, select, showStatus } from "./dom.js";
import { ErrorSlots } from "./metadata.js";
import { confirmDelete, dataTable, formButtons, formSlot, onSubmit, rowActions, sectionPage } from "./parts.js";

/** The API's default colours (dms.domain.tags), a colour picker's form of them. */
const DEFAULT_BG = "#c41fff";
const DEFAULT_FG = "#ffffff";

/** #RGB as #RRGGBB: what <input type=color> takes. */
const sixDigits = (color, fallback) => {
  if (!color) return fallback;
  const short = /^#([0-9a-f])([0-9a-f])([0-9a-f])$/i.exec(color);
  return (short ? `#${short[1]}${short[1]}${short[2]}${short[2]}${short[3]}${short[3]}` : color).toLowerCase();
};

export async function render(ctx) {
  const { items } = await listAll("/tags/");
  items.sort((one, other) => one.attributes.name.localeCompare(other.attributes.name));
  const { add, slot, edit } = formSlot(ctx, { type: "tags", path: "/tags/", noun: "Tag", addLabel: "Add tag",
    form: (tag, save, cancel) => tagForm(tag, save, cancel) });
  return sectionPage("Tags", add, "Your own labels for folders and documents: a colour each, any number on a document. "
    + "Merging one into another moves its documents over.", slot,
  dataTable("Your tags", ["Tag", "Documents"], items.map((tag) => tagRow(ctx, tag, items, edit)), "You have no tags yet."));
}

function tagRow(ctx, tag, all, edit) {
  const a = tag.attributes;
  const count = plural(a.document_count, "document");
  const dot = el("span", { class: "tag-dot", "aria-hidden": "true" });
  dot.style.backgroundColor = a.bg_color;
  const remove = () => confirmDelete(ctx, { title: "Delete tag?", path: `/tags/${encoded(tag.id)}/`,
    text: `“${a.name}” is taken off its ${count}; the documents stay.`, done: `Tag “${a.name}” deleted.` });
  const others = all.filter((other) => other.id !== tag.id);
  const merge = button("Merge…", () => mergeDialog(ctx, tag, others), "button-small",
    { "aria-label": `Merge: ${a.name}`, disabled: others.length === 0 });
  return el("tr", {},
    el("td", { "data-label": "Tag", class: "cell-wrap" }, el("span", { class: "tag" }, dot, el("span", {}, a.name))),
    el("td", { "data-label": "Documents" }, a.document_count
      ? el("a", { href: `#/search?tags=${encoded(a.name)}`, "aria-label": `${count}: ${a.name}` }, count) : count),
    rowActions(a.name, () => edit(tag), remove, merge));
}

function tagForm(tag, save, cancel) {
  const a = tag?.attributes ?? { name: "", bg_color: DEFAULT_BG, fg_color: DEFAULT_FG };
  const errors = new ErrorSlots();
  const name = el("input", { id: "tag-name", type: "text", value: a.name, maxlength: "100", autocomplete: "off", required: true });
  const background = el("input", { id: "tag-bg", type: "color", value: sixDigits(a.bg_color, DEFAULT_BG) });
  const text = el("input", { id: "tag-fg", type: "color", value: sixDigits(a.fg_color, DEFAULT_FG) });
  const form = el("form", { class: "card", "aria-labelledby": "tag-form-title", novalidate: true },
    el("h2", { id: "tag-form-title" }, tag ? `Edit tag “${a.name}”` : "New tag"),
    errors.field("name", "Name", name),
    el("div", { class: "field-row" }, errors.field("bg_color", "Colour", background), errors.field("fg_color", "Text colour", text)),
    errors.general, formButtons("Save tag", cancel));
  onSubmit(form, () => save({ name: name.value.trim(), bg_color: background.value, fg_color: text.value }), errors);
  return form;
}

function mergeDialog(ctx, tag, others) {
  return modal(`Merge “${tag.attributes.name}”`, (dialog, close) => {
    const into = select({ id: "merge-into" }, others.map((other) => [other.id, other.attributes.name]), others[0]?.id);
    const form = el("form", { novalidate: true },
      el("p", {}, `Every document tagged “${tag.attributes.name}” gets the tag you choose instead, and “${tag.attributes.name}” is deleted.`),
      field("Merge into", into), formActions(close, "Merge"));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const target = others.find((other) => other.id === into.value);
      const merged = await attempt(() => api("POST", `/tags/${encoded(tag.id)}/merge/`, { into: into.value }, { media: JSON_MEDIA }));
      close(null);
      if (merged === undefined) return;
      await ctx.refresh();
      showStatus(`“${tag.attributes.name}” merged into “${target?.attributes.name}”.`);
    });
    dialog.append(form);
  });
}
