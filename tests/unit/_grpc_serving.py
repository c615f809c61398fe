"""The gRPC codec the other way round, as the suite's own gRPC agent runs it: an RPC path
to its operation, a request's message to the operation's arguments, and the answers, events
and errors written as a gRPC server sends them. The library's gRPC binding is a client's
only; these tests check it against what they write here and what a2a-sdk's servers write."""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from a2a_anyio import (
    A2AServerError,
    ContentTypeNotSupportedError,
    ExtendedCardNotConfiguredError,
    ExtensionSupportRequiredError,
    InvalidAgentResponseError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    ParseError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from a2a_anyio._bindings import WireCodec, codec_for
from a2a_anyio._bindings.grpc import _FIELD, DOMAIN, GrpcCodec, _bytes, _message, _read
from a2a_anyio._dialects import Op, OpArgs
from a2a_anyio._dialects.errors import STANDARD
from a2a_anyio._errors import A2ARPCError
from a2a_anyio._model import JSONDict

#: The gRPC status of each A2A error (a2a-protocol §5.4), for a server's answer.
STATUS_OF: Mapping[type[A2ARPCError], int] = {
    ParseError: 13,
    InvalidRequestError: 3,
    MethodNotFoundError: 5,
    InvalidParamsError: 3,
    A2AServerError: 13,
    TaskNotFoundError: 5,
    TaskNotCancelableError: 9,
    PushNotificationNotSupportedError: 9,
    UnsupportedOperationError: 9,
    ContentTypeNotSupportedError: 3,
    InvalidAgentResponseError: 13,
    ExtendedCardNotConfiguredError: 9,
    ExtensionSupportRequiredError: 9,
    VersionNotSupportedError: 9,
}


def _unnamed(value: JSONDict, names: Mapping[str, str]) -> JSONDict:
    """The binding's resource names (``tasks/{id}``) read back into the members they name."""
    out = dict(value)
    for field, template in names.items():
        pieces = _FIELD.split(template)  # text, member, text, ...
        pattern = "".join(
            re.escape(x) if i % 2 == 0 else f"(?P<{x}>[^/]*)" for i, x in enumerate(pieces)
        )
        found = re.fullmatch(pattern, str(out.pop(field, "")))
        if found is not None:
            out.update({k: x for k, x in found.groupdict().items() if x})
    return out


class ServingGrpcCodec(GrpcCodec):
    """A ``GrpcCodec`` that also serves: ``op_for``, ``decode_request``, and the answers
    ``encode_result``, ``encode_event`` and ``encode_error`` write."""

    def op_for(self, path: str) -> Op | None:
        """The operation an RPC path names (None: none of this binding)."""
        return next((op for op in self.service.rpcs if self.path(op) == path), None)

    def decode_request(self, op: Op, body: bytes) -> OpArgs:
        """The args of ``op`` from a request's message (A2AProtocolError when it is none)."""
        rpc = self.service.rpcs[op]
        value = _read(self.service.message(rpc.request), body)
        return self.decode_params(op, _unnamed(value, rpc.names))

    def encode_result(self, op: Op, value: Any, request_id: Any = None) -> bytes:
        """The answer's message to ``op`` carrying ``value``."""
        rpc = self.service.rpcs[op]
        return _bytes(_message(self.service.message(rpc.response), self.dialect.encode(op, value)))

    def _answer(self, value: Any, request_id: Any) -> Any:
        """A stream event's message."""
        stream = self.service.message(self.service.rpcs[Op.STREAM].response)
        return _bytes(_message(stream, value))

    def _error(self, code: int, message: str, data: Any, request_id: Any) -> tuple[int, Any]:
        """The gRPC status and the trailers of an error: ``google.rpc.Status`` details with
        its ErrorInfo (v1.0), the error's class before the message (v0.3)."""
        from google.rpc import error_details_pb2, status_pb2

        cls = self.dialect.errors.get(code) or STANDARD.get(code) or A2AServerError
        status = STATUS_OF.get(cls, 13)
        if self.version != "1.0":
            return status, {"grpc-message": quote(f"{cls.__name__}: {message}")}
        details = status_pb2.Status(code=status, message=message)
        for item in data or []:
            info = error_details_pb2.ErrorInfo(
                reason=item.get("reason", ""), domain=DOMAIN, metadata=item.get("metadata", {})
            )
            details.details.add().Pack(info)
        encoded = base64.b64encode(details.SerializeToString()).decode()
        return status, {"grpc-message": quote(message), "grpc-status-details-bin": encoded}


def serving(codec: WireCodec) -> ServingGrpcCodec:
    """``codec`` (a gRPC one) as a server runs it."""
    assert isinstance(codec, GrpcCodec)
    return ServingGrpcCodec(
        codec.dialect, codec.url, tenant=codec.tenant, extensions=codec.extensions
    )


def serving_codec(version: str, url: str, **options: Any) -> ServingGrpcCodec:
    """The gRPC codec of ``version`` at ``url``, as a server runs it."""
    return serving(codec_for("grpc", version, url, **options))
