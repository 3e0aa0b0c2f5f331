"""Tests of dms.db: migrations and PostgreSQL."""
