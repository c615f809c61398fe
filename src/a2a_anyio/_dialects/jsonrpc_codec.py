"""The JSON-RPC binding's codecs: one POST per call to the interface URL, results and errors
in JSON-RPC envelopes (every streamed event too)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any
from urllib.parse import urljoin

from a2a_anyio._dialects._jsonrpc import (
    decode_http,
    error_response,
    loads_event,
    request,
    response,
    unwrap,
)
from a2a_anyio._dialects._values import retry_after
from a2a_anyio._dialects.base import Dialect
from a2a_anyio._dialects.ops import Call, Op, OpArgs
from a2a_anyio._dialects.v03 import V02Dialect, V03Dialect
from a2a_anyio._dialects.v1 import V1Dialect
from a2a_anyio._dialects.wire import EventDecoder, R, WireCodec, WireRequest, header, raise_in
from a2a_anyio._errors import A2AClientError
from a2a_anyio._model import StreamEvent


class JsonRpcEvents(EventDecoder):
    """Events of a JSON-RPC stream: each a response envelope carrying the request's id."""

    def __init__(self, dialect: Dialect, request: WireRequest[Any]) -> None:
        if request.request_id is None:
            raise ValueError(f"{request.name} is no JSON-RPC request")
        super().__init__(dialect, request)
        self._id = request.request_id
        self._task_id = request.task_id

    def decode(self, data: str) -> StreamEvent:
        try:
            return self.dialect.decode_event(self.result(data))
        except A2AClientError as exc:
            raise_in(self.context, exc)

    def result(self, data: str) -> Any:
        """The result one event's envelope carries, or its error raised."""
        context = self.context
        return unwrap(
            loads_event(data, context),
            self._id,
            version=self._version,
            task_id=self._task_id,
            context=context,
        )


class CallEvents(JsonRpcEvents):
    """Events of a call answered with a stream: each result is the method's own, returned
    as it came (``ends`` is not asked: such a stream ends with its body)."""

    def decode(self, data: str) -> Any:
        return self.result(data)


class JsonRpcCodec(WireCodec):
    """A JSON-RPC dialect at one endpoint. CALL sends any method with the dialect's headers."""

    binding = "jsonrpc"
    binding_name = "JSON-RPC"

    def supports(self, op: Op) -> bool:
        return op is Op.CALL or super().supports(op)

    def _encode(self, op: Op, args: OpArgs) -> WireRequest[Any]:
        either = False
        if isinstance(args, Call):
            method, params, task_id = args.method, args.params, None
            idempotent, either = args.idempotent, args.stream
        else:
            method = self.dialect.methods[op.value]
            params, task_id = self.params(op, args)
            idempotent = op.idempotent
        req_id = self.next_id()
        body = json.dumps(request(method, params, req_id)).encode()
        headers = self.headers(op, either=either)
        return WireRequest(op, "POST", self.url, headers, body, idempotent, req_id, method, task_id)

    def decode(
        self, request: WireRequest[R], status: int, headers: Mapping[str, str], body: bytes
    ) -> R:
        """JSON-RPC errors are honoured whatever the HTTP status; a body that is no JSON-RPC
        response, or one for another id, raises A2AProtocolError. See ``WireCodec.decode``."""
        wait = header(headers, "retry-after") if status >= 300 else None
        context = request.context
        try:
            if request.request_id is None:  # a plain GET (the v0.2 extended card)
                from a2a_anyio._dialects.rest import decode_rest_http  # the REST binding's reader

                value = decode_rest_http(
                    status, body, retry_after(wait), version=self.version, context=context
                )
            else:
                value = decode_http(
                    status,
                    body,
                    request.request_id,
                    version=self.version,
                    task_id=request.task_id,
                    retry_after=wait,
                    context=context,
                )
        except A2AClientError as exc:
            self._refused(request, exc)
        return self._result(request, value)

    def event_decoder(self, request: WireRequest[Any]) -> EventDecoder:
        if request.op is Op.CALL:
            return CallEvents(self.dialect, request)
        return JsonRpcEvents(self.dialect, request)

    def op_for(self, method: str) -> Op | None:
        """The operation ``method`` names in this dialect (None: none)."""
        return next((Op(op) for op, m in self.dialect.methods.items() if m == method), None)

    def _answer(self, value: Any, request_id: Any) -> Any:
        return response(request_id, value)

    def _error(self, code: int, message: str, data: Any, request_id: Any) -> tuple[int, Any]:
        return 200, error_response(request_id, code, message, data)


class V1JsonRpcCodec(JsonRpcCodec):
    """A2A v1.0 over JSON-RPC: PascalCase methods, ``tenant`` in the params."""

    @staticmethod
    def make_dialect(tenant: str | None) -> Dialect:
        return V1Dialect(tenant)

    def params(self, op: Op, args: OpArgs) -> tuple[Any, str | None]:
        if op is Op.EXTENDED_CARD and self.tenant:
            return {"tenant": self.tenant}, None
        return super().params(op, args)


class V03JsonRpcCodec(JsonRpcCodec):
    """A2A v0.3 over JSON-RPC: the ``message/send`` family with ``kind`` discriminators."""

    @staticmethod
    def make_dialect(tenant: str | None) -> Dialect:
        return V03Dialect()


class V02JsonRpcCodec(JsonRpcCodec):
    """A2A v0.2 over JSON-RPC. Its extended card is no method but a plain GET of
    ``card_path`` on the endpoint's host."""

    card_path = "/agent/authenticatedExtendedCard"

    @staticmethod
    def make_dialect(tenant: str | None) -> Dialect:
        return V02Dialect()

    def __init__(
        self, url: str, *, tenant: str | None = None, extensions: Sequence[str] = ()
    ) -> None:
        super().__init__(url, tenant=tenant, extensions=extensions)
        self._card_headers = MappingProxyType(self._extension_headers())

    def supports(self, op: Op) -> bool:
        return op is Op.EXTENDED_CARD or super().supports(op)

    def _encode(self, op: Op, args: OpArgs) -> WireRequest[Any]:
        if op is not Op.EXTENDED_CARD:
            return super()._encode(op, args)
        url = urljoin(self.url, self.card_path)
        name = f"GET {self.card_path}"
        return WireRequest(
            op, "GET", url, self._card_headers, None, True, None, name, interface=self.url
        )

    def encode_result(self, op: Op, value: Any, request_id: Any = None) -> Any:
        if op is Op.EXTENDED_CARD:
            return value  # the answer to the plain GET: the card itself
        return super().encode_result(op, value, request_id)
