"""Tests of dms.search: queries, their bounds, and the index kept in step with the database."""
