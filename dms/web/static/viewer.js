// @ts-check
// The page viewer (api.md §22): a document's pages one at a time, large, in a dialog over the
// view — zoom (buttons, + and -, Ctrl+wheel, two fingers), fit to width (0), the next and the
// previous page (buttons, arrows, Page Up/Down), and the original in the browser's own PDF viewer.
// Each page is fetched in the width it is shown at (times the screen's pixel density), rounded up
// to the widths the API makes (up to 2,000 px), so zooming in makes it sharper, not just bigger.
// Fetched when first opened: the first view does not carry it.

import { fetchBlob, fetchBlobWhenFree, id as encoded, previewWidth } from "./api.js";
import { modal } from "./dialogs.js";
import { button, el } from "./dom.js";

/** Zoom steps, as parts of the width that fits the window. */
const ZOOMS = [0.5, 0.75, 1, 1.25, 1.5, 2, 3];
const MIN_ZOOM = ZOOMS[0];
const MAX_ZOOM = ZOOMS.at(-1) ?? 3;

/** Opens `pages` ([{id}]) of the document `document` at `index`; resolves when closed. */
export function openViewer(document, pages, index) {
  const title = document.attributes.title;
  return modal(`${title}`, (dialog, close) => new Viewer(dialog, close, document, pages, index).build());
}

class Viewer {
  constructor(dialog, close, document, pages, index) {
    this.dialog = dialog;
    this.close = close;
    this.document = document;
    this.pages = pages;
    this.index = index;
    this.zoom = 1;
    this.controller = null; // aborted when the dialog closes
    this.wanted = { key: "", path: "" };
    this.loading = false;
    this.pinch = null;
  }

  build() {
    this.dialog.classList.add("viewer");
    this.counter = el("span", { class: "viewer-counter", "aria-live": "polite" });
    this.zoomText = el("span", { class: "viewer-zoom", "aria-live": "polite" });
    this.previous = button("Previous page", () => this.go(this.index - 1), "button-small", { "aria-keyshortcuts": "ArrowLeft" });
    this.next = button("Next page", () => this.go(this.index + 1), "button-small", { "aria-keyshortcuts": "ArrowRight" });
    this.canvas = el("canvas", { class: "viewer-page", role: "img", width: "10", height: "14" });
    this.note = el("p", { class: "hint", hidden: true });
    this.stage = el("div", { class: "viewer-stage", tabindex: "0", "aria-label": "Page" }, this.canvas, this.note);
    const pdf = this.document.attributes.file_name?.toLowerCase().endsWith(".pdf");
    this.dialog.append(
      el("div", { class: "viewer-bar", role: "toolbar", "aria-label": "Viewer" },
        this.previous, this.counter, this.next,
        el("span", { class: "viewer-gap" }),
        button("Zoom out", () => this.setZoom(this.step(-1)), "button-small", { "aria-keyshortcuts": "-" }),
        this.zoomText,
        button("Zoom in", () => this.setZoom(this.step(1)), "button-small", { "aria-keyshortcuts": "+" }),
        button("Fit width", () => this.setZoom(1), "button-small", { "aria-keyshortcuts": "0" }),
        pdf ? button("Open PDF", () => this.openOriginal(), "button-small") : null,
        button("Close", () => this.close(null), "button-small", { autofocus: true })),
      this.stage);
    this.dialog.addEventListener("keydown", (event) => this.onKey(event));
    this.dialog.addEventListener("close", () => this.controller?.abort());
    this.stage.addEventListener("wheel", (event) => this.onWheel(event), { passive: false });
    this.stage.addEventListener("pointerdown", (event) => this.onPointer(event));
    this.stage.addEventListener("pointermove", (event) => this.onPointer(event));
    for (const type of ["pointerup", "pointercancel"]) this.stage.addEventListener(type, (event) => this.onPointer(event));
    // The dialog has its size only once shown.
    requestAnimationFrame(() => this.show());
  }

  go(index) {
    if (index < 0 || index >= this.pages.length || index === this.index) return;
    this.index = index;
    this.stage.scrollTo(0, 0);
    this.show();
  }

  step(direction) {
    const candidates = direction > 0 ? ZOOMS.filter((zoom) => zoom > this.zoom + 0.01) : ZOOMS.filter((zoom) => zoom < this.zoom - 0.01);
    return (direction > 0 ? candidates[0] : candidates.at(-1)) ?? this.zoom;
  }

  setZoom(zoom) {
    const clamped = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, zoom));
    if (Math.abs(clamped - this.zoom) < 0.001) return;
    this.zoom = clamped;
    this.show();
  }

  /** The page at the current zoom: its size at once (the old image stretched), then the image of
   *  the width it needs. One picture is asked for at a time, the latest wanted when the one in
   *  flight is done: turning or zooming quickly never has several of the viewer's renders running
   *  at once (a user's share of the server's PDF readers would answer the extra ones 429), and
   *  an abandoned request would not stop its render anyway. */
  show() {
    const number = this.index + 1;
    this.counter.textContent = `Page ${number} of ${this.pages.length}`;
    this.zoomText.textContent = `${Math.round(this.zoom * 100)}%`;
    this.previous.disabled = this.index === 0;
    this.next.disabled = this.index === this.pages.length - 1;
    this.canvas.setAttribute("aria-label", `Page ${number} of ${this.document.attributes.title}`);
    const shown = Math.max(1, Math.floor((this.stage.clientWidth - 32) * this.zoom));
    this.canvas.style.width = `${shown}px`;
    const width = previewWidth(shown);
    const page = this.pages[this.index].id;
    this.wanted = { key: `${page}@${width}`, path: `/pages/${encoded(page)}/preview/?width=${width}` };
    if (this.canvas.dataset.key === this.wanted.key || this.loading) return;
    this.load();
  }

  async load() {
    this.loading = true;
    this.controller ??= new AbortController();
    const signal = this.controller.signal;
    this.canvas.setAttribute("aria-busy", "true");
    this.note.hidden = true;
    try {
      while (!signal.aborted && this.wanted.key !== this.canvas.dataset.key) {
        const wanted = this.wanted;
        try {
          const { blob } = await fetchBlobWhenFree(wanted.path, { signal, cache: "no-cache" });
          const bitmap = await createImageBitmap(blob);
          if (signal.aborted) return;
          this.canvas.width = bitmap.width;
          this.canvas.height = bitmap.height;
          this.canvas.getContext("2d")?.drawImage(bitmap, 0, 0);
          bitmap.close();
          this.canvas.dataset.key = wanted.key;
        } catch (error) {
          if (signal.aborted) return;
          if (this.wanted !== wanted) continue; // another page or zoom is wanted by now
          this.note.textContent = `No preview: ${error.message}`;
          this.note.hidden = false;
          break;
        }
      }
    } finally {
      this.loading = false;
      if (!signal.aborted) this.canvas.setAttribute("aria-busy", "false");
    }
  }

  onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const actions = {
      ArrowLeft: () => this.go(this.index - 1), PageUp: () => this.go(this.index - 1),
      ArrowRight: () => this.go(this.index + 1), PageDown: () => this.go(this.index + 1),
      "+": () => this.setZoom(this.step(1)), "=": () => this.setZoom(this.step(1)),
      "-": () => this.setZoom(this.step(-1)), 0: () => this.setZoom(1),
    };
    const action = actions[event.key];
    if (!action) return;
    event.preventDefault();
    action();
  }

  /** Ctrl+wheel (and a touchpad's pinch, which browsers send as one) zooms. */
  onWheel(event) {
    if (!event.ctrlKey) return;
    event.preventDefault();
    this.setZoom(this.zoom * (event.deltaY < 0 ? 1.1 : 1 / 1.1));
  }

  /** Two fingers apart or together zoom (the image is redrawn sharper when they lift). */
  onPointer(event) {
    if (event.pointerType !== "touch") return;
    const pinch = this.pinch ?? { points: new Map(), start: 0, zoom: this.zoom };
    this.pinch = pinch;
    if (event.type === "pointerup" || event.type === "pointercancel") {
      pinch.points.delete(event.pointerId);
      if (pinch.points.size < 2) this.pinch = pinch.points.size ? { points: pinch.points, start: 0, zoom: this.zoom } : null;
      return;
    }
    pinch.points.set(event.pointerId, [event.clientX, event.clientY]);
    if (pinch.points.size !== 2) return;
    const [[x1, y1], [x2, y2]] = [...pinch.points.values()];
    const distance = Math.hypot(x2 - x1, y2 - y1);
    if (!pinch.start) {
      pinch.start = distance;
      pinch.zoom = this.zoom;
    } else if (distance > 0) {
      this.setZoom(pinch.zoom * (distance / pinch.start));
    }
  }

  /** The original in a new tab, where the browser's own viewer shows it: the tab is opened at the
   *  click (a popup opened later is blocked), then given the file, fetched with the token. */
  async openOriginal() {
    const tab = window.open("", "_blank");
    try {
      const { blob } = await fetchBlob(`/documents/${encoded(this.document.id)}/download/?inline=1`, "application/pdf");
      const url = URL.createObjectURL(new Blob([blob], { type: "application/pdf" }));
      if (tab) tab.location.href = url;
      else window.location.assign(url);
      // The tab keeps what it loaded; the address can go once it has.
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch (error) {
      tab?.close();
      this.note.textContent = `The file could not be opened: ${error.message}`;
      this.note.hidden = false;
    }
  }
}
