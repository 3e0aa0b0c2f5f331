"""Page operations (docs/api.md, "Page operations").

- `document_version.short_description`: every operation makes a new version of each document it
  changes, and the version says what happened (Papermerge 2.1's field: "2 page(s) deleted"); an
  upload's version says nothing (empty).
- `document_version.source_sha256`: a version that is a part of a batch the intake split at
  separator sheets (DMS_SPLIT_ON_BARCODE) names the SHA-256 of the file received, so that a
  re-run of the intake (a crash before the consume folder's file was removed) finds the batch
  imported; NULL for every other version.
"""


def up(migrator, db):
    db.execute_sql("ALTER TABLE document_version ADD COLUMN short_description TEXT NOT NULL "
                   "DEFAULT ''")
    db.execute_sql("ALTER TABLE document_version ADD COLUMN source_sha256 TEXT")
