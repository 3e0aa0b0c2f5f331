"""The web page's modules that every view imports, api.js and dom.js, start with `// @ts-check`:
TypeScript's checker reads them with their JSDoc types (no build step, the page runs them as they
are), and a call with the wrong arguments or a misspelt property fails here, not in a browser.
TypeScript comes from the npm registry, installed by `scripts/setup.sh --test` into
.cache/typescript; it is never part of the page."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
TSC = ROOT / ".cache" / "typescript" / "node_modules" / ".bin" / "tsc"
STATIC = ROOT / "dms" / "web" / "static"
CHECKED = ["api.js", "dom.js"]


def test_the_checked_modules_say_so():
    assert [name for name in CHECKED
            if not (STATIC / name).read_text().startswith("// @ts-check\n")] == []


def test_typescript_finds_no_error_in_the_checked_modules():
    if not TSC.is_file():
        pytest.fail(f"{TSC} is missing: `scripts/setup.sh --test` installs TypeScript (npm)")
    # The browser's globals (lib dom) and the language as the page uses it (ES2022 modules);
    # TypeScript's own declaration files are not the page's to check (skipLibCheck).
    result = subprocess.run(
        [str(TSC), "--noEmit", "--allowJs", "--checkJs", "--skipLibCheck", "--pretty", "false",
         "--target", "es2022", "--module", "es2022", "--lib", "es2022,dom", *CHECKED],
        cwd=STATIC, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
