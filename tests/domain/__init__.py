"""Tests of dms.domain: users, credentials, tokens, the tree, documents, tags and archives."""
