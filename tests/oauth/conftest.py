"""A real OAuth 2.0 / OpenID Connect authorization server (``server.py``, Authlib) in another
process, and agents that accept the tokens it issued (checked by introspection)."""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

START_TIMEOUT = 30.0


@dataclass
class Idp:
    """The authorization server: its issuer URL and what a test may ask of it."""

    url: str

    async def control(self, **form: str) -> dict[str, Any]:
        """Change the server (see server.py); returns the tokens issued per grant type and
        the private key of the ``signer`` client."""
        async with httpx.AsyncClient() as http:
            answer = await http.post(self.url + "/_control", data=form)
        answer.raise_for_status()
        value: dict[str, Any] = answer.json()
        return value

    async def issued(self) -> dict[str, int]:
        counts: dict[str, int] = (await self.control())["issued"]
        return counts

    async def approve(self, user_code: str) -> None:
        """The user signs in on another device and types the code."""
        async with httpx.AsyncClient() as http:
            answer = await http.post(self.url + "/device", data={"user_code": user_code})
        answer.raise_for_status()

    def check(self, audience: str | None = None) -> Callable[[str | None], Awaitable[bool]]:
        """What an agent runs on each request's ``Authorization``: the token must be active
        (RFC 7662 introspection), and for ``audience`` when one is given."""

        async def check(value: str | None) -> bool:
            if value is None or not value.startswith("Bearer "):
                return False
            async with httpx.AsyncClient() as http:
                answer = await http.post(
                    self.url + "/introspect",
                    data={"token": value[7:]},
                    auth=("service", "service-secret"),
                )
            body = answer.json()
            return bool(body.get("active")) and (audience is None or body.get("aud") == audience)

        return check


@pytest.fixture(scope="session")
def idp() -> Iterator[Idp]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.oauth.server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None and proc.stdin is not None
    try:
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + START_TIMEOUT
        port = None
        while port is None and time.monotonic() < deadline:
            if not sel.select(timeout=deadline - time.monotonic()):
                break
            line = proc.stdout.readline()
            if line.startswith("READY "):
                port = int(line.split()[1])
            elif not line:
                break
        if port is None:
            raise RuntimeError("the authorization server did not start")
        yield Idp(f"http://127.0.0.1:{port}")
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        proc.stdout.close()
