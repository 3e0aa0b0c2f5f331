"""The systemd units in packaging/ (docs/operations.md, "Installing as a service"): each service
is rated 3.0 or better by `systemd-analyze security` and carries the same hardening, they all pass
`systemd-analyze verify`, the example settings file names only real settings, and the backup
script the timer runs keeps the newest DMS_BACKUP_KEEP backups, valid ones, and touches nothing
else. No systemd needs to run: systemd-analyze reads the files (it must be installed)."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
import pyzipper

from dms.config import Config

ROOT = Path(__file__).resolve().parent.parent.parent
PACKAGING = ROOT / "packaging"
SERVICES = sorted(PACKAGING.glob("*.service"))
BACKUP_SCRIPT = PACKAGING / "dms-backup.sh"
MOST_EXPOSED = 3.0  # systemd-analyze security: 3.0 or better (docs/operations.md)
OVERALL = re.compile(r"Overall exposure level for \S+: (\d+\.\d+) ")
BACKUP_NAME = re.compile(r"^dms-\d{8}T\d{6}Z\.zip$")


def systemd_analyze() -> str:
    found = shutil.which("systemd-analyze")
    if found is None:
        pytest.fail("systemd-analyze is not installed: install systemd (`sudo apt-get install "
                    "systemd`; it is on every Debian and Ubuntu) to check the units in packaging/.")
    return found


@pytest.mark.sqlite_only  # nothing about the database
def test_every_service_has_a_unit_file():
    assert [unit.name for unit in SERVICES] == ["dms-backup.service", "dms-worker.service",
                                                "dms.service"]


@pytest.mark.sqlite_only
@pytest.mark.parametrize("unit", SERVICES, ids=lambda unit: unit.name)
def test_exposure_is_at_most_3(unit):
    # --threshold counts in tenths: the command fails when the exposure is over 3.0.
    result = subprocess.run([systemd_analyze(), "security", "--offline=true",
                             f"--threshold={round(MOST_EXPOSED * 10)}", str(unit)],
                            capture_output=True, text=True)
    found = OVERALL.search(result.stdout)
    assert found, result.stdout + result.stderr
    exposure = float(found.group(1))
    exposed = "\n".join(line.rstrip() for line in result.stdout.splitlines() if "✗" in line)
    assert exposure <= MOST_EXPOSED, f"{unit.name}: {exposure}, what counts:\n{exposed}"
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.sqlite_only
def test_hardening_is_the_same_in_every_service():
    """Each service carries its own copy of the hardening (a unit file must stand alone to be
    rated): the copies never drift apart."""
    def hardening(unit: Path) -> list[str]:
        text = unit.read_text()
        assert "\n# Hardening" in text, f"{unit.name}: no '# Hardening' block"
        block = text[text.index("\n# Hardening"):]
        block = block.split("\n[", 1)[0]
        return [line for line in block.splitlines() if line and not line.startswith("#")]

    first, *others = SERVICES
    assert "UMask=0077" in hardening(first)
    for unit in others:
        assert hardening(unit) == hardening(first), unit.name


@pytest.mark.sqlite_only
def test_units_verify(tmp_path):
    """`systemd-analyze verify` on copies whose /opt/dms is this checkout, so that it checks
    that the programs exist and are executable (dms in .venv, the backup script); a clean verify
    prints nothing (an unknown key or a bad value is only a warning on stderr)."""
    for unit in [*SERVICES, *PACKAGING.glob("*.timer")]:
        text = unit.read_text().replace("/opt/dms/", f"{ROOT}/")
        (tmp_path / unit.name).write_text(text)
    result = subprocess.run([systemd_analyze(), "verify",
                             *sorted(str(path) for path in tmp_path.iterdir())],
                            capture_output=True, text=True)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def wrapper_variables() -> set[str]:
    return set(re.findall(r"\$\{(DMS_[A-Z_]+)", BACKUP_SCRIPT.read_text()))


@pytest.mark.sqlite_only
def test_the_example_settings_are_settings():
    """packaging/dms.env (what /etc/dms/dms.env starts as) names only settings of dms or of the
    backup script, and leaves DMS_DATA_DIR to the units."""
    known = {f"DMS_{field.name.upper()}" for field in dataclasses.fields(Config)}
    example = (PACKAGING / "dms.env").read_text()
    named = set(re.findall(r"^#?(DMS_[A-Z_]+)=", example, re.MULTILINE))
    assert named and named <= known | wrapper_variables(), named - known - wrapper_variables()
    assert wrapper_variables() - known == {"DMS_BACKUP_DIR", "DMS_BACKUP_KEEP",
                                           "DMS_BACKUP_PASSWORD_FILE", "DMS_BIN"}
    assert "DMS_DATA_DIR" not in named


# -- the backup wrapper ----------------------------------------------------------------------------

def environment(config, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DMS_")}
    env["DMS_DATA_DIR"] = str(config.data_dir)
    if config.database_url:
        env["DMS_DATABASE_URL"] = config.database_url
    env.update(extra)
    return env


def next_second() -> None:
    """The wrapper names a backup by the second it starts in: wait for a new one."""
    time.sleep(1.01 - time.time() % 1)


def manifest(path: Path, password: bytes | None = None) -> dict:
    with pyzipper.AESZipFile(path) as zipped:
        if password:
            zipped.setpassword(password)
        return json.loads(zipped.read("manifest.json"))


def test_backup_wrapper_keeps_the_newest(config, tmp_path):
    made = subprocess.run([sys.executable, "-m", "dms", "createsuperuser", "admin",
                           "--password-stdin"], input="admin-password-1\n", capture_output=True,
                          text=True, env=environment(config))
    assert made.returncode == 0, made.stderr
    backups = tmp_path / "backups"
    backups.mkdir()
    others = {"notes.txt": b"not a backup", "dms-before-upgrade.zip": b"made by hand",
              "dms-20000101T000000Z.zip.partial": b"an interrupted one"}
    for name, content in others.items():
        (backups / name).write_bytes(content)
    password_file = tmp_path / "backup-password"
    password_file.write_text("backup-password-1\n")

    written = []
    for run in range(3):
        next_second()
        extra = {"DMS_BACKUP_PASSWORD_FILE": str(password_file)} if run == 2 else {}
        before = set(os.listdir(backups))
        result = subprocess.run([str(BACKUP_SCRIPT)], capture_output=True, text=True,
                                env=environment(config, DMS_BACKUP_DIR=str(backups),
                                                DMS_BACKUP_KEEP="2", **extra))
        assert result.returncode == 0, result.stdout + result.stderr
        new = set(os.listdir(backups)) - before
        assert len(new) == 1 and BACKUP_NAME.match(next(iter(new))), new
        written.append(new.pop())
        removed = [f"dms-backup: removed {backups / written[0]} (DMS_BACKUP_KEEP=2)"]
        assert [line for line in result.stdout.splitlines() if "removed" in line] == (
            removed if run == 2 else [])

    assert written == sorted(written)
    assert sorted(os.listdir(backups)) == sorted([*others, *written[1:]])
    for name, content in others.items():
        assert (backups / name).read_bytes() == content
    for name in written[1:]:
        assert "manifest.json" in zipfile.ZipFile(backups / name).namelist()
    assert manifest(backups / written[1])["counts"]["users"] == 1
    encrypted = zipfile.ZipFile(backups / written[2]).getinfo("manifest.json")
    assert encrypted.flag_bits & 0x1, "DMS_BACKUP_PASSWORD_FILE: an encrypted zip"
    assert manifest(backups / written[2], b"backup-password-1")["counts"]["users"] == 1
    assert {oct(path.stat().st_mode & 0o777) for path in backups.iterdir()
            if path.name in written} == {"0o600"}  # umask 077

    for keep in ("0", "-1", "two", "08", "2 "):
        refused = subprocess.run([str(BACKUP_SCRIPT)], capture_output=True, text=True,
                                 env=environment(config, DMS_BACKUP_DIR=str(backups),
                                                 DMS_BACKUP_KEEP=keep))
        assert refused.returncode == 2, (keep, refused.stderr)
        assert "DMS_BACKUP_KEEP must be a whole number of at least 1" in refused.stderr
    assert sorted(os.listdir(backups)) == sorted([*others, *written[1:]])
