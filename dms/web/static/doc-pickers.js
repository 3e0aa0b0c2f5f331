// The page tools' dialogs (doc-pageops.js): a document picker (the open folder's documents, or
// those a search finds), where to extract pages to, and where to split a document.

import { api, id as encoded, withQuery } from "./api.js";
import { folderDialog, formActions, modal } from "./dialogs.js";
import { el, field, folderName } from "./dom.js";

/** Documents of the open folder offered at first: the API's largest page. */
const FOLDER_DOCUMENTS = 100;
/** Typing in the picker's search field waits this long for the next key. */
const SEARCH_DEBOUNCE_MS = 250;
/** The API's longest title_format of move-to-folder (api.md, "Page operations"). */
const MAX_TITLE_FORMAT = 32;

let counter = 0;

/** Picks one of the caller's documents other than `exclude` (an id); `folderId`: the folder whose
 *  documents are listed until something is searched. Resolves with {id, title}, or null. Nothing
 *  is chosen at first, and `ok` waits for a choice: one click must not merge or move into a
 *  document the user did not pick (issue 44). */
export function documentDialog({ title, text, ok, exclude, folderId }) {
  counter += 1;
  return modal(title, (dialog, close) => {
    dialog.classList.add("dialog-wide");
    const find = el("input", { type: "search", id: `doc-find-${counter}`, autocomplete: "off", "aria-describedby": `doc-find-hint-${counter}` });
    const list = el("div", { class: "folder-choices", role: "radiogroup", "aria-label": "Documents" },
      el("p", { class: "muted" }, "Loading documents…"));
    const form = el("form", { novalidate: true },
      text ? el("p", {}, text) : null,
      field("Find a document", find,
        el("small", { class: "hint", id: `doc-find-hint-${counter}` }, "Words of its title or text; empty: this folder’s documents.")),
      list, formActions(close, ok));
    const submit = /** @type {HTMLButtonElement} */ (form.querySelector("button[type=submit]"));
    const updateSubmit = () => { submit.disabled = !list.querySelector("input:checked"); };
    list.addEventListener("change", updateSubmit);
    updateSubmit();
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const chosen = list.querySelector("input:checked");
      if (chosen) close({ id: chosen.value, title: chosen.dataset.title });
      else (list.querySelector("input") ?? find).focus();
    });
    let asked = 0;
    const show = async (words) => {
      const ask = ++asked;
      try {
        const found = words ? await searchDocuments(words) : await folderDocuments(folderId);
        if (ask !== asked) return; // a later search answers instead
        const choices = found.filter((choice) => choice.id !== exclude);
        list.replaceChildren(...(choices.length ? choices.map((choice) => el("label", { class: "folder-choice" },
          el("input", { type: "radio", name: "document", value: choice.id, "data-title": choice.title }),
          el("span", {}, choice.title, choice.where ? el("span", { class: "hint" }, ` — ${choice.where}`) : null)))
          : [el("p", { class: "muted empty" }, words ? "No document found." : "No other document in this folder; search for one.")]));
        updateSubmit(); // the choice went with the list it was in
      } catch (error) {
        if (ask === asked) list.replaceChildren(el("p", { class: "message message-error" }, error.message));
      }
    };
    let timer = null;
    find.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => show(find.value.trim()), SEARCH_DEBOUNCE_MS);
    });
    find.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        clearTimeout(timer);
        show(find.value.trim());
      }
    });
    dialog.append(form);
    show("");
  });
}

async function folderDocuments(folderId) {
  const list = await api("GET", withQuery(`/nodes/${encoded(folderId)}/`, { "page[size]": FOLDER_DOCUMENTS }));
  return list.data.filter((node) => node.type === "documents").map((node) => ({ id: node.id, title: node.attributes.title }));
}

async function searchDocuments(words) {
  const hits = await api("GET", withQuery("/search/", { q: words }));
  return hits.filter((hit) => hit.node_type !== "folder").map((hit) => ({
    id: hit.id, title: hit.title, where: hit.breadcrumb.slice(0, -1).map(folderName).join(" / ") }));
}

/** Where `count` pages go: resolves with {folderId, title, singlePage}, or null. */
export async function extractDialog({ count, folderId }) {
  counter += 1;
  const name = el("input", { type: "text", id: `extract-title-${counter}`, maxlength: String(MAX_TITLE_FORMAT),
    autocomplete: "off", "aria-describedby": `extract-hint-${counter}` });
  const single = el("input", { type: "checkbox", id: `extract-single-${counter}` });
  const fields = [
    field("Title of the new document (optional)", name,
      el("small", { class: "hint", id: `extract-hint-${counter}` },
        `Up to ${MAX_TITLE_FORMAT} characters; “.pdf” is added. Empty: “document-” and a part of its id.`)),
    count > 1 ? el("div", { class: "check" }, single, el("label", { for: single.id }, "One document per page")) : null,
  ];
  const target = await folderDialog({ title: count === 1 ? "Extract 1 page" : `Extract ${count} pages`,
    ok: "Extract here", selected: folderId, fields });
  if (target === null) return null;
  return { folderId: target, title: name.value.trim() || null, singlePage: single.checked };
}

/** Where to cut the document: resolves with the split route's body, or null. `after`: the
 *  selected page numbers (cut after each), possibly none. */
export function splitDialog({ after }) {
  counter += 1;
  return modal("Split the document", (dialog, close) => {
    const choice = (value, label, hint, extra = {}) => {
      const id = `split-${value}-${counter}`;
      return el("div", { class: "check check-hinted" },
        el("input", { type: "radio", name: "split", id, value, "aria-describedby": `${id}-hint`, ...extra }),
        el("label", { for: id }, label),
        el("small", { class: "hint", id: `${id}-hint` }, hint));
    };
    const afterText = after.length ? `After page ${after.join(", ")}` : "After the selected pages";
    const group = el("fieldset", { class: "choices" }, el("legend", {}, "Where to cut"),
      choice("after", afterText, after.length ? "Each part but the last ends with a selected page."
        : "Select pages first to cut after them.", { disabled: !after.length, checked: after.length > 0 }),
      choice("barcode", "At separator sheets with a barcode",
        "Pages with a QR code or barcode reading DMS-SPLIT or PATCH T; those pages are left out.", { checked: !after.length }),
      choice("blank", "At blank pages", "Pages without text or marks; those pages are left out."));
    const form = el("form", { novalidate: true }, group,
      el("p", { class: "hint" }, "The parts become new documents in this folder; this document goes to the Trash."),
      formActions(close, "Split"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const how = form.querySelector("input[name=split]:checked")?.value;
      if (how === "after") close({ after_pages: after });
      else if (how) close({ separator: how });
    });
    dialog.append(form);
  });
}
