// Settings › Rules (api.md, "Rules"): the caller's rules in the order they run, each a card saying
// what it matches, looks at and does (and why dms disabled it). The rule dialog is rules-form.js,
// Try it and Apply rules-run.js.

import { api, id as encoded, listAll } from "./api.js";
import { confirmDialog } from "./dialogs.js";
import { attempt, button, el, folderPath, showStatus } from "./dom.js";
import { fieldValueText, ruleDialog, ruleLabels, SOURCES } from "./rules-form.js";
import { applyRule, runLine, tryDialog } from "./rules-run.js";

/** A user has at most 200 rules (api.md, "Rules"): two pages of 100. */
const RULE_PAGES = 2;
/** Folders read to name the rules' folders, 100 a page (a bound, as the folder dialog's). */
const FOLDER_PAGES = 10;
const SUBJECTS = { text: "The text", title: "The title", file_name: "The file name", mail_from: "The mail’s sender",
  mail_subject: "The mail’s subject", any: "Any field" };
const VERBS = { any: "has one of the words", all: "has all the words", exact: "has the words, in this order,",
  regex: "matches the regular expression", fuzzy: "has words close to" };

export async function render(ctx) {
  const { items: rules } = await listAll("/rules/", RULE_PAGES);
  const [folders, labels] = await Promise.all([folderPaths(rules), ruleLabels()]);
  const saved = async (rule, created) => {
    await ctx.refresh(created ? "new-rule" : `edit-${rule.id}`);
    showStatus(created ? `Rule “${rule.attributes.name}” created.` : `Rule “${rule.attributes.name}” saved.`);
  };
  const add = button("New rule", async () => {
    const rule = await ruleDialog({ folders, labels });
    if (rule) await saved(rule, true);
  }, "button-primary", { "data-focus": "new-rule" });
  const cards = rules.map((rule, index) => ruleCard(ctx, rule, index, folders, labels, saved));
  return el("div", {},
    el("div", { class: "view-head" }, el("h1", {}, "Rules"), add),
    el("p", { class: "muted" }, "Rules look at each new document once its text is read, and tag it, move it, give it a "
      + "better title or set what it is about. Try a rule on the documents you have before you trust it."),
    cards.length ? el("ol", { class: "plain-list rules", "aria-label": "Your rules, in the order they run" }, cards)
      : el("p", { class: "muted empty" }, "You have no rules yet."));
}

function ruleCard(ctx, rule, index, folders, labels, saved) {
  const a = rule.attributes;
  const titleId = `rule-title-${index}`;
  const edit = async () => {
    const changed = await ruleDialog({ rule, folders, labels });
    if (changed) await saved(changed, false);
  };
  const remove = async () => {
    const sure = await confirmDialog({ title: "Delete rule?", ok: "Delete", danger: true,
      text: `“${a.name}” will not file new documents any more. What it did stays.` });
    if (sure && await attempt(() => api("DELETE", `/rules/${encoded(rule.id)}/`)) !== undefined) {
      await ctx.refresh("new-rule");
      showStatus(`Rule “${a.name}” deleted.`);
    }
  };
  const apply = async (ask) => {
    if (ask && !(await confirmDialog({ title: `Apply “${a.name}”?`, ok: "Apply",
      text: "It goes through all your documents whose text is read and tags, moves and retitles those it matches, "
        + "as Try it shows. Each change is in the document’s history." }))) return;
    await applyRule(rule, (run) => {
      // Documents moved (the tree's counts), or a failed run disabled the rule: read them again.
      if (run.changed > 0 || run.state === "failed") ctx.changed();
    });
  };
  const trial = async () => {
    if (await tryDialog(rule, labels) === "apply") await apply(false);
  };
  const act = (label, action, focus, kind = "button-small") => button(label, action, kind,
    { "aria-label": `${label}: ${a.name}`, "data-focus": focus });
  return el("li", {}, el("article", { class: "card rule", "aria-labelledby": titleId },
    el("div", { class: "rule-head" }, el("h2", { id: titleId }, a.name),
      a.enabled ? el("span", { class: "badge badge-success" }, "Enabled") : el("span", { class: "badge badge-muted" }, "Disabled")),
    a.last_error ? el("p", { class: "message message-error" }, a.last_error) : null,
    el("dl", { class: "details" },
      el("dt", {}, "Order"), el("dd", {}, String(a.order)),
      el("dt", {}, "Matches"), el("dd", {}, describeMatch(a.match)),
      el("dt", {}, "Looks at"), el("dd", {}, describeSources(a.sources)),
      el("dt", {}, "Does"), el("dd", {}, el("ul", { class: "plain-list" }, describeActions(a.actions, folders, labels)))),
    runLine(rule.id),
    el("div", { class: "actions" },
      act("Try it", trial, `try-${rule.id}`),
      act("Apply to existing documents", () => apply(true), `apply-${rule.id}`),
      act("Edit", edit, `edit-${rule.id}`),
      act("Delete", remove, null, "button-small button-danger-outline"))));
}

/** A Map of the rules' folders' ids to their paths ("Home / Bills"); a folder missing from it
 *  was deleted. */
async function folderPaths(rules) {
  const folders = new Map();
  const wanted = new Set(rules.map((rule) => rule.attributes.actions.move_to).filter(Boolean));
  if (!wanted.size) return folders;
  const { items, truncated } = await listAll("/folders/", FOLDER_PAGES);
  for (const folder of items) folders.set(folder.id, folderPath(folder));
  if (truncated) {
    // Past the bound: each rule's folder not seen yet is asked for (at most one per rule).
    await Promise.all([...wanted].filter((id) => !folders.has(id)).map((id) => api("GET", `/folders/${encoded(id)}/`)
      .then((folder) => folders.set(id, folderPath(folder.data)), () => null)));
  }
  return folders;
}

function describeMatch(match) {
  return [`${SUBJECTS[match.field] ?? match.field} ${VERBS[match.algorithm] ?? match.algorithm} `, el("code", { class: "rule-pattern" }, match.pattern),
    match.case_sensitive ? " (case-sensitive)" : null];
}

function describeSources(sources) {
  if (sources.length === SOURCES.length) return "All new documents";
  return SOURCES.filter(([code]) => sources.includes(code)).map(([, label]) => label).join(", ");
}

function describeActions(actions, folders, labels) {
  const item = (what, ...value) => el("li", {}, el("span", { class: "muted" }, `${what}: `), ...value);
  const named = (items, id) => items.find((entry) => entry.id === id)?.attributes.name;
  const custom = actions.set_custom_field;
  const field = custom ? labels.fields.find((entry) => entry.id === custom.field) : null;
  return [
    actions.add_tags.length ? item("Add tags", actions.add_tags.join(", ")) : null,
    actions.move_to ? item("Move to", folders.get(actions.move_to) ?? "a deleted folder") : null,
    actions.set_title ? item("Set the title", el("code", {}, actions.set_title)) : null,
    actions.set_correspondent ? item("Set the correspondent", named(labels.correspondents, actions.set_correspondent)
      ?? "a deleted correspondent") : null,
    actions.set_document_type ? item("Set the document type", named(labels.types, actions.set_document_type)
      ?? "a deleted document type") : null,
    custom ? item(field ? `Set ${field.attributes.name}` : "Set a deleted custom field", fieldValueText(field, custom.value)) : null,
    actions.set_document_date_from_text ? el("li", {}, "Set the date on the paper to the date read from the text") : null,
    actions.stop ? el("li", {}, "Stop: later rules leave it alone") : null,
  ];
}
