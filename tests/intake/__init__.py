"""Tests of dms.intake: the consume folder, `dms import` and mail accounts."""
