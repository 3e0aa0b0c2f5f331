// @ts-check
// Settings › Reading: the languages the caller's new documents are read in (api.md §8b, the
// `ocr__language` preference; §22 "Languages"): checkboxes of the installed ones, at least one.
// The upload dialog starts from this choice; "Read again" on a document can choose others.

import { api, JSON_MEDIA } from "./api.js";
import { busy, clearMessages, el, showError, showFailure, showStatus } from "./dom.js";
import { languageChoice, languageNames, ocrLanguages } from "./languages.js";

export async function render() {
  const { installed, preferred } = await ocrLanguages();
  const choice = languageChoice("Read new documents in", installed, preferred);
  const form = el("form", { id: "reading-form", class: "card", "aria-labelledby": "reading-title", novalidate: true },
    el("h2", { id: "reading-title" }, "Languages"),
    el("p", { class: "hint" }, "Tesseract reads the text of scans in these languages. Choose every language your ",
      "papers are written in: German letters read in English alone lose their umlauts and ß. ",
      "The first one chosen counts most; more languages read more slowly."),
    choice.node,
    el("div", { class: "actions" }, el("button", { type: "submit", class: "button button-primary" }, "Save")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearMessages();
    const lang = choice.value();
    if (!lang) {
      showError("Choose at least one language.");
      choice.first()?.focus();
      return;
    }
    try {
      await busy(form, () => api("POST", "/preferences/bulk/", { ocr__language: lang }, { media: JSON_MEDIA }));
      showStatus(`New documents are read in ${languageNames(lang)}.`);
    } catch (error) {
      showFailure(error);
    }
  });
  return el("div", {}, el("h1", { id: "reading-page-title" }, "Reading"), form);
}
