"""get_logger and configure_logging: thin structlog helpers."""

from __future__ import annotations

import json
import logging
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


# -- the default route: stdlib logging under "dovecote" ------------------------------------
def test_unconfigured_events_are_stdlib_records_under_their_name(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="dovecote")
    get_logger("dovecote.test", path="/user/a b").warning("queue growing", size=3)
    [record] = [r for r in caplog.records if r.name == "dovecote.test"]
    assert record.levelno == logging.WARNING
    assert record.getMessage() == "queue growing path='/user/a b' size=3"
    assert record.dovecote == {"path": "/user/a b", "size": 3}  # type: ignore[attr-defined]


def test_unconfigured_exceptions_keep_their_traceback(caplog: pytest.LogCaptureFixture) -> None:
    try:
        raise KeyError("gone")
    except KeyError:
        get_logger("dovecote.test").exception("handler failed")
    [record] = [r for r in caplog.records if r.name == "dovecote.test"]
    assert record.levelno == logging.ERROR
    assert record.exc_info is not None
    assert record.exc_info[0] is KeyError


def test_the_stdlib_level_decides(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="dovecote")
    log = get_logger("dovecote.test")
    log.info("quiet")
    log.error("loud")
    assert [r.getMessage() for r in caplog.records if r.name == "dovecote.test"] == ["loud"]


def test_bound_loggers_keep_routing(caplog: pytest.LogCaptureFixture) -> None:
    log = get_logger("dovecote.test", a=1).bind(b=2).try_unbind("a")
    log.warning("hi")
    assert [r.getMessage() for r in caplog.records if r.name == "dovecote.test"] == ["hi b=2"]
    with capture_logs() as logs:
        log.warning("captured")
    assert logs[0]["b"] == 2


def test_by_default_warnings_reach_stderr_and_nothing_reaches_stdout() -> None:
    code = (
        "from dovecote.observability import get_logger\n"
        "log = get_logger('dovecote.x')\n"
        "log.info('info line')\n"
        "log.warning('warning line', n=1)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert result.stdout == ""
    assert result.stderr == "warning line n=1\n"
