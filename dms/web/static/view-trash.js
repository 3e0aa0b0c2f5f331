// The trash (api.md, "The trash"): what was deleted, where it was and until when it is kept.

import { api, id as encoded, withQuery } from "./api.js";
import { attempt, busy, button, el, folderName, icon, showStatus, timeElement } from "./dom.js";
import { confirmDelete, dataTable, pager } from "./parts.js";

const PAGE_SIZE = 100;

export async function render(ctx, params) {
  const number = Math.max(1, Number.parseInt(params.get("page") || "1", 10) || 1);
  const list = await api("GET", withQuery("/trash/", { "page[size]": PAGE_SIZE, "page[number]": number }));
  const { page, pages, count } = list.meta.pagination;

  const restore = async (node, target) => {
    const done = await busy(target, () => attempt(() => api("POST", `/trash/${encoded(node.id)}/restore/`)));
    if (done) {
      const where = done.data.attributes.breadcrumb.at(-2)?.[0];
      await ctx.changed();
      showStatus(`“${node.attributes.title}” restored${where ? ` to ${folderName(where)}` : ""}.`);
    }
  };
  const purge = ({ id, attributes: { title } }) => confirmDelete(ctx, { title: `Delete “${title}” for good?`, ok: "Delete for good",
    text: "It cannot be restored afterwards; its files are deleted.", path: `/trash/${encoded(id)}/`, done: `“${title}” deleted for good.` });
  const empty = () => confirmDelete(ctx, { title: "Empty the trash?", ok: "Empty trash", path: "/trash/", done: "The trash is empty.",
    text: `${count === 1 ? "The item" : `All ${count} items`} in the trash will be deleted for good.` });

  const rows = list.data.map((node) => {
    const { title, original_parent: parent, deleted_at: deleted, purge_at: purgeAt } = node.attributes;
    return el("tr", { "data-node-id": node.id },
      // One line, cut with an ellipsis; the whole title as the tooltip (and read out whole).
      el("td", { "data-label": "Name", class: "cell-title" }, el("span", { class: "node-link" }, icon(node.type === "folders" ? "folder" : "document"),
        el("span", { class: "truncate", title }, title))),
      el("td", { "data-label": "Was in" }, parent ? folderName(parent.title) : el("span", { class: "muted" }, "—")),
      el("td", { "data-label": "Deleted", class: "col-wide" }, timeElement(deleted)),
      el("td", { "data-label": "Kept until", class: "col-wide" }, timeElement(purgeAt)),
      el("td", { class: "cell-actions" },
        button("Restore", (event) => restore(node, event.currentTarget), "button-small", { "aria-label": `Restore ${title}` }),
        button("Delete for good", () => purge(node), "button-small button-danger-outline", { "aria-label": `Delete for good: ${title}` })));
  });
  const table = rows.length ? dataTable("Deleted folders and documents, newest first",
    ["Name", "Was in", ["Deleted", "col-wide"], ["Kept until", "col-wide"]], rows) : el("p", { class: "empty-folder" }, "The trash is empty.");

  const node = el("section", { class: "view view-trash", "aria-labelledby": "trash-title" },
    el("div", { class: "view-head" }, el("h1", { id: "trash-title" }, "Trash"),
      button("Empty trash", empty, "button-danger-outline", { disabled: count === 0 })),
    el("p", { class: "muted" }, "Deleted folders and documents stay here for a while, then they are deleted for good."),
    table, pages > 1 ? pager("Pages of the trash", list.meta.pagination, `Page ${page} of ${pages}`, (to) => ctx.navigate(`#/trash?page=${to}`)) : null);
  return { node, title: "Trash", folderId: null };
}
