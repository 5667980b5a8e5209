import math
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dovecote._errors import ActorInitializationError, OptionsError
from dovecote.supervision import (
    AllForOneStrategy,
    Backoff,
    Decision,
    Directive,
    OneForOneStrategy,
    RestartStats,
    SupervisorStrategy,
    default_decider,
)

StrategyClass = type[OneForOneStrategy] | type[AllForOneStrategy]
both_strategies = pytest.mark.parametrize("strategy_class", [OneForOneStrategy, AllForOneStrategy])


def always(directive: Directive) -> Callable[[BaseException], Directive]:
    return lambda _error: directive


def restart_times(
    strategy: SupervisorStrategy, times: list[float], stats: RestartStats | None = None
) -> list[float]:
    stats = RestartStats() if stats is None else stats
    return [
        t
        for t in times
        if strategy.handle_failure(stats, ValueError(), now=t).directive is Directive.RESTART
    ]


# --- construction -------------------------------------------------------------------------


@both_strategies
def test_defaults_match_the_documented_api(strategy_class: StrategyClass) -> None:
    strategy = strategy_class()
    assert strategy.max_restarts == 10
    assert strategy.within == 60.0
    assert strategy.decider is default_decider
    assert strategy.backoff is None


def test_one_for_one_applies_to_the_failing_child_and_all_for_one_to_every_child() -> None:
    assert OneForOneStrategy().applies_to_all is False
    assert AllForOneStrategy().applies_to_all is True


def test_the_base_strategy_is_abstract() -> None:
    with pytest.raises(TypeError):
        SupervisorStrategy()  # type: ignore[abstract]


@both_strategies
@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_restarts": -1},
        {"max_restarts": 1.0},
        {"max_restarts": True},
        {"max_restarts": "3"},
        {"within": 0},
        {"within": -5.0},
        {"within": math.nan},
        {"within": "60"},
        {"within": None},
        {"decider": "restart"},
        {"backoff": 0.5},
        {"backoff": (0.1, 1.0)},
    ],
)
def test_invalid_arguments_raise_options_error(
    strategy_class: StrategyClass, kwargs: dict[str, object]
) -> None:
    with pytest.raises(OptionsError):
        strategy_class(**kwargs)  # type: ignore[arg-type]


@both_strategies
def test_arguments_can_be_passed_by_position_or_keyword(strategy_class: StrategyClass) -> None:
    backoff = Backoff(0.1, 1.0)
    assert strategy_class(3, 5.0, default_decider, backoff) == strategy_class(
        max_restarts=3, within=5.0, decider=default_decider, backoff=backoff
    )


@both_strategies
def test_strategies_are_immutable(strategy_class: StrategyClass) -> None:
    strategy = strategy_class()
    with pytest.raises(AttributeError):
        strategy.max_restarts = 3  # type: ignore[misc]
    assert not hasattr(strategy, "__dict__")


def test_the_repr_names_the_class_the_settings_and_the_decider() -> None:
    assert repr(OneForOneStrategy(max_restarts=3, within=5.0)) == (
        "OneForOneStrategy(max_restarts=3, within=5.0, decider=default_decider, backoff=None)"
    )
    assert repr(AllForOneStrategy(backoff=Backoff(0.5, 2.0))).startswith(
        "AllForOneStrategy(max_restarts=10, within=60.0, decider=default_decider, "
        "backoff=Backoff(min_delay=0.5"
    )


# --- deciding -----------------------------------------------------------------------------


@both_strategies
def test_decide_asks_the_decider(strategy_class: StrategyClass) -> None:
    seen: list[BaseException] = []

    def decider(error: BaseException) -> Directive:
        seen.append(error)
        return Directive.RESUME

    error = ValueError("x")
    assert strategy_class(decider=decider).decide(error) is Directive.RESUME
    assert seen == [error]


def test_a_decider_that_returns_something_else_is_a_type_error() -> None:
    strategy = OneForOneStrategy(decider=lambda _e: "restart")  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match="not a Directive"):
        strategy.handle_failure(RestartStats(), ValueError(), now=0.0)


def test_an_exception_from_the_decider_propagates() -> None:
    def decider(error: BaseException) -> Directive:
        raise RuntimeError("decider bug")

    with pytest.raises(RuntimeError, match="decider bug"):
        OneForOneStrategy(decider=decider).handle_failure(RestartStats(), ValueError(), now=0.0)


@both_strategies
def test_the_default_decider_stops_a_child_that_failed_to_start(
    strategy_class: StrategyClass,
) -> None:
    stats = RestartStats()
    decision = strategy_class().handle_failure(stats, ActorInitializationError(), now=0.0)
    assert decision == Decision(Directive.STOP)
    assert stats.timestamps == []


@both_strategies
@pytest.mark.parametrize("directive", [Directive.RESUME, Directive.STOP, Directive.ESCALATE])
def test_non_restart_directives_pass_through_and_use_no_budget(
    strategy_class: StrategyClass, directive: Directive
) -> None:
    strategy = strategy_class(max_restarts=1, decider=always(directive))
    stats = RestartStats()
    for t in range(5):
        assert strategy.handle_failure(stats, ValueError(), now=float(t)) == Decision(directive)
    assert stats.timestamps == []
    restarting = strategy_class(max_restarts=1)
    assert restarting.handle_failure(stats, ValueError(), now=5.0).directive is Directive.RESTART


# --- restart budget -----------------------------------------------------------------------


@both_strategies
def test_zero_max_restarts_stops_on_the_first_failure(strategy_class: StrategyClass) -> None:
    decision = strategy_class(max_restarts=0).handle_failure(RestartStats(), ValueError(), 0.0)
    assert decision == Decision(Directive.STOP)


@both_strategies
def test_one_max_restart_allows_one_restart_and_stops_at_the_second_failure(
    strategy_class: StrategyClass,
) -> None:
    strategy = strategy_class(max_restarts=1, within=60.0)
    stats = RestartStats()
    assert strategy.handle_failure(stats, ValueError(), now=0.0) == Decision(Directive.RESTART)
    assert strategy.handle_failure(stats, ValueError(), now=30.0) == Decision(Directive.STOP)


@both_strategies
def test_a_failure_within_seconds_after_an_old_restart_may_restart_again(
    strategy_class: StrategyClass,
) -> None:
    strategy = strategy_class(max_restarts=1, within=60.0)
    stats = RestartStats()
    failures = [0.0, 60.0, 61.0, 120.0, 179.5, 180.0]
    assert restart_times(strategy, failures, stats) == [0.0, 60.0, 120.0, 180.0]


@both_strategies
def test_more_than_max_restarts_in_the_window_stops_the_child(
    strategy_class: StrategyClass,
) -> None:
    strategy = strategy_class(max_restarts=3, within=10.0)
    assert restart_times(strategy, [0.0, 1.0, 2.0, 3.0, 9.9, 10.0, 10.5]) == [0.0, 1.0, 2.0, 10.0]


def test_each_child_has_its_own_allowance() -> None:
    strategy = OneForOneStrategy(max_restarts=1)
    first, second = RestartStats(), RestartStats()
    assert strategy.handle_failure(first, ValueError(), 0.0).directive is Directive.RESTART
    assert strategy.handle_failure(second, ValueError(), 0.0).directive is Directive.RESTART
    assert strategy.handle_failure(first, ValueError(), 1.0).directive is Directive.STOP


def test_both_strategies_count_the_budget_identically() -> None:
    times = [0.0, 0.5, 1.0, 4.0, 4.1, 7.9, 8.0, 12.0, 12.0, 30.0]
    one = OneForOneStrategy(max_restarts=2, within=4.0)
    all_ = AllForOneStrategy(max_restarts=2, within=4.0)
    assert restart_times(one, times) == restart_times(all_, times)


# --- backoff ------------------------------------------------------------------------------


@both_strategies
def test_without_backoff_a_restart_happens_at_once(strategy_class: StrategyClass) -> None:
    decision = strategy_class().handle_failure(RestartStats(), ValueError(), now=0.0, rand=1.0)
    assert decision.delay == 0.0


@both_strategies
def test_backoff_grows_with_the_restarts_already_in_the_window(
    strategy_class: StrategyClass,
) -> None:
    strategy = strategy_class(
        max_restarts=10, within=100.0, backoff=Backoff(1.0, 5.0, random_factor=0.5)
    )
    stats = RestartStats()
    delays = [strategy.handle_failure(stats, ValueError(), float(t), 0.0).delay for t in range(5)]
    assert delays == [1.0, 2.0, 4.0, 5.0, 5.0]
    jittered = strategy.handle_failure(stats, ValueError(), now=5.0, rand=1.0)
    assert jittered == Decision(Directive.RESTART, 7.5)


def test_backoff_starts_over_once_old_restarts_leave_the_window() -> None:
    strategy = OneForOneStrategy(within=10.0, backoff=Backoff(1.0, 60.0, random_factor=0.0))
    stats = RestartStats()
    delays = [strategy.handle_failure(stats, ValueError(), t).delay for t in (0.0, 1.0, 2.0)]
    assert delays == [1.0, 2.0, 4.0]
    assert strategy.handle_failure(stats, ValueError(), now=11.5).delay == 2.0
    assert strategy.handle_failure(stats, ValueError(), now=100.0).delay == 1.0


def test_backoff_draws_its_own_jitter_when_rand_is_not_given() -> None:
    strategy = OneForOneStrategy(backoff=Backoff(1.0, 1.0, random_factor=1.0))
    delays = {strategy.handle_failure(RestartStats(), ValueError(), 0.0).delay for _ in range(20)}
    assert all(1.0 <= d <= 2.0 for d in delays)
    assert len(delays) > 1


def test_a_refused_restart_has_no_delay() -> None:
    strategy = OneForOneStrategy(max_restarts=0, backoff=Backoff(1.0, 2.0))
    assert strategy.handle_failure(RestartStats(), ValueError(), 0.0, 1.0) == Decision(
        Directive.STOP
    )


# --- properties ---------------------------------------------------------------------------

failure_times = st.lists(st.floats(min_value=0.0, max_value=1e4, allow_nan=False), max_size=60).map(
    sorted
)
windows = st.one_of(
    st.floats(min_value=1e-3, max_value=2e3, allow_nan=False),
    st.integers(min_value=1, max_value=100).map(float),
)


@given(times=failure_times, max_restarts=st.integers(0, 6), within=windows)
def test_restarts_in_any_window_never_exceed_max_restarts(
    times: list[float], max_restarts: int, within: float
) -> None:
    restarts = restart_times(OneForOneStrategy(max_restarts, within), times)
    # The busiest window (t - within, t] of length `within` ends on a restart.
    for end in restarts:
        in_window = [t for t in restarts if end - within < t <= end]
        assert len(in_window) <= max_restarts


@given(
    times=failure_times,
    max_restarts=st.integers(0, 6),
    within=windows,
    all_for_one=st.booleans(),
)
def test_a_failure_restarts_exactly_when_the_window_has_room(
    times: list[float], max_restarts: int, within: float, all_for_one: bool
) -> None:
    strategy_class = AllForOneStrategy if all_for_one else OneForOneStrategy
    strategy = strategy_class(max_restarts, within, backoff=Backoff(0.5, 8.0, 0.0))
    stats = RestartStats()
    granted: list[float] = []
    for now in times:
        recent = [t for t in granted if t > now - within]
        decision = strategy.handle_failure(stats, ValueError(), now)
        if len(recent) < max_restarts:
            assert decision == Decision(Directive.RESTART, min(8.0, 0.5 * 2 ** len(recent)))
            granted.append(now)
        else:
            assert decision == Decision(Directive.STOP)
