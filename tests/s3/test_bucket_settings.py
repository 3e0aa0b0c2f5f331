"""Object storage's settings (api.md §19, docs/configuration.md): a bucket that refuses dms
(no such bucket, wrong keys) stops `dms serve` at its start with a sentence naming the settings;
one that cannot be reached lets it start (it answers 503 until the bucket does); settings that
cannot be right are refused before anything starts."""

from __future__ import annotations

import dataclasses
import subprocess

import pytest

from dms.config import Config, ConfigError
from dms.files.storage import bucket_settings
from tests.harness.processes import dms_command, environment, free_port

pytestmark = pytest.mark.enable_socket


def serve(config: Config, **settings: str) -> subprocess.CompletedProcess:
    """`dms serve` with the bucket's settings of `config`, changed by `settings` (DMS_* names);
    stopped after 20 s if it starts."""
    env = {"DMS_STORAGE": "s3", "DMS_S3_ENDPOINT": config.s3_endpoint,
           "DMS_S3_BUCKET": config.s3_bucket, "DMS_S3_ACCESS_KEY": config.s3_access_key,
           "DMS_S3_SECRET_KEY": config.s3_secret_key, **settings}
    if config.database_url:
        env["DMS_DATABASE_URL"] = config.database_url
    return subprocess.run(dms_command("serve", "--data-dir", str(config.data_dir), "--port", "0"),
                          env=environment(**env), capture_output=True, text=True, timeout=20)


def test_a_bucket_that_does_not_exist_stops_the_server_at_its_start(config):
    started = serve(config, DMS_S3_BUCKET="no-such-bucket")
    assert started.returncode == 2
    assert started.stderr.strip().splitlines()[-1] == (
        f"dms: The bucket 'no-such-bucket' at {config.s3_endpoint} refuses dms (no such bucket): "
        f"check DMS_S3_BUCKET (it must exist), DMS_S3_ACCESS_KEY and DMS_S3_SECRET_KEY.")


def test_a_wrong_secret_stops_the_server_at_its_start_without_showing_it(config):
    started = serve(config, DMS_S3_SECRET_KEY="not-the-secret")
    assert started.returncode == 2
    last = started.stderr.strip().splitlines()[-1]
    assert last.startswith(f"dms: The bucket '{config.s3_bucket}' at {config.s3_endpoint} "
                           f"refuses dms (")
    assert "not-the-secret" not in started.stderr + started.stdout


def test_settings_that_cannot_be_right_are_refused_with_a_sentence(config):
    with pytest.raises(ConfigError) as missing:
        bucket_settings(dataclasses.replace(config, s3_bucket=None))
    assert str(missing.value) == "DMS_STORAGE=s3 needs DMS_S3_BUCKET, the bucket's name."
    with pytest.raises(ConfigError) as half:
        bucket_settings(dataclasses.replace(config, s3_secret_key=None))
    assert str(half.value).startswith("DMS_S3_ACCESS_KEY and DMS_S3_SECRET_KEY go together")
    for name, value, sentence in (
            ("storage", "nfs", "DMS_STORAGE must be local or s3, not 'nfs'."),
            ("s3_endpoint", "127.0.0.1:8333", "DMS_S3_ENDPOINT must be a URL such as "
                                              "http://127.0.0.1:8333, not '127.0.0.1:8333'.")):
        with pytest.raises(ConfigError) as refused:
            Config.load(environ={"DMS_" + name.upper(): value})
        assert str(refused.value) == sentence


def test_a_bucket_that_cannot_be_reached_lets_the_server_start(config, tmp_path):
    unreachable = f"http://127.0.0.1:{free_port()}"
    process = subprocess.Popen(
        dms_command("serve", "--data-dir", str(config.data_dir), "--port", "0"),
        env=environment(DMS_STORAGE="s3", DMS_S3_ENDPOINT=unreachable,
                        DMS_S3_BUCKET=config.s3_bucket, DMS_S3_ACCESS_KEY="key",
                        DMS_S3_SECRET_KEY="secret",
                        **({"DMS_DATABASE_URL": config.database_url}
                           if config.database_url else {})),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        for line in process.stdout:
            lines.append(line)
            if "dms listening on" in line:
                break
        output = "".join(lines)
        assert "dms listening on" in output, output
        assert f", files in the bucket {config.s3_bucket})" in output
        assert f"the bucket '{config.s3_bucket}' at {unreachable} cannot be reached" in output
    finally:
        process.kill()
        process.wait()
