// The document view: where it is (breadcrumbs), its status (followed live until final), its
// downloads (the original, the searchable PDF), rename, move, delete, its pages as previews
// with their tools (doc-pages.js, doc-pageops.js), its Details (doc-details.js: correspondent,
// type, date, serial number, custom fields) and the panels of doc-panels.js: tags, notes, text,
// versions, history.

import { api, download, id as encoded } from "./api.js";
import { deleteNodes, moveNodesByDialog, renameNode } from "./actions.js";
import { detailsPanel } from "./doc-details.js";
import { historyPanel, notesPanel, tagsPanel, textPanel, versionsPanel } from "./doc-panels.js";
import { pagesSection } from "./doc-pages.js";
import { isFinal, watch } from "./docstatus.js";
import { attempt, busy, el, statusBadge } from "./dom.js";
import { names } from "./metadata.js";
import { breadcrumbs } from "./parts.js";

export async function render(ctx, documentId) {
  const { data: document } = await api("GET", `/documents/${encoded(documentId)}/`);
  const [text, tags, history, notes, correspondents, types, fields] = await Promise.all([
    textPanel(document), tagsPanel(ctx, document), historyPanel(document), notesPanel(document),
    names("/correspondents/"), names("/document-types/"), names("/custom-fields/")]);
  const details = await detailsPanel(ctx, document, { correspondents, types, fields });
  const latest = document.attributes.versions?.at(-1) ?? null;
  const { title, breadcrumb } = document.attributes;
  const parentId = breadcrumb.at(-2)?.[1];
  const pages = pagesSection(ctx, document, latest, parentId);

  const badge = el("span", { class: "doc-status" }, statusBadge(document));
  let stopWatching = () => {};
  if (!isFinal(document)) {
    stopWatching = watch(document.id, (changed) => {
      if (changed === null) return;
      badge.replaceChildren(statusBadge(changed));
      // Read: the text, pages and searchable PDF are there now.
      if (isFinal(changed)) ctx.refresh();
    });
  }

  const actions = {
    download: (button) => busy(button, () => attempt(() =>
      download(`/documents/${encoded(document.id)}/download/`, latest?.file_name ?? title))),
    searchable: (button) => busy(button, () => attempt(() =>
      download(`/documents/${encoded(document.id)}/download/?searchable=1`, `${title}.pdf`))),
    rename: async () => { if (await renameNode(document)) ctx.changed(); },
    move: async () => { if (await moveNodesByDialog([document])) ctx.changed(); },
    remove: async () => {
      if (await deleteNodes([document])) {
        ctx.navigate(`#/folder/${encoded(parentId)}`);
        ctx.changed();
      }
    },
  };
  const button = (text, action, extra = {}) => el("button", { type: "button", class: "button",
    onclick: (event) => action(event.currentTarget), ...extra }, text);
  const hasFile = Boolean(latest);
  const toolbar = el("div", { class: "toolbar", role: "toolbar", "aria-label": "Document actions" },
    el("div", { class: "toolbar-group" },
      button("Download", actions.download, { class: "button button-primary", disabled: !hasFile }),
      button("Download searchable PDF", actions.searchable, { disabled: !latest?.searchable_pdf,
        title: latest?.searchable_pdf ? null : "Made when Tesseract reads the pages" })),
    el("div", { class: "toolbar-group" },
      button("Rename", actions.rename), button("Move", actions.move),
      button("Delete", actions.remove, { class: "button button-danger-outline" })));

  const node = el("article", { class: "view view-document", "aria-labelledby": "doc-title" },
    breadcrumbs(breadcrumb.slice(0, -1)),
    el("div", { class: "view-head" }, el("h1", { id: "doc-title" }, title), badge),
    document.attributes.ocr_error ? el("p", { class: "message message-error" }, document.attributes.ocr_error) : null,
    toolbar,
    el("div", { class: "doc-layout" }, pages.node,
      el("div", { class: "doc-side" }, details, tags, notes, text, versionsPanel(ctx, document), history)));
  const find = (name) => [...toolbar.querySelectorAll("button")].find((b) => b.textContent === name);
  return {
    node, title, folderId: parentId, breadcrumb: breadcrumb.slice(0, -1),
    dispose: () => {
      pages.dispose();
      stopWatching();
    },
    keys: { d: () => hasFile && actions.download(find("Download")), F2: actions.rename, m: actions.move, Delete: actions.remove },
  };
}
