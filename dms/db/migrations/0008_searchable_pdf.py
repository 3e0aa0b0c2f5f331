"""Searchable PDFs (docs/api.md, "Searchable PDFs"): a version that needed Tesseract gets one,
stored beside its original; its size and SHA-256 are kept here (NULL: the version has none)."""


def up(migrator, db):
    db.execute_sql("ALTER TABLE document_version ADD COLUMN searchable_size INTEGER")
    db.execute_sql("ALTER TABLE document_version ADD COLUMN searchable_sha256 TEXT")
