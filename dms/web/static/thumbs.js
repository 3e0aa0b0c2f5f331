// @ts-check
// Thumbnails of documents' first pages in lists (api.md §22, GET /documents/{id}/thumbnail/):
// drawn on a <canvas> as the page previews are (the CSP admits no blob: image), fetched when
// they come near the screen, PARALLEL at a time (a user's share of the PDF readers). The address
// names the document's `updated_at` and `ocr_status` (`?v=`), which change whenever its first page
// can (a new file, a page operation, the end of a reading), so the browser keeps each picture
// without asking again. A document still being read answers a placeholder (SVG, never kept): its
// canvas keeps the grey page drawn by the stylesheet.

import { fetchBlob, id as encoded } from "./api.js";
import { el } from "./dom.js";

const PARALLEL = 2;
const LOOK_AHEAD = "300px";
/** A thumbnail the server is too busy to render (429: the user's share of its PDF readers is
 *  taken) is asked for again after its Retry-After, at most this many times. */
const BUSY_RETRIES = 5;
const MAX_RETRY_SECONDS = 5;

/** A list's thumbnails: make(node) gives one's canvas (decorative: the title is beside it);
 *  dispose() stops what has not loaded when the view is left. */
export function thumbnails() {
  const controller = new AbortController();
  /** @type {HTMLCanvasElement[]} */
  const waiting = [];
  let active = 0;
  const load = () => {
    while (active < PARALLEL && waiting.length && !controller.signal.aborted) {
      const canvas = /** @type {HTMLCanvasElement} */ (waiting.shift());
      active += 1;
      draw(canvas, controller.signal).finally(() => {
        active -= 1;
        load();
      });
    }
  };
  const observer = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      observer.unobserve(entry.target);
      waiting.push(/** @type {HTMLCanvasElement} */ (entry.target));
    }
    load();
  }, { rootMargin: LOOK_AHEAD });
  return {
    make: (node) => {
      // A search hit knows neither: its picture is asked again each time (304 while unchanged).
      const { updated_at: changed, ocr_status: status } = node.attributes ?? {};
      const version = changed ? `?v=${encodeURIComponent(`${changed}.${status}`)}` : "";
      const canvas = el("canvas", { class: "thumb is-loading", width: "6", height: "8", "aria-hidden": "true",
        "data-path": `/documents/${encoded(node.id)}/thumbnail/${version}` });
      observer.observe(canvas);
      return canvas;
    },
    dispose: () => {
      controller.abort();
      observer.disconnect();
    },
  };
}

async function fetchThumbnail(path, signal) {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await fetchBlob(path, undefined, signal, path.includes("?v=") ? "default" : "no-cache");
    } catch (error) {
      if (error.status !== 429 || attempt >= BUSY_RETRIES || signal.aborted) throw error;
      const seconds = Math.min(error.retryAfter ?? 1, MAX_RETRY_SECONDS);
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    }
  }
}

async function draw(canvas, signal) {
  try {
    const { blob, type } = await fetchThumbnail(canvas.dataset.path, signal);
    if (!type.startsWith("image/jpeg")) {
      canvas.classList.replace("is-loading", "is-placeholder");
      return;
    }
    await paint(canvas, blob);
  } catch {
    if (!signal.aborted) canvas.classList.replace("is-loading", "is-placeholder");
  }
}

async function paint(canvas, blob) {
  const bitmap = await createImageBitmap(blob);
  canvas.width = bitmap.width;
  canvas.height = bitmap.height;
  canvas.getContext("2d")?.drawImage(bitmap, 0, 0);
  bitmap.close();
  canvas.classList.remove("is-loading");
  canvas.classList.add("is-drawn");
  performance.mark("dms:thumbnail"); // when the last one on the screen was drawn (docs/performance.md)
}
