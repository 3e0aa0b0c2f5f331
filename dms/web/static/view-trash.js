// The trash (api.md, "The trash"): what was deleted, newest first, where it was and until when it
// is kept; restore one, delete one for good, or empty the trash.

import { api, id as encoded, withQuery } from "./api.js";
import { confirmDialog } from "./dialogs.js";
import { attempt, busy, el, folderName, icon, showStatus, timeElement } from "./dom.js";

const PAGE_SIZE = 100;

export async function render(ctx, params) {
  const number = Math.max(1, Number.parseInt(params.get("page") || "1", 10) || 1);
  const list = await api("GET", withQuery("/trash/", { "page[size]": PAGE_SIZE, "page[number]": number }));
  const { page, pages, count } = list.meta.pagination;

  const restore = async (node, button) => {
    const done = await busy(button, () => attempt(() => api("POST", `/trash/${encoded(node.id)}/restore/`)));
    if (done) {
      const where = done.data.attributes.breadcrumb.at(-2)?.[0];
      showStatus(`“${node.attributes.title}” restored${where ? ` to ${folderName(where)}` : ""}.`);
      ctx.changed();
    }
  };
  const purge = async (node) => {
    const sure = await confirmDialog({ title: `Delete “${node.attributes.title}” for good?`, ok: "Delete for good",
      danger: true, text: "It cannot be restored afterwards; its files are deleted." });
    if (!sure) return;
    if (await attempt(() => api("DELETE", `/trash/${encoded(node.id)}/`)) !== undefined) {
      showStatus(`“${node.attributes.title}” deleted for good.`);
      ctx.refresh();
    }
  };
  const empty = async () => {
    const sure = await confirmDialog({ title: "Empty the trash?", ok: "Empty trash", danger: true,
      text: `${count === 1 ? "The item" : `All ${count} items`} in the trash will be deleted for good.` });
    if (!sure) return;
    if (await attempt(() => api("DELETE", "/trash/")) !== undefined) {
      showStatus("The trash is empty.");
      ctx.refresh();
    }
  };

  const rows = list.data.map((node) => {
    const { title, original_parent: parent, deleted_at: deleted, purge_at: purgeAt } = node.attributes;
    return el("tr", { "data-node-id": node.id },
      el("td", { "data-label": "Name" }, el("span", { class: "node-link" }, icon(node.type === "folders" ? "folder" : "document"),
        el("span", {}, title))),
      el("td", { "data-label": "Was in" }, parent ? folderName(parent.title) : el("span", { class: "muted" }, "—")),
      el("td", { "data-label": "Deleted", class: "col-wide" }, timeElement(deleted)),
      el("td", { "data-label": "Kept until", class: "col-wide" }, timeElement(purgeAt)),
      el("td", { class: "cell-actions" },
        el("button", { type: "button", class: "button button-small", "aria-label": `Restore ${title}`,
          onclick: (event) => restore(node, event.currentTarget) }, "Restore"),
        el("button", { type: "button", class: "button button-small button-danger-outline", "aria-label": `Delete for good: ${title}`,
          onclick: () => purge(node) }, "Delete for good")));
  });
  const table = rows.length ? el("div", { class: "table-wrap" }, el("table", { class: "table trash" },
    el("caption", { class: "visually-hidden" }, "Deleted folders and documents, newest first"),
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Name"), el("th", { scope: "col" }, "Was in"),
      el("th", { scope: "col", class: "col-wide" }, "Deleted"), el("th", { scope: "col", class: "col-wide" }, "Kept until"),
      el("th", { scope: "col" }, el("span", { class: "visually-hidden" }, "Actions")))),
    el("tbody", {}, rows))) : el("p", { class: "empty-folder" }, "The trash is empty.");
  const pager = pages > 1 ? el("nav", { class: "pager", "aria-label": "Pages of the trash" },
    el("button", { type: "button", class: "button", disabled: page <= 1, onclick: () => ctx.navigate(`#/trash?page=${page - 1}`) }, "Previous page"),
    el("span", {}, `Page ${page} of ${pages}`),
    el("button", { type: "button", class: "button", disabled: page >= pages, onclick: () => ctx.navigate(`#/trash?page=${page + 1}`) }, "Next page")) : null;

  const node = el("section", { class: "view view-trash", "aria-labelledby": "trash-title" },
    el("div", { class: "view-head" }, el("h1", { id: "trash-title" }, "Trash"),
      el("button", { type: "button", class: "button button-danger-outline", disabled: count === 0, onclick: empty }, "Empty trash")),
    el("p", { class: "muted" }, "Deleted folders and documents stay here for a while, then they are deleted for good."),
    table, pager);
  return { node, title: "Trash", folderId: null };
}
