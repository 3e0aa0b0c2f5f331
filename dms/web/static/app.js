// dms token page: log in, manage API tokens, see the profile. Plain ES2020, no framework, no
// build step. It talks only to the public REST API of this origin, and the CSP forbids inline
// code, so every listener is attached here.
"use strict";

const TOKEN_KEY = "dms.token";
const JSON_MEDIA = "application/json";
const VND_MEDIA = "application/vnd.api+json";
const VIEWS = ["loading", "login", "tokens", "profile"];
// The API sits beside /static/ (below the server's URL prefix, if any): derive it from this script's URL.
const API_ROOT = new URL("../api", document.currentScript.src).pathname;

// sessionStorage only: the token dies with the tab, is never sent as a cookie and never in a URL.
const state = { token: sessionStorage.getItem(TOKEN_KEY), me: null, sessionTokenId: null, moveFocus: false };

const $ = (id) => document.getElementById(id);

/** A small element builder; text goes in as text nodes, so names from the API can't inject HTML. */
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== null && value !== undefined) node.setAttribute(name, value);
  }
  node.append(...children.filter((child) => child !== null && child !== undefined));
  return node;
}

// ---- API -----------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

/** fetch() on /api with the token; a non-2xx answer becomes an ApiError with the envelope's detail. */
async function api(method, path, body, media = VND_MEDIA) {
  const headers = {};
  if (state.token) headers.Authorization = `Token ${state.token}`;
  const init = { method, headers, credentials: "omit", cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = media;
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(API_ROOT + path, init);
  } catch {
    throw new ApiError("Could not reach the server. Check the connection and try again.", 0);
  }
  if (response.status === 204) return null;
  const payload = await response.json().catch(() => null);
  if (response.ok) return payload;

  const detail = payload?.errors?.[0]?.detail
    || `The server answered ${response.status} ${response.statusText}`.trim() + ".";
  // A revoked or expired session token: forget it and ask for a new login.
  if (response.status === 401 && state.token) {
    endSession();
    throw new ApiError(`Your session has ended: ${detail} Please log in again.`, 401);
  }
  throw new ApiError(detail, response.status);
}

// ---- messages and views ----------------------------------------------------------------------

function showError(message) {
  $("status").textContent = "";
  $("alert").textContent = message;
}

function showStatus(message) {
  $("alert").textContent = "";
  $("status").textContent = message;
}

function clearMessages() {
  $("alert").textContent = "";
  $("status").textContent = "";
}

function showView(name) {
  for (const view of VIEWS) $(`view-${view}`).hidden = view !== name;
  document.title = { login: "Log in · dms", tokens: "API Tokens · dms", profile: "Profile · dms" }[name] || "dms";
}

/** Disables a form's buttons while a request runs, so a double click can't send it twice. */
async function busy(form, task) {
  const buttons = form.querySelectorAll("button");
  buttons.forEach((button) => { button.disabled = true; });
  form.setAttribute("aria-busy", "true");
  try {
    return await task();
  } finally {
    buttons.forEach((button) => { button.disabled = false; });
    form.removeAttribute("aria-busy");
  }
}

/** The view named by the URL fragment (#tokens, #profile); the token itself never goes there. */
async function route() {
  closeMenu(false);
  if (!state.token) {
    showView("login");
    return;
  }
  const view = location.hash === "#profile" ? "profile" : "tokens";
  if (view !== "tokens") hideSecret();
  try {
    if (view === "profile") await renderProfile();
    else await renderTokens();
    showView(view);
    // After a menu choice, focus the new view's heading so keyboard and screen reader users land there.
    if (state.moveFocus) $(`view-${view}`).querySelector("h1").focus();
  } catch (error) {
    showError(error.message);
    if (!state.token) showView("login");
  } finally {
    state.moveFocus = false;
  }
}

function go(view, moveFocus = false) {
  clearMessages();
  state.moveFocus = moveFocus;
  if (location.hash === `#${view}`) route();
  else location.hash = view; // hashchange calls route()
}

// ---- session ---------------------------------------------------------------------------------

/** The 16-character id the API gives this session's token, to mark its row; null where
 *  crypto.subtle is missing (it exists only on https and localhost). */
async function tokenId(secret) {
  if (!globalThis.crypto?.subtle) return null;
  const digest = await crypto.subtle.digest("SHA-512", new TextEncoder().encode(secret));
  return Array.from(new Uint8Array(digest).slice(0, 8), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function loadMe() {
  state.me = (await api("GET", "/users/me/")).data;
  $("usermenu-name").textContent = state.me.attributes.username;
  $("usermenu").hidden = false;
}

function endSession() {
  state.token = null;
  state.me = null;
  state.sessionTokenId = null;
  sessionStorage.clear();
  $("usermenu").hidden = true;
  $("usermenu-name").textContent = "";
  // Drop what the last user saw, so the next one doesn't.
  $("tokens-body").replaceChildren();
  for (const id of ["profile-username", "profile-user-id", "profile-home-id", "profile-inbox-id"]) {
    $(id).textContent = "";
  }
  hideSecret();
  $("new-token-form").hidden = true;
  showView("login");
}

async function onLogin(event) {
  event.preventDefault();
  clearMessages();
  const form = event.currentTarget;
  const credentials = { username: form.username.value, password: form.password.value };
  try {
    await busy(form, async () => {
      const result = await api("POST", "/auth/login/", credentials, JSON_MEDIA);
      state.token = result.token;
      sessionStorage.setItem(TOKEN_KEY, result.token);
      state.sessionTokenId = await tokenId(result.token);
      await loadMe();
    });
    form.reset();
    go(location.hash === "#profile" ? "profile" : "tokens");
  } catch (error) {
    showError(error.message);
    form.password.select();
  }
}

async function logout() {
  closeMenu(false);
  clearMessages();
  let problem = null;
  try {
    await api("POST", "/auth/logout/");
  } catch (error) {
    if (error.status !== 401) problem = error.message; // 401: the token was already gone
  }
  endSession();
  history.replaceState(null, "", location.pathname);
  if (problem) showError(`Logged out here, but the server did not revoke the token: ${problem}`);
  else showStatus("You have been logged out.");
  $("login-username").focus();
}

// ---- user menu (a menu button: Enter/Space/arrows open it, arrows move, Escape closes) ----------

const menuItems = () => Array.from($("usermenu-list").querySelectorAll('[role="menuitem"]'));

function openMenu(index) {
  $("usermenu-list").hidden = false;
  $("usermenu-button").setAttribute("aria-expanded", "true");
  const items = menuItems();
  items[(index + items.length) % items.length].focus();
}

function closeMenu(returnFocus) {
  if ($("usermenu-list").hidden) return;
  $("usermenu-list").hidden = true;
  $("usermenu-button").setAttribute("aria-expanded", "false");
  if (returnFocus) $("usermenu-button").focus();
}

function onMenuButtonKey(event) {
  if (event.key === "ArrowDown" || event.key === "ArrowUp") {
    event.preventDefault();
    openMenu(event.key === "ArrowDown" ? 0 : -1);
  }
}

function onMenuKey(event) {
  const items = menuItems();
  const index = items.indexOf(document.activeElement);
  const moves = { ArrowDown: index + 1, ArrowUp: index - 1, Home: 0, End: items.length - 1 };
  if (event.key in moves) {
    event.preventDefault();
    items[(moves[event.key] + items.length) % items.length].focus();
  } else if (event.key === "Escape") {
    event.preventDefault();
    closeMenu(true);
  } else if (event.key === "Tab") {
    closeMenu(false);
  }
}

// ---- API Tokens view -------------------------------------------------------------------------

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

// The API gives microseconds; some browsers parse at most milliseconds.
const parseDate = (iso) => new Date(iso.replace(/(\.\d{3})\d+/, "$1"));

function timeElement(iso) {
  return el("time", { datetime: iso, title: iso }, dateFormat.format(parseDate(iso)));
}

function tokenRow(token) {
  const { name, created, expiry } = token.attributes;
  const expired = expiry !== null && parseDate(expiry).getTime() <= Date.now();
  const current = token.id === state.sessionTokenId;
  const revoke = el("button", { type: "button", class: "button button-small button-danger-outline",
    "aria-label": `Revoke token ${token.id}` }, "Revoke");
  revoke.addEventListener("click", () => revokeToken(token, current));
  return el("tr", { "data-token-id": token.id, class: expired ? "is-expired" : null },
    el("td", { "data-label": "ID" }, el("code", { class: "token-id" }, token.id),
      current ? el("span", { class: "badge badge-info" }, "this session") : null),
    el("td", { "data-label": "Name", class: name ? null : "muted" }, name || "(no name)"),
    el("td", { "data-label": "Created" }, timeElement(created)),
    el("td", { "data-label": "Expires" }, expiry === null ? "never" : timeElement(expiry),
      expired ? el("span", { class: "badge badge-danger" }, "expired") : null),
    el("td", { class: "cell-actions" }, revoke));
}

async function renderTokens() {
  const query = new URLSearchParams({ "page[size]": "100" });
  const list = await api("GET", `/tokens/?${query}`);
  $("tokens-body").replaceChildren(...list.data.map(tokenRow));
  const count = list.meta?.pagination?.count ?? list.data.length;
  const empty = $("tokens-empty");
  empty.hidden = list.data.length > 0 && count <= list.data.length;
  empty.textContent = list.data.length === 0 ? "You have no tokens."
    : `Showing the newest ${list.data.length} of ${count} tokens.`;
  $("tokens-table").hidden = list.data.length === 0;
}

function toggleNewTokenForm(open) {
  const form = $("new-token-form");
  form.hidden = !open;
  $("new-token-button").setAttribute("aria-expanded", String(open));
  if (open) {
    clearMessages();
    form.reset();
    $("token-hours").focus();
  } else {
    $("new-token-button").focus();
  }
}

async function onCreateToken(event) {
  event.preventDefault();
  clearMessages();
  const form = event.currentTarget;
  const attributes = { expiry_hours: Number(form.expiry_hours.value) };
  if (form.name.value.trim()) attributes.name = form.name.value.trim();
  try {
    const created = await busy(form, () => api("POST", "/tokens/", { data: { type: "tokens", attributes } }));
    form.hidden = true;
    $("new-token-button").setAttribute("aria-expanded", "false");
    showSecret(created.data.attributes.token);
    await renderTokens();
  } catch (error) {
    showError(error.message);
  }
}

function showSecret(secret) {
  const input = $("token-secret");
  input.value = secret;
  $("secret-panel").hidden = false;
  input.focus();
  input.select();
}

function hideSecret() {
  // The secret must not linger in the page once the user moved on.
  $("token-secret").value = "";
  $("secret-panel").hidden = true;
}

async function copySecret() {
  const input = $("token-secret");
  input.focus();
  input.select();
  try {
    await navigator.clipboard.writeText(input.value);
    showStatus("Token copied to the clipboard.");
  } catch {
    // navigator.clipboard exists only on https and localhost; the text stays selected instead.
    const copied = document.queryCommandSupported?.("copy") && document.execCommand("copy");
    showStatus(copied ? "Token copied to the clipboard."
      : "The token is selected: press Ctrl+C (⌘C on a Mac) to copy it.");
  }
}

/** An in-page confirmation (a modal <dialog>); resolves true only for the Revoke button. */
function confirmRevoke(text) {
  const dialog = $("confirm-dialog");
  $("confirm-text").textContent = text;
  dialog.returnValue = "";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.showModal();
    $("confirm-cancel").focus(); // the safe choice is the default
  });
}

async function revokeToken(token, current) {
  clearMessages();
  const label = token.attributes.name ? `${token.id} (“${token.attributes.name}”)` : token.id;
  const text = current
    ? `Token ${label} is the one this browser uses: you will be logged out.`
    : `Token ${label} will stop working at once; scripts that use it will be refused.`;
  if (!(await confirmRevoke(text))) return;
  try {
    await api("DELETE", `/tokens/${encodeURIComponent(token.id)}/`);
    if (current) {
      endSession();
      showStatus("You revoked this session's token and have been logged out.");
      return;
    }
    await renderTokens();
    showStatus(`Token ${token.id} revoked.`);
    $("new-token-button").focus();
  } catch (error) {
    showError(error.message);
  }
}

// ---- Profile view ----------------------------------------------------------------------------

async function renderProfile() {
  await loadMe(); // fresh, in case an admin changed the account
  const { attributes, relationships } = state.me;
  $("profile-username").textContent = attributes.username;
  $("profile-user-id").textContent = state.me.id;
  $("profile-home-id").textContent = relationships.home_folder.data.id;
  $("profile-inbox-id").textContent = relationships.inbox_folder.data.id;
}

async function onChangePassword(event) {
  event.preventDefault();
  clearMessages();
  const form = event.currentTarget;
  if (form.password.value !== form.repeat.value) {
    showError("The two passwords do not match.");
    form.repeat.select();
    return;
  }
  // Length and other rules are the server's: its error detail is shown as it is.
  try {
    await busy(form, () => api("POST", `/users/${encodeURIComponent(state.me.id)}/change-password/`,
      { password: form.password.value }, JSON_MEDIA));
    form.reset();
    showStatus("Your password has been changed.");
  } catch (error) {
    showError(error.message);
    if (state.token) form.password.select();
  }
}

// ---- start -----------------------------------------------------------------------------------

function bind() {
  $("login-form").addEventListener("submit", onLogin);
  $("logout").addEventListener("click", logout);
  $("usermenu-button").addEventListener("click", () => {
    if ($("usermenu-list").hidden) openMenu(0);
    else closeMenu(false);
  });
  $("usermenu-button").addEventListener("keydown", onMenuButtonKey);
  $("usermenu-list").addEventListener("keydown", onMenuKey);
  for (const item of document.querySelectorAll("[data-view]")) {
    item.addEventListener("click", () => go(item.dataset.view, true));
  }
  // A click anywhere else closes the menu.
  document.addEventListener("click", (event) => {
    if (!$("usermenu").contains(event.target)) closeMenu(false);
  });

  $("new-token-button").addEventListener("click", () => toggleNewTokenForm($("new-token-form").hidden));
  $("new-token-cancel").addEventListener("click", () => toggleNewTokenForm(false));
  $("new-token-form").addEventListener("submit", onCreateToken);
  $("copy-secret").addEventListener("click", copySecret);
  $("secret-done").addEventListener("click", () => {
    hideSecret();
    clearMessages();
    $("new-token-button").focus();
  });
  $("confirm-ok").addEventListener("click", () => $("confirm-dialog").close("ok"));
  $("confirm-cancel").addEventListener("click", () => $("confirm-dialog").close("cancel"));

  $("password-form").addEventListener("submit", onChangePassword);
  window.addEventListener("hashchange", route);
}

async function start() {
  bind();
  if (state.token) {
    // A reload in the same tab: the token is still in sessionStorage.
    try {
      state.sessionTokenId = await tokenId(state.token);
      await loadMe();
    } catch (error) {
      showError(error.message);
      if (error.status !== 401) endSession();
    }
  }
  await route();
  if (!state.token) $("login-username").focus();
}

start();
