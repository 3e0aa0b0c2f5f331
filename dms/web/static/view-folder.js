// The folder view: its sub-folders and documents a page at a time, sorted and filtered (both in the
// address), as a list or a grid of thumbnails (the choice kept in this browser), what to do with
// the selected rows (bulk filing: bulk.js, fetched when first used), a new folder, uploads; rows
// drag onto folders. What the caller may not change (shared with them as a viewer; "Shared with
// me") offers none of that.

import { api, id as encoded, withQuery } from "./api.js";
import { deleteNodes, moveNodesByDialog, newFolder, renameNode } from "./actions.js";
import { draggable, dropTarget } from "./dnd.js";
import { isFinal, watch } from "./docstatus.js";
import { button, el, folderName, formatSize, icon, plural, select, statusBadge, timeElement } from "./dom.js";
import { chosenFilters, dayElement, filterBar, names } from "./metadata.js";
import { breadcrumbs, pager, tagList } from "./parts.js";
import { mayChange, mayShare, ownerNote, shareDialog } from "./share.js";
import { thumbnails } from "./thumbs.js";
import { pickFiles } from "./upload.js";

/** A page of a folder: the API's largest, so a folder of 100 shows whole. */
const PAGE_SIZE = 100;
/** Rows whose processing status is followed at once; the others show it as listed. */
const MAX_WATCHED_ROWS = 20;
/** Where this browser keeps the choice of list or grid. */
const LAYOUT_KEY = "dms.layout";
const layoutChosen = () => (localStorage.getItem(LAYOUT_KEY) === "grid" ? "grid" : "list");
const SORTS = [
  ["", "Name (folders first)"], ["-title", "Name, Z to A"], ["-updated_at", "Recently changed"],
  ["-created_at", "Newest first"], ["created_at", "Oldest first"], ["-document_date", "Document date, newest first"],
  ["document_date", "Document date, oldest first"], ["asn", "Serial number"], ["-asn", "Serial number, highest first"],
  ["correspondent", "Correspondent"], ["document_type", "Document type"],
];

export async function render(ctx, folderId, params) {
  const sort = SORTS.some(([value]) => value === params.get("sort")) ? params.get("sort") : "";
  const number = Math.max(1, Number.parseInt(params.get("page") || "1", 10) || 1);
  const filters = chosenFilters(params);
  const filtered = Object.values(filters).some(Boolean);
  let refusal = null;
  const [folder, list, correspondents, types] = await Promise.all([
    api("GET", `/folders/${encoded(folderId)}/`),
    api("GET", withQuery(`/nodes/${encoded(folderId)}/`, { "page[size]": PAGE_SIZE, "page[number]": number, sort, ...filters }))
      .catch((error) => {
        // A filter the API refuses (a deleted correspondent in an old address): said in the bar.
        if (!filtered || error.status !== 400) throw error;
        refusal = error.message;
        return { data: [], meta: { pagination: { page: 1, pages: 1, count: 0 } } };
      }),
    names("/correspondents/"), names("/document-types/"),
  ]);
  return new FolderView(ctx, folder.data, list, sort, { filters, filtered, refusal, correspondents, types, params }).build();
}

class FolderView {
  constructor(ctx, folder, list, sort, about) {
    this.ctx = ctx;
    this.me = ctx.me();
    this.folder = folder;
    this.shared = folder.attributes.title === ".shared";
    this.writable = !this.shared && mayChange(folder);
    this.rows = list.data;
    this.pagination = list.meta.pagination;
    this.sort = sort;
    this.about = about;
    const name = (items) => new Map(items.map((item) => [item.id, item.attributes.name]));
    this.correspondents = name(about.correspondents);
    this.types = name(about.types);
    this.selected = new Set();
    this.thumbs = thumbnails();
    this.stops = [() => this.thumbs.dispose()];
    this.layout = layoutChosen();
  }

  build() {
    const title = folderName(this.folder.attributes.title);
    this.toolbar = this.buildToolbar();
    this.table = this.buildTable();
    const node = el("section", { class: "view view-folder", "aria-labelledby": "folder-title" },
      breadcrumbs(this.folder.attributes.breadcrumb.slice(0, -1)),
      el("div", { class: "view-head" }, el("h1", { id: "folder-title" }, title), ownerNote(this.folder, this.me)),
      this.toolbar, filterBar({ ...this.about, error: this.about.refusal, apply: (values, focus) => this.reopen({ ...values, page: "" }, focus) }),
      this.table, this.buildPager());
    if (this.writable) dropTarget(node, this.folder.id);
    this.updateSelection();
    return {
      node, title, folderId: this.folder.id, breadcrumb: this.folder.attributes.breadcrumb,
      dispose: () => this.stops.forEach((stop) => stop()),
      isStale: (event) => this.isStale(event),
      keys: {
        n: () => this.create(), u: () => this.writable && pickFiles(this.folder.id), F2: () => this.rename(),
        m: () => this.move(), Delete: () => this.remove(), a: () => this.selectAll(true),
        Escape: () => this.selectAll(false),
      },
    };
  }

  /** Whether an event (events.js) changed what the rows show; not while rows are selected. */
  isStale(event) {
    if (this.selected.size > 0 || !event.node) return false;
    const { id, parent_id: parentId, title } = event.node;
    const row = this.rows.find((candidate) => candidate.id === id);
    const here = parentId === this.folder.id;
    switch (event.type) {
      case "node.created": case "node.restored": return here && !row;
      case "node.moved": return here !== Boolean(row);
      case "node.deleted": return Boolean(row);
      case "node.renamed": return Boolean(row) && row.attributes.title !== title;
      default: return false;
    }
  }

  buildToolbar() {
    // Those a root is shared with neither move nor delete it.
    const changeable = this.rows.some(mayChange);
    const fixed = !changeable || this.shared;
    this.renameButton = button("Rename", () => this.rename(), "", { hidden: !changeable });
    this.moveButton = button("Move", () => this.move(), "", { hidden: fixed });
    this.deleteButton = button("Delete", () => this.remove(), "button-danger-outline", { hidden: fixed });
    const shareable = this.rows.some((node) => mayShare(node, this.me));
    this.shareButton = button("Share…", () => this.share(), "", { hidden: !shareable });
    // Bulk filing (api.md §22): the caller's tags on whatever they see; details on documents.
    this.tagButton = button("Tag…", () => this.bulk("tagSelection"), "", { hidden: this.rows.length === 0 });
    this.detailsButton = button("Details…", () => this.bulk("detailsOfSelection"), "", { hidden: !changeable });
    this.downloadButton = button("Download", () => this.bulk("downloadSelection"), "", { hidden: this.rows.length === 0 });
    this.count = el("span", { class: "selection-count", "aria-live": "polite" });
    const sort = select({ id: "folder-sort", onchange: (event) => this.reopen({ sort: event.target.value, page: "" }) }, SORTS, this.sort);
    const layouts = el("div", { class: "segmented", role: "group", "aria-label": "Show as" }, [["list", "List"], ["grid", "Grid"]]
      .map(([layout, text]) => button(text, () => this.setLayout(layout), "button-small", { "aria-pressed": String(this.layout === layout) })));
    return el("div", { class: "toolbar", role: "toolbar", "aria-label": "Folder actions" },
      this.writable ? el("div", { class: "toolbar-group" }, button("New folder", () => this.create()),
        button([icon("upload"), "Upload"], () => pickFiles(this.folder.id), "button-primary")) : null,
      el("div", { class: "toolbar-group", hidden: this.rows.length === 0 },
        this.renameButton, this.moveButton, this.tagButton, this.detailsButton, this.downloadButton, this.shareButton,
        this.deleteButton, this.count),
      el("div", { class: "toolbar-group toolbar-end" }, layouts, el("label", { for: "folder-sort" }, "Sort by"), sort));
  }

  setLayout(layout) {
    if (layout === this.layout) return;
    localStorage.setItem(LAYOUT_KEY, layout);
    this.ctx.refresh();
  }

  /** A bulk action of bulk.js on the selected nodes; the view is read again when it changed something. */
  async bulk(action) {
    const nodes = this.selectedNodes();
    if (!nodes.length) return;
    const actions = await import("./bulk.js");
    if (await actions[action](nodes)) this.ctx.changed();
  }

  buildTable() {
    if (this.rows.length === 0) {
      return el("p", { class: "empty-folder" }, this.about.filtered ? "No document in this folder matches the filters."
        : this.shared ? "Nothing is shared with you yet." : `This folder is empty.${this.writable ? " Upload files, or drop them here." : ""}`);
    }
    this.all = el("input", { type: "checkbox", "aria-label": "Select all", onchange: (e) => this.selectAll(e.target.checked) });
    if (this.layout === "grid") {
      return el("div", { class: "grid-wrap" }, el("label", { class: "grid-all" }, this.all, "Select all"),
        el("ul", { class: "node-grid", "aria-label": "Folders and documents" }, this.rows.map((node) => this.card(node))));
    }
    return el("div", { class: "table-wrap" }, el("table", { class: "table nodes" },
      el("caption", { class: "visually-hidden" }, "Folders and documents"),
      el("thead", {}, el("tr", {}, [["col-select", this.all], [null, "Name"], ["col-status", "Status"], ["col-meta", "Correspondent"],
        ["col-meta", "Type"], ["col-meta", "Date"], ["col-wide col-size", "Size"], ["col-wide", "Changed"]]
        .map(([column, head]) => el("th", { scope: "col", class: column }, head)))),
      el("tbody", {}, this.rows.map((node) => this.row(node)))));
  }

  checkbox(node) {
    return el("input", { type: "checkbox", class: "row-select", "aria-label": `Select ${node.attributes.title}`, value: node.id,
      onchange: (event) => {
        if (event.target.checked) this.selected.add(node.id);
        else this.selected.delete(node.id);
        this.updateSelection();
      } });
  }

  /** A folder's icon, or a document's thumbnail. */
  picture(node) {
    return node.type === "folders" ? icon("folder") : this.thumbs.make(node);
  }

  /** A node as a card of the grid: its picture large, its title, status and tags. */
  card(node) {
    const isFolder = node.type === "folders";
    const a = node.attributes;
    const href = isFolder ? `#/folder/${encoded(node.id)}` : `#/doc/${encoded(node.id)}`;
    const status = el("span", { class: "card-status" }, isFolder ? "" : statusBadge(node));
    const li = el("li", { class: "node-card", "data-node-id": node.id },
      el("a", { href, class: "card-link" }, el("span", { class: "card-picture" }, this.picture(node)),
        el("span", { class: "card-title", title: a.title }, a.title)),
      el("div", { class: "card-foot" }, this.checkbox(node), status, tagList(a.tags)));
    this.follow(node, li, (latest) => status.replaceChildren(statusBadge(latest)));
    return li;
  }

  /** Drags and drops of a row or card, and its status followed while it is being read. */
  follow(node, item, showStatus) {
    const dragged = () => (this.selected.has(node.id) ? [...this.selected] : [node.id]);
    if (mayChange(node)) {
      draggable(item, dragged, () => (dragged().length > 1 ? `${dragged().length} items` : node.attributes.title));
      if (node.type === "folders") dropTarget(item, node.id);
    }
    if (node.type !== "folders" && !isFinal(node) && this.stops.length < MAX_WATCHED_ROWS) {
      this.stops.push(watch(node.id, (latest) => latest && showStatus(latest)));
    }
  }

  row(node) {
    const isFolder = node.type === "folders";
    const { title } = node.attributes;
    const check = this.checkbox(node);
    const href = isFolder ? `#/folder/${encoded(node.id)}` : `#/doc/${encoded(node.id)}`;
    const status = el("td", { class: "col-status" }, isFolder ? "" : statusBadge(node));
    const a = node.attributes;
    const tr = el("tr", { "data-node-id": node.id },
      el("td", { class: "col-select" }, check),
      el("td", { class: "col-name" }, el("a", { href, class: "node-link" }, this.picture(node),
        // Whose a row is, where that is not said above it already.
        el("span", {}, title)), a.owner !== this.folder.attributes.owner && ownerNote(node, this.me), tagList(a.tags)),
      status,
      el("td", { class: "col-meta" }, this.correspondents.get(a.correspondent) ?? ""),
      el("td", { class: "col-meta" }, this.types.get(a.document_type) ?? ""),
      el("td", { class: "col-meta" }, isFolder ? "" : dayElement(a.document_date)),
      el("td", { class: "col-wide col-size" }, isFolder ? "" : formatSize(node.attributes.size)),
      el("td", { class: "col-wide" }, timeElement(node.attributes.updated_at)));
    // Dragging a selected row takes the whole selection along.
    this.follow(node, tr, (latest) => status.replaceChildren(statusBadge(latest)));
    return tr;
  }

  buildPager() {
    const { page, pages, count } = this.pagination;
    if (pages <= 1) return el("p", { class: "muted pager-note" }, plural(count, "item"));
    return pager("Pages of this folder", this.pagination, `Page ${page} of ${pages} (${count} items)`, (to) => this.reopen({ page: to }));
  }

  /** The folder again with `changes` to its sort, page or filters; `focus`: the control that
   *  keeps the focus (data-focus), else the heading gets it. */
  reopen(changes, focus = null) {
    const params = new URLSearchParams({ sort: this.sort, page: String(this.pagination.page), ...this.about.filters, ...changes });
    for (const [name, value] of [...params]) if (!value || (name === "page" && value === "1")) params.delete(name);
    const query = params.toString();
    this.ctx.navigate(`#/folder/${encoded(this.folder.id)}${query ? `?${query}` : ""}`, focus ? { focus: false, focusKeys: [focus] } : {});
  }

  selectedNodes() {
    return this.rows.filter((node) => this.selected.has(node.id));
  }

  selectAll(on) {
    this.selected = new Set(on ? this.rows.map((node) => node.id) : []);
    for (const box of this.table.querySelectorAll("input.row-select")) box.checked = on;
    this.updateSelection();
  }

  updateSelection() {
    const nodes = this.selectedNodes();
    const count = nodes.length;
    const changeable = count > 0 && nodes.every(mayChange);
    this.renameButton.disabled = count !== 1 || !changeable;
    this.moveButton.disabled = this.deleteButton.disabled = !changeable;
    this.shareButton.disabled = count === 0 || !nodes.every((node) => mayShare(node, this.me));
    this.tagButton.disabled = this.downloadButton.disabled = count === 0;
    this.detailsButton.disabled = !changeable || !nodes.some((node) => node.type === "documents");
    this.count.textContent = count ? `${count} selected` : "";
    for (const item of this.table.querySelectorAll("[data-node-id]")) item.classList.toggle("is-selected", this.selected.has(item.dataset.nodeId));
    if (this.all) {
      this.all.checked = count > 0 && count === this.rows.length;
      this.all.indeterminate = count > 0 && count < this.rows.length;
    }
  }

  // The keys call these too: each does only what its button (enabled and shown) would.
  async create() {
    if (this.writable && await newFolder(this.folder.id)) this.ctx.changed();
  }

  async rename() {
    if (!this.renameButton.disabled && await renameNode(this.selectedNodes()[0])) this.ctx.changed();
  }

  async move() {
    if (!this.moveButton.hidden && !this.moveButton.disabled && await moveNodesByDialog(this.selectedNodes())) this.ctx.changed();
  }

  async remove() {
    if (!this.deleteButton.hidden && !this.deleteButton.disabled && await deleteNodes(this.selectedNodes())) this.ctx.changed();
  }

  async share() {
    if (this.shareButton.disabled) return;
    const nodes = this.selectedNodes();
    if (nodes.length === 1) await shareDialog(nodes[0]);
    else await this.bulk("shareSelection");
  }
}
