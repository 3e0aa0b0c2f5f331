"""Tests of the manual: README.md and docs/ in step with the code."""
