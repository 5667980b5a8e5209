import math

import pytest

from dovecote.supervision import RestartStats


def test_new_stats_have_no_restarts() -> None:
    stats = RestartStats()
    assert stats.timestamps == []
    assert stats.restarts_within(now=100.0, within=60.0) == 0


def test_zero_allowed_restarts_refuses_the_first_one() -> None:
    stats = RestartStats()
    assert stats.request_restart(0.0, max_restarts=0, within=60.0) is None
    assert stats.timestamps == []


def test_one_allowed_restart_grants_exactly_one_per_window() -> None:
    stats = RestartStats()
    assert stats.request_restart(0.0, max_restarts=1, within=60.0) == 0
    assert stats.request_restart(59.9, max_restarts=1, within=60.0) is None
    assert stats.timestamps == [0.0]


def test_the_count_returned_is_the_number_of_restarts_already_in_the_window() -> None:
    stats = RestartStats()
    granted = [stats.request_restart(float(t), max_restarts=5, within=60.0) for t in range(5)]
    assert granted == [0, 1, 2, 3, 4]
    assert stats.request_restart(5.0, max_restarts=5, within=60.0) is None


def test_a_restart_exactly_within_seconds_old_has_left_the_window() -> None:
    stats = RestartStats()
    stats.request_restart(10.0, max_restarts=1, within=60.0)
    assert stats.request_restart(70.0, max_restarts=1, within=60.0) == 0
    assert stats.timestamps == [70.0]


def test_the_window_slides_so_only_recent_restarts_count() -> None:
    stats = RestartStats()
    for t in (0.0, 10.0, 20.0):
        assert stats.request_restart(t, max_restarts=3, within=30.0) is not None
    assert stats.request_restart(25.0, max_restarts=3, within=30.0) is None
    assert stats.request_restart(30.0, max_restarts=3, within=30.0) == 2
    assert stats.timestamps == [10.0, 20.0, 30.0]


def test_an_infinite_window_never_forgets() -> None:
    stats = RestartStats()
    assert stats.request_restart(0.0, max_restarts=1, within=math.inf) == 0
    assert stats.request_restart(1e12, max_restarts=1, within=math.inf) is None


def test_a_clock_reading_that_goes_backwards_keeps_timestamps_ordered() -> None:
    stats = RestartStats()
    stats.request_restart(50.0, max_restarts=3, within=60.0)
    stats.request_restart(40.0, max_restarts=3, within=60.0)
    assert stats.timestamps == [50.0, 50.0]


def test_a_nan_clock_reading_is_rejected() -> None:
    with pytest.raises(ValueError):
        RestartStats().request_restart(math.nan, max_restarts=1, within=1.0)


def test_reset_forgets_every_restart() -> None:
    stats = RestartStats()
    stats.request_restart(0.0, max_restarts=1, within=60.0)
    stats.reset()
    assert stats.request_restart(1.0, max_restarts=1, within=60.0) == 0


def test_stats_use_slots_and_show_their_timestamps() -> None:
    stats = RestartStats()
    stats.request_restart(1.5, max_restarts=1, within=60.0)
    assert not hasattr(stats, "__dict__")
    assert repr(stats) == "RestartStats(timestamps=[1.5])"
