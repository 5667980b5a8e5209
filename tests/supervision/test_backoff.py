import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dovecote._errors import OptionsError
from dovecote.supervision import Backoff


def test_the_first_restart_waits_min_delay_without_jitter() -> None:
    assert Backoff(0.1, 10.0).delay(0, rand=0.0) == pytest.approx(0.1)


def test_the_delay_doubles_with_each_restart_in_the_window() -> None:
    backoff = Backoff(min_delay=0.5, max_delay=100.0, random_factor=0.0)
    assert [backoff.delay(n, 0.0) for n in range(5)] == [0.5, 1.0, 2.0, 4.0, 8.0]


def test_the_delay_is_capped_at_max_delay_before_jitter() -> None:
    backoff = Backoff(min_delay=1.0, max_delay=5.0, random_factor=0.5)
    assert backoff.delay(3, rand=0.0) == 5.0
    assert backoff.delay(3, rand=1.0) == pytest.approx(7.5)


def test_jitter_scales_the_delay_by_one_plus_rand_times_random_factor() -> None:
    backoff = Backoff(min_delay=2.0, max_delay=60.0, random_factor=0.2)
    assert backoff.delay(1, rand=0.5) == pytest.approx(4.0 * 1.1)


def test_a_huge_restart_count_does_not_overflow() -> None:
    assert Backoff(0.1, 30.0, random_factor=0.0).delay(10_000, 0.0) == 30.0
    assert Backoff(0.1, math.inf, random_factor=0.0).delay(10_000, 0.0) > 1e300


def test_rand_is_drawn_when_not_given() -> None:
    backoff = Backoff(1.0, 1.0, random_factor=1.0)
    delays = {backoff.delay(0) for _ in range(20)}
    assert all(1.0 <= d <= 2.0 for d in delays)
    assert len(delays) > 1


@given(
    min_delay=st.floats(min_value=1e-6, max_value=1e3),
    spread=st.floats(min_value=1.0, max_value=1e3),
    random_factor=st.floats(min_value=0.0, max_value=5.0),
    n=st.integers(min_value=0, max_value=2000),
    rand=st.floats(min_value=0.0, max_value=1.0),
)
def test_jitter_only_lengthens_and_follows_the_formula(
    min_delay: float, spread: float, random_factor: float, n: int, rand: float
) -> None:
    backoff = Backoff(min_delay, min_delay * spread, random_factor)
    capped = min(backoff.max_delay, min_delay * 2.0 ** min(n, 1023))
    delay = backoff.delay(n, rand)
    assert delay >= capped
    assert delay <= capped * (1 + random_factor) * (1 + 1e-12)
    assert delay == pytest.approx(capped * (1 + rand * random_factor))


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((0.0, 1.0), {}),
        ((-1.0, 1.0), {}),
        ((math.inf, math.inf), {}),
        ((math.nan, 1.0), {}),
        ((1.0, 0.5), {}),
        ((1.0, math.nan), {}),
        ((1.0, 2.0), {"random_factor": -0.1}),
        ((1.0, 2.0), {"random_factor": math.inf}),
        (("1", 2.0), {}),
        ((1.0, None), {}),
        ((True, 2.0), {}),
    ],
)
def test_invalid_backoff_settings_raise_options_error(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    with pytest.raises(OptionsError):
        Backoff(*args, **kwargs)


def test_equal_min_and_max_delay_and_zero_jitter_are_allowed() -> None:
    assert Backoff(1, 1, random_factor=0).delay(7, 0.9) == 1.0


@pytest.mark.parametrize(("n", "rand"), [(-1, 0.5), (1.5, 0.5), (True, 0.5), (0, -0.1), (0, 1.5)])
def test_delay_rejects_a_negative_count_or_rand_outside_the_unit_interval(
    n: int, rand: float
) -> None:
    with pytest.raises(ValueError):
        Backoff(1.0, 2.0).delay(n, rand)


def test_backoff_is_an_immutable_value() -> None:
    backoff = Backoff(0.1, 1.0)
    assert backoff == Backoff(0.1, 1.0)
    assert hash(backoff) == hash(Backoff(0.1, 1.0))
    with pytest.raises(AttributeError):
        backoff.min_delay = 0.2  # type: ignore[misc]
