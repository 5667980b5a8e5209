import asyncio

import pytest

from dovecote._errors import ActorInitializationError, OptionsError
from dovecote.supervision import Directive, default_decider


class CustomBaseError(BaseException):
    pass


class StartupFailed(ActorInitializationError):
    pass


def test_a_failure_to_initialize_stops_the_child() -> None:
    error = ActorInitializationError("pre_start raised")
    error.__cause__ = RuntimeError("boom")
    assert default_decider(error) is Directive.STOP


def test_subclasses_of_the_initialization_error_also_stop_the_child() -> None:
    assert default_decider(StartupFailed()) is Directive.STOP


@pytest.mark.parametrize(
    "error", [ValueError("bad"), RuntimeError(), KeyError("k"), OptionsError("x"), Exception()]
)
def test_any_other_exception_restarts_the_child(error: Exception) -> None:
    assert default_decider(error) is Directive.RESTART


@pytest.mark.parametrize(
    "error", [CustomBaseError(), KeyboardInterrupt(), SystemExit(1), asyncio.CancelledError()]
)
def test_a_base_exception_that_is_not_an_exception_escalates(error: BaseException) -> None:
    assert default_decider(error) is Directive.ESCALATE


def test_directive_has_exactly_the_four_members() -> None:
    assert [d.name for d in Directive] == ["RESUME", "RESTART", "STOP", "ESCALATE"]
