"""An a2a-sdk 1.x server with a trivial agent, over gRPC (grpcio) and JSON-RPC, for
``grpc_loopback.py``.

Runs in the bench's gRPC environment (``bench/.venv-grpc``: a2a-sdk with grpcio, uvicorn),
not the project's::

    python bench/grpc_server.py --log PATH

It binds two free ports of ``127.0.0.1``: the SDK's gRPC server (``lf.a2a.v1.A2AService``)
and an HTTP one (uvicorn) serving the agent card at ``/.well-known/agent-card.json`` and
the SDK's JSON-RPC routes at ``/a2a/jsonrpc``, one request handler behind both. The card
lists JSONRPC 1.0 then GRPC 1.0 (the bare ``127.0.0.1:<gRPC port>``). It prints the HTTP
port once both serve, and stops when its stdin closes. The agent answers by the text of
the message's first part:

* ``ping``: a Message ``pong`` (no task): the unary rows.
* ``stream N``: a task, working, N artifact chunks, completed, as fast as it can.
* ``slow``: a task, working, then one artifact chunk every 50 ms for up to 30 s.

Each gRPC ``SendStreamingMessage`` call appends one line to ``--log`` when its handler
ends: ``<time.monotonic()> <events sent>``, so the bench sees when a client's reset reached
the server, long before a ``slow`` stream's end (both processes read the same system-wide
monotonic clock). The handler ends quietly then (a2a-sdk's stream just stops), so the time
and the count tell it, not an exception.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
import time
import uuid
from typing import Any

import grpc.aio
import uvicorn
from a2a.helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    Role,
    a2a_pb2_grpc,
)
from starlette.applications import Starlette

HOST = "127.0.0.1"
JSONRPC_PATH = "/a2a/jsonrpc"
SLOW_INTERVAL = 0.05
SLOW_LIMIT = 30.0


class BenchAgent(AgentExecutor):  # type: ignore[misc]
    async def execute(self, context: Any, event_queue: Any) -> None:
        message = context.message
        text = message.parts[0].text if message is not None and message.parts else ""
        if text.startswith("ping"):
            reply = Message(
                role=Role.ROLE_AGENT,
                message_id=str(uuid.uuid4()),
                context_id=context.context_id,
                parts=[Part(text="pong")],
            )
            await event_queue.enqueue_event(reply)
            return
        task = new_task_from_user_message(message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        if text.startswith("stream"):
            count = int(text.split()[1])
            for index in range(count):
                await updater.add_artifact(
                    [Part(text=f"chunk {index} of the report, a line of text")],
                    artifact_id="report",
                    name="report",
                    append=index > 0,
                    last_chunk=index == count - 1,
                )
        elif text.startswith("slow"):
            end = time.monotonic() + SLOW_LIMIT
            index = 0
            while time.monotonic() < end:
                await asyncio.sleep(SLOW_INTERVAL)
                await updater.add_artifact(
                    [Part(text=f"chunk {index}")], artifact_id="slow", append=index > 0
                )
                index += 1
        await updater.complete()

    async def cancel(self, context: Any, event_queue: Any) -> None:
        return None


class ObservedHandler(GrpcHandler):  # type: ignore[misc]
    """The SDK's handler, logging when each streaming call ends and how."""

    def __init__(self, handler: Any, log: str) -> None:
        super().__init__(handler)
        self.log = log

    def _ended(self, sent: int) -> None:
        with open(self.log, "a") as out:  # one short line: no need to leave the loop for it
            out.write(f"{time.monotonic():.6f} {sent}\n")

    async def SendStreamingMessage(self, request: Any, context: Any) -> Any:
        sent = 0
        try:
            async for response in super().SendStreamingMessage(request, context):
                yield response
                sent += 1
        finally:
            self._ended(sent)


def card(http_port: int, grpc_port: int) -> Any:
    return AgentCard(
        name="gRPC bench agent",
        description="Answers the bench's messages.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=f"http://{HOST}:{http_port}{JSONRPC_PATH}",
                protocol_binding="JSONRPC",
                protocol_version="1.0",
            ),
            AgentInterface(
                url=f"{HOST}:{grpc_port}", protocol_binding="GRPC", protocol_version="1.0"
            ),
        ],
        capabilities=AgentCapabilities(streaming=True),
        skills=[AgentSkill(id="bench", name="bench", description="Answers.", tags=["bench"])],
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
    )


async def serve(log: str) -> None:
    rpc = grpc.aio.server()
    grpc_port = rpc.add_insecure_port(f"{HOST}:0")
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and
    # without it uvicorn's body waits behind its headers for the client's delayed ACK (40 ms).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind((HOST, 0))
    http_port = sock.getsockname()[1]
    agent_card = card(http_port, grpc_port)
    handler = DefaultRequestHandler(
        agent_executor=BenchAgent(), task_store=InMemoryTaskStore(), agent_card=agent_card
    )
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(ObservedHandler(handler, log), rpc)
    app = Starlette(
        routes=[
            *create_agent_card_routes(agent_card),
            *create_jsonrpc_routes(handler, rpc_url=JSONRPC_PATH),
        ]
    )
    web = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    await rpc.start()
    serving = asyncio.create_task(web.serve(sockets=[sock]))
    while not web.started:
        if serving.done():
            await serving
            raise SystemExit("the HTTP server did not start")
        await asyncio.sleep(0.01)
    print(http_port, flush=True)
    await asyncio.to_thread(sys.stdin.read)  # until the bench closes our stdin
    web.should_exit = True
    await serving
    await rpc.stop(grace=0.5)
    await handler.aclose()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    asyncio.run(serve(parser.parse_args().log))


if __name__ == "__main__":
    main()
