"""Fixtures of the files tests: a pool of one PDF reader process (dms.files.pdf.process), once for
each page-operation module (test_pdfops_*)."""

from __future__ import annotations

import pytest

from dms.files.pdf.process import PdfReaders


@pytest.fixture(scope="module")
def readers():
    pool = PdfReaders(1, 1024)
    yield pool
    pool.stop()
