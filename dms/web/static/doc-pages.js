// A document's pages as previews (GET /pages/{id}/preview/ in the width they are shown at): the
// API needs the token, so each preview is fetched as a Blob and drawn on a <canvas> (role img) —
// the CSP (img-src 'self') admits no blob: URL, and a canvas needs none; the browser keeps them
// and asks again whether they changed. Previews load when they come near the screen,
// PARALLEL_PREVIEWS at a time, and stop when the view is left. A page opens large in the viewer (viewer.js, fetched when first
// asked for). Whoever may change the document gets the page tools (doc-pageops.js).

import { fetchBlobWhenFree, id as encoded, previewWidth } from "./api.js";
import { pageTools } from "./doc-pageops.js";
import { el, lazyLoader, plural } from "./dom.js";

const PARALLEL_PREVIEWS = 2;
/** A preview the server is too busy for (429: the user's share of its PDF readers is taken, by
 *  a page operation say) is asked for again after its Retry-After, at most this many times. */
const BUSY_RETRIES = 3;
const MAX_RETRY_SECONDS = 5;
/** Start loading a little before a page scrolls into view. */
const LOOK_AHEAD = "400px";

/** `folderId`: the document's folder (where the page tools put new documents first). */
export function pagesSection(ctx, document, version, folderId, writable) {
  const pages = version?.pages ?? [];
  const loader = lazyLoader({ parallel: PARALLEL_PREVIEWS, lookAhead: LOOK_AHEAD, draw });

  const title = document.attributes.title;
  const open = async (index) => (await import("./viewer.js")).openViewer(document, pages, index);
  const figures = pages.map((page, index) => {
    const canvas = el("canvas", { role: "img", "aria-label": `Page ${index + 1} of ${title}`, "aria-busy": "true",
      class: "preview is-loading", width: "10", height: "14" });
    const opener = el("button", { type: "button", class: "page-open", "aria-label": `Open page ${index + 1} large`,
      title: "Open large", onclick: () => open(index) }, canvas);
    const figure = el("figure", { class: "page", "data-page-id": page.id, "data-page-number": String(index + 1) },
      opener, el("figcaption", {}, `Page ${index + 1}`));
    loader.observe(figure);
    return figure;
  });
  const node = el("section", { class: "doc-pages", "aria-labelledby": "pages-title" },
    el("h2", { id: "pages-title" }, plural(pages.length, "page")),
    pages.length && writable ? pageTools(ctx, document, version, figures, folderId) : null,
    pages.length ? el("div", { class: "pages" }, figures)
      : el("p", { class: "muted" }, document.attributes.file_name ? "No pages yet." : "This document has no file yet."));
  return {
    node,
    dispose: loader.dispose,
  };
}

async function draw(figure, signal) {
  const canvas = figure.querySelector("canvas");
  const width = previewWidth(canvas.clientWidth);
  try {
    const { blob } = await fetchBlobWhenFree(`/pages/${encoded(figure.dataset.pageId)}/preview/?width=${width}`,
      { signal, cache: "no-cache", retries: BUSY_RETRIES, maxSeconds: MAX_RETRY_SECONDS });
    const bitmap = await createImageBitmap(blob);
    canvas.width = bitmap.width;
    canvas.height = bitmap.height;
    canvas.getContext("2d").drawImage(bitmap, 0, 0);
    bitmap.close();
    canvas.classList.remove("is-loading");
  } catch (error) {
    if (signal.aborted) return;
    canvas.classList.remove("is-loading");
    canvas.classList.add("is-missing");
    figure.append(el("p", { class: "hint" }, `No preview: ${error.message}`));
  } finally {
    canvas.setAttribute("aria-busy", "false");
  }
}
