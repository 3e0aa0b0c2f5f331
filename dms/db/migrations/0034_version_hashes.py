"""Duplicates found by their bytes (api.md §22, dms.domain.duplicates): an upload with
`if_duplicate=refuse` and the consume folder look up the caller's documents by a version's
SHA-256 (or the batch's, `source_sha256`, for the parts of a split) inside the write transaction
that adds the file; without an index that is a scan of every version while the write lock is
held. (0033 is the sessions' migration, made beside this one.)"""


def up(migrator, db):
    db.execute_sql("CREATE INDEX document_version_sha256 ON document_version (sha256)")
    db.execute_sql("CREATE INDEX document_version_source_sha256 ON document_version "
                   "(source_sha256) WHERE source_sha256 IS NOT NULL")
