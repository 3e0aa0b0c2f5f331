"""Documents once stored (api.md, "Uploads, versions and downloads", "Pages, text and OCR"):

- `versions` (its functions are this package's own names, `documents.latest_version`): reading
  versions, pages and text, re-running processing, making an older version the latest again;
- `facts`: what a page of documents shows, read at once (the Paperless-ngx dialect's lists);
- `edit`: several things of one document changed in one write transaction (what it is about,
  the caller's tags on it, who it is shared with).

Adding files is dms.domain.uploads', deleting them dms.domain.trash's. All three are the face."""

from dms.domain.documents.versions import (
    first_page,
    latest_file,
    latest_text,
    latest_version,
    page_ids,
    reached_page,
    reached_version,
    referenced_version_ids,
    reprocess,
    restore_version,
    searchable_name,
    versions,
)

__all__ = ["first_page", "latest_file", "latest_text", "latest_version", "page_ids", "reached_page",
           "reached_version", "referenced_version_ids", "reprocess", "restore_version",
           "searchable_name", "versions"]
