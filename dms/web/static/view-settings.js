// Settings: a list of sections, one module each, and the open one (#/settings/<section>): a row of
// SECTIONS (`admin`: superusers only) and a module whose render(ctx) returns its content. The
// sections' modules are fetched when a section is first opened, not with the page: the first view
// does not wait for them (index.html preloads every other module).

import { el } from "./dom.js";

const SECTIONS = [
  { id: "tokens", title: "API Tokens", load: () => import("./settings-tokens.js") },
  { id: "profile", title: "Profile", load: () => import("./settings-account.js") },
  { id: "reading", title: "Reading", load: () => import("./settings-reading.js") },
  { id: "mail", title: "Mail accounts", load: () => import("./settings-mail.js") },
  { id: "rules", title: "Rules", load: () => import("./settings-rules.js") },
  { id: "tags", title: "Tags", load: () => import("./settings-tags.js") },
  { id: "correspondents", title: "Correspondents", load: async () => (await import("./settings-labels.js")).correspondents },
  { id: "document-types", title: "Document types", load: async () => (await import("./settings-labels.js")).documentTypes },
  { id: "custom-fields", title: "Custom fields", load: () => import("./settings-fields.js") },
  { id: "webhooks", title: "Webhooks", load: () => import("./settings-webhooks.js") },
  { id: "users", title: "Users", load: async () => (await import("./settings-users.js")).users, admin: true },
  { id: "groups", title: "Groups", load: async () => (await import("./settings-users.js")).groups, admin: true },
];

export async function render(ctx, sectionId) {
  const sections = SECTIONS.filter((candidate) => !candidate.admin || ctx.me().attributes.is_superuser);
  const section = sections.find((candidate) => candidate.id === sectionId) ?? sections[0];
  const content = await (await section.load()).render(ctx);
  const nav = el("nav", { class: "settings-nav", "aria-label": "Settings" }, el("ul", {}, sections.map((candidate) =>
    el("li", {}, el("a", { href: `#/settings/${candidate.id}`, "aria-current": candidate === section ? "page" : null },
      candidate.title)))));
  const node = el("section", { class: `view view-settings settings-${section.id}` }, nav, el("div", { class: "settings-body" }, content));
  return { node, title: section.title, folderId: null };
}
