"""Tests of dms.cli: the command line as a user runs it."""
