"""Who may reach what besides a node's owner (api.md §21): groups of users (groups), and — to come
— grants of folders and documents to users and groups, and the one rule every route asks."""
