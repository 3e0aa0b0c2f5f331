"""The REST API, one module per resource. Each module has a `routes` table; ROUTE_TABLES lists them
in the order Bottle should try them (fixed paths like /users/me/ before /users/{id}/)."""

from dms.api import auth, documents, nodes, system, tokens, users

ROUTE_TABLES = [system.routes, auth.routes, tokens.routes, users.routes, nodes.routes,
                documents.routes]
