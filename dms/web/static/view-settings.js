// Settings: a list of sections, one module each, and the open one (#/settings/<section>): a row of
// SECTIONS (`admin`: superusers only) and a module whose render(ctx) returns its content.

import { el } from "./dom.js";
import * as account from "./settings-account.js";
import * as fields from "./settings-fields.js";
import { correspondents, documentTypes } from "./settings-labels.js";
import * as mail from "./settings-mail.js";
import * as rules from "./settings-rules.js";
import * as tokens from "./settings-tokens.js";
import { groups, users } from "./settings-users.js";
import * as webhooks from "./settings-webhooks.js";

const SECTIONS = [
  { id: "tokens", title: "API Tokens", module: tokens },
  { id: "profile", title: "Profile", module: account },
  { id: "mail", title: "Mail accounts", module: mail },
  { id: "rules", title: "Rules", module: rules },
  { id: "correspondents", title: "Correspondents", module: correspondents },
  { id: "document-types", title: "Document types", module: documentTypes },
  { id: "custom-fields", title: "Custom fields", module: fields },
  { id: "webhooks", title: "Webhooks", module: webhooks },
  { id: "users", title: "Users", module: users, admin: true },
  { id: "groups", title: "Groups", module: groups, admin: true },
];

export async function render(ctx, sectionId) {
  const sections = SECTIONS.filter((candidate) => !candidate.admin || ctx.me().attributes.is_superuser);
  const section = sections.find((candidate) => candidate.id === sectionId) ?? sections[0];
  const content = await section.module.render(ctx);
  const nav = el("nav", { class: "settings-nav", "aria-label": "Settings" }, el("ul", {}, sections.map((candidate) =>
    el("li", {}, el("a", { href: `#/settings/${candidate.id}`, "aria-current": candidate === section ? "page" : null },
      candidate.title)))));
  const node = el("section", { class: `view view-settings settings-${section.id}` }, nav, el("div", { class: "settings-body" }, content));
  return { node, title: section.title, folderId: null };
}
