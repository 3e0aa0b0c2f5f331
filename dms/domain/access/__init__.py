"""Who may reach what besides a node's owner (api.md §21): groups of users (groups), grants of
folders and documents to users and groups (grants), and the one rule every route is to ask
(rule: what may this user do to this node?). The routes other than the access routes do not ask
it yet: until they do, a grant gives its grantee nothing."""
