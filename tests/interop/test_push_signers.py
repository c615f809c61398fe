"""Push notifications signed by another implementation: a Node.js sender written with jose (the
JOSE library of the official JS SDK), its JWK Set served by Node, verified by PushReceiver on
asyncio and trio. No official SDK in the matrix signs its notifications: a2a-sdk 0.3.x and 1.x
and @a2a-js/sdk send ``Authorization: <scheme> <credentials>`` and the token header only."""

from __future__ import annotations

import json

import anyio
import pytest
from anyio.streams.text import TextReceiveStream

from a2a_anyio.push import PushReceiver, PushVerifier

from . import matrix

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

ISSUER = "https://node-agent.example"


async def test_a_notification_signed_with_jose_is_verified() -> None:
    try:
        cwd = matrix.node_modules(matrix.JS_ENV)
        node = matrix.node()
    except matrix.ProvisionError as exc:
        pytest.fail(str(exc), pytrace=False)
    receiver = PushReceiver(require_token=False)  # its verifier is set once the keys are up
    results: dict[str, int] = {}
    async with (
        receiver.serve() as url,
        await anyio.open_process([node, str(cwd / "push_signer.mjs")], cwd=cwd) as process,
    ):
        assert process.stdout is not None and process.stdin is not None
        lines = TextReceiveStream(process.stdout)
        buffer = ""
        with anyio.fail_after(30):
            async for chunk in lines:
                buffer += chunk
                *done, buffer = buffer.split("\n")
                for line in done:
                    if line.startswith("READY "):
                        jku = line.split(" ", 1)[1]
                        # The agent's URL is known now: a jku on its origin is fetched.
                        receiver.verifier = PushVerifier(issuer=ISSUER, agent=jku)
                        await process.stdin.send(f"GO {url} {ISSUER} t-1\n".encode())
                    elif line.startswith("{"):
                        result = json.loads(line)
                        results[result["case"]] = result["status"]
        assert await process.wait() == 0
    assert results == {"signed": 200, "replayed": 401, "other-audience": 403, "other-task": 403}
    assert [e.reason for e in receiver.refused] == ["replayed", "audience", "task"]
    [accepted] = receiver.received
    assert accepted.verified is not None
    assert (accepted.verified.kid, accepted.verified.alg) == ("node-1", "ES256")
    assert accepted.verified.task_id == "t-1"
