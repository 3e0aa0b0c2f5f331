// The folder tree in the side bar: .home, .inbox (with its count), .shared ("Shared with me") and
// their sub-folders, loaded when a folder is opened; each folder the caller may change is a drop
// target (dnd.js).

import { api, id as encoded, MAX_PAGE_SIZE } from "./api.js";
import { $, el, folderName, icon } from "./dom.js";
import { dropTarget } from "./dnd.js";
import { mayChange } from "./share.js";

const SPECIAL = { ".home": "home", ".inbox": "inbox", ".shared": "shared" };

/** Sub-folders read per folder: 5 pages of 100. Folders come first in a listing, so reading stops
 *  at the first document. */
const MAX_CHILD_PAGES = 5;

const expanded = new Set();
let roots = [];
let current = null;
let inboxId = null;

/** Reads the roots and every open branch again (after a create, rename, move or delete). */
export async function refresh() {
  const list = await api("GET", "/nodes/");
  const rank = (node) => Object.keys(SPECIAL).indexOf(node.attributes.title);
  roots = [...list.data].sort((a, b) => rank(a) - rank(b));
  const home = roots.find((node) => node.attributes.title === ".home");
  inboxId = roots.find((node) => node.attributes.title === ".inbox")?.id ?? null;
  if (home && expanded.size === 0) expanded.add(home.id);
  const items = await Promise.all(roots.map((root) => item(root)));
  $("tree").replaceChildren(...items);
  await refreshInboxCount();
  mark();
}

export async function refreshInboxCount() {
  const link = inboxId && $("tree").querySelector(`[data-folder-id="${inboxId}"] > .tree-row .tree-link`);
  if (!link) return;
  const { data } = await api("GET", "/nodes/inboxcount/");
  link.querySelector(".count")?.remove();
  if (data.count > 0) {
    link.append(el("span", { class: "count" },
      el("span", { class: "visually-hidden" }, `${data.count} waiting`),
      el("span", { "aria-hidden": "true" }, String(data.count))));
  }
}

/** Marks the open folder (null: none) and opens the branches down to it. */
export function setCurrent(folderId, breadcrumb = []) {
  current = folderId;
  let opened = false;
  for (const [, ancestor] of breadcrumb.slice(0, -1)) {
    if (!expanded.has(ancestor)) {
      expanded.add(ancestor);
      opened = true;
    }
  }
  if (opened) refresh().catch(() => {});
  else mark();
}

export function forget() {
  expanded.clear();
  roots = [];
  current = null;
  $("tree").replaceChildren();
}

function mark() {
  for (const link of $("tree").querySelectorAll(".tree-link")) {
    if (link.closest(".tree-item").dataset.folderId === current) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

async function subFolders(folderId) {
  const folders = [];
  for (let number = 1; number <= MAX_CHILD_PAGES; number += 1) {
    const list = await api("GET", `/nodes/${encoded(folderId)}/?page[size]=${MAX_PAGE_SIZE}&page[number]=${number}`);
    folders.push(...list.data.filter((node) => node.type === "folders"));
    const documentsBegan = list.data.some((node) => node.type !== "folders");
    if (documentsBegan || number >= list.meta.pagination.pages) break;
  }
  return folders;
}

async function item(folder) {
  const title = folderName(folder.attributes.title);
  const special = SPECIAL[folder.attributes.title];
  const link = el("a", { href: `#/folder/${encoded(folder.id)}`, class: "tree-link" },
    icon(special ?? "folder"), el("span", { class: "tree-title" }, title));
  const open = expanded.has(folder.id);
  const toggle = el("button", { type: "button", class: "tree-toggle", "aria-expanded": String(open),
    "aria-label": `${open ? "Hide" : "Show"} folders in ${title}` }, icon("chevron"));
  const children = el("ul", { class: "tree-children", hidden: !open });
  const node = el("li", { class: "tree-item", "data-folder-id": folder.id },
    el("div", { class: "tree-row" }, toggle, link), children);
  if (special !== "shared" && mayChange(folder)) dropTarget(link, folder.id);
  toggle.addEventListener("click", async () => {
    if (expanded.has(folder.id)) expanded.delete(folder.id);
    else expanded.add(folder.id);
    const opening = expanded.has(folder.id);
    toggle.setAttribute("aria-expanded", String(opening));
    toggle.setAttribute("aria-label", `${opening ? "Hide" : "Show"} folders in ${title}`);
    children.hidden = !opening;
    if (opening) await fill(children, folder.id, toggle);
  });
  if (open) await fill(children, folder.id, toggle);
  return node;
}

async function fill(children, folderId, toggle) {
  const folders = await subFolders(folderId);
  children.replaceChildren(...await Promise.all(folders.map((folder) => item(folder))));
  toggle.classList.toggle("is-empty", folders.length === 0);
  mark();
}
