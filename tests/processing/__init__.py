"""Tests of dms.processing: OCR, its queue, searchable PDFs and the cluster's leases."""
