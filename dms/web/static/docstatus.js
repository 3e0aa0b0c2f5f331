// The processing status of documents (api.md, "OCR status") as it changes: whoever shows one
// calls watch(id, callback) and gets the document each time it is read, until its status is final.
//
// Each watched document is read again and again with back-off. The live source (events.js) makes
// that fast: app.js calls nudge(id) when an event about it arrives. While a stream is open
// (setLive(true)) polling is only a safety net and slows to LIVE_MAX_POLL_MS.

import { api, id as encoded } from "./api.js";

const FIRST_POLL_MS = 500;
const BACK_OFF = 1.6;
const MAX_POLL_MS = 5000;
const LIVE_MAX_POLL_MS = 30_000;
const FINAL = new Set(["succeeded", "failed"]);

export const isFinal = (document) => !document.attributes.file_name || FINAL.has(document.attributes.ocr_status);

const watchers = new Map(); // document id -> {callbacks, delay, timer}
let maxPollMs = MAX_POLL_MS;

/** Calls `callback(document)` each time the document is read, and `callback(null)` if it is
 *  gone; returns the function that stops watching. */
export function watch(documentId, callback) {
  let watcher = watchers.get(documentId);
  if (!watcher) {
    watcher = { callbacks: new Set(), delay: FIRST_POLL_MS, timer: null };
    watchers.set(documentId, watcher);
    schedule(documentId, watcher);
  }
  watcher.callbacks.add(callback);
  return () => {
    watcher.callbacks.delete(callback);
    if (watcher.callbacks.size === 0) stop(documentId);
  };
}

function stop(documentId) {
  const watcher = watchers.get(documentId);
  if (watcher) clearTimeout(watcher.timer);
  watchers.delete(documentId);
}

function schedule(documentId, watcher) {
  clearTimeout(watcher.timer);
  watcher.timer = setTimeout(() => read(documentId), watcher.delay);
  watcher.delay = Math.min(maxPollMs, watcher.delay * BACK_OFF);
}

async function read(documentId) {
  const watcher = watchers.get(documentId);
  if (!watcher) return;
  let document = null;
  try {
    document = (await api("GET", `/documents/${encoded(documentId)}/`)).data;
  } catch (error) {
    if (error.status !== 404) {
      // The server is away for a moment: try again later, slower.
      if (watchers.get(documentId) === watcher) schedule(documentId, watcher);
      return;
    }
  }
  if (watchers.get(documentId) !== watcher) return; // stopped meanwhile
  for (const callback of [...watcher.callbacks]) callback(document);
  if (document === null || isFinal(document)) stop(documentId);
  else schedule(documentId, watcher);
}

/** Something says the document changed (an upload just finished; a live source's event): read it now. */
export function nudge(documentId) {
  const watcher = watchers.get(documentId);
  if (!watcher) return;
  clearTimeout(watcher.timer);
  read(documentId);
}

/** Stops every watcher (at logout). */
export function stopAll() {
  for (const documentId of [...watchers.keys()]) stop(documentId);
}

/** A live source opened (true) or closed (false): polling slows down, or takes over at once. */
export function setLive(isLive) {
  maxPollMs = isLive ? LIVE_MAX_POLL_MS : MAX_POLL_MS;
  if (isLive) return;
  for (const [documentId, watcher] of watchers) {
    watcher.delay = Math.min(watcher.delay, MAX_POLL_MS);
    schedule(documentId, watcher);
  }
}
