"""Fixtures of the testing-kit tests."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["inproc", "served"])
def mode(request: pytest.FixtureRequest) -> str:
    """How the test reaches the agent: the in-process transport, or hypercorn on 127.0.0.1."""
    return str(request.param)
