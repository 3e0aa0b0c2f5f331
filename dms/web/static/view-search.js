// Search results (GET /search/, api.md, "Search") as you type: each with a document's thumbnail
// (thumbs.js), where it is, its highlighted snippet (text and <mark>, never HTML), its tags and whose it is when not the
// caller's; filters by tags and the filter bar of metadata.js. Without words: the recently
// changed documents. A page of PAGE_SIZE at a time with the total; "Show more" appends the next.

import { api, id as encoded, withQuery } from "./api.js";
import { button, el, folderName, highlighted, icon, plural, select } from "./dom.js";
import { chosenFilters, filterBar, names } from "./metadata.js";
import { tagList } from "./parts.js";
import { saveSearch } from "./saved.js";
import { ownerNote } from "./share.js";
import { thumbnails } from "./thumbs.js";

/** Tags offered as filters: the caller's first 100 (the API's page). */
const FILTER_TAGS = 100;
/** Results asked for at a time (`page_size` of GET /search/). */
const PAGE_SIZE = 100;

/** The address of a search: `#/search?q=…&tags=a,b&op=any&correspondent=…`; `filters`: those of
 *  the filter bar. */
export function searchHash(q, tags = [], op = "all", filters = {}) {
  const params = new URLSearchParams();
  if (q) params.set("q", q);
  if (tags.length) params.set("tags", tags.join(","));
  if (tags.length && op === "any") params.set("op", op);
  for (const [name, value] of Object.entries(filters)) if (value) params.set(name, value);
  const query = params.toString();
  return `#/search${query ? `?${query}` : ""}`;
}

export async function render(ctx, params) {
  const q = params.get("q") ?? "";
  const chosen = (params.get("tags") ?? "").split(",").filter(Boolean);
  const op = params.get("op") === "any" ? "any" : "all";
  const about = chosenFilters(params);
  // A query the server cannot read (the query language, api.md §20) is shown beside the results.
  const address = (page) => withQuery("/search/", { q, tags: chosen.join(","), tags_op: chosen.length ? op : "", ...about, page, page_size: PAGE_SIZE });
  const searched = api("GET", address(1))
    .catch((error) => { if (error.status === 400) return { refused: error.message }; throw error; });
  const [answer, tags, correspondents, types] = await Promise.all([
    searched,
    api("GET", `/tags/?page[size]=${FILTER_TAGS}`), names("/correspondents/"), names("/document-types/"),
  ]);
  const title = q ? `Search: ${q}` : "Recent documents";
  const refused = answer.refused ?? null;
  const results = refused ? [] : answer.results;
  const total = refused ? 0 : answer.count;

  const refilter = (form) => {
    const picked = [...form.querySelectorAll("input[name=tag]:checked")].map((box) => box.value);
    ctx.navigate(searchHash(q, picked, form.op.value, about), { replace: true, focus: false });
  };
  const bar = filterBar({ params, correspondents, types, apply: (values, focus) =>
    ctx.navigate(searchHash(q, chosen, op, values), { replace: true, focus: false, focusKeys: [focus] }) });
  const filtered = chosen.length || Object.values(about).some(Boolean);
  const filters = tags.data.length ? el("form", { class: "filters", novalidate: true, onchange: (e) => refilter(e.currentTarget) },
    el("fieldset", {}, el("legend", {}, "Filter by tags"),
      el("div", { class: "filter-tags" }, tags.data.map(({ attributes: tag }) => el("label", { class: "filter-tag" },
        el("input", { type: "checkbox", name: "tag", value: tag.name, checked: chosen.includes(tag.name) }), tag.name))),
      el("div", { class: "field-inline" }, el("label", { for: "tags-op" }, "Documents with"),
        select({ id: "tags-op", name: "op" }, [["all", "all of these tags"], ["any", "any of these tags"]], op)))) : null;

  const shown = el("p", { class: "muted", "aria-live": "polite" }, q || filtered ? counted(results.length, total) : "Type in the search box to search titles, text and tags.");
  const thumbs = thumbnails();
  const list = el("ol", { class: "results" }, results.map((hit) => result(hit, ctx.me(), thumbs)));
  let page = 1;
  const more = button("Show more", async () => {
    more.disabled = true;
    const next = await api("GET", address(page + 1)).finally(() => { more.disabled = false; });
    page += 1;
    const first = list.children.length;
    list.append(...next.results.map((hit) => result(hit, ctx.me(), thumbs)));
    if (q || filtered) shown.textContent = counted(list.children.length, next.count);
    if (list.children.length >= next.count || !next.results.length) more.remove();
    // The focus goes on to the first new result, where reading goes on.
    /** @type {HTMLElement | null} */ (list.children[first]?.querySelector("a") ?? null)?.focus();
  }, "show-more");
  const node = el("section", { class: "view view-search", "aria-labelledby": "search-title" },
    el("div", { class: "view-head" }, el("h1", { id: "search-title" }, q ? `Results for “${q}”` : title),
      q && !refused ? button("Save search", () => saveSearch(q)) : null),
    filters, bar,
    refused ? el("p", { class: "field-error", role: "alert" }, refused) : null,
    shown, list, results.length < total ? more : null);
  return { node, title, folderId: null, dispose: thumbs.dispose };
}

/** "105 results", or "100 of 105 results" while some are not shown yet. */
function counted(shown, total) {
  return shown < total ? `${shown.toLocaleString()} of ${plural(total, "result")}` : plural(total, "result");
}

/** A hit: a document's first page small beside its title, where it is, the words found, tags. */
function result(hit, me, thumbs) {
  const isFolder = hit.node_type === "folder";
  const href = isFolder ? `#/folder/${encoded(hit.id)}` : `#/doc/${encoded(hit.id)}`;
  const where = hit.breadcrumb.slice(0, -1).map(folderName).join(" / ");
  return el("li", { class: "result" },
    el("div", { class: "result-picture" }, isFolder ? icon("folder") : thumbs.make({ id: hit.id })),
    el("div", { class: "result-body" },
      el("a", { href, class: "node-link result-title" }, isFolder ? null : icon("document"), el("span", {}, hit.title)),
      ownerNote(hit, me),
      where ? el("div", { class: "result-where" }, el("span", { class: "visually-hidden" }, "In "), where) : null,
      hit.highlight ? el("p", { class: "snippet" }, highlighted(hit.highlight)) : null,
      tagList(hit.tags)));
}
