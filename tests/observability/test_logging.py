"""get_logger and configure_logging: thin structlog helpers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
import structlog
from structlog.testing import capture_logs

from dovecote._errors import OptionsError
from dovecote.observability import configure_logging, get_logger


@pytest.fixture(autouse=True)
def _reset_structlog() -> Iterator[None]:
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()


def test_get_logger_binds_its_name_and_the_given_fields() -> None:
    log = get_logger("dovecote.test", path="/user/echo")
    with capture_logs() as logs:
        log.info("started", attempt=1)
    assert logs == [
        {
            "event": "started",
            "log_level": "info",
            "logger_name": "dovecote.test",
            "path": "/user/echo",
            "attempt": 1,
        }
    ]


def test_get_logger_defaults_to_the_dovecote_name() -> None:
    with capture_logs() as logs:
        get_logger().warning("hello")
    assert logs[0]["logger_name"] == "dovecote"


def test_a_binding_may_be_called_name() -> None:
    with capture_logs() as logs:
        get_logger("dovecote.actor", name="echo").info("hi")
    assert logs[0]["name"] == "echo"
    assert logs[0]["logger_name"] == "dovecote.actor"


def test_a_logger_created_before_configuration_obeys_it() -> None:
    log = get_logger("dovecote.early")
    configure_logging(level="WARNING")
    with capture_logs() as logs:
        log.info("hidden")
        log.warning("shown")
    assert [entry["event"] for entry in logs] == ["shown"]


def test_configure_logging_writes_json_lines_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(level="debug", json=True)
    get_logger("dovecote.test", path="/user/a").debug("tick", n=2)
    line = capsys.readouterr().err.strip()
    record = json.loads(line)
    assert record["event"] == "tick"
    assert record["level"] == "debug"
    assert record["logger_name"] == "dovecote.test"
    assert record["path"] == "/user/a"
    assert record["n"] == 2
    assert "timestamp" in record


def test_configure_logging_filters_below_the_level(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(level="INFO")
    log = get_logger()
    log.debug("quiet")
    log.info("loud")
    err = capsys.readouterr().err
    assert "loud" in err
    assert "quiet" not in err


def test_configure_logging_accepts_a_numeric_level(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(level=40)
    get_logger().warning("dropped")
    get_logger().error("kept")
    err = capsys.readouterr().err
    assert "kept" in err
    assert "dropped" not in err


@pytest.mark.parametrize("bad", ["LOUD", "", True, None])
def test_an_unknown_level_is_rejected(bad: object) -> None:
    with pytest.raises(OptionsError):
        configure_logging(level=bad)  # type: ignore[arg-type]


def test_importing_the_package_does_not_configure_structlog() -> None:
    code = "import dovecote.observability, structlog; print(structlog.is_configured())"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert result.stdout.strip() == "False"
