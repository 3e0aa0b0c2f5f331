"""Tests of dms.ops: backup, restore and verify."""
