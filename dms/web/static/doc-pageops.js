// The page tools of the document view (api.md, "Page operations"): each page's checkbox and
// buttons (turn, move one place, delete; keys Shift+arrows, r / Shift+R, Delete), pages dragged
// into place, what to do with the selected ones (delete, extract, move to another document),
// split and merge.
//
// Every call makes a new version (new page ids), so the view is read again after each one, the
// focus going back to the same control of the page where it now is; so too when the document
// changed meanwhile (409, or pages of an older version). A split too large for one request
// answers 202 and goes on in the background: the folder opens and the status says so.

import { api, id as encoded, JSON_MEDIA } from "./api.js";
import { carries } from "./dnd.js";
import { documentDialog, extractDialog, splitDialog } from "./doc-pickers.js";
import { button, el, folderName, icon, showError, showStatus } from "./dom.js";

/** A quarter turn clockwise (api.md: `angle`, negative for counter-clockwise). */
const TURN = 90;
/** What a dragged page carries: its number (other drags — files, folder rows — are not pages). */
const PAGE_DRAG = "application/x-dms-page";
/** Page numbers named one by one in messages; more are counted. */
const NAMED_PAGES = 5;

/** Adds the tools to the `figures` of the latest `version`'s pages; returns the toolbar that goes
 *  above them. `folderId`: the document's folder (new documents land there first). */
export function pageTools(ctx, document, version, figures, folderId) {
  return new PageTools(ctx, document, version, figures, folderId).build();
}

/** "Page 2", "Pages 1 and 3", "Pages 1, 2 and 5", "7 pages". */
function describePages(numbers) {
  if (numbers.length === 1) return `Page ${numbers[0]}`;
  if (numbers.length > NAMED_PAGES) return `${numbers.length} pages`;
  return `Pages ${numbers.slice(0, -1).join(", ")} and ${numbers.at(-1)}`;
}

const quoted = (text) => `“${text}”`;

class PageTools {
  constructor(ctx, document, version, figures, folderId) {
    this.ctx = ctx;
    this.document = document;
    this.version = version;
    this.ids = version.pages.map((page) => page.id);
    this.figures = figures;
    this.folderId = folderId;
    this.selected = new Set(); // page numbers
    this.running = false;
    this.dragged = null;
  }

  build() {
    this.figures.forEach((figure, index) => this.decorate(figure, index + 1));
    this.toolbar = this.buildToolbar();
    this.update();
    return this.toolbar;
  }

  // ---- each page ----

  decorate(figure, number) {
    const last = this.ids.length;
    const tool = (kind, label, iconName, action, extra = {}) => button(icon(iconName), action, "icon-button",
      { "aria-label": label, title: label, "data-focus": `page-${number}-${kind}`, ...extra });
    const check = el("input", { type: "checkbox", "aria-label": `Select page ${number}`, "data-focus": `page-${number}-select`,
      onchange: (event) => this.select(number, event.target.checked) });
    figure.setAttribute("aria-label", `Page ${number}`);
    figure.querySelector("figcaption").replaceChildren(
      el("label", { class: "page-select" }, check, `Page ${number}`),
      el("div", { class: "page-tools", role: "group", "aria-label": `Tools of page ${number}` },
        tool("ccw", `Rotate page ${number} counter-clockwise`, "rotate-ccw", () => this.rotate(number, -TURN)),
        tool("cw", `Rotate page ${number} clockwise`, "rotate-cw", () => this.rotate(number, TURN)),
        tool("earlier", `Move page ${number} earlier`, "earlier", () => this.move(number, number - 1, "earlier"),
          { disabled: number === 1 }),
        tool("later", `Move page ${number} later`, "later", () => this.move(number, number + 1, "later"),
          { disabled: number === last }),
        tool("delete", `Delete page ${number}`, "trash", () => this.remove([number], "delete"),
          { class: "button icon-button button-danger-outline" })));
    figure.addEventListener("keydown", (event) => this.onKey(event, number));
    this.dragAndDrop(figure, number);
  }

  onKey(event, number) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    const kind = event.target.dataset?.focus?.split("-").pop() ?? "select";
    const last = this.ids.length;
    const earlier = () => number > 1 && this.move(number, number - 1, kind);
    const later = () => number < last && this.move(number, number + 1, kind);
    const actions = event.shiftKey
      ? { ArrowLeft: earlier, ArrowUp: earlier, ArrowRight: later, ArrowDown: later, R: () => this.rotate(number, -TURN, kind) }
      : { r: () => this.rotate(number, TURN, kind), Delete: () => this.remove([number], kind) };
    const action = actions[event.key];
    if (!action) return;
    event.preventDefault();
    action();
  }

  dragAndDrop(figure, number) {
    figure.draggable = true;
    const unmark = () => figure.classList.remove("is-drop-before", "is-drop-after");
    figure.addEventListener("dragstart", (event) => {
      if (this.running) {
        event.preventDefault();
        return;
      }
      this.dragged = number;
      event.dataTransfer.setData(PAGE_DRAG, String(number));
      event.dataTransfer.setData("text/plain", `Page ${number}`);
      event.dataTransfer.effectAllowed = "move";
      figure.classList.add("is-dragged");
    });
    figure.addEventListener("dragend", () => {
      this.dragged = null;
      figure.classList.remove("is-dragged");
    });
    figure.addEventListener("dragover", (event) => {
      if (!carries(event, PAGE_DRAG) || this.dragged === null) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = "move";
      // The dragged page takes this one's place: before it when it comes from further on.
      figure.classList.toggle("is-drop-before", this.dragged > number);
      figure.classList.toggle("is-drop-after", this.dragged < number);
    });
    figure.addEventListener("dragleave", (event) => {
      if (!figure.contains(event.relatedTarget)) unmark();
    });
    figure.addEventListener("drop", (event) => {
      unmark();
      if (!carries(event, PAGE_DRAG)) return;
      event.preventDefault();
      event.stopPropagation();
      const from = Number.parseInt(event.dataTransfer.getData(PAGE_DRAG), 10);
      if (from >= 1 && from <= this.ids.length && from !== number) this.move(from, number, null);
    });
  }

  // ---- selection and the toolbar ----

  buildToolbar() {
    const small = (text, action, kind = "", extra = {}) => button(text, action, `button-small ${kind}`, extra);
    this.all = el("input", { type: "checkbox", id: "pages-all", "data-focus": "pages-all", onchange: (event) => this.selectAll(event.target.checked) });
    this.count = el("span", { class: "selection-count", "aria-live": "polite" });
    this.deleteButton = small("Delete selected", () => this.remove(this.chosen(), null), "button-danger-outline");
    this.extractButton = small("Extract to folder", () => this.extract());
    this.moveButton = small("Move to document", () => this.moveToDocument());
    return el("div", { class: "toolbar page-toolbar", role: "toolbar", "aria-label": "Page actions" },
      el("div", { class: "toolbar-group" },
        el("div", { class: "check" }, this.all, el("label", { for: "pages-all" }, "Select all pages")), this.count),
      el("div", { class: "toolbar-group" }, this.deleteButton, this.extractButton, this.moveButton),
      el("div", { class: "toolbar-group" },
        small("Split document", () => this.split(), "", { disabled: this.ids.length < 2 }),
        small("Merge a document in", () => this.merge())));
  }

  chosen() {
    return [...this.selected].sort((a, b) => a - b);
  }

  select(number, on) {
    if (on) this.selected.add(number);
    else this.selected.delete(number);
    this.update();
  }

  selectAll(on) {
    this.selected = new Set(on ? this.ids.map((_, index) => index + 1) : []);
    this.update();
  }

  update() {
    const count = this.selected.size;
    for (const [index, figure] of this.figures.entries()) {
      const on = this.selected.has(index + 1);
      figure.classList.toggle("is-selected", on);
      figure.querySelector(".page-select input").checked = on;
    }
    this.all.checked = count > 0 && count === this.ids.length;
    this.all.indeterminate = count > 0 && count < this.ids.length;
    this.count.textContent = count ? `${count} of ${this.ids.length} selected` : "";
    for (const button of [this.deleteButton, this.extractButton, this.moveButton]) button.disabled = count === 0;
  }

  // ---- the operations ----

  rotate(number, angle, kind = angle > 0 ? "cw" : "ccw") {
    return this.run(() => this.post("/pages/rotate/", { pages: [{ id: this.ids[number - 1], angle }] }), {
      message: `Page ${number} turned ${angle > 0 ? "clockwise" : "counter-clockwise"}.`,
      focus: [`page-${number}-${kind}`, `page-${number}-select`],
    });
  }

  /** Moves page `from` to the place of page `to` (1-based); `kind`: the control to focus then. */
  move(from, to, kind) {
    const order = [...this.ids];
    const [moved] = order.splice(from - 1, 1);
    order.splice(to - 1, 0, moved);
    const pages = order.map((id, index) => ({ id, old_number: this.ids.indexOf(id) + 1, new_number: index + 1 }))
      .filter((page) => page.old_number !== page.new_number);
    return this.run(() => this.post("/pages/reorder/", { pages }), {
      message: `Page ${from} moved to place ${to}.`,
      focus: kind ? [`page-${to}-${kind}`, `page-${to}-select`] : [],
    });
  }

  remove(numbers, kind) {
    if (!numbers.length) return undefined;
    const ids = numbers.map((number) => this.ids[number - 1]);
    const next = Math.min(numbers[0], this.ids.length - numbers.length);
    return this.run(() => (ids.length === 1 ? api("DELETE", `/pages/${encoded(ids[0])}/`)
      : api("DELETE", "/pages/", { pages: ids }, { media: JSON_MEDIA })), {
      message: `${describePages(numbers)} deleted. The version before is kept under Versions.`,
      focus: kind ? [`page-${next}-${kind}`, `page-${next}-select`] : ["pages-all"],
    });
  }

  async extract() {
    const numbers = this.chosen();
    const target = await extractDialog({ count: numbers.length, folderId: this.folderId });
    if (!target) return;
    const body = { pages: numbers.map((number) => this.ids[number - 1]), dst: target.folderId, single_page: target.singlePage };
    if (target.title) body.title_format = target.title;
    await this.run(() => this.post("/pages/move-to-folder/", body), {
      then: async () => {
        const folder = await api("GET", `/folders/${encoded(target.folderId)}/`).catch(() => null);
        const where = folder ? ` in ${folderName(folder.data.attributes.title)}` : "";
        const made = target.singlePage ? "new documents" : target.title ? `the new document “${target.title}.pdf”` : "a new document";
        await this.leave(numbers, `#/folder/${encoded(target.folderId)}`, `${describePages(numbers)} extracted into ${made}${where}.`);
      },
    });
  }

  async moveToDocument() {
    const numbers = this.chosen();
    const target = await documentDialog({ title: `Move ${describePages(numbers).toLowerCase()} to another document`,
      text: "They go after its last page.", ok: "Move here", exclude: this.document.id, folderId: this.folderId });
    if (!target) return;
    const pages = numbers.map((number) => this.ids[number - 1]);
    await this.run(() => this.post("/pages/move-to-document/", { pages, dst: target.id, position: -1 }), {
      then: () => this.leave(numbers, `#/doc/${encoded(target.id)}`,
        `${describePages(numbers)} moved to the end of ${quoted(target.title)}.`),
    });
  }

  /** After pages left this document: read it again, or — when none is left and it went to the
   *  Trash — open `elsewhere`. */
  async leave(numbers, elsewhere, message) {
    if (numbers.length === this.ids.length) {
      this.ctx.navigate(elsewhere);
      showStatus(`${message} ${quoted(this.document.attributes.title)} had no page left and is in the Trash.`);
    } else {
      await this.ctx.refresh(["pages-all"]);
      showStatus(message);
    }
  }

  async split() {
    const after = this.chosen().filter((number) => number < this.ids.length);
    const body = await splitDialog({ after });
    if (!body) return;
    await this.run(() => this.post(`/documents/${encoded(this.document.id)}/split/`, body), {
      pending: body.separator ? "Looking at every page for separator sheets…" : "Splitting…",
      then: (answer) => {
        const title = quoted(this.document.attributes.title);
        this.ctx.navigate(`#/folder/${encoded(this.folderId)}`);
        if (!Array.isArray(answer.data)) {
          // 202: a large split goes on in the background (api.md "Splits in the background").
          const { parts } = answer.data.attributes;
          const into = parts ? `into ${parts} documents` : "at its separator sheets";
          showStatus(`Splitting ${title} ${into} in the background: the new documents appear in this folder as they are made, and ${title} goes to the Trash at the end.`);
          return;
        }
        const parts = answer.data.map((part) => quoted(part.attributes.title));
        showStatus(`Split into ${parts.length} documents: ${parts.join(", ")}. ${title} is in the Trash.`);
      },
    });
  }

  async merge() {
    const source = await documentDialog({ title: "Merge a document into this one", ok: "Merge",
      text: `Its pages go after the last page of ${quoted(this.document.attributes.title)}; it then goes to the Trash.`,
      exclude: this.document.id, folderId: this.folderId });
    if (!source) return;
    await this.run(() => this.post("/documents/merge/", { src: source.id, dst: this.document.id }), {
      message: `${quoted(source.title)} merged in: its pages are at the end, and it is in the Trash.`,
      focus: ["pages-all"],
    });
  }

  post(path, body) {
    return api("POST", path, body, { media: JSON_MEDIA });
  }

  /** One call at a time: while it runs, the tools do nothing. Then the view is read again (or
   *  `then(answer)` says what happens), or the refusal is shown. */
  async run(request, { message = "", focus = [], pending = null, then = null }) {
    if (this.running) return;
    this.running = true;
    const section = this.toolbar.parentElement;
    section?.setAttribute("aria-busy", "true");
    if (pending) showStatus(pending);
    try {
      const answer = await request();
      if (then) await then(answer);
      else {
        await this.ctx.refresh(focus);
        showStatus(message);
      }
    } catch (error) {
      await this.failed(error);
    } finally {
      this.running = false;
      section?.removeAttribute("aria-busy");
    }
  }

  async failed(error) {
    if (error.name === "AbortError") return;
    const stale = error.status === 409 || (error.status >= 400 && error.status < 500 && await this.changedMeanwhile());
    if (!stale) {
      showError(error.message);
      return;
    }
    // Someone else (another tab, a script) changed the document first: show it as it is now.
    await this.ctx.refresh();
    showError(`${error.message} The document is shown as it is now.`);
  }

  async changedMeanwhile() {
    try {
      const { data } = await api("GET", `/documents/${encoded(this.document.id)}/`);
      return data.attributes.versions?.at(-1)?.id !== this.version.id;
    } catch {
      return true; // gone meanwhile: reading the view again says so
    }
  }
}
