"""Unit tests retry at once: the switch that removes backoff waits (retries still happen).

A test marked ``retry_delays`` keeps the real waits (on a virtual clock: ``@on_mock_clock()``,
so they cost no time).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from a2a_anyio import no_retry_delays


@pytest.fixture(autouse=True)
def _instant_retries(request: pytest.FixtureRequest) -> Iterator[None]:
    if request.node.get_closest_marker("retry_delays"):
        yield
        return
    with no_retry_delays():
        yield
