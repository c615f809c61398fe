"""A real A2A server built with the official ``a2a-sdk`` **0.3.x**, for interop tests.

It runs in its own virtual environment (``requirements.txt`` beside this file pins it; the
``sdk03_server`` fixture builds that environment), never in the project's: the project's
environment holds ``a2a-sdk`` 1.x, whose API is a different one. Run it as::

    <venv>/bin/python tests/interop/sdk03/server.py [--mode http|grpc] [--port 0]

It binds ``127.0.0.1`` (port 0 lets the OS pick a free port), prints exactly one line
``READY http://127.0.0.1:<port>`` on stdout once it accepts connections, and exits 0 on
SIGTERM or SIGINT.

Endpoints, all built with the 0.3 SDK's own handlers:

* ``GET  /.well-known/agent-card.json`` and ``/.well-known/agent.json``: the public v0.3 card
  (``protocolVersion`` 0.3.0, ``url`` + ``preferredTransport`` JSONRPC, ``additionalInterfaces``
  listing JSONRPC and HTTP+JSON).
* ``POST /a2a/jsonrpc``: JSON-RPC (``message/send``, ``message/stream``, ``tasks/get``,
  ``tasks/cancel``, ``tasks/resubscribe``, ``tasks/pushNotificationConfig/{set,get,list,delete}``,
  ``agent/getAuthenticatedExtendedCard``).
* ``/a2a/rest/v1/...``: HTTP+JSON, the SDK's ``RESTAdapter`` routes (``message:send``,
  ``message:stream``, ``tasks/{id}``, ``tasks/{id}:cancel``, ``GET tasks/{id}:subscribe``,
  push configs set/get, ``card``); ``GET /v1/tasks`` and the push-config list exist but raise
  "not implemented", and there is no push-config DELETE route.
* ``GET  /agent/authenticatedExtendedCard``: the extended card (the 0.2-era HTTP path).

``--mode grpc`` (run by the Python of ``.venv-interop/sdk03grpc``, which adds the SDK's
``[grpc]`` extra, see ``matrix.py``) serves instead the SDK's gRPC service (``a2a.v1.A2AService``,
grpcio) on a port of its own; the HTTP server serves only the card, whose ``url`` and single
interface are the bare ``127.0.0.1:<grpc port>`` with transport GRPC. That card announces no
extended card: the 0.3 gRPC service has only ``GetAgentCard``, which answers the public card.
The HTTP server also serves ``GET /debug/grpc``: ``{"open": N, "calls": [...]}``, the
agent-running gRPC handlers still running (``../grpc_handlers.py``), so tests can see that the server's handler of
a call the client left ended too.

The agent behaves like ``tests/interop/sdk_server.py`` (the 1.x server), chosen by the text of
the first text part of the user's message:

* ``message...``: a single agent Message ``pong: <text>`` (no task).
* ``stream...``: submitted -> working ("working") -> three chunks of artifact ``report``
  -> completed, ~50 ms apart.
* ``slow...``: working, then waits up to 30 s; cancelling the task ends it as canceled (the
  canceled status is published on the task's own queue, so ``tasks/resubscribe`` streams see
  it too). Note that a 0.3.x ``tasks/resubscribe`` stream sends nothing until the next event.
* ``input...``: input-required ("need more input"); a follow-up message on the same task
  completes it with an ``echo`` artifact of the new text.
* ``fail...``: failed ("it failed").
* anything else: working -> artifact ``echo`` (``echo: <text>``) [+ artifact ``data`` holding
  the first data part unchanged] -> completed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import socket
import sys
import uuid
from pathlib import Path
from typing import Any

import uvicorn
from a2a.server.agent_execution import AgentExecutor
from a2a.server.apps.jsonrpc.starlette_app import A2AStarletteApplication
from a2a.server.apps.rest.rest_adapter import RESTAdapter
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import (
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    DataPart,
    HTTPAuthSecurityScheme,
    Message,
    Part,
    Role,
    SecurityScheme,
    TaskState,
    TextPart,
    TransportProtocol,
)
from a2a.utils import new_agent_text_message, new_task
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route

HOST = "127.0.0.1"
JSONRPC_PATH = "/a2a/jsonrpc"
REST_PATH = "/a2a/rest"
DEBUG_GRPC_PATH = "/debug/grpc"

SLOW_TIMEOUT_S = 30.0
STREAM_DELAY_S = 0.05

logger = logging.getLogger("sdk03_server")


# --------------------------------------------------------------------------------------------
# Agent
# --------------------------------------------------------------------------------------------


def _first_text(message: Any) -> str:
    if message is None:
        return ""
    for part in message.parts:
        if isinstance(part.root, TextPart):
            return str(part.root.text)
    return ""


def _first_data(message: Any) -> Any:
    if message is None:
        return None
    for part in message.parts:
        if isinstance(part.root, DataPart):
            return part.root.data
    return None


def _text_part(text: str) -> Any:
    return Part(root=TextPart(text=text))


class ScriptedAgentExecutor(AgentExecutor):  # type: ignore[misc]
    """Behaviour chosen by the first text part of the user's message (see module docstring)."""

    def __init__(self) -> None:
        # slow task id -> (set by cancel(), set by execute() once it published "canceled").
        self._running: dict[str, tuple[asyncio.Event, asyncio.Event]] = {}

    async def execute(self, context: Any, event_queue: Any) -> None:
        message = context.message
        text = _first_text(message)
        current = context.current_task

        # A follow-up message on a task parked in input-required.
        if current is not None and current.status.state == TaskState.input_required:
            updater = TaskUpdater(event_queue, current.id, current.context_id)
            await updater.start_work()
            await updater.add_artifact([_text_part(f"echo: {text}")], name="echo")
            await updater.complete()
            return

        if text.startswith("message"):
            await event_queue.enqueue_event(
                Message(
                    role=Role.agent,
                    message_id=str(uuid.uuid4()),
                    context_id=context.context_id,
                    parts=[_text_part(f"pong: {text}")],
                )
            )
            return

        # Every other behaviour works on a task: publish it first (state submitted).
        task = new_task(message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)

        if text.startswith("stream"):
            await asyncio.sleep(STREAM_DELAY_S)
            await updater.start_work(updater.new_agent_message([_text_part("working")]))
            for index, chunk in enumerate(("part 1", " part 2", " part 3")):
                await asyncio.sleep(STREAM_DELAY_S)
                await updater.add_artifact(
                    [_text_part(chunk)],
                    artifact_id="report",
                    name="report",
                    append=index > 0,
                    last_chunk=index == 2,
                )
            await asyncio.sleep(STREAM_DELAY_S)
            await updater.complete()
        elif text.startswith("slow"):
            requested, published = self._running.setdefault(
                task.id, (asyncio.Event(), asyncio.Event())
            )
            await updater.start_work()
            try:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(requested.wait(), SLOW_TIMEOUT_S)
                if requested.is_set():
                    # Published here, on the task's own queue, so that every tap of it (the
                    # cancel call's and any tasks/resubscribe stream's) sees it: an event put
                    # on one tap (the queue cancel() gets) reaches no other tap in 0.3.x.
                    await updater.cancel(updater.new_agent_message([_text_part("canceled")]))
                    published.set()
                else:
                    await updater.add_artifact([_text_part(f"echo: {text}")], name="echo")
                    await updater.complete()
            finally:
                self._running.pop(task.id, None)
        elif text.startswith("input"):
            await updater.requires_input(
                updater.new_agent_message([_text_part("need more input")]), final=True
            )
        elif text.startswith("fail"):
            await updater.failed(updater.new_agent_message([_text_part("it failed")]))
        else:
            await updater.start_work()
            await updater.add_artifact([_text_part(f"echo: {text}")], name="echo")
            data = _first_data(message)
            if data is not None:
                await updater.add_artifact([Part(root=DataPart(data=data))], name="data")
            await updater.complete()

    async def cancel(self, context: Any, event_queue: Any) -> None:
        task_id = context.task_id
        running = self._running.get(task_id)
        if running is not None:  # a slow task: execute() publishes the canceled state
            requested, published = running
            requested.set()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(published.wait(), 5)
            return
        # A task nobody works on (input-required): publish on the queue given.
        context_id = context.context_id
        if context_id is None and context.current_task is not None:
            context_id = context.current_task.context_id
        updater = TaskUpdater(event_queue, task_id, context_id or "")
        await updater.cancel(
            new_agent_text_message("canceled", context_id=context_id, task_id=task_id)
        )


# --------------------------------------------------------------------------------------------
# Cards and app
# --------------------------------------------------------------------------------------------


def build_agent_card(base_url: str, grpc_target: str | None = None) -> Any:
    jsonrpc_url = f"{base_url}{JSONRPC_PATH}"
    rest_url = f"{base_url}{REST_PATH}"
    url, transport = jsonrpc_url, TransportProtocol.jsonrpc
    interfaces = [
        AgentInterface(url=jsonrpc_url, transport=TransportProtocol.jsonrpc),
        AgentInterface(url=rest_url, transport=TransportProtocol.http_json),
    ]
    if grpc_target is not None:
        url, transport = grpc_target, TransportProtocol.grpc
        interfaces = [AgentInterface(url=grpc_target, transport=TransportProtocol.grpc)]
    return AgentCard(
        protocol_version="0.3.0",
        name="SDK 0.3 Test Agent",
        description="Scripted A2A agent built with the official a2a-sdk 0.3.x, for interop tests.",
        version="0.3.26",
        url=url,
        preferred_transport=transport,
        additional_interfaces=interfaces,
        provider=AgentProvider(organization="a2a-anyio tests", url="https://example.com/a2a-anyio"),
        documentation_url="https://example.com/a2a-anyio/docs",
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        supports_authenticated_extended_card=grpc_target is None,
        # Declared only: the server does not check any credential.
        security_schemes={
            "bearer": SecurityScheme(
                root=HTTPAuthSecurityScheme(
                    scheme="bearer",
                    bearer_format="JWT",
                    description="Declared for card tests; not enforced.",
                )
            )
        },
        security=[{"bearer": []}],
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=[
            AgentSkill(
                id="echo",
                name="Echo",
                description="Echoes the text it receives; keywords select scripted behaviours.",
                tags=["echo", "test"],
                examples=["hello", "message ping", "stream", "slow", "input", "fail"],
            )
        ],
    )


def build_extended_card(card: Any) -> Any:
    extended = card.model_copy(deep=True)
    extended.skills.append(
        AgentSkill(
            id="extended-skill",
            name="Extended skill",
            description="Only listed on the extended agent card.",
            tags=["extended"],
        )
    )
    return extended


def build_app(base_url: str, grpc: tuple[Any, int] | None = None) -> Starlette:
    """The app; with ``grpc`` (a grpc.aio server and the port it is bound to) the agent's
    gRPC service is added to it, the app serving the card and ``/debug/grpc`` alone."""
    card = build_agent_card(base_url, None if grpc is None else f"{HOST}:{grpc[1]}")
    extended = build_extended_card(card)
    handler = DefaultRequestHandler(
        agent_executor=ScriptedAgentExecutor(),
        task_store=InMemoryTaskStore(),
        # Push configs are stored and served; no sender, so nothing is ever delivered.
        push_config_store=InMemoryPushNotificationConfigStore(),
    )
    if grpc is not None:
        return _grpc_app(card, handler, grpc[0])
    jsonrpc = A2AStarletteApplication(
        agent_card=card, http_handler=handler, extended_agent_card=extended
    )
    rest = RESTAdapter(agent_card=card, http_handler=handler, extended_agent_card=extended)
    rest_routes: list[BaseRoute] = [
        Route(path, endpoint, methods=[method])
        for (path, method), endpoint in rest.routes().items()
    ]
    routes: list[BaseRoute] = [
        # Both well-known card paths, the JSON-RPC endpoint and the 0.2-era extended card GET.
        *jsonrpc.routes(rpc_url=JSONRPC_PATH),
        Mount(REST_PATH, routes=rest_routes),
    ]
    return Starlette(routes=routes)


def _grpc_server() -> tuple[Any, int]:
    """A grpc.aio server bound to a free port of 127.0.0.1, not started, and the port.
    grpcio is imported only here: the HTTP mode's environment has none."""
    import grpc.aio

    server = grpc.aio.server()
    return server, server.add_insecure_port(f"{HOST}:0")


def _grpc_app(card: Any, handler: Any, server: Any) -> Starlette:
    """The SDK's gRPC service added to ``server``, its handlers counted while they run
    (``grpc_handlers.py``); the app serving the card and that count."""
    from a2a.grpc import a2a_pb2_grpc
    from a2a.server.request_handlers.grpc_handler import GrpcHandler

    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository
    from tests.interop.grpc_handlers import counted, report

    running: dict[object, str] = {}
    servicer = counted(GrpcHandler, running)(card, handler)
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(servicer, server)
    body = card.model_dump(mode="json", by_alias=True, exclude_none=True)

    async def card_endpoint(_request: Request) -> Response:
        return JSONResponse(body)

    async def debug_grpc(_request: Request) -> Response:
        return JSONResponse(report(running))

    routes: list[BaseRoute] = [
        Route("/.well-known/agent-card.json", card_endpoint, methods=["GET"]),
        Route("/.well-known/agent.json", card_endpoint, methods=["GET"]),
        Route(DEBUG_GRPC_PATH, debug_grpc, methods=["GET"]),
    ]
    return Starlette(routes=routes)


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


def _bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    return sock


async def _serve(sock: socket.socket, mode: str = "http") -> int:
    port = sock.getsockname()[1]
    base_url = f"http://{HOST}:{port}"
    grpc = _grpc_server() if mode == "grpc" else None
    config = uvicorn.Config(
        build_app(base_url, grpc), log_level="warning", lifespan="off", timeout_graceful_shutdown=3
    )
    server = uvicorn.Server(config)
    if grpc is not None:
        await grpc[0].start()
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if serving.done():
            await serving
            return 1
        await asyncio.sleep(0.01)
    sys.stdout.write(f"READY {base_url}\n")
    sys.stdout.flush()
    try:
        await serving
    finally:
        if grpc is not None:
            await grpc[0].stop(grace=0.5)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--mode", choices=("http", "grpc"), default="http")
    parser.add_argument("--port", type=int, default=0, help="0 = a free port chosen by the OS")
    args = parser.parse_args(argv)

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    # uvicorn installs its own SIGINT/SIGTERM handlers while serving and re-raises the signal
    # once it is done; these no-op handlers are what it restores, so the process exits 0.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda _signum, _frame: None)

    sock = _bind(args.port)
    try:
        return asyncio.run(_serve(sock, args.mode))
    finally:
        sock.close()


if __name__ == "__main__":
    sys.exit(main())
