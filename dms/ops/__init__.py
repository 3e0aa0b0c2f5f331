"""Operating an installation: backup and restore (across engines), `dms verify` and its
repairs, and what GET /health reports."""
