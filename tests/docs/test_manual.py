"""The manual (README.md and docs/*.md) stays in step with the code and with itself.

- Every field of dms.config.Config is in docs/configuration.md's settings table by its `DMS_*`
  name (or by one of its flags), and every `DMS_*` name the manual mentions is a setting (or one
  that packaging/dms-backup.sh reads).
- Every command of the command line shown in `dms --help` has a row in docs/configuration.md's
  command table naming each of its long options, and no option it lacks; top-level options
  (`--version`) are named there too.
- Every relative link in README.md and docs/*.md points to a file that exists, and every
  `#anchor` to a heading of its target (GitHub's slugs).
- docs/development.md's table of periodic jobs lists exactly the jobs of
  dms.runtime.PERIODIC_JOBS, each with its setting and that setting's default.
- README.md is a front door: at most 250 lines, with the two set-up commands.

Adding a setting, a command, an option or a periodic job without documenting it fails this test.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import unicodedata
from pathlib import Path

import pytest

from dms.cli import build_parser
from dms.config import Config
from dms.runtime import PERIODIC_JOBS

pytestmark = pytest.mark.sqlite_only  # no database

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
CONFIGURATION = DOCS / "configuration.md"
DEVELOPMENT = DOCS / "development.md"
# A row of development.md's table of periodic jobs: | name | `DMS_SETTING`, default | what |
JOB_ROW = re.compile(r"^\|\s*([a-z_-]+)\s*\|\s*`(DMS_[A-Z_]+)`,\s*([0-9.]+)\s*\|")
README_MAX_LINES = 250
SETUP_COMMANDS = ("./scripts/run", "./scripts/test")
# Environment variables of the test suite itself, not settings of dms.
TEST_VARIABLES = {"DMS_TEST_ENGINE"}
# The backup script of the systemd timer has settings of its own (DMS_BACKUP_KEEP, ...): the names
# it reads.
BACKUP_SCRIPT_VARIABLES = set(re.findall(r"\$\{(DMS_[A-Z_]+)",
                                         (ROOT / "packaging" / "dms-backup.sh").read_text()))
# Environment variables of docs/walkthrough.sh, a client of dms shown in docs/guide.md: the server
# to talk to and the user to log in as, not settings of dms.
SCRIPT_VARIABLES = {"DMS_URL", "DMS_USER", "DMS_PASSWORD"}

FENCE = re.compile(r"^ {0,3}(```|~~~)")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
SETTING_NAME = re.compile(r"\bDMS_[A-Z][A-Z0-9_]*[A-Z0-9]\b")


def manual_pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def prose_lines(path: Path) -> list[str]:
    """The lines of a Markdown file outside fenced code blocks."""
    lines, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def table_rows(path: Path) -> list[str]:
    return [line for line in prose_lines(path) if line.lstrip().startswith("|")]


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: its text lowercased, punctuation other than `-` and `_`
    dropped, spaces turned into `-`."""
    text = CODE_SPAN.sub(lambda m: m.group(2), heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link's text stays
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    kept = "".join(ch for ch in text
                   if ch in "-_ " or unicodedata.category(ch)[0] in "LMN")
    return kept.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found, seen = set(), {}
    for line in prose_lines(path):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[str]:
    """Every link target of a page, outside code blocks and code spans."""
    targets = []
    for line in prose_lines(path):
        reference = REFERENCE_LINK.match(line)
        if reference:
            targets.append(reference.group(1))
            continue
        targets += INLINE_LINK.findall(CODE_SPAN.sub("", line))
    return targets


def subcommands(parser: argparse.ArgumentParser | None = None) -> dict[str,
                                                                      argparse.ArgumentParser]:
    """The commands `dms --help` shows (hidden ones, with help=SUPPRESS, left out); a command
    with actions of its own (`dms storage gc`) as one per action, named by both words."""
    (action,) = [a for a in (parser or build_parser())._actions
                 if isinstance(a, argparse._SubParsersAction)]
    hidden = {choice.dest for choice in action._choices_actions if choice.help == argparse.SUPPRESS}
    commands = {}
    for name, command in action.choices.items():
        if name in hidden:
            continue
        if any(isinstance(a, argparse._SubParsersAction) for a in command._actions):
            commands.update({f"{name} {inner}": parser_ for inner, parser_
                             in subcommands(command).items()})
        else:
            commands[name] = command
    return commands


def long_options(parser: argparse.ArgumentParser) -> set[str]:
    return {option for action in parser._actions if action.help != argparse.SUPPRESS
            for option in action.option_strings
            if option.startswith("--") and option != "--help"}


def flags_by_field() -> dict[str, set[str]]:
    """Config field name -> the long options that set it, on any command."""
    flags: dict[str, set[str]] = {}
    for parser in [build_parser(), *subcommands().values()]:
        for action in parser._actions:
            for option in action.option_strings:
                if option.startswith("--"):
                    flags.setdefault(action.dest, set()).add(option)
    return flags


def names_option(text: str, option: str) -> bool:
    return re.search(re.escape(option) + r"(?![\w-])", text) is not None


def command_rows() -> dict[str, list[str]]:
    """docs/configuration.md's command table: command name -> its rows (`| `dms NAME ...`)."""
    rows: dict[str, list[str]] = {}
    for row in table_rows(CONFIGURATION):
        match = re.match(r"\|\s*`dms ([a-z][\w-]*(?: [a-z][\w-]*(?=[ `]))?)", row.strip())
        if match:
            rows.setdefault(match.group(1), []).append(row)
    return rows


# -- settings -----------------------------------------------------------------------------------

def test_every_setting_is_in_the_configuration_page():
    rows = "\n".join(table_rows(CONFIGURATION))
    flags = flags_by_field()
    missing = []
    for field in dataclasses.fields(Config):
        names = [f"`DMS_{field.name.upper()}`"] + [f"`{flag}`" for flag in
                                                     sorted(flags.get(field.name, ()))]
        if not any(name in rows for name in names):
            missing.append(" or ".join(names))
    assert not missing, (f"settings missing from the settings table of "
                         f"{CONFIGURATION.relative_to(ROOT)}: {', '.join(missing)}")


def test_the_manual_names_no_setting_dms_lacks():
    known = ({f"DMS_{field.name.upper()}" for field in dataclasses.fields(Config)}
             | TEST_VARIABLES | BACKUP_SCRIPT_VARIABLES | SCRIPT_VARIABLES)
    unknown = sorted({f"{page.relative_to(ROOT)}: {name}" for page in manual_pages()
                      for name in SETTING_NAME.findall(page.read_text(encoding="utf-8"))
                      if name not in known})
    assert not unknown, f"the manual names settings dms.config.Config lacks: {', '.join(unknown)}"


# -- the command line ---------------------------------------------------------------------------

def test_every_command_and_option_is_in_the_configuration_page():
    rows = command_rows()
    page = CONFIGURATION.relative_to(ROOT)
    missing_commands = sorted(set(subcommands()) - set(rows))
    assert not missing_commands, (f"commands without a row (| `dms NAME ...` |) in {page}'s "
                                  f"command table: {', '.join(missing_commands)}")
    missing = []
    for name, parser in sorted(subcommands().items()):
        text = "\n".join(rows[name])
        missing += [f"dms {name} {option}" for option in sorted(long_options(parser))
                    if not names_option(text, option)]
    assert not missing, f"options missing from their command's row in {page}: {', '.join(missing)}"


def test_the_command_table_names_nothing_the_command_line_lacks():
    commands = subcommands()
    stale = []
    for name, rows in sorted(command_rows().items()):
        if name not in commands:
            stale.append(f"dms {name}")
            continue
        options = long_options(commands[name])
        named = set(re.findall(r"--[a-z][\w-]*", "\n".join(rows)))
        stale += [f"dms {name} {option}" for option in sorted(named - options)]
    assert not stale, (f"{CONFIGURATION.relative_to(ROOT)} names commands or options the command "
                       f"line lacks: {', '.join(stale)}")


def test_top_level_options_are_in_the_configuration_page():
    text = "\n".join(prose_lines(CONFIGURATION))
    missing = sorted(option for option in long_options(build_parser())
                     if not names_option(text, option))
    assert not missing, (f"options of `dms` itself missing from "
                         f"{CONFIGURATION.relative_to(ROOT)}: {', '.join(missing)}")


# -- periodic jobs ------------------------------------------------------------------------------

def test_the_table_of_periodic_jobs_is_the_runtimes():
    lines = prose_lines(DEVELOPMENT)
    start = lines.index("## Adding a periodic job")
    end = next(index for index in range(start + 1, len(lines)) if lines[index].startswith("## "))
    documented = sorted(match.groups() for line in lines[start:end]
                        if (match := JOB_ROW.match(line.strip())))
    defaults = {field.name: field.default for field in dataclasses.fields(Config)}
    expected = sorted((job.name, f"DMS_{job.setting.upper()}", f"{defaults[job.setting]:g}")
                      for job in PERIODIC_JOBS)
    assert documented == expected, (f"{DEVELOPMENT.relative_to(ROOT)}'s table of periodic jobs "
                                    f"differs from dms.runtime.PERIODIC_JOBS")


# -- links --------------------------------------------------------------------------------------

def test_every_relative_link_resolves():
    broken = []
    for page in manual_pages():
        for target in links(page):
            if not target or SCHEME.match(target) or target.startswith("//"):
                continue
            path_part, _, anchor = target.partition("#")
            destination = (page.parent / path_part).resolve() if path_part else page
            where = f"{page.relative_to(ROOT)}: ({target})"
            if path_part.startswith("/"):
                broken.append(f"{where} is absolute; links between pages are relative")
            elif not destination.exists():
                broken.append(f"{where}: no file {path_part}")
            elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
                broken.append(f"{where}: no heading with the anchor #{anchor} in "
                              f"{destination.relative_to(ROOT)}")
    assert not broken, "broken links in the manual:\n" + "\n".join(broken)


def test_slugs_follow_github():
    assert slug("Behind a reverse proxy (HTTPS)") == "behind-a-reverse-proxy-https"
    assert slug("1. Conventions") == "1-conventions"
    assert slug("Legacy endpoints (under `/api` only)") == "legacy-endpoints-under-api-only"
    assert slug("Files: upload, versions, download") == "files-upload-versions-download"
    assert slug("dms — a document management appliance") == "dms--a-document-management-appliance"


# -- the README ---------------------------------------------------------------------------------

def test_the_readme_is_a_front_door():
    text = README.read_text(encoding="utf-8")
    lines = len(text.splitlines())
    assert lines <= README_MAX_LINES, (f"README.md has {lines} lines, more than "
                                       f"{README_MAX_LINES}: move the details into docs/")
    missing = [command for command in SETUP_COMMANDS if command not in text]
    assert not missing, f"README.md lacks the set-up commands {', '.join(missing)}"
    assert "../shared/" not in text, "README.md mentions ../shared/, which is not in the repository"
