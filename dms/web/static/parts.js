// Pieces several views show: breadcrumbs (each folder in them a link and a drop target), a
// node's tags, the caller's tag names as suggestions for a text field, and the form slot of a
// settings section whose resources are added and edited in one form above their list.

import { api, id as encoded } from "./api.js";
import { dropTarget } from "./dnd.js";
import { el, folderName, showStatus } from "./dom.js";

/** `crumbs`: [title, id] pairs from .home or .inbox down to the parent of what the view shows;
 *  null when there are none. */
export function breadcrumbs(crumbs) {
  if (!crumbs.length) return null;
  return el("nav", { class: "breadcrumbs", "aria-label": "Breadcrumb" }, el("ol", {}, crumbs.map(([title, folderId]) => {
    const link = el("a", { href: `#/folder/${encoded(folderId)}` }, folderName(title));
    dropTarget(link, folderId);
    return el("li", {}, link);
  })));
}

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

/** A settings section's resources of JSON:API `type` at `path` (e.g. "/webhooks/"), added and
 *  edited in one form above their list: the "Add" button (labelled `addLabel`), the slot the form
 *  shows in, and edit(resource) (null: a new one). `form(resource, save, cancel)` builds the form;
 *  its save(attributes) POSTs or PATCHes, says so (`noun` added / saved) and reads the section
 *  again; cancel() empties the slot and gives the focus back to the button. */
export function formSlot(ctx, { type, path, noun, addLabel, form }) {
  const slot = el("div", {});
  const add = el("button", { type: "button", class: "button button-primary", onclick: () => edit(null) }, addLabel);
  const edit = (resource) => {
    slot.replaceChildren(form(resource, async (attributes) => {
      if (resource) await api("PATCH", `${path}${encoded(resource.id)}/`, { data: { type, id: resource.id, attributes } });
      else await api("POST", path, { data: { type, attributes } });
      showStatus(resource ? `${noun} saved.` : `${noun} added.`);
      ctx.refresh();
    }, () => {
      slot.replaceChildren();
      add.focus();
    }));
    slot.querySelector("input").focus();
  };
  return { add, slot, edit };
}
