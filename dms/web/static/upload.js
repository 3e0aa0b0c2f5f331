// Uploads from the upload dialog (files and the languages to read them in, api.md §22
// "Languages") and from files dropped onto a folder (read in the caller's default languages): each
// file becomes a document titled by its name, its bytes go up with a progress bar — a file you
// already have asks first: keep both, or open the existing one (§22) —, then its processing status
// is followed (docstatus.js) until it is done or failed, in the "Uploads" panel.

import { api, id as encoded, uploadFile } from "./api.js";
import { actions, formActions, modal } from "./dialogs.js";
import { $, button, el, field, showFailure, STATUS } from "./dom.js";
import { isFinal, nudge, watch } from "./docstatus.js";
import { languageChoice, ocrLanguages } from "./languages.js";

/** Files sent at the same time; the others wait their turn. */
const PARALLEL_UPLOADS = 2;
/** The API's longest title (api.md, "Titles"). */
const MAX_TITLE = 200;

/** What the file picker offers (the types the API takes, api.md "Uploading a file"). */
const ACCEPT = "application/pdf,image/png,image/jpeg,image/tiff,text/plain,.pdf,.png,.jpg,.jpeg,.tif,.tiff,.txt";

const queue = [];
let running = 0;
let changed = () => {};

/** `onChanged(folderId)` is called when a document was created or its status changed. */
export function setUp({ onChanged }) {
  changed = onChanged;
  $("uploads-clear").addEventListener("click", () => {
    for (const item of $("uploads-list").querySelectorAll(".upload.is-finished")) item.remove();
    if (!$("uploads-list").children.length) $("uploads").hidden = true;
  });
  $("uploads-hide").addEventListener("click", () => { $("uploads").hidden = true; });
}

/** The upload dialog for the folder `folderId`: files, and the languages to read them in (the
 *  caller's default at first). */
export async function pickFiles(folderId) {
  let languages;
  try {
    languages = await ocrLanguages();
  } catch (error) {
    showFailure(error);
    return;
  }
  const chosen = await modal("Upload files", (dialog, close) => {
    const input = el("input", { type: "file", id: "upload-files", multiple: true, accept: ACCEPT });
    const choice = languageChoice("Read the text in", languages.installed, languages.preferred);
    const problem = el("p", { class: "field-error", role: "alert" });
    const form = el("form", { novalidate: true }, field("Files", input), choice.node,
      el("p", { class: "hint" }, "Your default languages are in Settings › Reading."), problem, formActions(close, "Upload"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const lang = choice.value();
      if (!input.files?.length) {
        problem.textContent = "Choose one or more files.";
        input.focus();
      } else if (!lang) {
        problem.textContent = "Choose at least one language.";
        choice.first()?.focus();
      } else {
        close({ files: [...input.files], lang });
      }
    });
    dialog.append(form);
  });
  if (chosen) uploadFiles(chosen.files, folderId, chosen.lang);
}

/** Uploads `files` into the folder; `lang`: the languages to read them in (null: the caller's
 *  default, which the server applies). */
export function uploadFiles(files, folderId, lang = null) {
  $("uploads").hidden = false;
  for (const file of files) {
    queue.push({ file, folderId, lang, item: listItem(file) });
  }
  next();
}

/** Forgets the list (at logout: the next person must not see it). */
export function clearUploads() {
  queue.length = 0;
  $("uploads-list").replaceChildren();
  $("uploads").hidden = true;
}

function listItem(file) {
  const progress = el("progress", { max: "100", value: "0", "aria-label": `${file.name}: upload progress` });
  const state = el("span", { class: "upload-state" }, "Queued");
  const item = el("li", { class: "upload" }, el("span", { class: "upload-name" }, file.name), progress, state);
  $("uploads-list").prepend(item);
  return { item, progress, state };
}

function next() {
  while (running < PARALLEL_UPLOADS && queue.length) {
    running += 1;
    send(queue.shift()).finally(() => {
      running -= 1;
      next();
    });
  }
}

async function send({ file, folderId, lang, item }) {
  item.state.textContent = "Uploading…";
  let documentId = null;
  try {
    const attributes = { title: file.name.slice(0, MAX_TITLE), ...(lang ? { lang } : {}) };
    const created = await api("POST", "/nodes/", { data: { type: "documents", attributes,
      relationships: { parent: { data: { type: "folders", id: folderId } } } } });
    documentId = created.data.id;
    changed(folderId);
    const document = await sendBytes(documentId, file, item);
    if (!document) {
      // Not wanted twice: the document made for it goes again.
      await discard(documentId);
      changed(folderId);
      return;
    }
    item.progress.value = 100;
    item.item.append(el("a", { href: `#/doc/${encoded(documentId)}`, class: "upload-open",
      "aria-label": `Open ${file.name}` }, "Open"));
    show(item, document);
    changed(folderId);
    const stop = watch(documentId, (latest) => {
      if (latest === null) {
        finish(item, "Deleted");
        stop();
        return;
      }
      show(item, latest);
      if (isFinal(latest)) changed(folderId);
    });
    nudge(documentId);
  } catch (error) {
    finish(item, `Failed: ${error.message}`, true);
    // A document the file never reached: take it away again (to the trash, then for good).
    if (documentId) await discard(documentId);
    changed(folderId);
  }
}

/** The file's bytes into the document, refused if you already have them (api.md §22): then you
 *  choose — keep both (sent again, kept), open the existing one, or neither. The document, or
 *  null when the file is not kept. */
async function sendBytes(documentId, file, item) {
  const progress = (fraction) => { item.progress.value = Math.round(fraction * 100); };
  try {
    return await uploadFile(documentId, file, progress, { if_duplicate: "refuse" });
  } catch (error) {
    if (error.code !== "duplicate") throw error;
    item.state.textContent = "Already uploaded";
    const choice = await askAboutDuplicate(file, error.message);
    if (choice === "keep") return uploadFile(documentId, file, progress, { if_duplicate: "keep" });
    const existing = error.meta?.existing?.id;
    finish(item, "Not uploaded again: you already have it.");
    if (existing) {
      item.item.append(el("a", { href: `#/doc/${encoded(existing)}`, class: "upload-open",
        "aria-label": `Open the existing ${file.name}` }, "Open"));
      if (choice === "open") location.hash = `#/doc/${encoded(existing)}`;
    }
    return null;
  }
}

/** One question at a time, however many files turn out to be duplicates. */
let asking = Promise.resolve(null);

function askAboutDuplicate(file, sentence) {
  const answer = asking.then(() => modal("Already uploaded", (dialog, close) => {
    dialog.classList.add("dialog-wide");
    dialog.append(el("p", {}, el("strong", {}, file.name)), el("p", {}, sentence),
      actions(button("Cancel", () => close(null), "", { autofocus: true }),
        button("Open the existing one", () => close("open")),
        button("Keep both", () => close("keep"), "button-primary")));
  }));
  asking = answer.catch(() => null);
  return answer;
}

function show(item, document) {
  const { ocr_status: status, ocr_error: reason } = document.attributes;
  if (status === "succeeded") finish(item, STATUS.succeeded.text);
  else if (status === "failed") finish(item, `Failed: ${reason || "the text could not be read."}`, true);
  else item.state.textContent = STATUS[status]?.text ?? status;
}

function finish(item, text, failed = false) {
  item.state.textContent = text;
  item.item.classList.add("is-finished");
  item.item.classList.toggle("is-failed", failed);
}

async function discard(documentId) {
  try {
    await api("DELETE", `/nodes/${encoded(documentId)}/`);
    await api("DELETE", `/trash/${encoded(documentId)}/`);
  } catch {
    // Left in the trash (or the trash is off): nothing more to do.
  }
}
