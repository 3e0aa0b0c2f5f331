// Modal dialogs (<dialog> with showModal: the browser traps focus, Escape cancels): a
// confirmation, a one-field prompt, the folder picker and the keyboard help; modal() builds
// others. Each is built when asked and removed when closed; focus goes back where it was.

import { listAll } from "./api.js";
import { button, el, field, folderPath } from "./dom.js";

let counter = 0;

/** Shows a dialog built by `build(dialog, close)`; resolves with what `close(value)` got, or
 *  with `cancelled` on Escape. */
export function modal(title, build, cancelled = null) {
  counter += 1;
  const titleId = `dialog-title-${counter}`;
  const dialog = el("dialog", { class: "dialog", "aria-labelledby": titleId }, el("h2", { id: titleId }, title));
  const opener = document.activeElement;
  return new Promise((resolve) => {
    let result = cancelled;
    const close = (value) => {
      result = value;
      dialog.close();
    };
    dialog.addEventListener("close", () => {
      // The close event comes a moment after the dialog closed: a key pressed meanwhile may
      // have put the focus somewhere else on purpose ("/" in the search box), and keeps it.
      const active = document.activeElement;
      const lost = !active || active === document.body || dialog.contains(active);
      dialog.remove();
      if (lost && opener && opener.isConnected) opener.focus();
      resolve(result);
    });
    build(dialog, close);
    document.body.append(dialog);
    dialog.showModal();
    const first = dialog.querySelector("[autofocus]") || dialog.querySelector("input, select, button");
    first?.focus();
  });
}

export const actions = (...buttons) => el("div", { class: "actions actions-end" }, ...buttons);
/** A dialog form's Cancel (which closes it with null) and its submit button, `ok`. */
export const formActions = (close, ok) => actions(button("Cancel", () => close(null)),
  el("button", { type: "submit", class: "button button-primary" }, ok));

/** Resolves true only for the confirming button; Cancel has the focus (the safe choice). */
export function confirmDialog({ title, text, ok = "OK", danger = false }) {
  return modal(title, (dialog, close) => {
    dialog.append(el("p", {}, text), actions(button("Cancel", () => close(false), "", { autofocus: true }),
      button(ok, () => close(true), danger ? "button-danger" : "button-primary")));
  }, false);
}

/** One text field; resolves with the trimmed text, or null when cancelled. */
export function promptDialog({ title, label, value = "", ok = "Save", hint = null }) {
  return modal(title, (dialog, close) => {
    const input = el("input", { type: "text", id: `prompt-${counter}`, value, autocomplete: "off",
      required: true, maxlength: "200", "aria-describedby": hint ? `prompt-hint-${counter}` : null });
    const form = el("form", { novalidate: true },
      field(label, input, hint ? el("small", { class: "hint", id: `prompt-hint-${counter}` }, hint) : null), formActions(close, ok));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (input.value.trim()) close(input.value.trim());
      else input.focus();
    });
    dialog.append(form);
    setTimeout(() => input.select(), 0);
  });
}

/** Picks a folder to move nodes into. `exclude`: ids of the moved nodes, whose folders (and
 *  what is below them) can't be targets; `selected`: the folder chosen at first (else the first
 *  one); `fields`: more form fields, shown below the folders (the caller reads them). Resolves
 *  with the folder's id, or null. */
export function folderDialog({ title, ok = "Move here", exclude = new Set(), selected = null, fields = [] }) {
  return modal(title, (dialog, close) => {
    const filter = el("input", { type: "search", id: `folder-filter-${counter}`, autocomplete: "off" });
    const list = el("div", { class: "folder-choices", role: "radiogroup", "aria-label": "Folders" },
      el("p", { class: "muted" }, "Loading folders…"));
    const note = el("p", { class: "hint", hidden: true });
    const form = el("form", { novalidate: true },
      field("Filter folders", filter),
      list, note, fields, formActions(close, ok));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const chosen = list.querySelector("input:checked");
      if (chosen) close(chosen.value);
      else list.querySelector("input")?.focus();
    });
    filter.addEventListener("input", () => {
      const words = filter.value.trim().toLowerCase();
      for (const choice of list.querySelectorAll(".folder-choice")) {
        choice.hidden = words !== "" && !choice.dataset.path.toLowerCase().includes(words);
      }
    });
    dialog.append(form);
    loadFolderChoices(list, note, exclude, selected);
  });
}

async function loadFolderChoices(list, note, exclude, selected) {
  try {
    // A bound: 1,000 folders; the filter finds one among them. Their paths only (api.md,
    // "Fewer fields"): neither their tags nor who may see them are read.
    const { items, truncated } = await listAll("/folders/?fields[folders]=breadcrumb", 10);
    const choices = items
      .filter((folder) => !folder.attributes.breadcrumb.some(([, id]) => exclude.has(id)))
      .map((folder) => ({ id: folder.id, path: folderPath(folder) }))
      .sort((a, b) => a.path.localeCompare(b.path));
    const chosen = choices.some((choice) => choice.id === selected) ? selected : choices[0]?.id;
    list.replaceChildren(...choices.map((choice) => el("label", { class: "folder-choice", "data-path": choice.path },
      el("input", { type: "radio", name: "folder", value: choice.id, checked: choice.id === chosen }), choice.path)));
    list.querySelector("input:checked")?.closest("label").scrollIntoView({ block: "nearest" });
    note.hidden = !truncated;
    note.textContent = truncated ? `Showing the first ${items.length} folders.` : "";
  } catch (error) {
    list.replaceChildren(el("p", { class: "message message-error" }, error.message));
  }
}

/** The keyboard help: `shortcuts` is a list of [keys, what]. */
export function helpDialog(shortcuts) {
  return modal("Keyboard shortcuts", (dialog, close) => {
    dialog.classList.add("dialog-wide");
    // The focus starts on the title, so the dialog opens at its top: on its Close button, at the
    // end of a long list, it opened scrolled to its end (issue 44). Tab reaches Close.
    const heading = dialog.querySelector("h2");
    heading?.setAttribute("tabindex", "-1");
    heading?.setAttribute("autofocus", "");
    dialog.append(
      el("table", { class: "table keys" },
        el("caption", { class: "visually-hidden" }, "Keys and what they do"),
        el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Key"), el("th", { scope: "col" }, "Action"))),
        el("tbody", {}, shortcuts.map(([keys, what]) => el("tr", {},
          el("td", {}, keys.map((key) => el("kbd", {}, key))), el("td", {}, what))))),
      el("p", { class: "hint" }, "Keys work when no text field has the focus. Escape closes a dialog; Tab and Shift+Tab reach every control."),
      actions(button("Close", () => close(null), "button-primary")));
  });
}
