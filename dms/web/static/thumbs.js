// @ts-check
// Thumbnails of documents' first pages in lists (api.md §22, GET /documents/{id}/thumbnail/):
// drawn on a <canvas> as the page previews are (the CSP admits no blob: image), fetched when
// they come near the screen, PARALLEL at a time (a user's share of the PDF readers: more would be
// answered 429 while the pictures are first made, and asked again after Retry-After). The address
// names the document's `updated_at` and `ocr_status` (`?v=`), which change whenever its first page
// can (a new file, a page operation, the end of a reading), so the browser keeps each picture
// without asking again. A document still being read answers a placeholder (SVG, never kept): its
// canvas keeps the grey page drawn by the stylesheet.

import { fetchBlobWhenFree, id as encoded } from "./api.js";
import { el, lazyLoader } from "./dom.js";

const PARALLEL = 2;
const LOOK_AHEAD = "300px";
/** A thumbnail the server is too busy to render (429) is asked for again this many times. */
const BUSY_RETRIES = 5;

/** A list's thumbnails: make(node) gives one's canvas (decorative: the title is beside it);
 *  dispose() stops what has not loaded when the view is left. */
export function thumbnails() {
  const loader = lazyLoader({ parallel: PARALLEL, lookAhead: LOOK_AHEAD, draw });
  return {
    make: (node) => {
      // A search hit knows neither: its picture is asked again each time (304 while unchanged).
      const { updated_at: changed, ocr_status: status } = node.attributes ?? {};
      const version = changed ? `?v=${encodeURIComponent(`${changed}.${status}`)}` : "";
      const canvas = el("canvas", { class: "thumb is-loading", width: "6", height: "8", "aria-hidden": "true",
        "data-path": `/documents/${encoded(node.id)}/thumbnail/${version}` });
      loader.observe(canvas);
      return canvas;
    },
    dispose: loader.dispose,
  };
}

async function draw(canvas, signal) {
  const path = canvas.dataset.path;
  try {
    const { blob, type } = await fetchBlobWhenFree(path, { signal, retries: BUSY_RETRIES,
      cache: path.includes("?v=") ? "default" : "no-cache" });
    if (!type.startsWith("image/jpeg")) {
      canvas.classList.replace("is-loading", "is-placeholder");
      return;
    }
    const bitmap = await createImageBitmap(blob);
    canvas.width = bitmap.width;
    canvas.height = bitmap.height;
    canvas.getContext("2d")?.drawImage(bitmap, 0, 0);
    bitmap.close();
    canvas.classList.replace("is-loading", "is-drawn");
    performance.mark("dms:thumbnail"); // when the last one on the screen was drawn (docs/performance.md)
  } catch {
    if (!signal.aborted) canvas.classList.replace("is-loading", "is-placeholder");
  }
}
