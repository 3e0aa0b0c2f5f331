// Settings › Rules: a rule tried and applied (api.md, "Rules"). "Try it" is the dry run: what the
// rule would change in each document it matches; nothing changes. "Apply to existing documents"
// starts a run and follows it to its end; the rule's card shows how far it got, also after the
// view was drawn again.

import { api, hasToken, id as encoded, withQuery } from "./api.js";
import { actions, modal } from "./dialogs.js";
import { attempt, button, el, plural, showError, showStatus } from "./dom.js";
import { dayElement } from "./metadata.js";
import { FIELDS, fieldValueText } from "./rules-form.js";

/** Matches shown by the dry run: the API's largest page (the rest is counted, not listed). */
const TRIAL_SIZE = 100;
/** A run is read again after FIRST_POLL_MS, then less and less often, up to MAX_POLL_MS; after
 *  MAX_POLLS reads (more than an hour) the page stops following it (the run goes on). */
const FIRST_POLL_MS = 500;
const MAX_POLL_MS = 5000;
const POLL_GROWTH = 1.5;
const MAX_POLLS = 800;
const ENDED = new Set(["succeeded", "failed"]);

/** The latest state of each run this page started, by rule id; the rules followed now. */
const runs = new Map();
const following = new Set();

const fieldName = (code) => (FIELDS.find(([value]) => value === code)?.[1] ?? code).toLowerCase();

/** Shows the dry run; resolves "apply" when the person asks to apply the rule, else null.
 *  `labels`: rules-form.js ruleLabels(), to name a custom field's value. */
export function tryDialog(rule, labels) {
  return modal(`Try “${rule.attributes.name}”`, (dialog, close) => {
    dialog.classList.add("dialog-wide");
    const body = el("div", { class: "trial", "aria-live": "polite", "aria-busy": "true" },
      el("p", { class: "muted" }, "Looking through your documents…"));
    dialog.append(el("p", { class: "hint" }, "What the rule would do to the documents you have; this changes nothing."),
      body, actions(button("Close", () => close(null), "", { autofocus: true }),
        button("Apply to existing documents", () => close("apply"), "button-primary")));
    api("GET", withQuery(`/rules/${encoded(rule.id)}/matches/`, { "page[size]": TRIAL_SIZE })).then((found) => {
      body.replaceChildren(...trialResult(found, () => close(null), labels));
    }).catch((error) => {
      body.replaceChildren(el("p", { class: "message message-error" }, error.message));
    }).finally(() => body.setAttribute("aria-busy", "false"));
  });
}

function trialResult(found, leave, labels) {
  const { pagination, examined, documents, complete } = found.meta;
  const shown = found.data.length;
  const summary = pagination.count === 0 ? "It matches none of your documents."
    : `It matches ${plural(pagination.count, "document")}${shown < pagination.count ? `; the first ${shown} are shown` : ""}.`;
  const extent = complete ? { 0: "You have no documents whose reading has ended.",
    1: "Your one document whose reading has ended was looked at." }[documents]
      ?? `All ${plural(documents, "document")} whose reading has ended were looked at.`
    : `Only the ${examined.toLocaleString()} most recently changed of your ${plural(documents, "document")} were `
      + "looked at (a bound of each try): older ones may match too. Applying the rule goes through all of them.";
  return [el("p", { class: "trial-summary" }, summary, " ", el("span", { class: complete ? null : "warning" }, extent)),
    shown ? el("ul", { class: "plain-list trial-list", "aria-label": "Matched documents" },
      found.data.map((document) => trialItem(document, leave, labels))) : null];
}

function trialItem(document, leave, labels) {
  const { title, rule_match: hit } = document.attributes;
  const { add_tags: tags, move_to: folder, set_title: newTitle, set_correspondent: correspondent,
    set_document_type: type, set_custom_field: custom, set_document_date: day } = hit.changes;
  const item = (what, ...value) => el("li", {}, el("span", { class: "muted" }, `${what}: `), ...value);
  // The dry run names the field; names are unique per user regardless of case.
  const field = custom ? labels.fields.find((entry) => entry.attributes.name.toLowerCase() === custom.field.toLowerCase()) : null;
  const changes = [
    tags?.length ? item("Tags to add", tags.join(", ")) : null,
    folder ? item("Move to", folder.title) : null,
    newTitle ? item("New title", newTitle) : null,
    correspondent ? item("Correspondent", correspondent) : null,
    type ? item("Document type", type) : null,
    custom ? item(custom.field, fieldValueText(field, custom.value)) : null,
    day ? item("Date on the paper", dayElement(day)) : null,
  ].filter(Boolean);
  return el("li", { class: "result" },
    el("a", { href: `#/doc/${encoded(document.id)}`, onclick: leave }, title),
    el("div", { class: "result-where" }, `Found in the ${fieldName(hit.field)}: “${hit.text}”`),
    changes.length ? el("ul", { class: "plain-list trial-changes", "aria-label": `Changes to ${title}` }, changes)
      : el("p", { class: "hint" }, "Nothing to change: it already is as the rule would make it."));
}

/** A line for the rule's card that shows its run (empty until one starts). */
export function runLine(ruleId) {
  const line = el("p", { class: "rule-run", "data-run-for": ruleId });
  fill(line, runs.get(ruleId));
  return line;
}

function fill(line, run) {
  line.hidden = !run;
  if (!run) return;
  const counts = `${plural(run.examined, "document")} looked at, ${run.matched.toLocaleString()} matched, `
    + `${run.changed.toLocaleString()} changed`;
  line.classList.toggle("text-danger", run.state === "failed");
  line.textContent = {
    queued: "Applying to existing documents: waiting to start…",
    running: `Applying to existing documents: ${counts}…`,
    succeeded: `Applied to existing documents: ${counts}.`,
    failed: `The run stopped: ${run.error ?? "it failed"} (${counts}).`,
  }[run.state] ?? run.state;
}

function show(ruleId) {
  const line = document.querySelector(`[data-run-for="${CSS.escape(ruleId)}"]`);
  if (line) fill(line, runs.get(ruleId));
}

/** Starts a run of `rule` over the existing documents and follows it to its end; `ended(run)`
 *  is called then. */
export async function applyRule(rule, ended) {
  const name = rule.attributes.name;
  if (following.has(rule.id)) {
    showStatus(`“${name}” is being applied already.`);
    return;
  }
  following.add(rule.id);
  try {
    await follow(rule, name, ended);
  } finally {
    following.delete(rule.id);
  }
}

async function follow(rule, name, ended) {
  const started = await attempt(() => api("POST", `/rules/${encoded(rule.id)}/apply/`));
  if (!started) return;
  runs.set(rule.id, started.data.attributes);
  show(rule.id);
  showStatus(`Applying “${name}” to your existing documents…`);
  let delay = FIRST_POLL_MS;
  for (let poll = 0; poll < MAX_POLLS; poll += 1) {
    await new Promise((resolve) => { setTimeout(resolve, delay); });
    delay = Math.min(delay * POLL_GROWTH, MAX_POLL_MS);
    if (!hasToken()) return; // logged out meanwhile
    const now = await attempt(() => api("GET", `/rule-runs/${encoded(started.data.id)}/`));
    if (!now) break; // the alert says why
    const run = now.data.attributes;
    runs.set(rule.id, run);
    show(rule.id);
    if (ENDED.has(run.state)) {
      if (run.state === "succeeded") {
        showStatus(`“${name}” applied: ${run.matched.toLocaleString()} matched, ${run.changed.toLocaleString()} changed.`);
      } else showError(`Applying “${name}” stopped: ${run.error ?? "the run failed"}`);
      ended(run);
      return;
    }
  }
  // No longer followed (the server could not be read, or past the bound): no stale progress.
  runs.delete(rule.id);
  show(rule.id);
}
