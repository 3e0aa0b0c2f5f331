// The document view's side panels: its text, its tags (add — a new name creates the tag —,
// remove), its versions (download, restore an older one as the newest) and its history.

import { api, download, id as encoded, JSON_MEDIA, withQuery } from "./api.js";
import { confirmDialog } from "./dialogs.js";
import { attempt, busy, el, folderName, formatSize, showStatus, timeElement } from "./dom.js";
import { tagList, tagSuggestions } from "./parts.js";

/** History events shown: the newest ones. */
const HISTORY_SIZE = 50;

const section = (id, title, ...children) => el("section", { class: "panel", "aria-labelledby": id },
  el("h2", { id }, title), ...children);

export async function textPanel(document) {
  const { text } = await api("GET", `/documents/${encoded(document.id)}/ocr-text`);
  const { ocr_status: status, file_name: file } = document.attributes;
  let body;
  if (text.trim()) body = el("pre", { class: "doc-text", tabindex: "0", "aria-label": "Text of the document" }, text);
  else if (!file) body = el("p", { class: "muted" }, "No file yet.");
  else if (status === "succeeded" || status === "failed") body = el("p", { class: "muted" }, "No text was found.");
  else body = el("p", { class: "muted" }, "The text is being read…");
  return section("text-title", "Text", body);
}

export async function tagsPanel(ctx, document) {
  const nodePath = `/nodes/${encoded(document.id)}/tags/`;
  const change = async (method, name, message) => {
    const done = await attempt(() => api(method, nodePath, { tags: [name] }, { media: JSON_MEDIA }));
    if (done !== undefined) {
      // The view is read again first, so that what the message says is on the screen.
      await ctx.refresh();
      showStatus(message);
    }
  };
  const input = el("input", { type: "text", id: "tag-name", list: "tag-names", autocomplete: "off", maxlength: "100",
    "aria-describedby": "tag-hint" });
  const form = el("form", { class: "inline-form", novalidate: true },
    el("label", { for: "tag-name" }, "Add a tag"),
    el("div", { class: "copy-row" }, input, el("button", { type: "submit", class: "button" }, "Add tag")),
    el("small", { class: "hint", id: "tag-hint" }, "Pick one of your tags, or type a new name to create it."),
    tagSuggestions("tag-names"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const name = input.value.trim();
    if (name) busy(form, () => change("PATCH", name, `Tag “${name}” added.`));
  });
  const chips = tagList(document.attributes.tags, (name) => change("DELETE", name, `Tag “${name}” removed.`))
    ?? el("p", { class: "muted" }, "No tags.");
  return section("tags-title", "Tags", chips, form);
}

export function versionsPanel(ctx, document) {
  const versions = [...(document.attributes.versions ?? [])].reverse();
  if (!versions.length) return section("versions-title", "Versions", el("p", { class: "muted" }, "No versions yet."));
  const latest = versions[0];
  const restore = async (version, button) => {
    const sure = await confirmDialog({ title: `Restore version ${version.number}?`, ok: "Restore",
      text: `Its file becomes the newest version (${latest.number + 1}); version ${latest.number} stays as it is.` });
    if (!sure) return;
    const done = await busy(button, () => attempt(() =>
      api("POST", `/documents/${encoded(document.id)}/versions/${encoded(version.id)}/restore/`)));
    if (done) {
      await ctx.refresh();
      showStatus(`Version ${version.number} restored as version ${latest.number + 1}.`);
    }
  };
  const rows = versions.map((version) => {
    const get = el("button", { type: "button", class: "button button-small", "aria-label": `Download version ${version.number}`,
      onclick: (event) => busy(event.currentTarget, () => attempt(() =>
        download(`/document-versions/${encoded(version.id)}/download/`, version.file_name))) }, "Download");
    const back = version === latest ? el("span", { class: "badge badge-info" }, "current")
      : el("button", { type: "button", class: "button button-small", "aria-label": `Restore version ${version.number}`,
        onclick: (event) => restore(version, event.currentTarget) }, "Restore");
    return el("li", { class: "version" },
      el("div", {}, el("strong", {}, `Version ${version.number}`), " · ", version.file_name ?? "",
        el("div", { class: "hint" }, formatSize(version.size), " · ",
          version.page_count === 1 ? "1 page" : `${version.page_count} pages`, " · ", timeElement(version.created_at))),
      el("div", { class: "version-actions" }, get, back));
  });
  return section("versions-title", "Versions", el("ul", { class: "plain-list" }, rows));
}

const quoted = (text) => `“${text}”`;
const titleOf = (folder) => (folder ? folderName(folder.title) : "?");
/** One sentence per history action (api.md, "History"). */
const SENTENCES = {
  created: () => "Created",
  uploaded: (d) => `Version ${d.version} uploaded (${d.file_name})`,
  imported: (d) => `Imported (${d.source})`,
  renamed: (d) => `Renamed from ${quoted(d.previous)} to ${quoted(d.title)}`,
  moved: (d) => `Moved from ${titleOf(d.from)} to ${titleOf(d.to)}`,
  tagged: (d) => `Tagged ${(d.tags ?? []).join(", ")}`,
  untagged: (d) => `Tag removed: ${(d.tags ?? []).join(", ")}`,
  processed: (d) => (d.status === "failed" ? `Reading failed: ${d.reason ?? ""}`
    : `Text read (${d.pages === 1 ? "1 page" : `${d.pages} pages`})`),
  deleted: () => "Moved to the Trash",
  restored: () => "Restored from the Trash",
  version_restored: (d) => `Version ${d.restored} restored as version ${d.version}`,
  pages_changed: (d) => d.description ?? "Pages changed",
  rule_applied: (d) => `Rule ${quoted(d.rule?.name ?? d.rule ?? "")} applied`,
};

export async function historyPanel(document) {
  const list = await api("GET", withQuery(`/nodes/${encoded(document.id)}/history/`, { "page[size]": HISTORY_SIZE }));
  const items = list.data.map(({ attributes: event }) => el("li", { class: "event" },
    timeElement(event.at), " ",
    el("span", {}, (SENTENCES[event.action] ?? (() => event.action))(event.details ?? {})),
    el("span", { class: "muted" }, ` — ${event.actor ? event.actor.username : "dms"}`)));
  const more = list.meta.pagination.count > list.data.length
    ? el("p", { class: "hint" }, `The newest ${list.data.length} of ${list.meta.pagination.count} events.`) : null;
  return section("history-title", "History", el("ol", { class: "plain-list history" }, items), more);
}
