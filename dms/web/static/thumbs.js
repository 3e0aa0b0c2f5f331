// @ts-check
// Thumbnails of documents' first pages in lists (api.md §22, GET /documents/{id}/thumbnail/):
// drawn on a <canvas> as the page previews are (the CSP admits no blob: image), fetched when
// they come near the screen, PARALLEL at a time (a user's share of the PDF readers: more would be
// answered 429 while the pictures are first made, and asked again after Retry-After). The address
// names the document's `updated_at` and `ocr_status` (`?v=`), which change whenever its first page
// can (a new file, a page operation, the end of a reading), so the browser keeps each picture
// without asking again. Those this tab has drawn before (their addresses kept in sessionStorage,
// which a logout clears) are all drawn at once from the browser's cache, outside the queue: two at
// a time they took 200-290 ms for a screenful (issue 47). (`only-if-cached` would tell without
// such a list, but the browser logs each miss as a failed load in its console.) A document still
// being read answers a placeholder (SVG, never kept): its canvas keeps the grey page drawn by the
// stylesheet.

import { fetchBlob, fetchBlobWhenFree, id as encoded } from "./api.js";
import { el, lazyLoader } from "./dom.js";

const PARALLEL = 2;
const KEPT_KEY = "dms.thumbnails";
const KEPT_MOST = 2000;
const LOOK_AHEAD = "300px";
/** A thumbnail the server is too busy to render (429) is asked for again this many times. */
const BUSY_RETRIES = 5;

/** A list's thumbnails: make(node) gives one's canvas (decorative: the title is beside it);
 *  dispose() stops what has not loaded when the view is left. */
export function thumbnails() {
  kept = null; // each list reads what the tab's storage holds now (a logout cleared it)
  const loader = lazyLoader({ parallel: PARALLEL, lookAhead: LOOK_AHEAD, draw, quick: drawKept });
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

/** @type {Set<string> | null} the addresses of the pictures this tab has drawn, oldest first */
let kept = null;
let saving = false;

function keptPaths() {
  if (kept === null) {
    try {
      kept = new Set(JSON.parse(sessionStorage.getItem(KEPT_KEY) ?? "[]"));
    } catch {
      kept = new Set();
    }
  }
  return kept;
}

function remember(path) {
  const paths = keptPaths();
  paths.delete(path);
  paths.add(path);
  for (const oldest of paths) {
    if (paths.size <= KEPT_MOST) break;
    paths.delete(oldest);
  }
  if (saving) return;
  saving = true;
  setTimeout(() => { // once for a screenful
    saving = false;
    try { sessionStorage.setItem(KEPT_KEY, JSON.stringify([...keptPaths()])); } catch { /* full: not kept */ }
  });
}

/** A picture this tab has drawn before, drawn again from the browser's cache (`force-cache`: the
 *  server is asked only if the browser let it go); false for one it has not (the queue asks the
 *  server). */
async function drawKept(canvas, signal) {
  const path = canvas.dataset.path;
  if (!path.includes("?v=") || !keptPaths().has(path)) return false;
  try {
    const { blob, type } = await fetchBlob(path, undefined, signal, "force-cache");
    return type.startsWith("image/jpeg") && await paint(canvas, blob);
  } catch {
    keptPaths().delete(path);
    return false;
  }
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
  canvas.classList.replace("is-loading", "is-drawn");
  if (canvas.dataset.path.includes("?v=")) remember(canvas.dataset.path);
  performance.mark("dms:thumbnail"); // when the last one on the screen was drawn (docs/performance.md)
  return true;
}
