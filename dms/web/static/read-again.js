// @ts-check
// A document's "Read again" (api.md "Pages, text and OCR", POST /ocr/; §22 "Languages"): a dialog
// choosing the languages its pages are read in — the document's own at first — then the request.
// Fetched when the button is first used, not with the page.

import { api, JSON_MEDIA } from "./api.js";
import { formActions, modal } from "./dialogs.js";
import { el } from "./dom.js";
import { languageChoice, languageNames, ocrLanguages } from "./languages.js";

/** Resolves with the languages it is read in now, or null when cancelled. */
export async function readAgain(document) {
  const { installed } = await ocrLanguages();
  return modal("Read again", (dialog, close) => {
    const choice = languageChoice("Read the text in", installed, document.attributes.lang ?? "");
    const problem = el("p", { class: "field-error", role: "alert" });
    const form = el("form", { novalidate: true },
      el("p", {}, "Every page of the newest version is read again; its text and searchable PDF are replaced."),
      choice.node, problem, formActions(close, "Read again"));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const lang = choice.value();
      if (!lang) {
        problem.textContent = "Choose at least one language.";
        choice.first()?.focus();
        return;
      }
      try {
        const answer = await api("POST", "/ocr/", { doc_id: document.id, lang }, { media: JSON_MEDIA });
        close(languageNames(answer.lang));
      } catch (error) {
        problem.textContent = error.message;
      }
    });
    dialog.append(form);
  });
}
