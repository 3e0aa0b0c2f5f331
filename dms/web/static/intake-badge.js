// @ts-check
// The top bar's count of files the intake refused and the caller has not dismissed (api.md §22,
// "What went wrong is visible": GET /intake/refusals/, one row asked for, its count read), hidden
// at none. Read at login, at each view and every minute; a click opens their list, fetched when
// first wanted (refusals.js).

import { api } from "./api.js";
import { $, attempt, plural } from "./dom.js";

/** How often the count is read again while the page is open and visible. */
const EVERY_MS = 60_000;
let timer = 0;

export function setUp() {
  $("refusals-button").addEventListener("click", () => attempt(async () => {
    await (await import("./refusals.js")).showRefusals(show);
  }));
}

/** Starts reading the count (at login); stop() ends it (at logout). */
export function start() {
  stop();
  refresh();
  timer = window.setInterval(() => { if (document.visibilityState === "visible") refresh(); }, EVERY_MS);
}

export function stop() {
  window.clearInterval(timer);
  show(0);
}

/** Reads the count again; a failure leaves the badge as it was (the view shows its own). */
export async function refresh() {
  try {
    const listing = await api("GET", "/intake/refusals/?page[size]=1");
    show(listing.meta.pagination.count);
  } catch {
    // The next view or minute tries again.
  }
}

/** @param {number} count */
function show(count) {
  const button = $("refusals-button");
  button.hidden = count === 0;
  $("refusals-count").textContent = count > 99 ? "99+" : String(count);
  button.setAttribute("aria-label", `Refused files: ${plural(count, "not seen", "not seen")}`);
}
