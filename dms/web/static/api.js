// @ts-check
// The public REST API of this origin, as the page uses it: JSON calls with the session's token,
// lists, binary answers and uploads with progress. Nothing here knows a view. A 401 on a call made
// with a token ends the session through the handler app.js registers.

const TOKEN_KEY = "dms.token";
export const JSON_MEDIA = "application/json";
export const VND_MEDIA = "application/vnd.api+json";
/** The API sits beside /static/ (below the server's URL prefix, if any); the modules are under
 *  static/<the page's version>/ (dms/web/api/ui.py). */
export const API_ROOT = new URL("../../api", import.meta.url).pathname;
/** The largest page the API gives (api.md, "Pagination"): lists are read 100 at a time. */
export const MAX_PAGE_SIZE = 100;

// sessionStorage only: the token dies with the tab, is never a cookie and never in a URL.
let token = sessionStorage.getItem(TOKEN_KEY);
/** @type {(message: string) => void} */
let onUnauthorized = () => {};

export const hasToken = () => token !== null;
/** @returns {Record<string, string>} */
export const authorization = () => (token ? { Authorization: `Token ${token}` } : {});

/**
 * What a call may say besides its method and path: the body's media type, the answer's (Accept),
 * a signal that aborts it, and whether the browser may keep the answer (only previews: "no-cache",
 * kept and asked again with If-Modified-Since; everything else "no-store").
 * @typedef {{media?: string, accept?: string, signal?: AbortSignal, cache?: RequestCache}} CallOptions
 */

export function setToken(secret) {
  token = secret;
  sessionStorage.setItem(TOKEN_KEY, secret);
}

export function forgetToken() {
  token = null;
  sessionStorage.clear();
}

export function whenUnauthorized(handler) {
  onUnauthorized = handler;
}

export class ApiError extends Error {
  constructor(message, status, pointer = null, retryAfter = null) {
    super(message);
    this.status = status;
    this.pointer = pointer;
    /** Seconds a 429 or 503 asks to wait (Retry-After), or null. */
    this.retryAfter = retryAfter;
    /** The error's code (api.md, "Errors") and `meta`, when the server sent them.
     *  @type {string | null} */
    this.code = null;
    /** @type {Record<string, any> | null} */
    this.meta = null;
  }
}

const UNREACHABLE = "Could not reach the server. Check the connection and try again.";

/** A refusal as an ApiError with the envelope's sentence (api.md, "Errors"); `retryAfter`: the
 *  header's text, or null. */
function refusal(status, payload, retryAfter = null) {
  const first = payload?.errors?.[0];
  const detail = first?.detail || `The server answered ${status}.`;
  // A revoked or expired session token: forget it and ask for a new login.
  if (status === 401 && token) {
    forgetToken();
    onUnauthorized(`Your session has ended: ${detail} Please log in again.`);
    return new ApiError(`Your session has ended: ${detail} Please log in again.`, 401);
  }
  const seconds = Number.parseInt(retryAfter ?? "", 10);
  const error = new ApiError(detail, status, first?.source?.pointer ?? null, Number.isFinite(seconds) ? seconds : null);
  // The machine code and what the error names besides its sentence (a duplicate's document).
  error.code = first?.code ?? null;
  error.meta = first?.meta ?? null;
  return error;
}

/**
 * @param {string} method
 * @param {string} path
 * @param {CallOptions & {body?: unknown}} [options]
 */
async function send(method, path, { body, media = VND_MEDIA, accept, signal, cache = "no-store" } = {}) {
  const headers = { ...authorization() };
  if (accept) headers.Accept = accept;
  /** @type {RequestInit} */
  const init = { method, headers, credentials: "omit", cache, signal };
  if (body !== undefined) {
    headers["Content-Type"] = media;
    init.body = JSON.stringify(body);
  }
  const sentWith = token;
  let response;
  try {
    response = await fetch(API_ROOT + path, init);
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(UNREACHABLE, 0);
  }
  // A request still on its way when this tab logged out (or logged in again) comes back 401 for
  // the session it was sent with, or one sent after it without any: nothing to tell anyone (the
  // logout said what happened), so it ends as if it had been stopped. Failures are shown with
  // dom.js showFailure, which passes over stopped requests.
  if (response.status === 401 && (sentWith !== token || token === null)) {
    throw new DOMException("The session this request was sent with has ended.", "AbortError");
  }
  if (!response.ok) throw refusal(response.status, await response.json().catch(() => null), response.headers.get("Retry-After"));
  return response;
}

/** A JSON call; null for 204. `options.media` is the body's type (vnd.api+json by default).
 *  @param {string} method
 *  @param {string} path
 *  @param {unknown} [body]
 *  @param {CallOptions} [options] */
export async function api(method, path, body, options = {}) {
  const response = await send(method, path, { ...options, body });
  if (response.status === 204) return null;
  return response.json().catch(() => null);
}

/** Every item of a paginated list, 100 a request, at most `maxPages` requests (a bound: the
 *  rest is left out and `truncated` says so). */
export async function listAll(path, maxPages = 10) {
  const items = [];
  const join = path.includes("?") ? "&" : "?";
  for (let number = 1; number <= maxPages; number += 1) {
    const list = await api("GET", `${path}${join}page[size]=${MAX_PAGE_SIZE}&page[number]=${number}`);
    items.push(...list.data);
    const pages = list.meta?.pagination?.pages ?? 1;
    if (number >= pages) return { items, truncated: false };
  }
  return { items, truncated: true };
}

/** A binary answer (a page preview, a download) as a Blob, with the token in the header, and its
 *  media type. `cache`: "no-cache" for previews (see CallOptions).
 *  @param {string} path
 *  @param {string} [accept]
 *  @param {AbortSignal} [signal]
 *  @param {RequestCache} [cache] */
export async function fetchBlob(path, accept, signal, cache = "no-store") {
  const response = await send("GET", path, { accept, signal, cache });
  return { blob: await response.blob(), disposition: response.headers.get("Content-Disposition"),
    type: response.headers.get("Content-Type") ?? "" };
}

/** The widths GET /pages/{id}/preview/ makes (dms.domain.previews.PREVIEW_WIDTHS). */
const PREVIEW_WIDTHS = [240, 480, 720, 1000, 1400, 2000];

/** The preview width for a page shown `shown` CSS pixels wide: times the screen's pixel density,
 *  rounded up to a width the API makes. */
export function previewWidth(shown) {
  const wanted = Math.max(1, shown) * (window.devicePixelRatio || 1);
  return PREVIEW_WIDTHS.find((width) => width >= wanted) ?? PREVIEW_WIDTHS[PREVIEW_WIDTHS.length - 1];
}

/** fetchBlob, asked again after its Retry-After (at most `maxSeconds`) while the server answers
 *  429 (a user's share of its PDF readers taken, by a page operation say), `retries` times.
 *  @param {string} path
 *  @param {{signal?: AbortSignal, cache?: RequestCache, retries?: number, maxSeconds?: number}} [options] */
export async function fetchBlobWhenFree(path, { signal = undefined, cache = "no-store", retries = 3, maxSeconds = 5 } = {}) {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await fetchBlob(path, undefined, signal, cache);
    } catch (error) {
      if (error.status !== 429 || attempt >= retries || signal?.aborted) throw error;
      const seconds = Math.min(error.retryAfter ?? 1, maxSeconds);
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    }
  }
}

/** The file name a Content-Disposition header gives (filename* first, as RFC 6266 says). */
export function dispositionName(header, fallback) {
  if (!header) return fallback;
  const extended = /filename\*=UTF-8''([^;]+)/i.exec(header);
  if (extended) {
    try { return decodeURIComponent(extended[1]); } catch { /* a malformed name: try the plain one */ }
  }
  const plain = /filename="?([^";]+)"?/i.exec(header);
  return plain ? plain[1] : fallback;
}

/** Downloads an API path through fetch (downloads need the Authorization header too) and saves
 *  it under the server's file name; with a `body`, POSTs it as JSON (POST /nodes/download/). */
export async function download(path, fallbackName, body = undefined) {
  const response = body === undefined ? null : await send("POST", path, { body, media: JSON_MEDIA });
  const { blob, disposition } = response
    ? { blob: await response.blob(), disposition: response.headers.get("Content-Disposition") }
    : await fetchBlob(path);
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = dispositionName(disposition, fallbackName);
  document.body.append(link);
  link.click();
  link.remove();
  // Let the browser start the download before the object URL goes.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** PUT of a file's bytes into a document (api.md, "Uploading a file") through XMLHttpRequest,
 *  whose upload progress fetch() cannot report; `query`: its parameters (`if_duplicate`).
 *  Resolves with the document; rejects with an ApiError.
 *  @param {string} documentId
 *  @param {File} file
 *  @param {(fraction: number) => void} onProgress
 *  @param {Record<string, string>} [query] */
export function uploadFile(documentId, file, onProgress, query = {}) {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    const name = encodeURIComponent(file.name);
    request.open("PUT", withQuery(`${API_ROOT}/documents/${encodeURIComponent(documentId)}/upload/${name}`, query));
    for (const [header, value] of Object.entries(authorization())) request.setRequestHeader(header, value);
    // The header is mandatory but only its presence counts; the URL names the file.
    request.setRequestHeader("Content-Disposition", `attachment; filename*=UTF-8''${name}`);
    request.setRequestHeader("Content-Type", file.type || "application/octet-stream");
    request.upload.addEventListener("progress", (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    });
    request.addEventListener("load", () => {
      let payload = null;
      try { payload = JSON.parse(request.responseText); } catch { /* not JSON: handled below */ }
      if (request.status >= 200 && request.status < 300) {
        resolve(payload.data);
        return;
      }
      reject(refusal(request.status, payload));
    });
    request.addEventListener("error", () => reject(new ApiError(UNREACHABLE, 0)));
    request.send(file);
  });
}

/** `/path/?a=1&b=2` from an object, leaving out empty values. */
export function withQuery(path, params) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") query.set(name, value);
  }
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}

export const id = encodeURIComponent;

/** The 16-character id the API gives this session's token (api.md, "Tokens": the first 16 hex
 *  digits of its SHA-512), to mark its row; null where crypto.subtle is missing (it exists only
 *  on https and localhost). */
export async function sessionTokenId() {
  if (!token || !globalThis.crypto?.subtle) return null;
  const digest = await crypto.subtle.digest("SHA-512", new TextEncoder().encode(token));
  return Array.from(new Uint8Array(digest).slice(0, 8), (b) => b.toString(16).padStart(2, "0")).join("");
}
