"""Files on S3-compatible object storage (api.md §19): S3Store (dms.files.storage.s3.store),
the client (dms.files.storage.s3.client, boto3 from the `s3` extra, imported only when
DMS_STORAGE=s3) and the leases
that keep shared objects from removal (dms.files.storage.s3.leases)."""
