"""The gRPC handlers an interop server is running, for ``GET /debug/grpc``.

Imported by the gRPC servers of ``sdk_server.py`` and ``sdk03/server.py`` (each in its own
environment: standard library only). A handler counts from the moment grpcio calls it until
it returns or raises: a test sees from there that the server's handler of a call the client
left (a deadline, a cancel) ended, not only that the client stopped waiting. Each handler
is shown by its request (protobuf's text format): a test finds its call by a text it sent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

#: The handlers of the A2A services (v1.0 and v0.3) that run an agent.
UNARY = ("SendMessage",)
STREAMING = ("SendStreamingMessage", "SubscribeToTask", "TaskSubscription")


def counted(servicer: type, running: dict[object, str]) -> type:
    """A subclass of ``servicer`` whose agent-running handlers are in ``running`` while
    they run, each with its request."""
    namespace: dict[str, Any] = {}
    for name in UNARY:
        if hasattr(servicer, name):
            namespace[name] = _unary(getattr(servicer, name), running)
    for name in STREAMING:
        if hasattr(servicer, name):
            namespace[name] = _streaming(getattr(servicer, name), running)
    return type(f"Counted{servicer.__name__}", (servicer,), namespace)


def report(running: dict[object, str]) -> dict[str, Any]:
    """What ``GET /debug/grpc`` answers: ``{"open": N, "calls": [requests]}``."""
    return {"open": len(running), "calls": sorted(running.values())}


def _unary(handler: Any, running: dict[object, str]) -> Any:
    async def method(self: Any, request: Any, context: Any) -> Any:
        token = object()
        running[token] = str(request)
        try:
            return await handler(self, request, context)
        finally:
            del running[token]

    return method


def _streaming(handler: Any, running: dict[object, str]) -> Any:
    async def method(self: Any, request: Any, context: Any) -> AsyncIterator[Any]:
        token = object()
        running[token] = str(request)
        try:
            async for item in handler(self, request, context):
                yield item
        finally:
            del running[token]

    return method
