// Pieces several views show: breadcrumbs (each folder in them a link and a drop target), a
// node's tags, the caller's tag names as suggestions for a text field, and the parts of settings
// sections: the page, the table, Edit and Delete, the form slot where resources are added and
// edited, and a form's buttons and submission.

import { api, id as encoded } from "./api.js";
import { confirmDialog } from "./dialogs.js";
import { dropTarget } from "./dnd.js";
import { attempt, busy, button, clearMessages, el, folderName, showFailure, showStatus } from "./dom.js";

/** `crumbs`: [title, id] pairs from .home or .inbox down to the parent of what the view shows;
 *  null when there are none. */
export function breadcrumbs(crumbs) {
  if (!crumbs.length) return null;
  return el("nav", { class: "breadcrumbs", "aria-label": "Breadcrumb" }, el("ol", {}, crumbs.map(([title, folderId]) => {
    const link = el("a", { href: `#/folder/${encoded(folderId)}` }, folderName(title));
    if (title !== ".shared") dropTarget(link, folderId);
    return el("li", {}, link);
  })));
}

/** Previous and next page of a list (`label` names it) at `page` of `pages`; `go(number)` opens one. */
export const pager = (label, { page, pages }, text, go) => el("nav", { class: "pager", "aria-label": label },
  button("Previous page", () => go(page - 1), "", { disabled: page <= 1 }), el("span", {}, text),
  button("Next page", () => go(page + 1), "", { disabled: page >= pages }));

/** A node's tags as small labels; each tag's own colour is only a dot beside its name, so the
 *  text keeps its contrast whatever colours the tag has. */
export function tagList(tags, removable = null) {
  if (!tags?.length) return null;
  return el("ul", { class: "tags", "aria-label": "Tags" }, tags.map((tag) => {
    const name = typeof tag === "string" ? tag : tag.name;
    const dot = el("span", { class: "tag-dot", "aria-hidden": "true" });
    // Colours are data (#RRGGBB or #RGB, checked by the API): a CSSOM property, never a style attribute.
    if (tag.bg_color) dot.style.backgroundColor = tag.bg_color;
    return el("li", { class: "tag" }, dot, el("span", {}, name),
      removable ? el("button", { type: "button", class: "tag-remove", "aria-label": `Remove tag ${name}`,
        onclick: () => removable(name) }, "×") : null);
  }));
}

/** Tags offered as suggestions: the API's largest page (a bound: the fields take any name). */
const SUGGESTED_TAGS = 100;

/** A <datalist id=`id`> of the caller's tag names (filled when they arrive; a field's list="id"
 *  offers them); the document view's tag field and the rule dialog's use it. */
export function tagSuggestions(id) {
  const list = el("datalist", { id });
  api("GET", `/tags/?page[size]=${SUGGESTED_TAGS}`).then((tags) => {
    list.replaceChildren(...tags.data.map((tag) => el("option", { value: tag.attributes.name })));
  }).catch(() => {});
  return list;
}

/** A settings section's resources of JSON:API `type` at `path`, added and edited in one form above
 *  their list: the "Add" button, the slot and edit(resource) (null: a new one). `form(resource,
 *  save, cancel)` builds the form; save(attributes) POSTs or PATCHes, says so and reads the
 *  section again; cancel() empties the slot. */
export function formSlot(ctx, { type, path, noun, addLabel, form }) {
  const slot = el("div", {});
  const add = button(addLabel, () => edit(null), "button-primary", { "data-focus": "add" });
  const edit = (resource) => {
    slot.replaceChildren(form(resource, async (attributes) => {
      if (resource) await api("PATCH", `${path}${encoded(resource.id)}/`, { data: { type, id: resource.id, attributes } });
      else await api("POST", path, { data: { type, attributes } });
      // The section is read again first, so that what the message says is on the screen (and no
      // row is clicked in the list about to be replaced).
      await ctx.refresh();
      showStatus(resource ? `${noun} saved.` : `${noun} added.`);
    }, () => {
      slot.replaceChildren();
      add.focus();
    }));
    slot.querySelector("input").focus();
  };
  return { add, slot, edit };
}

/** A settings section: its h1 `title` beside the button `add`, the `intro`, then the rest. */
export const sectionPage = (title, add, intro, ...rest) => el("div", {},
  el("div", { class: "view-head" }, el("h1", {}, title), add), el("p", { class: "muted" }, intro), ...rest);

/** A table of `rows` under `heads` (a text, or [text, class]) and a column of actions (`caption`
 *  names it), or the sentence `empty` without rows. */
export const dataTable = (caption, heads, rows, empty) => (rows.length ? el("div", { class: "table-wrap" },
  el("table", { class: "table" }, el("caption", { class: "visually-hidden" }, caption),
    el("thead", {}, el("tr", {}, [...heads, el("span", { class: "visually-hidden" }, "Actions")].map((head) =>
      el("th", { scope: "col", class: Array.isArray(head) ? head[1] : null }, Array.isArray(head) ? head[0] : head)))),
    el("tbody", {}, rows))) : el("p", { class: "muted" }, empty));

/** A row's cell of actions: `more`, then Edit and Delete, named after the row's `name`. */
export const rowActions = (name, edit, remove, ...more) => el("td", { class: "cell-actions" }, more,
  button("Edit", edit, "button-small", { "aria-label": `Edit: ${name}` }),
  button("Delete", remove, "button-small button-danger-outline", { "aria-label": `Delete: ${name}` }));

/** Asks (`title`, `text`), then DELETEs `path`, says `done` and reads the view again. */
export async function confirmDelete(ctx, { title, text, path, done, ok = "Delete" }) {
  if (await confirmDialog({ title, text, ok, danger: true }) && await attempt(() => api("DELETE", path)) !== undefined) {
    await ctx.refresh();
    showStatus(done);
  }
}

/** A form's submit button (`text`) and Cancel. */
export const formButtons = (text, cancel) => el("div", { class: "actions" },
  el("button", { type: "submit", class: "button button-primary" }, text), button("Cancel", cancel));

/** On submit: `send()`, the form busy meanwhile; a refusal goes beside its field (`errors`, an
 *  ErrorSlots of metadata.js), or without them to the page's alert. */
export function onSubmit(form, send, errors = null) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearMessages();
    errors?.clear();
    try {
      await busy(form, send);
    } catch (error) {
      if (!errors) showFailure(error);
      else if (error.status !== 401) errors.show(error);
    }
  });
}
