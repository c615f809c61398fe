"""python-a2a's binding: JSON-RPC envelopes routed by path, one path per method, its events
bare. Loaded only by clients whose agents speak it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from a2a_anyio._bindings.base import EventDecoder, WireRequest, loads_event, raise_in
from a2a_anyio._bindings.jsonrpc import JsonRpcCodec, is_envelope, unwrap
from a2a_anyio._dialects import Op, OpArgs
from a2a_anyio._errors import A2AClientError
from a2a_anyio._model import StreamEvent, Task


class BareEvents(EventDecoder):
    """Events of a stream whose data are the results themselves, no envelope around them (a
    JSON-RPC error envelope among them is raised)."""

    def decode(self, data: str) -> StreamEvent:
        context = self.context
        value = loads_event(data, context)
        if is_envelope(value):
            assert self.request.request_id is not None
            value = unwrap(
                value,
                self.request.request_id,
                codes=self.dialect.errors,
                task_id=self.request.task_id,
                context=context,
            )
        try:
            event: StreamEvent = self.dialect.decode(Op.STREAM, value)
        except A2AClientError as exc:
            raise_in(context, exc)
        return event


class PythonA2ACodec(JsonRpcCodec):
    """python-a2a's server (``python-a2a`` on PyPI): the ``tasks/send`` dialect in JSON-RPC
    envelopes, but one path per method under the root of its card's ``url`` rather than one
    endpoint: ``/a2a/tasks/send``, ``/a2a/tasks/get``, ``/a2a/tasks/cancel``, and
    ``tasks/sendSubscribe`` on ``/a2a/tasks/stream`` (an event stream of bare tasks). Each
    request, and each of its errors, names the path it went to."""

    paths = {  # noqa: RUF012
        Op.SEND: "/a2a/tasks/send",
        Op.STREAM: "/a2a/tasks/stream",
        Op.GET: "/a2a/tasks/get",
        Op.CANCEL: "/a2a/tasks/cancel",
    }
    not_served = {  # noqa: RUF012
        Op.SUBSCRIBE: "re-attaching to a task (its tasks/resubscribe reports a running task as "
        "completed half a second later)",
        Op.LIST: "listing tasks",
        Op.PUSH_CREATE: "push notification configs",
        Op.PUSH_GET: "push notification configs",
        Op.PUSH_LIST: "push notification configs",
        Op.PUSH_DELETE: "push notification configs",
        Op.EXTENDED_CARD: "an extended card",
        Op.CALL: "other methods (call(): each method has a path of its own there)",
    }

    def _bind(self) -> None:
        super()._bind()
        parts = urlsplit(self.url)
        # The routes hang off the app's root; its card may name the root or its /a2a page.
        root = parts.path.rstrip("/").removesuffix("/a2a")
        self._urls = {
            op: urlunsplit((parts.scheme, parts.netloc, root + path, parts.query, ""))
            for op, path in self.paths.items()
        }

    def supports(self, op: Op) -> bool:
        return op in self.paths and super().supports(op)

    def unsupported(self, op: Op) -> str:
        what = self.not_served.get(op, op.value)
        return f"python-a2a servers do not serve {what}"

    def _encode(self, op: Op, args: OpArgs) -> WireRequest[Any]:
        return replace(super()._encode(op, args), url=self._urls[op])

    def event_decoder(self, request: WireRequest[Any]) -> EventDecoder:
        return BareEvents(self.dialect, request)

    def encode_event(
        self, event: StreamEvent, request_id: Any = None, task: Task | None = None
    ) -> Any:
        return self.dialect.encode_event(event, task)  # bare, as python-a2a streams them
