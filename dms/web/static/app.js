// dms web page: the shell. Log in and out, the address (#/folder/<id>, #/doc/<id>, #/search?q=…,
// #/saved/<id>, #/trash, #/settings/<section>) and the view it names, the search box, the side bar's tree,
// messages, keys. The CSP forbids inline code: every listener is attached from a module.

import { api, forgetToken, hasToken, JSON_MEDIA, setToken, whenUnauthorized } from "./api.js";
import { moveNodes } from "./actions.js";
import { setUp as setUpDragAndDrop } from "./dnd.js";
import { nudge, setLive, stopAll } from "./docstatus.js";
import { $, busy, clearMessages, focusHeading, showError, showFailure, showStatus } from "./dom.js";
import * as events from "./events.js";
import * as refused from "./intake-badge.js";
import { setUp as setUpKeys, showHelp } from "./keys.js";
import { chosenFilters } from "./metadata.js";
import { closeMenu, setUp as setUpMenu } from "./menu.js";
import * as saved from "./saved.js";
import * as tree from "./tree.js";
import { clearUploads, setUp as setUpUploads, uploadFiles } from "./upload.js";
import * as documentView from "./view-document.js";
import * as folderView from "./view-folder.js";
import * as searchView from "./view-search.js";
import * as settingsView from "./view-settings.js";
import * as trashView from "./view-trash.js";

/** Typing in the search box waits this long for the next key before it searches. */
const SEARCH_DEBOUNCE_MS = 250;
/** Events that arrive together (an upload, a rule's moves) are looked at once, this much later. */
const LIVE_SETTLE_MS = 400;
/** The events that can change a folder's rows, the tree or the inbox count. */
const TREE_EVENTS = new Set(["node.created", "node.moved", "node.deleted", "node.restored", "node.renamed"]);

const state = {
  me: null, view: null, navigation: 0, keepMessages: false, focusNext: true, focusKeys: [],
  events: [], eventsTimer: null,
  session: 0, // how many sessions this tab has ended (endSession)
};

const VIEWS = {
  folder: (ctx, arg, params) => folderView.render(ctx, arg || homeId(), params),
  doc: (ctx, arg) => documentView.render(ctx, arg),
  search: (ctx, arg, params) => searchView.render(ctx, params),
  saved: (ctx, arg, params) => saved.render(ctx, arg, params),
  trash: (ctx, arg, params) => trashView.render(ctx, params),
  settings: (ctx, arg) => settingsView.render(ctx, arg),
};

const homeId = () => state.me.relationships.home_folder.data.id;
const inboxId = () => state.me.relationships.inbox_folder.data.id;

/** What the views may ask of the shell. */
const ctx = {
  /** The caller's user resource. */
  me: () => state.me,
  /** Opens an address; `replace` keeps the history entry, `focus: false` leaves the focus (or
   *  gives it to the control with one of `focusKeys` as data-focus, as refresh() does). */
  navigate(hash, { replace = false, focus = true, focusKeys = [] } = {}) {
    state.keepMessages = true;
    state.focusNext = focus;
    state.focusKeys = focusKeys;
    if (replace) history.replaceState(null, "", hash);
    if (replace || location.hash === hash) route();
    else location.hash = hash;
  },
  /** Reads the open view again. The focus goes back to the control with the same `data-focus`
   *  key in the new view (the first of `focusKeys` found that can take it, else the one that has
   *  it now), so that a keyboard user stays where they were. */
  refresh(focusKeys = null) {
    state.keepMessages = true;
    state.focusNext = false;
    state.focusKeys = [focusKeys ?? document.activeElement?.dataset?.focus].flat().filter(Boolean);
    return route();
  },
  /** Something in the tree changed: the tree, the inbox count and the open view are read again. */
  changed() {
    tree.refresh().catch(showFailure);
    return ctx.refresh();
  },
  endSession,
};

/** "#/folder/<id>?sort=…" → {name, arg, params}; the old token page's #tokens and #profile too. */
function parse(hash) {
  const legacy = { "#tokens": "#/settings/tokens", "#profile": "#/settings/profile" }[hash];
  const [path, query = ""] = (legacy ?? hash).replace(/^#\/?/, "").split("?");
  const [name, arg = ""] = path.split("/");
  if (!(name in VIEWS)) return { name: "folder", arg: "", params: new URLSearchParams() };
  return { name, arg: decodeURIComponent(arg), params: new URLSearchParams(query) };
}

async function route() {
  closeMenu();
  const focus = state.focusNext;
  const focusKeys = state.focusKeys;
  if (!state.keepMessages) clearMessages();
  state.keepMessages = false;
  state.focusNext = true;
  state.focusKeys = [];
  if (!hasToken() || !state.me) {
    showLogin();
    return;
  }
  const navigation = ++state.navigation;
  refused.refresh(); // what the intake refused meanwhile shows at the next view
  const { name, arg, params } = parse(location.hash);
  $("main").setAttribute("aria-busy", "true");
  try {
    const view = await VIEWS[name](ctx, arg, params);
    if (navigation !== state.navigation) {
      view.dispose?.();
      return;
    }
    state.view?.dispose?.();
    state.view = view;
    $("view").replaceChildren(view.node);
    document.title = `${view.title} · dms`;
    tree.setCurrent(view.folderId ?? null, view.breadcrumb ?? []);
    $("nav-trash").toggleAttribute("aria-current", name === "trash");
    if (name === "search" && document.activeElement !== $("search-input")) $("search-input").value = params.get("q") ?? "";
    // The moment a view is on the screen and usable: the UI test reads it (first-view time).
    performance.mark(`dms:view:${name}`);
    if (focus) focusHeading(view.node);
    else refocus(view.node, focusKeys);
  } catch (error) {
    if (navigation === state.navigation && error.status !== 401) showFailure(error);
  } finally {
    if (navigation === state.navigation) $("main").removeAttribute("aria-busy");
  }
}

function refocus(root, keys) {
  for (const key of keys) {
    const target = root.querySelector(`[data-focus="${CSS.escape(key)}"]`);
    if (target && !target.disabled) {
      target.focus();
      return;
    }
  }
}

// ---- session ----

function showLogin() {
  document.body.classList.remove("signed-in");
  $("view-login").hidden = false;
  document.title = "Log in · dms";
}

async function enter() {
  state.me = (await api("GET", "/users/me/")).data;
  $("usermenu-name").textContent = state.me.attributes.username;
  $("view-login").hidden = true;
  document.body.classList.add("signed-in");
  events.start();
  refused.start();
  await Promise.all([tree.refresh(), route(), saved.refresh().catch(() => {})]);
}

/** Forgets everything of the session (the next person must not see it) and shows the login. */
function endSession(message = null, isError = false) {
  forgetToken();
  // A view or a login still on its way ends quietly: what it found belongs to the old session.
  state.navigation += 1;
  state.session += 1;
  // A dialog left open would cover the login form.
  for (const dialog of document.querySelectorAll("dialog[open]")) dialog.close();
  events.stop();
  refused.stop();
  clearTimeout(state.eventsTimer);
  state.events = [];
  stopAll();
  clearUploads();
  tree.forget();
  state.view?.dispose?.();
  state.view = null;
  state.me = null;
  $("view").replaceChildren();
  $("usermenu-name").textContent = "";
  $("search-input").value = "";
  showLogin();
  if (message) (isError ? showError : showStatus)(message);
}

async function onLogin(event) {
  event.preventDefault();
  clearMessages();
  const form = event.currentTarget;
  // A session (api.md §22): it expires unused and is not listed among the API tokens.
  const credentials = { username: form.username.value, password: form.password.value, session: true };
  const session = state.session;
  try {
    await busy(form, async () => {
      setToken((await api("POST", "/auth/login/", credentials, { media: JSON_MEDIA })).token);
      form.reset();
      await enter();
    });
  } catch (error) {
    if (session !== state.session) return; // logged out before the first view was there
    showFailure(error);
    if (!hasToken()) form.password.select();
  }
}

async function logout() {
  clearMessages();
  events.stop(); // before the token goes: a stream that reconnects with it would meet a 401
  let problem = null;
  try {
    await api("POST", "/auth/logout/");
  } catch (error) {
    if (error.status !== 401) problem = error.message; // 401: the token was already gone
  }
  history.replaceState(null, "", location.pathname);
  if (problem) endSession(`Logged out here, but the server did not revoke the token: ${problem}`, true);
  else endSession("You have been logged out.");
  $("login-username").focus();
}

// ---- live events (events.js) ----

function setUpLive() {
  events.onLiveChange((isLive) => {
    setLive(isLive);
    document.body.dataset.events = isLive ? "live" : "polling";
  });
  events.onEvent((event) => {
    if (event.node?.id) nudge(event.node.id); // a status shown somewhere is read at once
    if (!TREE_EVENTS.has(event.type)) return;
    state.events.push(event);
    clearTimeout(state.eventsTimer);
    state.eventsTimer = setTimeout(applyEvents, LIVE_SETTLE_MS);
  });
}

/** Changes made elsewhere (another tab, a script, the consume folder, a rule) show in the tree,
 *  the inbox count and the open folder; a view is not read again under an open dialog. */
function applyEvents() {
  const batch = state.events.splice(0);
  if (!state.me) return;
  // The tree is drawn again only where no one is moving through it with the keyboard.
  const folders = batch.some((event) => event.node?.type === "folders") && !$("tree").contains(document.activeElement);
  const update = folders ? tree.refresh() : tree.refreshInboxCount();
  update.catch(() => {});
  if (document.querySelector("dialog[open]")) return;
  if (batch.some((event) => state.view?.isStale?.(event))) ctx.refresh();
}

// ---- search box ----

function setUpSearch() {
  const input = $("search-input");
  let timer = null;
  const search = () => {
    clearTimeout(timer);
    const current = parse(location.hash);
    const here = current.name === "search";
    const tags = here ? (current.params.get("tags") ?? "").split(",").filter(Boolean) : [];
    const filters = here ? chosenFilters(current.params) : {};
    const hash = searchView.searchHash(input.value.trim(), tags, current.params.get("op") ?? "all", filters);
    ctx.navigate(hash, { replace: current.name === "search", focus: false });
  };
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(search, SEARCH_DEBOUNCE_MS);
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      search();
    }
  });
}

// ---- start ----

function bind() {
  whenUnauthorized((message) => endSession(message, true));
  $("login-form").addEventListener("submit", onLogin);
  const sections = ["tokens", "profile", "mail", "rules", "webhooks"];
  setUpMenu({ ...Object.fromEntries(sections.map((name) => [name, () => ctx.navigate(`#/settings/${name}`)])), help: showHelp, logout });
  $("help-button").addEventListener("click", showHelp);
  setUpSearch();
  setUpLive();
  setUpUploads({ onChanged: () => ctx.changed() });
  refused.setUp();
  setUpDragAndDrop({
    onMove: async (ids, folderId) => { if (await moveNodes(ids, folderId)) ctx.changed(); },
    onFiles: (files, folderId) => uploadFiles(files, folderId),
  });
  setUpKeys({
    "/": () => $("search-input").focus(),
    "?": showHelp,
    h: () => ctx.navigate(`#/folder/${homeId()}`),
    i: () => ctx.navigate(`#/folder/${inboxId()}`),
    t: () => ctx.navigate("#/trash"),
  }, () => (state.me ? state.view?.keys : null));
  // Files dropped outside a drop target must not make the browser leave the page to show them.
  for (const type of ["dragover", "drop"]) {
    window.addEventListener(type, (event) => {
      if ([...(event.dataTransfer?.types ?? [])].includes("Files")) event.preventDefault();
    });
  }
  window.addEventListener("hashchange", () => route());
}

async function start() {
  bind();
  if (hasToken()) {
    // A reload in the same tab: the token is still in sessionStorage.
    try {
      await enter();
      return;
    } catch (error) {
      if (error.status !== 401) {
        forgetToken();
        showFailure(error);
      }
    }
  }
  showLogin();
  $("login-username").focus();
}

start();
