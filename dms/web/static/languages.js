// @ts-check
// OCR languages (api.md §22, "Languages"): the installed ones with the caller's default, their
// names, and a group of checkboxes that chooses some — Settings › Reading, the upload dialog and a
// document's "Read again" share it. The API takes several as one string joined by + (`deu+eng`);
// the first is Tesseract's main one, so a choice keeps the order it started with.

import { api } from "./api.js";
import { el } from "./dom.js";

/** Names of Tesseract's language codes people meet most; others are shown as their code. */
const NAMES = {
  eng: "English", deu: "German", fra: "French", ita: "Italian", spa: "Spanish", nld: "Dutch",
  por: "Portuguese", pol: "Polish", ces: "Czech", dan: "Danish", swe: "Swedish", nor: "Norwegian",
  fin: "Finnish", tur: "Turkish", rus: "Russian", ukr: "Ukrainian", ell: "Greek",
};

/** @param {string} code */
export const languageName = (code) => NAMES[code] ?? code;

/** "deu+eng" as "German and English". @param {string} lang */
export function languageNames(lang) {
  const names = lang.split("+").map(languageName);
  return names.length > 1 ? `${names.slice(0, -1).join(", ")} and ${names.at(-1)}` : names[0];
}

/** The installed languages and the caller's default (the `ocr__language` preference).
 *  @returns {Promise<{installed: string[], preferred: string}>} */
export async function ocrLanguages() {
  const [languages, preference] = await Promise.all([
    api("GET", "/ocr-languages/"), api("GET", "/preferences/ocr__language/")]);
  return { installed: languages.languages, preferred: preference.data.attributes.value };
}

let groups = 0;

/**
 * Checkboxes of the `installed` languages, those of `chosen` ("deu+eng") checked. `value()` is
 * the checked ones joined by + ("" when none): those of `chosen` in their order, then the others
 * in the order they were checked.
 * @param {string} legend
 * @param {string[]} installed
 * @param {string} chosen
 */
export function languageChoice(legend, installed, chosen) {
  groups += 1;
  const order = chosen.split("+").filter((code) => installed.includes(code));
  const boxes = installed.map((code) => el("input", { type: "checkbox", id: `language-${groups}-${code}`,
    value: code, checked: order.includes(code) }));
  for (const box of boxes) {
    box.addEventListener("change", () => {
      const at = order.indexOf(box.value);
      if (box.checked && at < 0) order.push(box.value);
      if (!box.checked && at >= 0) order.splice(at, 1);
    });
  }
  const node = el("fieldset", { class: "choices" }, el("legend", {}, legend),
    el("div", { class: "check-row" }, boxes.map((box) =>
      el("label", { class: "check", for: box.id }, box, languageName(box.value)))));
  return { node, value: () => order.join("+"), first: () => boxes[0] };
}
