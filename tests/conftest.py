"""Every async test runs on asyncio and on trio (anyio's pytest plugin).

A time-based test runs on both with a virtual clock: ``@on_mock_clock()`` (tests/unit/_support.py)
asks for the params "asyncio-mockclock" and "trio-mockclock", which are also its test ids.

Errors are built once: in every test, setting an attribute an ``A2AClientError`` already has
fails the test (``with_context`` makes a new error instead).
"""

from __future__ import annotations

from typing import Any

import pytest

from a2a_anyio import A2AClientError
from tests.unit._support import anyio_backend_for


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str | tuple[str, dict[str, Any]]:
    return anyio_backend_for(str(request.param))


def _write_once(error: A2AClientError, name: str, value: Any) -> None:
    if name in vars(error):
        raise AssertionError(f"{type(error).__name__}.{name} changed after the error was built")
    Exception.__setattr__(error, name, value)


@pytest.fixture(autouse=True)
def _errors_are_built_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(A2AClientError, "__setattr__", _write_once)
