"""Fixtures of the intake tests: the consume folder of the test's server (test_consume_*, whose
servers poll it)."""

from __future__ import annotations

import pytest


@pytest.fixture
def consume_dir(config):
    return config.consume_dir
