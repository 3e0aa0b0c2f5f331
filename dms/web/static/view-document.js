// The document view: breadcrumbs, its status (followed live until final), downloads, rename,
// move, delete, share, its owner when that is someone else, its pages (doc-pages.js), Details
// (doc-details.js) and the panels of doc-panels.js. A viewer (share.js) is offered no change.

import { api, download, id as encoded } from "./api.js";
import { deleteNodes, moveNodesByDialog, renameNode } from "./actions.js";
import { detailsPanel } from "./doc-details.js";
import { historyPanel, notesPanel, tagsPanel, textPanel, versionsPanel } from "./doc-panels.js";
import { pagesSection } from "./doc-pages.js";
import { isFinal, watch } from "./docstatus.js";
import { attempt, busy, button, el, showStatus, statusBadge } from "./dom.js";
import { names } from "./metadata.js";
import { breadcrumbs } from "./parts.js";
import { mayChange, mayShare, ownerNote, shareDialog } from "./share.js";

export async function render(ctx, documentId) {
  const { data: document } = await api("GET", `/documents/${encoded(documentId)}/`);
  const writable = mayChange(document);
  const [text, tags, history, notes, correspondents, types, fields] = await Promise.all([
    textPanel(document), tagsPanel(ctx, document, writable), historyPanel(document), notesPanel(document, writable),
    names("/correspondents/"), names("/document-types/"), names("/custom-fields/")]);
  const details = await detailsPanel(ctx, document, { correspondents, types, fields }, writable);
  const latest = document.attributes.versions?.at(-1) ?? null;
  const { title, breadcrumb } = document.attributes;
  const parentId = breadcrumb.at(-2)?.[1];
  const pages = pagesSection(ctx, document, latest, parentId, writable);

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
    download: (target) => busy(target, () => attempt(() =>
      download(`/documents/${encoded(document.id)}/download/`, latest?.file_name ?? title))),
    searchable: (target) => busy(target, () => attempt(() =>
      download(`/documents/${encoded(document.id)}/download/?searchable=1`, `${title}.pdf`))),
    rename: async () => { if (writable && await renameNode(document)) ctx.changed(); },
    move: async () => { if (writable && await moveNodesByDialog([document])) ctx.changed(); },
    // The dialog is fetched when first wanted (read-again.js); the status is followed anew.
    reread: () => attempt(async () => {
      const languages = await (await import("./read-again.js")).readAgain(document);
      if (languages) {
        await ctx.refresh();
        showStatus(`Reading ${title} again in ${languages}.`);
      }
    }),
    remove: async () => {
      if (writable && await deleteNodes([document])) {
        ctx.navigate(`#/folder/${encoded(parentId)}`);
        ctx.changed();
      }
    },
  };
  const act = (text, action, kind = "", extra = {}) => button(text, (event) => action(event.currentTarget), kind, extra);
  const hasFile = Boolean(latest);
  const toolbar = el("div", { class: "toolbar", role: "toolbar", "aria-label": "Document actions" },
    el("div", { class: "toolbar-group" },
      act("Download", actions.download, "button-primary", { disabled: !hasFile }),
      act("Download searchable PDF", actions.searchable, "", { disabled: !latest?.searchable_pdf,
        title: latest?.searchable_pdf ? null : "Made when Tesseract reads the pages" })),
    el("div", { class: "toolbar-group" },
      writable ? [act("Rename", actions.rename), act("Move", actions.move),
        hasFile ? act("Read again…", actions.reread) : null, act("Delete", actions.remove, "button-danger-outline")] : null,
      mayShare(document, ctx.me()) ? act("Share…", () => shareDialog(document)) : null));

  const node = el("article", { class: "view view-document", "aria-labelledby": "doc-title" },
    breadcrumbs(breadcrumb.slice(0, -1)),
    el("div", { class: "view-head" }, el("h1", { id: "doc-title" }, title), badge, ownerNote(document, ctx.me())),
    document.attributes.ocr_error ? el("p", { class: "message message-error" }, document.attributes.ocr_error) : null,
    toolbar,
    el("div", { class: "doc-layout" }, pages.node,
      el("div", { class: "doc-side" }, details.node, tags, notes, text, versionsPanel(ctx, document, writable), history)));
  const find = (name) => [...toolbar.querySelectorAll("button")].find((b) => b.textContent === name);
  return {
    node, title, folderId: parentId, breadcrumb: breadcrumb.slice(0, -1),
    dispose: () => {
      pages.dispose();
      details.dispose();
      stopWatching();
    },
    keys: { d: () => hasFile && actions.download(find("Download")), F2: actions.rename, m: actions.move, Delete: actions.remove },
  };
}
