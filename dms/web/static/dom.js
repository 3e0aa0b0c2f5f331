// @ts-check
// Small helpers every view uses: building elements (text always as text nodes, so nothing the
// API returns can inject markup), icons, dates and sizes, the page's messages, a busy state, and
// search snippets rendered without innerHTML.

export const $ = (id) => document.getElementById(id);

/** el("button", {class: "button", onclick: fn, disabled: true}, "Text", child, [more]).
 *  true sets an empty attribute, false/null/undefined leave it out; on* functions are listeners. */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === "function" && name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (value === true) node.setAttribute(name, "");
    else if (value !== false && value !== null && value !== undefined) node.setAttribute(name, value);
  }
  node.append(...children.flat(Infinity).filter((child) => child !== null && child !== undefined && child !== false));
  return node;
}

/** A form field: `label` for `control`, then `more` (a hint, an error). */
export const field = (label, control, ...more) => el("div", { class: "field" }, el("label", { for: control.id }, label), control, ...more);

/** A <select> of [value, text] `options`, `value` chosen. */
export const select = (attributes, options, value) => el("select", attributes,
  options.map(([code, text]) => el("option", { value: code, selected: code === value }, text)));

/** A button of class "button" and `kind` (e.g. "button-small button-danger-outline"). */
export const button = (text, onclick, kind = "", attributes = {}) =>
  el("button", { type: "button", class: `button ${kind}`.trim(), onclick, ...attributes }, text);

const SVG = "http://www.w3.org/2000/svg";
// 24×24 outlines, drawn in currentColor; decorative (aria-hidden): the text beside them names things.
const ICONS = {
  folder: "M3 6.5A1.5 1.5 0 0 1 4.5 5h4.6l2 2h8.4A1.5 1.5 0 0 1 21 8.5v9a1.5 1.5 0 0 1-1.5 1.5h-15A1.5 1.5 0 0 1 3 17.5z",
  document: "M6.5 3h7.5l4.5 4.5v12a1.5 1.5 0 0 1-1.5 1.5h-10.5a1.5 1.5 0 0 1-1.5-1.5v-14.5a1.5 1.5 0 0 1 1.5-1.5zM14 3v4.5h4.5M8.5 12.5h7M8.5 16h7",
  inbox: "M3 13.5l2.5-8h13l2.5 8v5a1.5 1.5 0 0 1-1.5 1.5h-15a1.5 1.5 0 0 1-1.5-1.5zM3 13.5h5l1.5 2.5h5l1.5-2.5h5",
  home: "M3.5 11l8.5-7 8.5 7M6 9.5v10h4.5v-6h3v6h4.5v-10",
  shared: "M9 11a3.5 3.5 0 1 0 0-7 3.5 3.5 0 0 0 0 7zM2.5 20v-1a5 5 0 0 1 5-5h3a5 5 0 0 1 5 5v1M16 4.2a3.5 3.5 0 0 1 0 6.6M21.5 20v-1a5 5 0 0 0-3.5-4.8",
  trash: "M4 7h16M9.5 7V4.5h5V7M6.5 7l1 13h9l1-13M10 11v5.5M14 11v5.5",
  settings: "M12 8.5a3.5 3.5 0 1 0 0 7 3.5 3.5 0 0 0 0-7zM12 2.5v3M12 18.5v3M2.5 12h3M18.5 12h3M5.3 5.3l2.1 2.1M16.6 16.6l2.1 2.1M5.3 18.7l2.1-2.1M16.6 7.4l2.1-2.1",
  chevron: "M9 6l6 6-6 6",
  upload: "M12 16V4M7 9l5-5 5 5M4 16v3.5h16V16",
  menu: "M4 6.5h16M4 12h16M4 17.5h16",
  "rotate-cw": "M20.5 4.5v5h-5M19.4 14.5a7.5 7.5 0 1 1-1.7-7.4l2.8 2.4",
  "rotate-ccw": "M3.5 4.5v5h5M4.6 14.5a7.5 7.5 0 1 0 1.7-7.4L3.5 9.5",
  earlier: "M19 12H5M11 6l-6 6 6 6",
  later: "M5 12h14M13 6l6 6-6 6",
};

export function icon(name, className = "icon") {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", className);
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", ICONS[name]);
  svg.append(path);
  return svg;
}

// ---- dates and sizes ----

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
// The API gives microseconds; some browsers parse at most milliseconds.
export const parseDate = (iso) => new Date(iso.replace(/(\.\d{3})\d+/, "$1"));
export const formatDate = (iso) => dateFormat.format(parseDate(iso));

export function timeElement(iso) {
  if (!iso) return el("span", { class: "muted" }, "—");
  return el("time", { datetime: iso, title: iso }, formatDate(iso));
}

/** "1 page", "12 pages". */
export const plural = (count, one, many = `${one}s`) => `${count.toLocaleString()} ${count === 1 ? one : many}`;

export function formatSize(bytes) {
  if (!bytes) return "—";
  const units = ["bytes", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** The special folders' names as a person reads them. */
export const folderName = (title) => ({ ".home": "Home", ".inbox": "Inbox", ".shared": "Shared with me" }[title] ?? title);

/** "Home / Invoices": where a folder resource is. */
export const folderPath = (folder) => folder.attributes.breadcrumb.map(([title]) => folderName(title)).join(" / ");

/** ocr_status (api.md, "OCR status") in words, with the class of its badge. */
export const STATUS = {
  received: { text: "Waiting", badge: "badge-muted" },
  started: { text: "Reading", badge: "badge-info" },
  succeeded: { text: "Done", badge: "badge-success" },
  failed: { text: "Failed", badge: "badge-danger" },
};

export function statusBadge(document) {
  const { ocr_status: status, file_name: file, ocr_error: error } = document.attributes;
  if (!file) return el("span", { class: "badge badge-muted" }, "No file");
  const known = STATUS[status] ?? { text: status, badge: "badge-muted" };
  return el("span", { class: `badge ${known.badge}`, title: error || null }, known.text);
}

// ---- messages ----

/** The page's alert (an error) and status (what went well): one at a time. */
const say = (alert, status) => {
  $("alert").textContent = alert;
  $("status").textContent = status;
};
/** How the browsers word a module of the page that is no longer there (Chromium, Firefox,
 *  Safari): dms was updated while this tab stayed open, and another version's files answer 404. */
const GONE_MODULE = /dynamically imported module|Importing a module script failed/i;
export const PAGE_UPDATED = "dms was updated since this page was opened: reload the page to go on.";
export const showError = (message) => say(GONE_MODULE.test(message) ? PAGE_UPDATED : message, "");
export const showStatus = (message) => say("", message);
export const clearMessages = () => say("", "");

/** Shows a failed request's sentence as the page's alert; a stopped one (an AbortError: a view
 *  left, a session ended meanwhile, api.js) says nothing. */
export function showFailure(error) {
  if (error.name !== "AbortError") showError(error.message);
}

/** Runs an action and shows its failure as the page's alert; returns undefined on failure. */
export async function attempt(task) {
  try {
    return await task();
  } catch (error) {
    showFailure(error);
    return undefined;
  }
}

/** Disables a form's (or element's) buttons while a request runs, so a double click can't send it twice. */
export async function busy(container, task) {
  const buttons = container.matches("button") ? [container] : [...container.querySelectorAll("button")];
  buttons.forEach((button) => { button.disabled = true; });
  container.setAttribute("aria-busy", "true");
  try {
    return await task();
  } finally {
    buttons.forEach((button) => { button.disabled = false; });
    container.removeAttribute("aria-busy");
  }
}

// ---- pictures loaded as they come near the screen ----

/** Calls `draw(element, signal)` for each observed element once it comes within `lookAhead` of
 *  the screen, `parallel` at a time (page previews, thumbnails); with `quick`, first
 *  `quick(element, signal)`, any number at a time, and `draw` only where it resolves false.
 *  dispose() stops what has not started and aborts the signal of what has, when the view is
 *  left. */
export function lazyLoader({ parallel, lookAhead, draw, quick = undefined }) {
  const controller = new AbortController();
  /** @type {Element[]} */
  const waiting = [];
  let active = 0;
  const load = () => {
    while (active < parallel && waiting.length && !controller.signal.aborted) {
      active += 1;
      draw(waiting.shift(), controller.signal).finally(() => {
        active -= 1;
        load();
      });
    }
  };
  const observer = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      observer.unobserve(entry.target);
      if (!quick) {
        waiting.push(entry.target);
        continue;
      }
      // What `quick` can draw at once (from the browser's cache) skips the queue; the rest
      // joins it.
      quick(entry.target, controller.signal).then((drawn) => {
        if (drawn || controller.signal.aborted) return;
        waiting.push(entry.target);
        load();
      });
    }
    load();
  }, { rootMargin: lookAhead });
  return {
    observe: (element) => observer.observe(element),
    dispose: () => {
      controller.abort();
      observer.disconnect();
    },
  };
}

// ---- search snippets ----

const ENTITIES = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": "\"", "&#x27;": "'", "&#39;": "'" };
const unescape = (text) => text.replace(/&(amp|lt|gt|quot|#x27|#39);/g, (entity) => ENTITIES[entity]);

/** A search hit's `highlight` (api.md, "Search": escaped text, matching words in <em>…</em>) as
 *  text nodes and <mark> elements. The server's string never reaches innerHTML: only the two tags
 *  are recognised, everything else stays text. */
export function highlighted(snippet) {
  const fragment = document.createDocumentFragment();
  let inside = false;
  for (const part of snippet.split(/(<em>|<\/em>)/)) {
    if (part === "<em>") inside = true;
    else if (part === "</em>") inside = false;
    else if (part) fragment.append(inside ? el("mark", {}, unescape(part)) : unescape(part));
  }
  return fragment;
}

/** Focuses a view's heading after a navigation, so keyboard and screen reader users land there. */
export function focusHeading(root) {
  const heading = root.querySelector("h1");
  if (heading) {
    heading.setAttribute("tabindex", "-1");
    heading.focus({ preventScroll: false });
  }
}
