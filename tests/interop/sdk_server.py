"""A real A2A server built with the official ``a2a-sdk`` (1.x), for interop tests.

Run it as::

    python tests/interop/sdk_server.py --mode strict|compat|grpc [--port 0]

It binds ``127.0.0.1`` (port 0 lets the OS pick a free port), prints exactly one line
``READY http://127.0.0.1:<port>`` on stdout once it accepts connections, and shuts down
cleanly (exit status 0) on SIGTERM or SIGINT.

Endpoints (all built with the SDK's own Starlette routes):

* ``GET  /.well-known/agent-card.json``   public agent card (``Cache-Control: public, max-age=60``
  plus the SDK's weak ``ETag``)
* ``POST /a2a/jsonrpc``                   JSON-RPC binding
* ``/a2a/rest/...``                       HTTP+JSON binding (v1.0 paths; v0.3 ``/v1/...`` paths
  too in compat mode)
* ``GET  /debug/connections``             ``{"open": N}``: TCP connections the server holds open
  (this request's own included), so tests can see that a client closed its connections

``--delay SECONDS`` makes every new request wait that long first: a slow agent.

Modes:

* ``strict``: v1.0 only; the card lists JSONRPC 1.0 then HTTP+JSON 1.0.
* ``compat``: the SDK's v0.3 compatibility layer is enabled on both bindings and the card also
  lists JSONRPC 0.3 and HTTP+JSON 0.3 interfaces, so the SDK serves its hybrid v1.0/v0.3 card.
* ``grpc``: the SDK's gRPC server (grpcio, ``a2a-sdk[grpc]``: run by the Python of
  ``.venv-interop/sdk1grpc``, see ``matrix.py``) on a port of its own, serving the v1.0
  service (``lf.a2a.v1.A2AService``) and the v0.3 one (``a2a.v1.A2AService``); the HTTP server
  serves only the card, which lists GRPC 1.0 then GRPC 0.3, both at the bare
  ``127.0.0.1:<grpc port>``, and ``GET /debug/grpc``: ``{"open": N, "calls": [...]}``, the agent-running
  gRPC handlers still running (``grpc_handlers.py``), so tests can see that the server's handler
  of a call the client left ended too.

The agent decides by the text of the first text part of the user's message:

* ``message...``: a single agent Message ``pong: <text>`` (no task).
* ``stream...``: submitted -> working ("working") -> three chunks of artifact ``report``
  -> completed, ~50 ms apart.
* ``slow...``: working, then waits up to 30 s; cancelling the task ends it as canceled.
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
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import uvicorn
from a2a.helpers import new_task_from_user_message, new_text_message
from a2a.server.agent_execution import AgentExecutor
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
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
    HTTPAuthSecurityScheme,
    Message,
    Part,
    Role,
    SecurityRequirement,
    SecurityScheme,
    StringList,
    TaskState,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route

HOST = "127.0.0.1"
JSONRPC_PATH = "/a2a/jsonrpc"
REST_PATH = "/a2a/rest"
DEBUG_CONNECTIONS_PATH = "/debug/connections"
DEBUG_GRPC_PATH = "/debug/grpc"
CARD_CACHE_CONTROL = "public, max-age=60"

SLOW_TIMEOUT_S = 30.0
STREAM_DELAY_S = 0.05

logger = logging.getLogger("sdk_server")


# --------------------------------------------------------------------------------------------
# Agent
# --------------------------------------------------------------------------------------------


def _first_text(message: Any) -> str:
    if message is None:
        return ""
    for part in message.parts:
        if part.HasField("text"):
            return str(part.text)
    return ""


def _first_data_part(message: Any) -> Any:
    if message is None:
        return None
    for part in message.parts:
        if part.HasField("data"):
            return part
    return None


def _text_part(text: str) -> Any:
    return Part(text=text)


class ScriptedAgentExecutor(AgentExecutor):  # type: ignore[misc]
    """Behaviour chosen by the first text part of the user's message (see module docstring)."""

    def __init__(self, delay: float = 0.0) -> None:
        # task id -> event set when CancelTask is requested while the task waits.
        self._cancel_requested: dict[str, asyncio.Event] = {}
        self._delay = delay

    async def execute(self, context: Any, event_queue: Any) -> None:
        message = context.message
        text = _first_text(message)
        current = context.current_task

        # A follow-up message on a task parked in input-required.
        if current is not None and current.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            updater = TaskUpdater(event_queue, current.id, current.context_id)
            await updater.start_work()
            await updater.add_artifact([_text_part(f"echo: {text}")], name="echo")
            await updater.complete()
            return

        if self._delay:  # a slow agent (--delay): every new request waits first
            await asyncio.sleep(self._delay)

        if text.startswith("message"):
            await event_queue.enqueue_event(
                Message(
                    role=Role.ROLE_AGENT,
                    message_id=str(uuid.uuid4()),
                    context_id=context.context_id,
                    parts=[_text_part(f"pong: {text}")],
                )
            )
            return

        # Every other behaviour works on a task: publish it first (state submitted).
        task = new_task_from_user_message(message)
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
            cancel_requested = self._cancel_requested.setdefault(task.id, asyncio.Event())
            await updater.start_work()
            try:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(cancel_requested.wait(), SLOW_TIMEOUT_S)
                if not cancel_requested.is_set():
                    await updater.add_artifact([_text_part(f"echo: {text}")], name="echo")
                    await updater.complete()
                # When cancelled, cancel() below has already published the canceled state.
            finally:
                self._cancel_requested.pop(task.id, None)
        elif text.startswith("input"):
            await updater.requires_input(updater.new_agent_message([_text_part("need more input")]))
        elif text.startswith("fail"):
            await updater.failed(updater.new_agent_message([_text_part("it failed")]))
        else:
            await updater.start_work()
            await updater.add_artifact([_text_part(f"echo: {text}")], name="echo")
            data_part = _first_data_part(message)
            if data_part is not None:
                copied = Part()
                copied.CopyFrom(data_part)
                await updater.add_artifact([copied], name="data")
            await updater.complete()

    async def cancel(self, context: Any, event_queue: Any) -> None:
        task_id = context.task_id
        context_id = context.context_id
        if context_id is None and context.current_task is not None:
            context_id = context.current_task.context_id
        updater = TaskUpdater(event_queue, task_id, context_id or "")
        await updater.cancel(new_text_message("canceled", context_id=context_id, task_id=task_id))
        cancel_requested = self._cancel_requested.get(task_id)
        if cancel_requested is not None:
            cancel_requested.set()


# --------------------------------------------------------------------------------------------
# Cards and app
# --------------------------------------------------------------------------------------------


def build_agent_card(base_url: str, mode: str, grpc_target: str | None = None) -> Any:
    jsonrpc_url = f"{base_url}{JSONRPC_PATH}"
    rest_url = f"{base_url}{REST_PATH}"
    interfaces = [
        AgentInterface(url=jsonrpc_url, protocol_binding="JSONRPC", protocol_version="1.0"),
        AgentInterface(url=rest_url, protocol_binding="HTTP+JSON", protocol_version="1.0"),
    ]
    if grpc_target is not None:
        interfaces = [
            AgentInterface(url=grpc_target, protocol_binding="GRPC", protocol_version=version)
            for version in ("1.0", "0.3")
        ]
    if mode == "compat":
        interfaces += [
            AgentInterface(url=jsonrpc_url, protocol_binding="JSONRPC", protocol_version="0.3"),
            AgentInterface(url=rest_url, protocol_binding="HTTP+JSON", protocol_version="0.3"),
        ]
    return AgentCard(
        name="SDK Test Agent",
        description="Scripted A2A agent built with the official a2a-sdk, used by interop tests.",
        version="1.2.3",
        supported_interfaces=interfaces,
        provider=AgentProvider(organization="a2a-anyio tests", url="https://example.com/a2a-anyio"),
        documentation_url="https://example.com/a2a-anyio/docs",
        capabilities=AgentCapabilities(
            streaming=True, push_notifications=True, extended_agent_card=True
        ),
        # Declared only: the server does not check any credential.
        security_schemes={
            "bearer": SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(
                    scheme="Bearer",
                    bearer_format="JWT",
                    description="Declared for card tests; not enforced.",
                )
            )
        },
        security_requirements=[SecurityRequirement(schemes={"bearer": StringList(list=[])})],
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
    extended = AgentCard()
    extended.CopyFrom(card)
    extended.skills.append(
        AgentSkill(
            id="extended-skill",
            name="Extended skill",
            description="Only listed on the extended agent card.",
            tags=["extended"],
        )
    )
    return extended


def build_app(
    base_url: str,
    mode: str,
    delay: float = 0.0,
    open_connections: Callable[[], int] = lambda: 0,
    grpc: tuple[Any, int] | None = None,
) -> Starlette:
    """The app; with ``grpc`` (a grpc.aio server and the port it is bound to) the card lists
    its gRPC interfaces and the agent's services are added to it, the app serving the card
    alone."""
    compat = mode == "compat"
    card = build_agent_card(base_url, mode, None if grpc is None else f"{HOST}:{grpc[1]}")
    handler = DefaultRequestHandler(
        agent_executor=ScriptedAgentExecutor(delay),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        # Push configs are stored and served; no sender, so nothing is ever delivered.
        push_config_store=InMemoryPushNotificationConfigStore(),
        extended_agent_card=build_extended_card(card),
    )

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await handler.aclose()

    if grpc is not None:
        running: dict[object, str] = {}
        _add_grpc_services(grpc[0], handler, running)
        card_only = [
            *create_agent_card_routes(card, cache_control=CARD_CACHE_CONTROL),
            Route(DEBUG_GRPC_PATH, _debug_grpc(running), methods=["GET"]),
        ]
        return Starlette(routes=card_only, lifespan=lifespan)
    routes: list[BaseRoute] = [
        *create_agent_card_routes(card, cache_control=CARD_CACHE_CONTROL),
        *create_jsonrpc_routes(handler, rpc_url=JSONRPC_PATH, enable_v0_3_compat=compat),
        # Mounted (not path_prefix) so the SDK's "/{tenant}" sub-mount lives under the REST
        # URL instead of capturing every two-segment path of the app.
        Mount(REST_PATH, routes=create_rest_routes(handler, enable_v0_3_compat=compat)),
        # How many TCP connections the server holds open, this request's own included: lets
        # tests see from the server's side that a client really closed its connections.
        Route(DEBUG_CONNECTIONS_PATH, _debug_connections(open_connections), methods=["GET"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


def _grpc_server() -> tuple[Any, int]:
    """A grpc.aio server bound to a free port of 127.0.0.1, not started, and the port.
    grpcio is imported only here: the project's own environment has none."""
    import grpc.aio

    server = grpc.aio.server()
    return server, server.add_insecure_port(f"{HOST}:0")


def _add_grpc_services(server: Any, handler: Any, running: dict[object, str]) -> None:
    """The v1.0 service and the v0.3 one, both on the SDK's handlers, those that run the
    agent counted in ``running`` while they run (``grpc_handlers.py``)."""
    from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc
    from a2a.compat.v0_3.grpc_handler import CompatGrpcHandler
    from a2a.server.request_handlers import GrpcHandler
    from a2a.types import a2a_pb2_grpc

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository
    from tests.interop.grpc_handlers import counted

    v1, v03 = counted(GrpcHandler, running), counted(CompatGrpcHandler, running)
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(v1(handler), server)
    a2a_v0_3_pb2_grpc.add_A2AServiceServicer_to_server(v03(handler), server)


def _debug_grpc(running: dict[object, str]) -> Callable[[Request], Awaitable[Response]]:
    from tests.interop.grpc_handlers import report

    async def endpoint(_request: Request) -> Response:
        return JSONResponse(report(running))

    return endpoint


def _debug_connections(
    open_connections: Callable[[], int],
) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(_request: Request) -> Response:
        return JSONResponse({"open": open_connections()})

    return endpoint


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


def _bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    return sock


async def _serve(mode: str, sock: socket.socket, delay: float = 0.0) -> int:
    port = sock.getsockname()[1]
    base_url = f"http://{HOST}:{port}"
    servers: list[uvicorn.Server] = []
    grpc = _grpc_server() if mode == "grpc" else None
    config = uvicorn.Config(
        build_app(base_url, mode, delay, lambda: len(servers[0].server_state.connections), grpc),
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=3,
    )
    server = uvicorn.Server(config)
    servers.append(server)
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
    parser.add_argument("--mode", choices=("strict", "compat", "grpc"), required=True)
    parser.add_argument("--port", type=int, default=0, help="0 = a free port chosen by the OS")
    parser.add_argument(
        "--delay", type=float, default=0.0, help="seconds every new request waits (a slow agent)"
    )
    args = parser.parse_args(argv)

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    # uvicorn installs its own SIGINT/SIGTERM handlers while serving (graceful shutdown, and
    # sse-starlette hooks them to end open streams) and re-raises the signal once it is done.
    # These no-op handlers are what it restores and re-raises into, so the process exits 0.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda _signum, _frame: None)

    sock = _bind(args.port)
    try:
        return asyncio.run(_serve(args.mode, sock, args.delay))
    finally:
        sock.close()


if __name__ == "__main__":
    sys.exit(main())
