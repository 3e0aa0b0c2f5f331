"""Tests of dms.files: hostile files, the store on a full disk and after a crash."""
