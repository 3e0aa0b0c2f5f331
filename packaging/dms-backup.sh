#!/bin/sh
# One backup of dms, then only the newest few kept: what packaging/dms-backup.service runs, daily
# by packaging/dms-backup.timer (docs/operations.md, "Installing as a service").
#
# Writes DMS_BACKUP_DIR/dms-YYYYMMDDTHHMMSSZ.zip (the time in UTC) with `dms backup`; once that
# succeeded, removes the oldest zips of exactly that name pattern until DMS_BACKUP_KEEP are left.
# Nothing else in the folder is touched (a backup made by hand under another name stays), and a
# failed backup removes nothing. Settings, from the environment:
#   DMS_BACKUP_DIR            where the zips go (default /var/lib/dms/backups)
#   DMS_BACKUP_KEEP           how many of them to keep, 1 or more (default 7)
#   DMS_BACKUP_PASSWORD_FILE  a file whose first line is a password: AES-256 encrypted zips
#   DMS_BIN                   the dms command (default: .venv/bin/dms of the clone holding this)
# and dms's own (DMS_DATA_DIR, DMS_DATABASE_URL, DMS_FILES_DIR).
set -eu
umask 077

dir=${DMS_BACKUP_DIR:-/var/lib/dms/backups}
keep=${DMS_BACKUP_KEEP:-7}
dms=${DMS_BIN:-$(dirname "$0")/../.venv/bin/dms}

case $keep in
  '' | *[!0-9]* | 0*)
    echo "dms-backup: DMS_BACKUP_KEEP must be a whole number of at least 1, not '$keep'." >&2
    exit 2 ;;
esac

mkdir -p "$dir"
out="$dir/dms-$(date -u +%Y%m%dT%H%M%SZ).zip"
if [ -e "$out" ]; then
  echo "dms-backup: $out exists already; nothing written, nothing removed." >&2
  exit 1
fi
if [ -n "${DMS_BACKUP_PASSWORD_FILE:-}" ]; then
  "$dms" backup --password-stdin "$out" < "$DMS_BACKUP_PASSWORD_FILE"
else
  "$dms" backup "$out"
fi

# The names sort by time; the newest $keep stay.
ls -1 "$dir" | grep -E '^dms-[0-9]{8}T[0-9]{6}Z\.zip$' | sort -r | tail -n "+$((keep + 1))" |
  while read -r name; do
    if [ -f "$dir/$name" ] && [ ! -L "$dir/$name" ]; then
      rm -f -- "$dir/$name"
      echo "dms-backup: removed $dir/$name (DMS_BACKUP_KEEP=$keep)"
    fi
  done
