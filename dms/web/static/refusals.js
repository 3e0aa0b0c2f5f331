// @ts-check
// The list of files the intake refused (api.md §22, "What went wrong is visible"; "Refused
// intake"): each one's source, file name, reason and time, newest first, with Dismiss (it was
// seen: DELETE /intake/refusals/{id}/) and Dismiss all. Fetched when the top bar's count is first
// clicked, not with the page.

import { api, id as encoded, listAll } from "./api.js";
import { actions, modal } from "./dialogs.js";
import { button, el, plural, timeElement } from "./dom.js";

const SOURCES = { consume: "Consume folder", mail: "Mail" };

/** Opens the list; `counted(n)` is told how many are left after each dismissal. */
export async function showRefusals(counted) {
  // A bound: the server keeps at most 100 a user (dms.domain.refusals).
  const { items } = await listAll("/intake/refusals/", 1);
  counted(items.length);
  await modal("Refused files", (dialog, close) => {
    dialog.classList.add("dialog-wide");
    const list = el("ul", { class: "refusals", "aria-label": "Refused files" });
    const summary = el("p", { class: "hint", role: "status" });
    const all = button("Dismiss all", async () => {
      await dismiss(() => api("DELETE", "/intake/refusals/"), [...list.children]);
    }, "button-danger-outline");
    const left = () => {
      const count = list.children.length;
      counted(count);
      summary.textContent = count ? `${plural(count, "file")} the consume folder or a mailbox did not take. `
        + "Dismiss each once you have seen it." : "Nothing refused.";
      all.hidden = count === 0;
    };
    const dismiss = async (request, rows) => {
      try {
        await request();
        for (const row of rows) row.remove();
        left();
        (list.querySelector("button") ?? dialog.querySelector("button"))?.focus();
      } catch (error) {
        summary.textContent = error.message;
      }
    };
    for (const refusal of items) {
      const { source, name, origin, reason, refused_at: at } = refusal.attributes;
      const row = el("li", { class: "refusal" },
        el("div", { class: "refusal-head" }, el("strong", { class: "refusal-name" }, name),
          el("span", { class: "badge badge-muted" }, SOURCES[source] ?? source), timeElement(at)),
        origin ? el("p", { class: "hint refusal-origin" }, origin) : null,
        el("p", { class: "refusal-reason" }, reason));
      row.append(button("Dismiss", () => dismiss(() => api("DELETE", `/intake/refusals/${encoded(refusal.id)}/`), [row]),
        "button-small", { "aria-label": `Dismiss ${name}` }));
      list.append(row);
    }
    left();
    dialog.append(summary, list, actions(all, button("Close", () => close(null), "button-primary", { autofocus: true })));
  });
}
