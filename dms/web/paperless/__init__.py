"""The Paperless-ngx dialect (api.md §17): Paperless-ngx's REST API under its own prefix
(DMS_PAPERLESS_PREFIX, `/paperless`), so that the apps, Home Assistant and the scripts of the
Paperless-ngx world work with dms unchanged. A thin translation: each route parses Paperless-ngx's
request, calls the same domain function dms's own API calls and writes Paperless-ngx's JSON —
the same rows, rules, history, events, limits and isolation; no second copy of any rule.

`protocol` is how the dialect speaks on every route (versions, authentication, errors, pages);
`app` mounts the routes of the other modules."""
