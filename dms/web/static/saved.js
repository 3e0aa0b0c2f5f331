// @ts-check
// Saved searches (api.md, "Saved searches"): those shown in the side bar, each with the number of
// documents it finds now; the view of one (#/saved/<id>: its documents, a page at a time; its
// query opened in the search, shown in the side bar or not, deleted); and saving the search on
// the screen under a name.

import { api, id as encoded, listAll, withQuery } from "./api.js";
import { confirmDialog, promptDialog } from "./dialogs.js";
import { $, attempt, button, el, icon, plural, showStatus, timeElement } from "./dom.js";
import { pager } from "./parts.js";

const PAGE_SIZE = 50;
/** Saved searches counted in the side bar: each count is a request. */
const SIDEBAR_MOST = 20;

const documentsOf = (id, params) => api("GET", withQuery(`/saved-searches/${encoded(id)}/documents/`, params));

/** Lists the saved searches shown in the side bar again, with their counts. */
export async function refresh(currentId = null) {
  const { items } = await listAll("/saved-searches/");
  const shown = items.filter((search) => search.attributes.show_in_sidebar).slice(0, SIDEBAR_MOST);
  const counts = await Promise.all(shown.map((search) => documentsOf(search.id, { "page[size]": 1 })
    .then((list) => list.meta.pagination.count, () => null)));
  $("saved-list").replaceChildren(...shown.map((search, at) => el("li", {},
    el("a", { href: `#/saved/${encoded(search.id)}`, class: "side-link", "aria-current": search.id === currentId ? "page" : null },
      el("span", { class: "tree-title" }, search.attributes.name),
      counts[at] === null ? null : el("span", { class: "count count-quiet" },
        el("span", { class: "visually-hidden" }, `${plural(counts[at], "document")}`),
        el("span", { "aria-hidden": "true" }, counts[at].toLocaleString()))))));
  $("saved-searches").hidden = shown.length === 0;
}

/** "Save search": asks for a name, saves `query` under it. */
export async function saveSearch(query) {
  const name = await promptDialog({ title: "Save this search", label: "Name", ok: "Save search",
    hint: query ? `It finds what “${query}” finds, whenever you open it.` : "It lists every document." });
  if (!name) return;
  const done = await attempt(() => api("POST", "/saved-searches/", { data: { type: "saved-searches",
    attributes: { name, query } } }));
  if (done) {
    showStatus(`Search saved as “${name}”.`);
    await refresh();
  }
}

export async function render(ctx, id, params) {
  const number = Math.max(1, Number.parseInt(params.get("page") || "1", 10) || 1);
  const [saved, list] = await Promise.all([api("GET", `/saved-searches/${encoded(id)}/`),
    documentsOf(id, { "page[size]": PAGE_SIZE, "page[number]": number })]);
  const { name, query, show_in_sidebar: inSidebar } = saved.data.attributes;
  const { page, pages, count } = list.meta.pagination;
  const toggle = async () => {
    if (await attempt(() => api("PATCH", `/saved-searches/${encoded(id)}/`, { data: { type: "saved-searches", id,
      attributes: { show_in_sidebar: !inSidebar } } }))) {
      showStatus(inSidebar ? `“${name}” is no longer in the side bar.` : `“${name}” is in the side bar.`);
      await refresh(id);
      ctx.refresh();
    }
  };
  const remove = async () => {
    if (await confirmDialog({ title: `Delete the saved search “${name}”?`, ok: "Delete", danger: true,
      text: "Its documents stay; only the search is forgotten." })
      && await attempt(() => api("DELETE", `/saved-searches/${encoded(id)}/`)) !== undefined) {
      showStatus(`“${name}” deleted.`);
      await refresh();
      ctx.navigate("#/");
    }
  };
  const rows = list.data.map((document) => el("li", { class: "result" },
    el("a", { href: `#/doc/${encoded(document.id)}`, class: "node-link result-title" }, icon("document"),
      el("span", {}, document.attributes.title)),
    el("div", { class: "result-where" }, "Added ", timeElement(document.attributes.created_at))));
  const node = el("section", { class: "view view-saved", "aria-labelledby": "saved-title" },
    el("div", { class: "view-head" }, el("h1", { id: "saved-title" }, name),
      el("div", { class: "line-actions" },
        el("a", { class: "button", href: `#/search?q=${encodeURIComponent(query)}` }, "Open in search"),
        button(inSidebar ? "Hide from side bar" : "Show in side bar", toggle),
        button("Delete", remove, "button-danger-outline", { "aria-label": `Delete the saved search ${name}` }))),
    el("p", { class: "muted" }, query ? `Documents that “${query}” finds: ${plural(count, "document")}.`
      : `Every document: ${plural(count, "document")}.`),
    el("ol", { class: "results" }, rows),
    pages > 1 ? pager(`Pages of ${name}`, list.meta.pagination, `Page ${page} of ${pages}`,
      (to) => ctx.navigate(`#/saved/${encoded(id)}?page=${to}`)) : null);
  refresh(id).catch(() => {});
  return { node, title: name, folderId: null };
}
