"""The file store (api.md "Uploading a file", §19): where originals and searchable PDFs are kept,
behind one interface — a directory (dms.files.storage.directory, the default) or an S3-compatible
bucket (dms.files.storage.s3) — with what every kind keeps on the node itself
(dms.files.storage.localspace) and what a database says is stored (dms.files.storage.stored).

The rest of dms imports these names from here: the interface and the names of stored files
(dms.files.storage.base), and the store a configuration opens (dms.files.storage.opening)."""

from dms.files.storage.base import (
    CHUNK_SIZE,
    RESERVE_BYTES,
    SEARCHABLE_SUFFIX,
    Blob,
    FileMissing,
    FileStore,
    ReceivedFile,
    StoreUnavailable,
    UploadTooLarge,
    fsync_dir,
    fsync_file,
    move_file,
    original,
    read_file,
    searchable_pdf,
    sha256_of,
    version_blobs,
    versions_of,
)
from dms.files.storage.directory import DirectoryStore
from dms.files.storage.opening import bucket_settings, open_store

__all__ = ["CHUNK_SIZE", "RESERVE_BYTES", "SEARCHABLE_SUFFIX", "Blob", "DirectoryStore",
           "FileMissing", "FileStore", "ReceivedFile", "StoreUnavailable", "UploadTooLarge",
           "bucket_settings", "fsync_dir", "fsync_file", "move_file", "open_store", "original",
           "read_file", "searchable_pdf", "sha256_of", "version_blobs", "versions_of"]
