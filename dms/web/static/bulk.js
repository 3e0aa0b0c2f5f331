// @ts-check
// Bulk filing (api.md §22): what the folder view does to its selected rows at once — tag and
// untag, set the correspondent, type or a custom field of the documents, download as one zip,
// share. One API call where the API has one for many (the zip); otherwise one per node, a few at
// a time, every node tried and the first refusal said with the node's name. Fetched when first
// used: the first view does not carry it. Each resolves true when something changed.

import { api, download, id as encoded, JSON_MEDIA, listAll } from "./api.js";
import { formActions, modal } from "./dialogs.js";
import { attempt, busy, el, field, plural, select, showError, showStatus } from "./dom.js";
import { names, nameSelect } from "./metadata.js";
import { tagSuggestions } from "./parts.js";
import { granteeFields } from "./share.js";

/** Calls made at once for a selection (the API serves each user's turn; a page is ≤ 100 rows). */
const PARALLEL = 4;
const KEEP = "__keep__";

/** `task(node)` for every node, PARALLEL at a time; the names of those refused, with the first
 *  refusal's sentence. */
async function eachNode(nodes, task) {
  const queue = [...nodes];
  const refused = [];
  let first = "";
  const worker = async () => {
    for (let node = queue.shift(); node; node = queue.shift()) {
      try {
        await task(node);
      } catch (error) {
        refused.push(node.attributes.title);
        first ||= error.message;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, nodes.length) }, worker));
  return { refused, first };
}

/** Says how it went: `done` for all, or which were refused and why. */
function report({ refused, first }, count, done) {
  if (!refused.length) {
    showStatus(done);
    return;
  }
  const named = refused.length > 3 ? `${refused.slice(0, 3).join(", ")} and ${refused.length - 3} more` : refused.join(", ");
  showError(`${count - refused.length} of ${count} done; not ${named}: ${first}`);
}

const tagNames = (text) => [...new Set(text.split(",").map((name) => name.trim()).filter(Boolean))];

export function tagSelection(nodes) {
  return modal(`Tag ${plural(nodes.length, "item")}`, (dialog, close) => {
    const add = el("input", { type: "text", id: "bulk-add-tags", list: "bulk-tag-names", autocomplete: "off" });
    const remove = el("input", { type: "text", id: "bulk-remove-tags", list: "bulk-tag-names", autocomplete: "off" });
    const form = el("form", { novalidate: true }, tagSuggestions("bulk-tag-names"),
      field("Add tags", add, el("small", { class: "hint" }, "Names separated by commas; new ones are made.")),
      field("Remove tags", remove), formActions(close, "Apply"));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const adding = tagNames(add.value);
      const removing = tagNames(remove.value);
      if (!adding.length && !removing.length) {
        add.focus();
        return;
      }
      const result = await busy(form, () => eachNode(nodes, async (node) => {
        const path = `/nodes/${encoded(node.id)}/tags/`;
        if (removing.length) await api("DELETE", path, { tags: removing }, { media: JSON_MEDIA });
        if (adding.length) await api("PATCH", path, { tags: adding }, { media: JSON_MEDIA });
      }));
      report(result, nodes.length, `Tags changed on ${plural(nodes.length, "item")}.`);
      close(result.refused.length < nodes.length);
    });
    dialog.append(form);
  }, false);
}

/** Correspondent, type and one custom field of the selected documents (folders have none). */
export async function detailsOfSelection(nodes) {
  const documents = nodes.filter((node) => node.type === "documents");
  const [correspondents, types, fields] = await Promise.all([
    names("/correspondents/"), names("/document-types/"), listAll("/custom-fields/").then(({ items }) => items)]);
  const keep = [[KEEP, "Leave as it is"], ["", "None"]];
  return modal(`Details of ${plural(documents.length, "document")}`, (dialog, close) => {
    const correspondent = nameSelect({ id: "bulk-correspondent" }, correspondents, KEEP, keep);
    const type = nameSelect({ id: "bulk-type" }, types, KEEP, keep);
    const customField = select({ id: "bulk-field" }, [["", "No field"], ...fields.map((item) => [item.id, item.attributes.name])], "");
    const value = el("input", { type: "text", id: "bulk-field-value", autocomplete: "off" });
    const form = el("form", { novalidate: true }, field("Correspondent", correspondent), field("Document type", type),
      el("div", { class: "field-row" }, field("Custom field", customField), field("Value", value)), formActions(close, "Apply"));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const attributes = {};
      if (correspondent.value !== KEEP) attributes.correspondent = correspondent.value || null;
      if (type.value !== KEEP) attributes.document_type = type.value || null;
      const chosen = fields.find((item) => item.id === customField.value);
      if (!chosen && !Object.keys(attributes).length) {
        correspondent.focus(); // nothing to change yet
        return;
      }
      const result = await busy(form, () => eachNode(documents, async (document) => {
        const changes = { ...attributes };
        if (chosen) {
          // The API replaces a document's whole list: its other values are kept as they are.
          const current = (await api("GET", `/documents/${encoded(document.id)}/`)).data.attributes.custom_fields;
          changes.custom_fields = [...current.filter((item) => item.field !== chosen.id),
            { field: chosen.id, value: fieldValue(chosen, value.value) }];
        }
        if (Object.keys(changes).length) {
          await api("PATCH", `/documents/${encoded(document.id)}/`, { data: { type: "documents", id: document.id, attributes: changes } });
        }
      }));
      report(result, documents.length, `Details saved on ${plural(documents.length, "document")}.`);
      close(result.refused.length < documents.length);
    });
    dialog.append(form);
  }, false);
}

/** What the value field's text means for a field of its type (the API checks it). */
function fieldValue(customField, text) {
  const trimmed = text.trim();
  if (!trimmed) return null;
  switch (customField.attributes.data_type) {
    case "integer": case "float": case "monetary": return Number.isNaN(Number(trimmed)) ? trimmed : Number(trimmed);
    case "boolean": return ["yes", "true", "1"].includes(trimmed.toLowerCase());
    default: return trimmed;
  }
}

/** The selection as one zip (POST /nodes/download/). */
export async function downloadSelection(nodes) {
  await attempt(() => download("/nodes/download/", "documents.zip", { node_ids: nodes.map((node) => node.id) }));
  return false;
}

/** The same person or group, with the same role, on every selected node (each its own grant). */
export function shareSelection(nodes) {
  return modal(`Share ${plural(nodes.length, "item")}`, (dialog, close) => {
    const fields = granteeFields("bulk-share");
    const form = el("form", { novalidate: true }, fields.row, formActions(close, "Share"));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const chosen = fields.read();
      if (!chosen) return;
      const result = await busy(form, () => eachNode(nodes, (node) =>
        api("POST", `/nodes/${encoded(node.id)}/access/`, { ...chosen.grantee, role: chosen.role }, { media: JSON_MEDIA })));
      report(result, nodes.length, `Shared ${plural(nodes.length, "item")} with ${chosen.name}.`);
      close(result.refused.length < nodes.length);
    });
    dialog.append(form);
  }, false);
}
