"""Every async test runs on asyncio and on trio (anyio's pytest plugin)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from a2a_anyio import _client


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(autouse=True)
def _forget_learned_dialects() -> Iterator[None]:
    """Each test starts without what earlier clients learned about a URL's dialect."""
    _client._LEARNED.clear()
    yield
    _client._LEARNED.clear()
