#!/usr/bin/env bash
# dms's API from a script, start to finish, with nothing but curl and jq: log in, find .home,
# make a folder and a document in it, upload a file, wait until its text is read, list the
# folder, search for a word of the file, download it back and check that it is the same file.
#
#   DMS_USER=alice DMS_PASSWORD=... FILE=letter.pdf bash docs/walkthrough.sh
#
# DMS_URL is the server (default http://127.0.0.1:8000). The last line it prints is
# `OK <document id>`; on any refusal it stops with dms's own sentence and a non-zero status.
# (The test suite runs this very file against a real server: tests/e2e/test_walkthrough.py.)
set -euo pipefail

DMS_URL="${DMS_URL:-http://127.0.0.1:8000}"
: "${DMS_USER:?set DMS_USER to your username}"
: "${DMS_PASSWORD:?set DMS_PASSWORD to your password}"
: "${FILE:?set FILE to the file to upload, e.g. FILE=letter.pdf}"
[ -f "$FILE" ] || { echo "FILE=$FILE is not a file" >&2; exit 1; }
export DMS_USER DMS_PASSWORD  # jq reads them from the environment (env.DMS_PASSWORD) below
folder_title="Walkthrough"
name="$(basename "$FILE")"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# call CURL-OPTIONS... URL: the answer's body on stdout. An error answer (4xx, 5xx) stops the
# script with dms's sentence: every error is {"errors": [{"detail", "status", "code"}]}.
call() {
  local status
  status="$(curl -sS -o "$work/answer" -w '%{http_code}' "$@")" || exit 1
  if [ "$status" -ge 400 ]; then
    echo "${*: -1} answered $status: $(jq -r '.errors[0].detail' "$work/answer" 2>/dev/null)" >&2
    exit 1
  fi
  cat "$work/answer"
}

# 1. Log in for a token. Plain JSON bodies (login, change-password, move, a node's tags) are
#    `application/json`. jq builds the body, so any character in a password is escaped right,
#    and the body goes in on stdin (-d @-): a password on a command line shows in `ps`.
token="$(jq -n '{username: env.DMS_USER, password: env.DMS_PASSWORD}' |
  call -X POST -H 'Content-Type: application/json' -d @- "$DMS_URL/api/auth/login/" |
  jq -r '.token')"
auth="Authorization: Token $token"
echo "logged in as $DMS_USER at $DMS_URL"

# 2. The ids of your two special folders, .home and .inbox, are in GET /api/users/me/.
me="$(call -H "$auth" "$DMS_URL/api/users/me/")"
home_id="$(jq -r '.data.relationships.home_folder.data.id' <<<"$me")"
inbox_id="$(jq -r '.data.relationships.inbox_folder.data.id' <<<"$me")"
echo ".home $home_id, .inbox $inbox_id"

# 3. A folder under .home. Creating or changing a resource (POST /api/nodes/, /api/folders/,
#    /api/users/, /api/tags/; PATCH of a node, user or tag) takes `application/vnd.api+json` and
#    the whole JSON:API body, {"data": {"type", "attributes", "relationships"}}; another
#    Content-Type is a 415 (a 400 from POST /api/nodes/ and /api/folders/, as in Papermerge).
#    The answer: 201 and the new folder.
folder="$(jq -n --arg title "$folder_title" --arg parent "$home_id" \
  '{data: {type: "folders", attributes: {title: $title},
           relationships: {parent: {data: {type: "folders", id: $parent}}}}}')"
folder_id="$(call -X POST -H "$auth" -H 'Content-Type: application/vnd.api+json' -d "$folder" \
  "$DMS_URL/api/nodes/" | jq -r '.data.id')"
echo "folder \"$folder_title\" $folder_id"

# 4. A document in that folder: the same route and body, of type "documents". Its attributes
#    may also say `lang` (the OCR language, such as "deu" or "eng+deu"; default: your
#    preference); `ocr: false` would read only the text layers of PDFs, never Tesseract.
document="$(jq -n --arg title "$name" --arg parent "$folder_id" \
  '{data: {type: "documents", attributes: {title: $title, ocr: true},
           relationships: {parent: {data: {type: "folders", id: $parent}}}}}')"
doc_id="$(call -X POST -H "$auth" -H 'Content-Type: application/vnd.api+json' -d "$document" \
  "$DMS_URL/api/nodes/" | jq -r '.data.id')"
echo "document \"$name\" $doc_id"

# 5. Its file: PUT the bytes to /api/documents/{id}/upload/{name} (curl -T streams the file;
#    --data-binary @file would read it all into memory first). The name in the URL (escaped with
#    jq's @uri) is the stored name. Content-Disposition is required (400 without); dms recognises
#    the type from the bytes (PDF, PNG, JPEG, TIFF, plain text), so Content-Type is only a
#    courtesy. Each upload adds a version; the answer is 201 and the document.
case "$name" in
  *.[pP][dD][fF]) media_type=application/pdf ;;
  *.[pP][nN][gG]) media_type=image/png ;;
  *.[jJ][pP][gG] | *.[jJ][pP][eE][gG]) media_type=image/jpeg ;;
  *.[tT][iI][fF] | *.[tT][iI][fF][fF]) media_type=image/tiff ;;
  *.[tT][xX][tT]) media_type=text/plain ;;
  *) media_type=application/octet-stream ;;
esac
quoted="$(jq -rn --arg name "$name" '$name | @uri')"
uploaded="$(call -X PUT -H "$auth" -H "Content-Type: $media_type" \
  -H "Content-Disposition: attachment; filename*=UTF-8''$quoted" \
  -T "$FILE" "$DMS_URL/api/documents/$doc_id/upload/$quoted")"
jq -r '.data.attributes | "uploaded \(.file_name): \(.size) bytes, \(.page_count) page(s)"' \
  <<<"$uploaded"

# 6. Wait until its text is read. Processing runs in the background: ocr_status goes received ->
#    started -> succeeded, or failed with the reason in ocr_error (after 3 attempts). Here the
#    script asks once a second, for at most 10 minutes (a long scan takes a while); a script that
#    waits for many documents can instead listen for their "document.processed" on the event
#    stream (curl -N .../api/events/) or have dms call it (a webhook: guide, "Webhooks and the
#    event stream").
status=""
for _ in $(seq 600); do
  document="$(call -H "$auth" "$DMS_URL/api/documents/$doc_id/")"
  status="$(jq -r '.data.attributes.ocr_status' <<<"$document")"
  case "$status" in
    succeeded) break ;;
    failed)
      echo "dms could not read $name: $(jq -r '.data.attributes.ocr_error' <<<"$document")" >&2
      exit 1 ;;
  esac
  sleep 1
done
if [ "$status" != succeeded ]; then
  echo "$name is still $status after 10 minutes; ask again later: GET /api/documents/$doc_id/" >&2
  exit 1
fi
echo "text read: $status"

# 7. The folder's listing. A bracketed parameter (page[size], page[number]) needs curl -g, else
#    curl takes [size] for a range of URLs and stops ("bad range in URL"); or use dms's aliases
#    without brackets: "$DMS_URL/api/nodes/$folder_id/?page_size=5" (and page=2).
listing="$(call -g -H "$auth" "$DMS_URL/api/nodes/$folder_id/?page[size]=5")"
jq -r '"the folder holds \(.meta.pagination.count): \([.data[].attributes.title] | join(", "))"' \
  <<<"$listing"

# 8. Search (GET /api/search/?q=..., a plain JSON array, best first) for a word of the file's
#    text: the first of 3 letters or more in GET /api/documents/{id}/ocr-text (its title's first
#    word if it has none; only the text's start is looked at, as jq's scan is slow on megabytes).
#    The search index may lag a moment behind the text: ask a few times.
word="$(call -H "$auth" "$DMS_URL/api/documents/$doc_id/ocr-text" |
  jq -r --arg title "$name" \
    '[(.text // "")[:2000], $title | scan("[[:alpha:]]{3,}")] | first // empty')"
if [ -z "$word" ]; then
  echo "neither the text nor the title of $name has a word to search for" >&2
  exit 1
fi
found=""
for _ in $(seq 30); do
  hits="$(call -G -H "$auth" --data-urlencode "q=$word" "$DMS_URL/api/search/")"
  found="$(jq -r --arg id "$doc_id" '.[] | select(.id == $id) | .title' <<<"$hits")"
  [ -n "$found" ] && break
  sleep 1
done
[ -n "$found" ] || { echo "searching for \"$word\" did not find $name" >&2; exit 1; }
echo "searching for \"$word\" found \"$found\""

# 9. Download it back and check that it is the very same file.
call -H "$auth" "$DMS_URL/api/documents/$doc_id/download/" >"$work/download"
sent="$(sha256sum <"$FILE" | cut -d' ' -f1)"
got="$(sha256sum <"$work/download" | cut -d' ' -f1)"
[ "$sent" = "$got" ] || { echo "the download differs: SHA-256 $got, not $sent" >&2; exit 1; }
echo "downloaded it back: the same bytes (SHA-256 ${got:0:16}...)"

echo "OK $doc_id"
