"""a2a_anyio.testing: a scriptable fake A2A agent for tests (the ``testing`` extra).

    from a2a_anyio.testing import FakeAgent, artifact, reply, status

    agent = FakeAgent(dialect="1.0")

    @agent.skill("report")
    async def report(ctx):
        yield status("working", "writing")
        yield artifact("part one", name="report")
        yield artifact(" and two", append=True, last_chunk=True)

    async with agent.serve() as agent:          # hypercorn on 127.0.0.1, asyncio or trio
        async with A2AClient(agent.url) as client:
            ...

Serving needs hypercorn (``pip install 'a2a-anyio[testing]'``); the in-process transport
(``agent.transport()``) needs nothing more than httpx.
"""

from __future__ import annotations

from a2a_anyio._asgi import serve_app
from a2a_anyio.testing._agent import FakeAgent
from a2a_anyio.testing._config import SkillInfo
from a2a_anyio.testing._errors import AgentError
from a2a_anyio.testing._skills import (
    ArtifactChunk,
    Emit,
    Skill,
    SkillContext,
    Status,
    artifact,
    reply,
    status,
)
from a2a_anyio.testing._transport import StreamingASGITransport
from a2a_anyio.testing._types import OPERATIONS, Fault, PushDelivery, RecordedRequest

__all__ = [
    "OPERATIONS",
    "AgentError",
    "ArtifactChunk",
    "Emit",
    "FakeAgent",
    "Fault",
    "PushDelivery",
    "RecordedRequest",
    "Skill",
    "SkillContext",
    "SkillInfo",
    "Status",
    "StreamingASGITransport",
    "artifact",
    "reply",
    "serve_app",
    "status",
]
