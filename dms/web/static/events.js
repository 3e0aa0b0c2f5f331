// The live source: the caller's events as they happen (GET /events/, api.md, "The event stream"),
// handed to the listeners app.js registers. EventSource cannot send the Authorization header, so
// the stream is read with fetch() and parsed here (Server-Sent Events: `id:` and `data:` lines, a
// blank line ends an event, a line starting with ":" is a comment).
//
// - Only a visible tab keeps a stream open: a browser opens at most 6 connections to one server,
//   and a stream holds one. A tab hidden for 10 to 20 s closes it and, shown again, resumes after
//   the last event it had (Last-Event-ID).
// - A stream that ends is opened again, later each time it fails. While none is open, watchers
//   poll (docstatus.js): the live source is a speed-up, never the only way to learn of a change.
// - 401 (the token is gone) and 404 (a server without the stream) stop it for this session.

import { API_ROOT, authorization } from "./api.js";

const REOPEN_MS = 1000;
const MAX_REOPEN_MS = 60_000;
/** A line longer than this is not an event of dms: the stream is dropped (and opened again). */
const MAX_LINE_CHARS = 1 << 20;
const FINAL_STATUSES = new Set([401, 403, 404]);
/** How often a tab looks whether it is hidden (then its stream closes) or shown again. */
const VISIBILITY_CHECK_MS = 10_000;

const listeners = new Set();
const liveListeners = new Set();
let running = null; // {controller, lastId, failures, timer} while the session lasts
let live = null; // unknown before start()

/** Calls `listener(event)` for each event (the webhook body's JSON); returns the unsubscriber. */
export function onEvent(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Calls `listener(isLive)` each time a stream opens or closes. */
export function onLiveChange(listener) {
  liveListeners.add(listener);
}

/** Starts reading the stream (after login); stop() ends it (at logout). */
export function start() {
  if (running) return;
  const session = { controller: null, lastId: null, failures: 0, timer: null, wasHidden: false, checks: null };
  running = session;
  live = null;
  setLive(false); // polling, until a stream is open
  session.checks = setInterval(() => checkVisibility(session), VISIBILITY_CHECK_MS);
  if (document.visibilityState === "visible") open(session);
}

export function stop() {
  if (!running) return;
  clearInterval(running.checks);
  close(running);
  running = null;
}

/** Looked at every VISIBILITY_CHECK_MS: a tab hidden since the last look closes its stream, a
 *  tab shown again opens it. (A timer, not a visibilitychange listener: with one, Chromium lost
 *  the tab's sessionStorage, and so the login, when the page was reloaded.) */
function checkVisibility(session) {
  if (running !== session) return;
  const visible = document.visibilityState === "visible";
  if (visible && !session.controller && !session.timer) open(session);
  else if (!visible && session.wasHidden && session.controller) close(session);
  session.wasHidden = !visible;
}

function close(session) {
  clearTimeout(session.timer);
  session.timer = null;
  session.controller?.abort();
  session.controller = null;
  setLive(false);
}

function setLive(value) {
  if (live === value) return;
  live = value;
  for (const listener of [...liveListeners]) listener(value);
}

async function open(session) {
  const controller = new AbortController();
  session.controller = controller;
  let status = 0;
  try {
    status = await read(session, controller.signal);
  } catch (error) {
    if (controller.signal.aborted) return;
    status = error.status ?? 0;
  }
  if (session.controller !== controller) return; // closed or stopped meanwhile
  session.controller = null;
  setLive(false);
  if (FINAL_STATUSES.has(status)) return; // polling stays the source for this session
  session.failures = status === 200 ? 0 : session.failures + 1;
  const delay = Math.min(MAX_REOPEN_MS, REOPEN_MS * 2 ** Math.min(session.failures, 6));
  session.timer = setTimeout(() => {
    session.timer = null;
    if (running === session && document.visibilityState === "visible") open(session);
  }, delay);
}

/** Reads one stream until it ends; returns the HTTP status it was answered with. */
async function read(session, signal) {
  const headers = { ...authorization(), Accept: "text/event-stream" };
  if (session.lastId !== null) headers["Last-Event-ID"] = session.lastId;
  const response = await fetch(`${API_ROOT}/events/`, { headers, credentials: "omit", cache: "no-store", signal });
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    return response.status;
  }
  setLive(true);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const event = { id: null, data: [] };
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return response.status;
    buffer += value;
    let end = buffer.indexOf("\n");
    while (end >= 0) {
      line(session, event, buffer.slice(0, end).replace(/\r$/, ""));
      buffer = buffer.slice(end + 1);
      end = buffer.indexOf("\n");
    }
    if (buffer.length > MAX_LINE_CHARS) {
      await reader.cancel();
      return 0;
    }
  }
}

function line(session, event, text) {
  if (text === "") {
    dispatch(session, event);
    return;
  }
  if (text.startsWith(":")) return; // the heartbeat's comment
  const colon = text.indexOf(":");
  const field = colon < 0 ? text : text.slice(0, colon);
  const value = colon < 0 ? "" : text.slice(colon + 1).replace(/^ /, "");
  if (field === "id") event.id = value;
  else if (field === "data") event.data.push(value);
}

function dispatch(session, event) {
  if (event.id !== null) session.lastId = event.id;
  const data = event.data.join("\n");
  event.id = null;
  event.data = [];
  if (!data) return;
  let parsed;
  try {
    parsed = JSON.parse(data);
  } catch {
    return;
  }
  for (const listener of [...listeners]) listener(parsed);
}
