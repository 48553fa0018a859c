"""Waiting in tests for a condition rather than for a time: ``eventually`` checks until the
condition holds and fails saying what was awaited and what was seen when the bound ran out. The
bound only keeps a broken run from hanging; a passing test never waits for it."""

import time
from typing import Callable


def eventually(condition: Callable[[], bool], timeout: float, seen: Callable[[], str],
               pause: float = 0.0) -> None:
    """Calls ``condition`` until it returns True; ``pause`` seconds between calls (0 for a
    condition that blocks by itself, such as a poll). Fails with ``seen()`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout} s: {seen()}"
        if pause:
            time.sleep(pause)
