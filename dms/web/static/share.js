// Sharing (api.md, "Access to a node"): what the caller may do with a node (attributes.access;
// "owner" where the API does not say), whose it is, and the Share dialog: the grants on the node
// (changed here) and on the folders above it (changed there), a person or group added, and for
// its owner the public links (share-links.js).

import { api, id as encoded, JSON_MEDIA, listAll } from "./api.js";
import { actions, modal } from "./dialogs.js";
import { busy, button, el, field, folderName, select } from "./dom.js";
import { linksSection } from "./share-links.js";

const ROLES = [["viewer", "Viewer: reads"], ["editor", "Editor: also changes"]];
const accessOf = (node) => node.attributes.access ?? "owner";

/** Whether the caller may change the node: rename, move, delete, upload, pages, details. */
export const mayChange = (node) => accessOf(node) !== "viewer";
/** Whether the caller sees and changes whom the node is shared with. */
export const mayShare = (node, me) => accessOf(node) === "owner" || me.attributes.is_superuser;

/** "Owner: alice" beside a node (a resource or a search hit) of someone else's; else null. */
export function ownerNote(node, me) {
  const owner = (node.attributes ?? node).owner;
  return owner && owner !== me.attributes.username ? el("span", { class: "owner-note" }, `Owner: ${owner}`) : null;
}

export function shareDialog(node) {
  return modal(`Share “${node.attributes.title}”`, (dialog, close) => {
    dialog.classList.add("dialog-wide");
    const path = `/nodes/${encoded(node.id)}/access/`;
    const folders = new Map(node.attributes.breadcrumb.map(([title, id]) => [id, folderName(title)]));
    const owner = el("p", {});
    const list = el("ul", { class: "plain-list", "aria-label": "Shared with" });
    const error = el("p", { class: "message message-error", role: "alert" });
    const said = el("p", { class: "message message-success", role: "status" });
    const show = async () => {
      const { owner: who, grants } = (await api("GET", path)).data.attributes;
      owner.textContent = `Owner: ${who.username}`;
      list.replaceChildren(...(grants.length ? grants.map(item) : [el("li", { class: "muted" }, "Shared with nobody yet.")]));
    };
    /** Changes a grant, lists them again and says `done` (or the refusal); the focus goes to the
     *  control of data-focus `key` (the one that has it), if it is still there. */
    const change = async (method, url, body, done, key = document.activeElement?.dataset?.focus) => {
      let failed = "";
      try {
        await busy(dialog, () => api(method, url, body, { media: JSON_MEDIA }));
        await show();
      } catch (failure) {
        failed = failure.message;
      }
      error.textContent = failed;
      said.textContent = failed ? "" : done;
      (dialog.querySelector(`[data-focus="${key}"]`) ?? who).focus();
      return !failed;
    };
    const item = (grant) => {
      const name = grant.user ? grant.user.username : `${grant.group.name} (group)`;
      const grantee = grant.user ? { user: grant.user.id } : { group: grant.group.id };
      const role = ROLES.find(([code]) => code === grant.role)?.[1] ?? grant.role;
      const controls = grant.node === node.id ? [
        select({ "aria-label": `Role of ${name}`, "data-focus": `role-${grant.id}`, onchange: ({ target }) => change("POST", path,
          { ...grantee, role: target.value }, `${name} is ${target.value === "editor" ? "an editor" : "a viewer"} now.`, `role-${grant.id}`) },
        ROLES, grant.role),
        button("Stop sharing", () => change("DELETE", `${path}${encoded(grant.id)}/`, undefined, `No longer shared with ${name}.`),
          "button-small button-danger-outline", { "aria-label": `Stop sharing with ${name}` }),
      ] : el("span", { class: "hint" }, `${role}, from ${folders.get(grant.node) ?? "a folder above"}`);
      return el("li", { class: "line" }, el("span", {}, name), el("div", { class: "line-actions" }, controls));
    };

    const fields = granteeFields("share");
    const { who } = fields;
    const form = el("form", { novalidate: true }, el("h3", {}, "Share with"), fields.row,
      actions(el("button", { type: "submit", class: "button button-primary", "data-focus": "share" }, "Share")));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const chosen = fields.read();
      if (chosen && await change("POST", path, { ...chosen.grantee, role: chosen.role },
        `Shared with ${chosen.name} as ${chosen.role}.`)) fields.username.value = "";
    });
    dialog.append(owner, list, error, said, form, accessOf(node) === "owner" ? linksSection(node) : null,
      actions(button("Done", () => close(null))));
    show().catch((failure) => { error.textContent = failure.message; });
  });
}

/** The fields of a new grant (ids `<prefix>-who`, `-username`, `-role`) in one row: a person by
 *  username or one of the groups (read when built), and the role. read(): {name, grantee, role},
 *  or null with the focus in the empty username field. Also the bulk share's (bulk.js). */
export function granteeFields(prefix) {
  const who = el("select", { id: `${prefix}-who` }, el("option", { value: "" }, "A person"));
  const username = el("input", { type: "text", id: `${prefix}-username`, "data-focus": "username", autocomplete: "off",
    autocapitalize: "none", spellcheck: "false" });
  const role = select({ id: `${prefix}-role` }, ROLES, "viewer");
  const person = field("Username", username);
  who.addEventListener("change", () => { person.hidden = who.value !== ""; });
  listAll("/groups/").then(({ items }) => who.append(...items.map((group) =>
    el("option", { value: group.id }, `${group.attributes.name} (group)`))), () => {});
  const read = () => {
    const name = who.value ? who.selectedOptions[0].text : username.value.trim();
    if (!name) {
      username.focus();
      return null;
    }
    return { name, role: role.value, grantee: who.value ? { group: who.value } : { username: name } };
  };
  return { who, username, read, row: el("div", { class: "field-row" }, field("Person or group", who), person, field("Role", role)) };
}
