"""A real A2A server built with ``fasta2a`` (PyPI), for interop tests.

It runs in its own virtual environment (``requirements.txt`` beside this file pins it; the
``fasta2a_server`` fixture builds it), never in the project's. Run it as::

    <venv>/bin/python tests/interop/fasta2a/server.py [--port 0]

It binds ``127.0.0.1`` (port 0: a free port chosen by the OS), prints one line
``READY http://127.0.0.1:<port>`` once it accepts connections, and exits 0 on SIGTERM.

What fasta2a serves, as this server uses it: ``GET /.well-known/agent-card.json`` (a v1.0
card: one JSON-RPC interface at ``/``) and ``POST /`` (JSON-RPC, the v0.3 method names and
the v1.0 ones). Every send is answered at once with the task it submitted, whatever the
client asked for; the task runs in the worker (``InMemoryBroker``). A message always starts a
new task (in the message's context). Push configs (-32003), listing tasks (-32004) and an
extended card are not served.

The agent, chosen by the first text part of the user's message (the worker runs each task in
a task group of its own, so that a slow one does not hold up the broker's queue):

* ``message...``: completed, the status message ``pong: <text>``.
* ``stream...``: working -> three chunks of artifact ``report`` ~50 ms apart -> completed.
* ``slow...``: working, then up to 30 s; cancelling it ends it as canceled.
* ``input...``: input-required ("need more input").
* ``fail...``: failed ("it failed").
* anything else: working -> artifacts ``echo`` (``echo: <text>``) [+ ``data``: the first
  data part] -> completed.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import socket
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import uvicorn
from fasta2a import FastA2A, Worker
from fasta2a.broker import InMemoryBroker
from fasta2a.storage import InMemoryStorage

HOST = "127.0.0.1"
SLOW_TIMEOUT_S = 30.0
STEP_S = 0.05

logger = logging.getLogger("fasta2a_server")


class Store(InMemoryStorage[Any]):  # type: ignore[misc]
    """fasta2a's in-memory storage, and a status message beside the state."""

    def say(self, task_id: str, message: dict[str, Any]) -> None:
        self.tasks[task_id]["status"]["message"] = message


def _agent_message(text: str) -> dict[str, Any]:
    return {"role": "agent", "parts": [{"text": text}], "message_id": str(uuid.uuid4())}


@dataclass
class EchoWorker(Worker[Any]):  # type: ignore[misc]
    """The agent: each task runs in the worker's own task group."""

    jobs: dict[str, anyio.CancelScope] = field(default_factory=dict)
    _tg: anyio.abc.TaskGroup | None = None

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tg:
            self._tg = tg
            async with super().run():
                yield
            tg.cancel_scope.cancel()

    @property
    def store(self) -> Store:
        assert isinstance(self.storage, Store)
        return self.storage

    async def run_task(self, params: Any) -> None:
        assert self._tg is not None
        self._tg.start_soon(self._job, params)

    async def cancel_task(self, params: Any) -> None:
        task_id = params["id"]
        job = self.jobs.pop(task_id, None)
        if job is None:
            return  # over already
        job.cancel()
        task = await self.storage.load_task(task_id)
        assert task is not None
        await self._end(task_id, task["context_id"], "canceled")

    def build_message_history(self, history: list[Any]) -> list[Any]:
        return history

    def build_artifacts(self, result: Any) -> list[Any]:
        return []

    # -- the skills ------------------------------------------------------------------------

    async def _job(self, params: Any) -> None:
        task_id, context_id = params["id"], params["context_id"]
        text, data = _first_text(params["message"]), _first_data(params["message"])
        with anyio.CancelScope() as scope:
            self.jobs[task_id] = scope
            try:
                await self._skill(task_id, context_id, text, data)
            finally:
                self.jobs.pop(task_id, None)

    async def _skill(self, task_id: str, ctx: str, text: str, data: Any) -> None:
        if text.startswith("message"):
            await self._end(task_id, ctx, "completed", f"pong: {text}")
            return
        if text.startswith("input"):
            await self._end(task_id, ctx, "input-required", "need more input")
            return
        await self._state(task_id, ctx, "working", "working")
        await anyio.sleep(STEP_S)
        if text.startswith("fail"):
            await self._end(task_id, ctx, "failed", "it failed")
        elif text.startswith("slow"):
            await anyio.sleep(SLOW_TIMEOUT_S)
            await self._end(task_id, ctx, "completed")
        elif text.startswith("stream"):
            chunks = ["part 1", " part 2", " part 3"]
            for i, chunk in enumerate(chunks):
                piece = {"artifact_id": "report", "name": "report", "parts": [{"text": chunk}]}
                last = i == len(chunks) - 1
                await self.publish_artifact(task_id, ctx, piece, append=i > 0, last_chunk=last)
                await anyio.sleep(STEP_S)
            whole = {
                "artifact_id": "report",
                "name": "report",
                "parts": [{"text": "".join(chunks)}],
            }
            await self.storage.update_task(task_id, "working", new_artifacts=[whole])  # told
            await self._end(task_id, ctx, "completed")
        else:
            artifacts = [
                {"artifact_id": "echo", "name": "echo", "parts": [{"text": f"echo: {text}"}]}
            ]
            if data is not None:
                artifacts.append({"artifact_id": "data", "name": "data", "parts": [{"data": data}]})
            await self._end(task_id, ctx, "completed", artifacts=artifacts)

    async def _state(
        self,
        task_id: str,
        ctx: str,
        state: Any,
        text: str | None = None,
        artifacts: list[Any] | None = None,
    ) -> None:
        """Store the state (artifacts first), then tell the task's streams."""
        await self.storage.update_task(task_id, state, new_artifacts=artifacts)
        message = None if text is None else _agent_message(text)
        if message is not None:
            self.store.say(task_id, message)
        for artifact in artifacts or ():
            await self.publish_artifact(task_id, ctx, artifact)
        await self.publish_status(task_id, ctx, state, message)

    async def _end(
        self,
        task_id: str,
        ctx: str,
        state: Any,
        text: str | None = None,
        artifacts: list[Any] | None = None,
    ) -> None:
        """The last state: stored, told, and the task's streams closed."""
        await self._state(task_id, ctx, state, text, artifacts)
        await self.broker.event_bus.close(task_id)


def _first_text(message: Any) -> str:
    return next((p["text"] for p in message.get("parts", []) if "text" in p), "")


def _first_data(message: Any) -> Any:
    return next((p["data"] for p in message.get("parts", []) if "data" in p), None)


def build_app(base_url: str) -> FastA2A:
    storage = Store()
    broker = InMemoryBroker()
    worker = EchoWorker(broker=broker, storage=storage)

    @asynccontextmanager
    async def lifespan(app: FastA2A) -> AsyncIterator[None]:
        async with app.task_manager, worker.run():
            yield

    return FastA2A(
        storage=storage,
        broker=broker,
        name="fasta2a interop agent",
        url=base_url + "/",
        description="Echoes, streams, waits and fails on request",
        lifespan=lifespan,
    )


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


async def _serve(sock: socket.socket) -> int:
    base_url = f"http://{HOST}:{sock.getsockname()[1]}"
    config = uvicorn.Config(
        build_app(base_url), log_level="warning", lifespan="on", timeout_graceful_shutdown=3
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if serving.done():
            await serving
            return 1
        await asyncio.sleep(0.01)
    sys.stdout.write(f"READY {base_url}\n")
    sys.stdout.flush()
    await serving
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=0, help="0 = a free port chosen by the OS")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    # uvicorn restores these once it is done and re-raises the signal: the process exits 0.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda _signum, _frame: None)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((HOST, args.port))
    try:
        return asyncio.run(_serve(sock))
    finally:
        sock.close()


if __name__ == "__main__":
    sys.exit(main())
