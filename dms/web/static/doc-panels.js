// The document view's side panels: text, tags (a new name creates the tag), notes, versions
// (download, restore an older one as the newest) and history.

import { api, download, id as encoded, JSON_MEDIA, listAll, withQuery } from "./api.js";
import { confirmDialog } from "./dialogs.js";
import { attempt, busy, button, el, folderName, formatDate, formatSize, plural, showStatus, timeElement } from "./dom.js";
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

export async function tagsPanel(ctx, document, writable) {
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
  const chips = tagList(document.attributes.tags, writable && ((name) => change("DELETE", name, `Tag “${name}” removed.`)))
    ?? el("p", { class: "muted" }, "No tags.");
  return section("tags-title", "Tags", chips, writable && form);
}

/** Notes, newest first, each with its author and time; added and deleted here (when `writable`),
 *  without reading the view again (what is typed in the Details panel stays). */
export async function notesPanel(document, writable) {
  const { items } = await listAll(`/documents/${encoded(document.id)}/notes/`);
  const list = el("ol", { class: "plain-list notes", "aria-label": "Notes, newest first" });
  const empty = el("p", { class: "muted" }, "No notes.");
  const text = el("textarea", { id: "note-text", rows: "3", maxlength: "65536" });
  const shown = () => { empty.hidden = list.childElementCount > 0; };
  const item = (note) => {
    const a = note.attributes;
    const remove = writable && button("Delete", async () => {
      const sure = await confirmDialog({ title: "Delete note?", ok: "Delete", danger: true,
        text: `“${a.note.length > 80 ? `${a.note.slice(0, 80)}…` : a.note}” is deleted for good.` });
      if (!sure || await attempt(() => api("DELETE", `/notes/${encoded(note.id)}/`)) === undefined) return;
      const next = row.nextElementSibling ?? row.previousElementSibling;
      row.remove();
      shown();
      (next?.querySelector("button") ?? text).focus();
      showStatus("Note deleted.");
    }, "button-small button-danger-outline", { "aria-label": `Delete note of ${formatDate(a.created_at)}` });
    const row = el("li", { class: "note" }, el("p", { class: "note-text" }, a.note),
      el("div", { class: "note-meta" }, el("span", { class: "hint" }, `${a.user ?? "dms"} · `, timeElement(a.created_at)), remove));
    return row;
  };
  list.append(...items.map(item));
  shown();
  const form = el("form", { class: "inline-form", novalidate: true },
    el("label", { for: "note-text" }, "Add a note"), text,
    el("div", { class: "actions" }, el("button", { type: "submit", class: "button" }, "Add note")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!text.value.trim()) {
      text.focus();
      return;
    }
    const added = await busy(form, () => attempt(() => api("POST", `/documents/${encoded(document.id)}/notes/`,
      { data: { type: "notes", attributes: { note: text.value } } })));
    if (!added) return;
    list.prepend(item(added.data));
    shown();
    text.value = "";
    text.focus();
    showStatus("Note added.");
  });
  return section("notes-title", "Notes", empty, list, writable ? form : null);
}

export function versionsPanel(ctx, document, writable) {
  const versions = [...(document.attributes.versions ?? [])].reverse();
  if (!versions.length) return section("versions-title", "Versions", el("p", { class: "muted" }, "No versions yet."));
  const latest = versions[0];
  const restore = async (version, target) => {
    const sure = await confirmDialog({ title: `Restore version ${version.number}?`, ok: "Restore",
      text: `Its file becomes the newest version (${latest.number + 1}); version ${latest.number} stays as it is.` });
    if (!sure) return;
    const done = await busy(target, () => attempt(() =>
      api("POST", `/documents/${encoded(document.id)}/versions/${encoded(version.id)}/restore/`)));
    if (done) {
      await ctx.refresh();
      showStatus(`Version ${version.number} restored as version ${latest.number + 1}.`);
    }
  };
  const rows = versions.map((version) => {
    const get = button("Download", (event) => busy(event.currentTarget, () => attempt(() =>
      download(`/document-versions/${encoded(version.id)}/download/`, version.file_name))), "button-small",
    { "aria-label": `Download version ${version.number}` });
    const back = version === latest ? el("span", { class: "badge badge-info" }, "current")
      : writable && button("Restore", (event) => restore(version, event.currentTarget), "button-small",
        { "aria-label": `Restore version ${version.number}` });
    return el("li", { class: "line" },
      el("div", {}, el("strong", {}, `Version ${version.number}`), " · ", version.file_name ?? "",
        el("div", { class: "hint" }, formatSize(version.size), " · ",
          plural(version.page_count, "page"), " · ", timeElement(version.created_at))),
      el("div", { class: "line-actions" }, get, back));
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
    : `Text read (${plural(d.pages, "page")})`),
  deleted: () => "Moved to the Trash",
  restored: () => "Restored from the Trash",
  version_restored: (d) => `Version ${d.restored} restored as version ${d.version}`,
  pages_changed: (d) => d.description ?? "Pages changed",
  rule_applied: (d) => `Rule ${quoted(d.rule?.name ?? d.rule ?? "")} applied`,
  metadata_changed: (d) => {
    if (d.notes) return `Note ${d.notes.added ? "added" : "deleted"}: ${quoted(d.notes.text ?? "")}`;
    if (d.custom_fields) return `Linked from another document: ${Object.keys(d.custom_fields).join(", ")}`;
    const { custom_fields: fields = {}, ...changes } = d.changes ?? {};
    return `Details changed: ${[...Object.keys(changes).map((key) => key.replaceAll("_", " ")), ...Object.keys(fields)].join(", ")}`;
  },
  access_granted: (d) => `Shared with ${d.user ?? d.group} as ${d.role}`,
  access_revoked: (d) => `No longer shared with ${d.user ?? d.group}`,
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
