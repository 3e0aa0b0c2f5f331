// What a person does to nodes from any view: each asks in a dialog, calls the API, says what
// happened, and resolves true when something changed (the caller then reads its view again).

import { api, id as encoded, JSON_MEDIA } from "./api.js";
import { confirmDialog, folderDialog, promptDialog } from "./dialogs.js";
import { attempt, folderName, showStatus } from "./dom.js";

const TITLE_HINT = "Up to 200 characters, without / or \\.";

export async function newFolder(parentId) {
  const title = await promptDialog({ title: "New folder", label: "Folder name", ok: "Create", hint: TITLE_HINT });
  if (title === null) return false;
  const created = await attempt(() => api("POST", "/nodes/", { data: { type: "folders", attributes: { title },
    relationships: { parent: { data: { type: "folders", id: parentId } } } } }));
  if (created) showStatus(`Folder “${title}” created.`);
  return Boolean(created);
}

/** `node` is a node resource (a listing's row or a document). */
export async function renameNode(node) {
  const kind = node.type === "folders" ? "folder" : "document";
  const title = await promptDialog({ title: `Rename ${kind}`, label: "New name", value: node.attributes.title,
    ok: "Rename", hint: TITLE_HINT });
  if (title === null || title === node.attributes.title) return false;
  const changed = await attempt(() => api("PATCH", `/nodes/${encoded(node.id)}/`,
    { data: { type: node.type, id: node.id, attributes: { title } } }));
  if (changed) showStatus(`Renamed to “${title}”.`);
  return Boolean(changed);
}

const describe = (nodes) => (nodes.length === 1 ? `“${nodes[0].attributes.title}”` : `${nodes.length} items`);

/** Moves `nodes` into a folder chosen in the dialog. */
export async function moveNodesByDialog(nodes) {
  const target = await folderDialog({ title: `Move ${describe(nodes)}`, exclude: new Set(nodes.map((n) => n.id)) });
  if (target === null) return false;
  return moveNodes(nodes.map((n) => n.id), target);
}

/** Moves nodes by id into `folderId` (all or nothing, api.md, "Moving"). */
export async function moveNodes(ids, folderId) {
  const moved = await attempt(() => api("POST", "/nodes/move/",
    { nodes: ids.map((node) => ({ id: node })), target_parent: { id: folderId } }, { media: JSON_MEDIA }));
  if (moved) {
    const names = moved.data.map((node) => node.attributes.title);
    const where = moved.data[0]?.attributes.breadcrumb.at(-2)?.[0];
    showStatus(`Moved ${names.length === 1 ? `“${names[0]}”` : `${names.length} items`}${where ? ` to ${folderName(where)}` : ""}.`);
  }
  return Boolean(moved);
}

/** Moves nodes to the trash after asking; resolves true when any went. */
export async function deleteNodes(nodes) {
  const sure = await confirmDialog({ title: `Delete ${describe(nodes)}?`, ok: "Delete", danger: true,
    text: "They go to the Trash, from where you can restore them until it is emptied." });
  if (!sure) return false;
  let deleted = 0;
  for (const node of nodes) {
    const done = await attempt(() => api("DELETE", `/nodes/${encoded(node.id)}/`));
    if (done === undefined) break;
    deleted += 1;
  }
  if (deleted) showStatus(`${deleted === 1 ? `“${nodes[0].attributes.title}”` : `${deleted} items`} moved to the Trash.`);
  return deleted > 0;
}
