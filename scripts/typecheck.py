"""The type gate (docs/development.md): mypy over dms, as configured in pyproject.toml, against a
baseline that only shrinks.

    .venv/bin/python scripts/typecheck.py            # check: exit 1 on a new error or a fixed one
    .venv/bin/python scripts/typecheck.py --update   # rewrite mypy-baseline.txt

The baseline (mypy-baseline.txt) lists the errors dms still has, without line numbers so that
edits elsewhere do not disturb it: `path: message  [code]`, sorted, with ` (xN)` when the same
error occurs N times in a file. An error not in it fails the check; so does an entry that no
longer occurs (remove it with --update), so the list can only get shorter. The strict packages
(the override in pyproject.toml that sets disallow_untyped_defs) may have no entries at all:
--update refuses to write one."""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "mypy-baseline.txt"
HEADER = ("# mypy's errors outside the strict packages, to be fixed, never added to: see\n"
          "# docs/development.md (the type gate). Rewritten by scripts/typecheck.py --update.\n")
ERROR = re.compile(r"^(?P<path>[^:]+):\d+(?::\d+)?: error: "
                   r"(?P<message>.*?)\s*(?P<code>\[[a-z-]+\])?$")
REPEATED = re.compile(r"^(?P<entry>.*) \(x(?P<count>\d+)\)$")


def run_mypy() -> list[str]:
    """mypy's errors, normalised (notes are left out: they belong to the error above them)."""
    command = [sys.executable, "-m", "mypy", "--no-error-summary", "--no-pretty",
               "--show-error-codes", "--hide-error-context", "--no-color-output"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode not in (0, 1) or done.stderr.strip():
        sys.stdout.write(done.stdout)
        sys.stderr.write(done.stderr)
        sys.exit(f"typecheck: mypy failed (exit status {done.returncode})")
    errors = []
    for line in done.stdout.splitlines():
        match = ERROR.match(line)
        if match:
            errors.append(normalise(match["path"], match["message"], match["code"] or ""))
        elif ": error: " in line:
            sys.exit(f"typecheck: cannot read mypy's line: {line}")
    return errors


def normalise(path: str, message: str, code: str) -> str:
    # Messages that name a line ("defined on line 12") would change with every edit above it.
    message = re.sub(r"\bline \d+", "line N", message)
    return f"{path}: {message}  {code}".rstrip()


def read_baseline() -> collections.Counter[str]:
    counts: collections.Counter[str] = collections.Counter()
    if not BASELINE.exists():
        return counts
    for line in BASELINE.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        match = REPEATED.match(line)
        if match:
            counts[match["entry"]] += int(match["count"])
        else:
            counts[line] += 1
    return counts


def format_entries(counts: collections.Counter[str]) -> list[str]:
    return [entry if n == 1 else f"{entry} (x{n})" for entry, n in sorted(counts.items())]


def strict_prefixes() -> tuple[str, ...]:
    """The paths of the strict packages, from pyproject.toml's mypy overrides."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    prefixes = []
    for override in config["tool"]["mypy"].get("overrides", []):
        if not override.get("disallow_untyped_defs"):
            continue
        modules = override["module"]
        for module in [modules] if isinstance(modules, str) else modules:
            path = module.removesuffix(".*").replace(".", "/")
            prefixes += [path + "/", path + ".py"]
    return tuple(prefixes)


def in_strict(entry: str, prefixes: tuple[str, ...]) -> bool:
    path = entry.split(": ", 1)[0]
    return any(path.startswith(p) if p.endswith("/") else path == p for p in prefixes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true",
                        help="rewrite mypy-baseline.txt with the errors mypy reports now")
    args = parser.parse_args()
    current = collections.Counter(run_mypy())
    prefixes = strict_prefixes()
    strict = [e for e in format_entries(current) if in_strict(e, prefixes)]
    if args.update:
        if strict:
            print("typecheck: errors in the strict packages cannot go into the baseline; "
                  "fix them:")
            print("\n".join(strict))
            return 1
        added = current - read_baseline()
        for entry in format_entries(added):  # to be justified in review: the list should shrink
            print(f"added: {entry}")
        BASELINE.write_text(HEADER + "".join(e + "\n" for e in format_entries(current)),
                            encoding="utf-8")
        print(f"typecheck: {BASELINE.name} now lists {sum(current.values())} errors "
              f"({sum(added.values())} added)")
        return 0
    baseline = read_baseline()
    listed_strict = [e for e in format_entries(baseline) if in_strict(e, prefixes)]
    if listed_strict:
        print("typecheck: the baseline lists errors in the strict packages; fix them instead:")
        print("\n".join(listed_strict))
        return 1
    new = current - baseline
    fixed = baseline - current
    for entry in format_entries(new):
        print(entry)
    for entry in format_entries(fixed):
        print(f"fixed: {entry} — remove it from the baseline (scripts/typecheck.py --update)")
    if new or fixed:
        print(f"typecheck: {sum(new.values())} new error(s); {sum(fixed.values())} fixed "
              f"error(s) still listed in {BASELINE.name}")
        return 1
    print(f"typecheck: no new errors ({sum(baseline.values())} in the baseline)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
