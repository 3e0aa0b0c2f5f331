// Settings › Webhooks (api.md, "Webhooks"): URLs that your events are POSTed to, signed with a
// secret, with their last delivery; add, edit (an empty secret keeps the old one: the server never
// shows it again), delete, and "Send a test" (a `ping` sent now; its answer is shown).

import { api, id as encoded } from "./api.js";
import { attempt, busy, button, clearMessages, el, field, showError, showStatus, timeElement } from "./dom.js";
import { confirmDelete, dataTable, formButtons, formSlot, onSubmit, rowActions, sectionPage } from "./parts.js";

const EVENTS = [
  ["document.processed", "A document was read (its text is known)"],
  ["document.uploaded", "A file was uploaded, or a version restored"],
  ["node.created", "A folder or document was created or imported"],
  ["node.renamed", "Renamed"], ["node.moved", "Moved"], ["node.tagged", "Tags added or removed"],
  ["node.deleted", "Deleted (into the trash)"], ["node.restored", "Restored from the trash"],
  ["document.pages_changed", "Pages rotated, deleted or reordered"], ["rule.applied", "A rule filed a document"],
];
const SECRET_BYTES = 24;

export async function render(ctx) {
  const list = await api("GET", "/webhooks/?page[size]=100");
  const { add, slot, edit } = formSlot(ctx, { type: "webhooks", path: "/webhooks/", noun: "Webhook",
    addLabel: "Add webhook", form: webhookForm });
  const rows = list.data.map((webhook) => webhookRow(ctx, webhook, edit));
  return sectionPage("Webhooks", add, "dms sends your events to these addresses as they happen, signed with the webhook's "
    + "secret (the X-DMS-Signature header). A failed delivery is tried again for a day.",
  slot, dataTable("Your webhooks", ["Address and events", "Last delivery"], rows, "You have no webhooks."));
}

function result(a) {
  if (a.last_error) return a.failures_in_a_row > 1 ? `${a.last_error} (${a.failures_in_a_row} failures in a row)` : a.last_error;
  if (a.last_status) return `OK (${a.last_status})`;
  return "No event sent yet";
}

function webhookRow(ctx, webhook, edit) {
  const a = webhook.attributes;
  const name = a.url;
  const test = async (target) => {
    clearMessages();
    const answer = await busy(target, () => attempt(() => api("POST", `/webhooks/${encoded(webhook.id)}/test/`)));
    if (!answer) return;
    const delivery = answer.data.attributes;
    if (delivery.ok) showStatus(`Test sent: the receiver answered ${delivery.status} in ${delivery.duration_ms} ms.`);
    else showError(`Test failed: ${delivery.error ?? `the receiver answered ${delivery.status}.`}`);
  };
  const remove = () => confirmDelete(ctx, { title: "Delete webhook?", path: `/webhooks/${encoded(webhook.id)}/`,
    text: `Nothing more will be sent to ${name}.`, done: "Webhook deleted." });
  return el("tr", {},
    el("td", { "data-label": "Address", class: "cell-wrap" }, name, a.enabled ? null : el("span", { class: "badge badge-muted" }, "off"),
      el("div", { class: "hint" }, a.events.join(", "))),
    el("td", { "data-label": "Last sent" }, a.last_delivery_at ? timeElement(a.last_delivery_at) : null,
      el("div", { class: a.last_error ? "text-danger" : "hint" }, result(a))),
    rowActions(name, () => edit(webhook), remove,
      button("Send a test", (event) => test(event.currentTarget), "button-small", { "aria-label": `Send a test: ${name}` })));
}

/** A random secret, shown so that it can be copied to the receiver (hex of SECRET_BYTES bytes). */
function newSecret() {
  const bytes = crypto.getRandomValues(new Uint8Array(SECRET_BYTES));
  return [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

function webhookForm(webhook, save, cancel) {
  const a = webhook?.attributes ?? { events: ["document.processed"], enabled: true };
  const chosen = new Set(a.events);
  const secret = el("input", { id: "webhook-secret", name: "secret", type: "text", autocomplete: "off", spellcheck: "false",
    minlength: "16", maxlength: "256" });
  const generate = button("Generate a secret", () => {
    secret.value = newSecret();
    secret.select();
  });
  const form = el("form", { class: "card", "aria-labelledby": "webhook-form-title", novalidate: true },
    el("h2", { id: "webhook-form-title" }, webhook ? "Edit webhook" : "New webhook"),
    field("Address (URL)", el("input", { id: "webhook-url", name: "url", type: "url", value: a.url ?? "",
      placeholder: "https://example.org/dms-hook", autocomplete: "off", spellcheck: "false" })),
    el("div", { class: "field" }, el("label", { for: "webhook-secret" }, "Secret"),
      el("div", { class: "field-row" }, el("div", { class: "field-grow" }, secret), generate),
      el("small", { class: "hint" }, webhook ? "Leave empty to keep the current secret."
        : "16 to 256 characters; your receiver checks each delivery's signature with it. It is not shown again.")),
    el("fieldset", { class: "choices" }, el("legend", {}, "Send these events"),
      EVENTS.map(([type, label]) => el("label", { class: "check" },
        el("input", { type: "checkbox", name: "events", value: type, checked: chosen.has(type) }), `${label} (${type})`))),
    el("label", { class: "check" }, el("input", { id: "webhook-enabled", name: "enabled", type: "checkbox", checked: a.enabled }),
      "Send deliveries to this webhook"),
    formButtons("Save webhook", cancel));
  onSubmit(form, () => {
    const attributes = {
      url: form.url.value.trim(), enabled: form.enabled.checked,
      events: [...form.querySelectorAll("input[name=events]:checked")].map((box) => box.value),
    };
    if (secret.value || !webhook) attributes.secret = secret.value;
    return save(attributes);
  });
  return form;
}
