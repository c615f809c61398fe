"""The HTTP+JSON binding's codecs: operations as verbs and paths under the interface URL,
errors as ``google.rpc.Status`` (v1.0) or statuses with a message (v0.3)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from a2a_anyio._dialects._jsonrpc import loads_event
from a2a_anyio._dialects._values import retry_after
from a2a_anyio._dialects.base import Dialect
from a2a_anyio._dialects.ops import Op, OpArgs
from a2a_anyio._dialects.rest import (
    RestMapping,
    RestMatch,
    V03RestDialect,
    decode_rest_http,
    rest_error_body,
    unwrap_rest_event,
    version_base,
)
from a2a_anyio._dialects.v1 import V1Dialect
from a2a_anyio._dialects.wire import (
    EventDecoder,
    Fallback,
    R,
    WireCodec,
    WireRequest,
    header,
    raise_in,
)
from a2a_anyio._errors import A2AClientError
from a2a_anyio._model import StreamEvent


class RestEvents(EventDecoder):
    """Events of a REST stream: bare StreamResponses; an ``{"error": ...}`` event is raised."""

    def decode(self, data: str) -> StreamEvent:
        context = self.context
        value = unwrap_rest_event(
            loads_event(data, context),
            version=self._version,
            task_id=self.request.task_id,
            context=context,
        )
        try:
            return self.dialect.decode_event(value)
        except A2AClientError as exc:
            raise_in(context, exc)


def _dumps(value: Any) -> bytes | None:
    return None if value is None else json.dumps(value).encode()


class RestCodec(WireCodec):
    """A REST dialect under one interface URL; ``tenant`` becomes the first path segment.

    Subscribe is sent as POST with a GET alternative for a 405; CALL is not part of the
    binding.
    """

    binding = "rest"
    binding_name = "HTTP+JSON"
    missing_statuses = frozenset({404, 405, 501})
    #: The version whose paths ``RestMapping`` lays out.
    paths: str

    def __init__(
        self, url: str, *, tenant: str | None = None, extensions: Sequence[str] = ()
    ) -> None:
        super().__init__(url, tenant=tenant, extensions=extensions)
        self._mapping = RestMapping(self.paths, tenant)
        self._base = urlsplit(url)

    def variants(self) -> list[WireCodec]:
        """This wire at the interface URL without the version segment it ends in, when the
        paths add that segment again (a card naming ``.../v1`` for v0.3: some servers mean
        ``.../v1/v1/message:send``, most ``.../v1/message:send``)."""
        base = version_base(self.paths)
        path = self._base.path.rstrip("/")
        if not base or not path.endswith(base):
            return []
        url = urlunsplit(self._base._replace(path=path.removesuffix(base)))
        return [type(self)(url, tenant=self.tenant, extensions=self.extensions)]

    def _url(self, path: str, query: Mapping[str, str]) -> str:
        """``path`` (already percent-encoded) below the interface URL, with ``query`` added
        to any query the URL has."""
        base = self._base
        extra = urlencode(query)
        q = f"{base.query}&{extra}" if base.query and extra else base.query or extra
        return urlunsplit((base.scheme, base.netloc, base.path.rstrip("/") + path, q, ""))

    def _encode(self, op: Op, args: OpArgs) -> WireRequest[Any]:
        params, task_id = self.params(op, args)
        rest = self._mapping.request(op.value, params)
        url = self._url(rest.path, rest.query)
        headers = self.headers(op)
        idempotent = op.idempotent

        def build(method: str, body: Any, **more: Any) -> WireRequest[Any]:
            name = f"{method} {rest.path}"
            return WireRequest(
                op,
                method,
                url,
                headers,
                _dumps(body),
                idempotent,
                None,
                name,
                task_id,
                interface=self.url,
                **more,
            )

        if rest.alternative is not None:
            other = build(rest.method, rest.alternative)
            return build(rest.method, rest.body, alternative=other, when=Fallback.REJECTED)
        if rest.also is not None:
            other = build(rest.also, None)
            when = Fallback.METHOD_NOT_ALLOWED
            return build(rest.method, rest.body, alternative=other, when=when)
        return build(rest.method, rest.body)

    def decode(
        self, request: WireRequest[R], status: int, headers: Mapping[str, str], body: bytes
    ) -> R:
        """An error status is typed by ``ErrorInfo.reason``, then an error class name, then
        the v0.3 status table, else A2AHTTPError. See ``WireCodec.decode``."""
        wait = retry_after(header(headers, "retry-after")) if status >= 300 else None
        try:
            value = decode_rest_http(
                status,
                body,
                wait,
                version=self.version,
                task_id=request.task_id,
                context=request.context,
            )
        except A2AClientError as exc:
            self._refused(request, exc)
        return self._result(request, value)

    def event_decoder(self, request: WireRequest[Any]) -> EventDecoder:
        return RestEvents(self.dialect, request)

    def route(self, verb: str, path: str) -> RestMatch | None:
        """The operation a request's verb and path (below the interface URL) name, with the
        params its path carries (``RestMatch.params`` adds the query's and the body's); None
        when no operation of this binding and dialect has that path."""
        found = self._mapping.match(verb, path)
        return found if found is not None and self.supports(Op(found.route.op)) else None

    def _answer(self, value: Any, request_id: Any) -> Any:
        return {} if value is None else value  # a body is always an object (DELETE: {})

    def _error(self, code: int, message: str, data: Any, request_id: Any) -> tuple[int, Any]:
        return rest_error_body(self.paths, code, message, data)


class V1RestCodec(RestCodec):
    """A2A v1.0 over HTTP+JSON: v1.0 ProtoJSON, ``application/a2a+json``, no ``/v1``."""

    paths = "1.0"
    content_type = "application/a2a+json"

    @staticmethod
    def make_dialect(tenant: str | None) -> Dialect:
        return V1Dialect(None)  # the tenant goes into the path


class V03RestCodec(RestCodec):
    """A2A v0.3 over HTTP+JSON: ``/v1/...`` paths, ProtoJSON of the v0.3 proto."""

    paths = "0.3"

    @staticmethod
    def make_dialect(tenant: str | None) -> Dialect:
        return V03RestDialect()
