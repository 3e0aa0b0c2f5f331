"""The REST API, one module per resource. Each module has a `routes` table; ROUTE_TABLES lists them
in the order Bottle should try them (fixed paths like /users/me/ before /users/{id}/)."""

from dms.web.api import (
    access,
    auth,
    documents,
    events,
    groups,
    history,
    intake,
    legacy,
    mail,
    metadata,
    nodes,
    pageops,
    pages,
    preferences,
    rules,
    savedsearches,
    search,
    sharelinks,
    sharepage,
    system,
    tags,
    tokens,
    trash,
    ui,
    users,
    webhooks,
)

# legacy first: its exact `GET /api/documents` must win over the tolerant `/api/documents/`.
ROUTE_TABLES = [system.routes, auth.routes, tokens.routes, users.routes, groups.routes,
                access.routes, legacy.routes,
                tags.routes, metadata.routes, preferences.routes, nodes.routes, pageops.routes,
                documents.routes, pages.routes,
                search.routes, savedsearches.routes, mail.routes, intake.routes, trash.routes,
                history.routes,
                rules.routes, webhooks.routes, events.routes, sharelinks.routes,
                sharepage.routes, ui.routes]
