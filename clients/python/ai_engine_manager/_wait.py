"""Polling until an engine settles, shared by the engine objects' ``wait()`` methods."""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable

from ai_engine_manager.exception import CustomApiException, FailedEngineException, TimeoutException

FIRST_INTERVAL = 0.02
MAX_INTERVAL = 5.0


def intervals(fixed: float | None) -> Iterable[float]:
    """The pauses between polls: a fixed interval, or a fiftieth of a second doubling up to five
    seconds, so that quick transitions (a sandbox starts in a tenth of a second) return quickly
    and long ones do not load the server."""
    interval = fixed if fixed is not None else FIRST_INTERVAL
    while True:
        yield interval
        if fixed is None:
            interval = min(interval * 2, MAX_INTERVAL)


def wait_for_engine(
    engine: Any,
    refresh: Callable[[], None],
    settled: set[Any],
    failed: Any,
    deleting: Any,
    timeout_seconds: float | None,
    poll_interval_seconds: float | None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> bool:
    """Refreshes ``engine`` until it is in a settled state and not reconciling.

    Returns:
        True when the engine settled; False when it was being deleted and is now gone.

    Raises:
        FailedEngineException: when the engine is in its failed state.
        TimeoutException: when ``timeout_seconds`` pass first.
    """
    deadline = None if timeout_seconds is None else clock() + timeout_seconds
    for pause in intervals(poll_interval_seconds):
        was_deleting = engine.state == deleting
        try:
            refresh()
        except CustomApiException as e:
            if e.code_name == "NOT_FOUND" and was_deleting:
                return False
            raise
        if engine.state == failed:
            raise FailedEngineException(engine)
        if engine.state in settled and not getattr(engine, "reconciling", False):
            return True
        if deadline is not None and clock() + pause > deadline:
            raise TimeoutException(
                f"{engine.name} is still {engine.state.name} (reconciling: {getattr(engine, 'reconciling', False)}) "
                f"after {timeout_seconds} seconds"
            )
        sleep(pause)
    raise AssertionError("unreachable")
