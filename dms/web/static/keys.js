// Keyboard shortcuts, global ones and those of the open view (its `keys`), listed by the help
// dialog. They act only when no text field has the focus and no dialog is open.

import { helpDialog } from "./dialogs.js";

export const SHORTCUTS = [
  [["/"], "Go to the search box"],
  [["?"], "Show these shortcuts"],
  [["h"], "Open Home"],
  [["i"], "Open the Inbox"],
  [["t"], "Open the Trash"],
  [["u"], "Upload files into the open folder"],
  [["n"], "New folder in the open folder"],
  [["a"], "Select everything in the open folder"],
  [["Escape"], "Clear the selection; close a dialog or menu"],
  [["F2"], "Rename the selected item, or the open document"],
  [["m"], "Move the selected items, or the open document"],
  [["Delete"], "Delete the selected items, the open document, or the page that has the focus"],
  [["d"], "Download the open document"],
  [["Shift", "←"], "Move the page that has the focus one place earlier (also Shift+↑)"],
  [["Shift", "→"], "Move the page that has the focus one place later (also Shift+↓)"],
  [["r"], "Turn the page that has the focus clockwise"],
  [["Shift", "R"], "Turn the page that has the focus counter-clockwise"],
];

const TEXT_INPUTS = new Set(["checkbox", "radio", "button", "submit", "reset", "range", "color", "file"]);

function typing(target) {
  if (!(target instanceof Element)) return false;
  if (target.closest("textarea, select, [contenteditable=''], [contenteditable=true]")) return true;
  return target.tagName === "INPUT" && !TEXT_INPUTS.has(target.type);
}

export const showHelp = () => helpDialog(SHORTCUTS);

/** `global`: key -> action; `viewKeys()`: the open view's key -> action. */
export function setUp(global, viewKeys) {
  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(event.target) || document.querySelector("dialog[open]")) return;
    const action = global[event.key] ?? viewKeys()?.[event.key];
    if (!action) return;
    event.preventDefault();
    action();
  });
}
