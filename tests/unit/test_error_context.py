"""Errors are built once, with their context, and the same failure is the same error on both
bindings.

An error says where it happened (agent, method, operation, JSON-RPC request id) from the moment
it is built; a layer that knows more (the retry count, the events of a stream, the schemes of
the card) raises a new error caused by the first, which stays as it was. Every test of the suite
also runs under a guard (``tests/conftest.py``) that fails on any attribute of an error set twice.
"""

from __future__ import annotations

import inspect
import json
import traceback
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest

import a2a_anyio
from a2a_anyio import (
    A2AAuthError,
    A2AClient,
    A2AClientError,
    A2AConnectionError,
    A2ADiscoveryError,
    A2AHTTPError,
    A2ANetworkPolicyError,
    A2AProtocolError,
    A2ARPCError,
    A2AServerError,
    A2ATimeoutError,
    AgentRegistryError,
    AuthRequiredError,
    ContextMismatchError,
    InvalidParamsError,
    MethodNotFoundError,
    OAuth2ClientCredentials,
    RetryPolicy,
    Task,
    TaskFailedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskState,
    TaskStatus,
    VersionNotSupportedError,
)
from a2a_anyio._bindings import codec_for
from a2a_anyio._bindings.base import HttpStatus
from a2a_anyio._card import MAX_CARD_BYTES
from a2a_anyio._dialects import Cancel, Op, OpArgs, Send, TaskRef
from a2a_anyio._errors import ErrorContext, instead, located
from a2a_anyio.cli._errors import classify

from ._support import (
    BASE,
    RPC_URL,
    FakeAgent,
    ScriptedBody,
    causes,
    drain,
    on_mock_clock,
    rpc_error_obj,
    rpc_result,
    sse_response,
    sse_text,
    v1_card,
)

pytestmark = pytest.mark.anyio


def shown_once(error: BaseException) -> None:
    """A layer that added context raised its copy in the error's place: no error of the same
    class in its chain of causes, so that a traceback shows it once."""
    assert not [c for c in causes(error)[1:] if type(c) is type(error)], causes(error)


REST_URL = BASE + "/rest"
WHERE: ErrorContext = {
    "agent": RPC_URL,
    "method": "GetTask",
    "operation": "get",
    "request_id": 7,
}
FAILED = Task("t-1", "c-1", TaskStatus(TaskState.FAILED))
AUTH = Task("t-1", "c-1", TaskStatus(TaskState.AUTH_REQUIRED))
V1_TASK = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}
V1_STATUS = {"statusUpdate": {"taskId": "t-1", "status": {"state": "TASK_STATE_WORKING"}}}


def _info(reason: str) -> list[dict[str, Any]]:
    return [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": reason,
            "domain": "a2a-protocol.org",
        }
    ]


# -- every class of the tree: built with its context, copied whole -------------------------------

# One instance of each class with every field it has set to something of its own.
SAMPLES: dict[type[A2AClientError], Callable[[], A2AClientError]] = {
    A2AClientError: lambda: A2AClientError("boom", **WHERE),
    A2ANetworkPolicyError: lambda: A2ANetworkPolicyError(
        "refused", url="http://10.0.0.1/", address="10.0.0.1", rule="private", **WHERE
    ),
    A2AConnectionError: lambda: A2AConnectionError("reset", request_sent=False, **WHERE),
    A2ATimeoutError: lambda: A2ATimeoutError("slow", timeout="read", request_sent=False, **WHERE),
    A2AHTTPError: lambda: A2AHTTPError(status_code=503, body="busy", retry_after=2.0, **WHERE),
    A2AAuthError: lambda: A2AAuthError(status_code=401, body="who?", schemes=["bearer"], **WHERE),
    A2ADiscoveryError: lambda: A2ADiscoveryError(
        "no card", status_code=503, retry_after=1.0, not_found=True, retryable=False, **WHERE
    ),
    A2AProtocolError: lambda: A2AProtocolError("too big", limit=10, **WHERE),
    ContextMismatchError: lambda: ContextMismatchError(
        expected_context_id="c-1", received_context_id="c-2", limit=None, **WHERE
    ),
    A2ARPCError: lambda: A2ARPCError("odd", code=-32050, data={"x": 1}, reason="ODD", **WHERE),
    TaskNotFoundError: lambda: TaskNotFoundError(
        "gone", task_id="t-1", data=_info("TASK_NOT_FOUND"), reason="TASK_NOT_FOUND", **WHERE
    ),
    TaskNotCancelableError: lambda: TaskNotCancelableError(
        "done", state=TaskState.COMPLETED, **WHERE
    ),
    A2AServerError: lambda: A2AServerError("kaput", code=-32042, data="why", **WHERE),
    TaskFailedError: lambda: TaskFailedError(task=FAILED, **WHERE),
    AuthRequiredError: lambda: AuthRequiredError(task=AUTH, schemes=["bearer"], **WHERE),
    AgentRegistryError: lambda: AgentRegistryError(
        "bad", path="agents.yaml", entry="x", field="url", variable="TOKEN"
    ),
}


def _tree() -> list[type[A2AClientError]]:
    return [
        obj
        for name in a2a_anyio.__all__
        if inspect.isclass(obj := getattr(a2a_anyio, name)) and issubclass(obj, A2AClientError)
    ]


def _sample(cls: type[A2AClientError]) -> A2AClientError:
    if cls in SAMPLES:
        return SAMPLES[cls]()
    assert issubclass(cls, A2ARPCError), f"add a sample of {cls.__name__}"
    return cls("refused", data=_info("X"), reason="X", **WHERE)  # the plain A2A codes


@pytest.mark.parametrize("cls", _tree(), ids=lambda c: c.__name__)
def test_with_context_makes_a_new_error_with_every_field(cls: type[A2AClientError]) -> None:
    original = _sample(cls)
    before, args = dict(vars(original)), original.args
    event = FAILED
    copy = original.with_context(message="boom again", attempts=3, events=[event])
    assert type(copy) is cls
    # It takes the original's place: its cause and traceback, not the original as its cause.
    assert copy.__cause__ is original.__cause__ and copy.__traceback__ is original.__traceback__
    assert vars(copy) == {**before, "message": "boom again", "attempts": 3, "events": [event]}
    assert copy.args == ("boom again",)
    assert (copy.retryable, getattr(copy, "code", None)) == (
        original.retryable,
        getattr(original, "code", None),
    )
    # The first error is left as it was, and the two share no list.
    assert vars(original) == before and original.args == args
    for name, value in vars(copy).items():
        if isinstance(value, list):
            assert value is not vars(original)[name]
    assert vars(original.with_context()) == before


def test_the_samples_cover_the_whole_tree() -> None:
    tree = _tree()
    assert len(tree) >= 24
    for cls in tree:
        err = _sample(cls)
        assert type(err) is cls
        if cls is not AgentRegistryError:  # a configuration mistake: no call to name
            assert (err.agent, err.method, err.operation, err.request_id) == (
                RPC_URL,
                "GetTask",
                "get",
                7,
            )


def test_with_context_refuses_a_field_the_error_does_not_have() -> None:
    with pytest.raises(TypeError, match="no field schemes"):
        A2AHTTPError(status_code=500).with_context(schemes=["bearer"])


def test_located_fills_in_only_what_is_missing() -> None:
    err = A2AProtocolError("bad shape", method="GetTask")
    filled = located(err, {"agent": RPC_URL, "method": "other", "operation": "get"})
    assert (filled.agent, filled.method, filled.operation) == (RPC_URL, "GetTask", "get")
    assert filled.__cause__ is None and err.agent is None
    assert located(filled, {"agent": "elsewhere", "request_id": None}) is filled


def test_str_names_the_method_or_else_the_operation() -> None:
    assert str(A2AConnectionError("down", **WHERE)) == f"down (GetTask at {RPC_URL})"
    assert str(A2ADiscoveryError("no card", agent=BASE, operation="card")) == (
        f"no card (card at {BASE})"
    )
    assert str(A2AProtocolError("odd")) == "odd"


def test_the_suite_refuses_an_error_changed_after_it_was_built() -> None:
    err = A2AConnectionError("reset")
    with pytest.raises(AssertionError, match="changed after"):
        err.agent = RPC_URL
    with pytest.raises(AssertionError, match="changed after"):
        err.events = [FAILED]
    err.__cause__ = OSError("reset by peer")  # chaining is Python's own
    assert err.agent is None and err.events == []


# -- the same failure, the same error, on both bindings ------------------------------------------


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any  # bytes as they are, anything else as JSON
    headers: tuple[tuple[str, str], ...] = ()

    def encoded(self, req_id: Any) -> bytes:
        body = self.body(req_id) if callable(self.body) else self.body
        return body if isinstance(body, bytes) else json.dumps(body).encode()


def _rpc_error(code: int, message: str, data: Any = None) -> Callable[[Any], Any]:
    return lambda req_id: rpc_error_obj(req_id, code, message, data)


def _status(code: int, message: str, reason: str | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if reason is not None:
        error["details"] = _info(reason)
    return {"error": error}


@dataclass(frozen=True)
class Same:
    """One failure as an agent answers it over JSON-RPC and over HTTP+JSON."""

    name: str
    version: str
    op: Op
    args: OpArgs
    rpc: Answer
    rest: Answer
    expected: type[A2AClientError]


GET = TaskRef("t-1")
SAME = [
    Same(
        "task not found",
        "1.0",
        Op.GET,
        GET,
        Answer(200, _rpc_error(-32001, "Task not found", _info("TASK_NOT_FOUND"))),
        Answer(404, _status(404, "Task not found", "TASK_NOT_FOUND")),
        TaskNotFoundError,
    ),
    Same(
        "task not cancelable",
        "1.0",
        Op.CANCEL,
        Cancel("t-1"),
        Answer(200, _rpc_error(-32002, "Task is done", _info("TASK_NOT_CANCELABLE"))),
        Answer(400, _status(400, "Task is done", "TASK_NOT_CANCELABLE")),
        TaskNotCancelableError,
    ),
    Same(
        "method not found",
        "1.0",
        Op.GET,
        GET,
        Answer(200, _rpc_error(-32601, "Method not found", _info("METHOD_NOT_FOUND"))),
        Answer(404, _status(404, "Method not found", "METHOD_NOT_FOUND")),
        MethodNotFoundError,
    ),
    Same(
        "version not supported, a JSON-RPC error object in a REST body",
        "1.0",
        Op.GET,
        GET,
        Answer(200, _rpc_error(-32009, "A2A-Version 1.0 required")),
        Answer(400, {"error": {"code": -32009, "message": "A2A-Version 1.0 required"}}),
        VersionNotSupportedError,
    ),
    Same(
        "unavailable, with Retry-After",
        "1.0",
        Op.GET,
        GET,
        Answer(503, b"busy", (("Retry-After", "7"),)),
        Answer(503, b"busy", (("Retry-After", "7"),)),
        A2AHTTPError,
    ),
    Same(
        "a proxy's 502 with a JSON status body",
        "1.0",
        Op.GET,
        GET,
        Answer(502, _status(502, "upstream unavailable")),
        Answer(502, _status(502, "upstream unavailable")),
        A2AHTTPError,
    ),
    Same(
        "too many requests, a JSON body",
        "1.0",
        Op.SEND,
        Send(a2a_anyio.Message.user("hi")),
        Answer(429, {"message": "slow down"}, (("Retry-After", "2"),)),
        Answer(429, {"message": "slow down"}, (("Retry-After", "2"),)),
        A2AHTTPError,
    ),
    Same(
        "no credentials",
        "1.0",
        Op.GET,
        GET,
        Answer(401, b"who are you?"),
        Answer(401, b"who are you?"),
        A2AAuthError,
    ),
    Same(
        "an HTML page instead of JSON",
        "1.0",
        Op.GET,
        GET,
        Answer(200, b"<html>login</html>"),
        Answer(200, b"<html>login</html>"),
        A2AProtocolError,
    ),
    Same(
        "task not found, v0.3",
        "0.3",
        Op.GET,
        GET,
        Answer(200, _rpc_error(-32001, "Task not found")),
        Answer(404, {"message": "Task not found"}),
        TaskNotFoundError,
    ),
    Same(
        "task not cancelable, v0.3",
        "0.3",
        Op.CANCEL,
        Cancel("t-1"),
        Answer(200, _rpc_error(-32002, "Task is done")),
        Answer(409, {"message": "Task is done"}),
        TaskNotCancelableError,
    ),
    Same(
        "invalid params, v0.3",
        "0.3",
        Op.GET,
        GET,
        Answer(200, _rpc_error(-32602, "Invalid parameters")),
        Answer(422, {"message": "Invalid parameters"}),
        InvalidParamsError,
    ),
]


def _what(err: A2AClientError) -> dict[str, Any]:
    """Everything an error says except how the binding names the call."""
    fields = {k: v for k, v in vars(err).items() if k not in ("agent", "method", "request_id")}
    return {**fields, "class": type(err), "code": getattr(err, "code", None)}


@pytest.mark.parametrize("case", SAME, ids=lambda c: c.name)
def test_the_same_failure_is_the_same_error_on_both_bindings(case: Same) -> None:
    seen = []
    for binding, url, answer in (("jsonrpc", RPC_URL, case.rpc), ("rest", REST_URL, case.rest)):
        codec = codec_for(binding, case.version, url)
        req = codec.encode(case.op, case.args)
        with pytest.raises(A2AClientError) as info:
            codec.decode(
                req, HttpStatus(answer.status), dict(answer.headers), answer.encoded(req.request_id)
            )
        err = info.value
        assert type(err) is case.expected
        # Built where the answer was read, with the call's context: nothing rebuilt it.
        assert err.__cause__ is None or not isinstance(err.__cause__, A2AClientError)
        assert (err.agent, err.method, err.operation) == (url, req.name, case.op.value)
        assert err.request_id == req.request_id
        assert (err.request_id is None) is (binding == "rest")
        seen.append(_what(err))
    assert seen[0] == seen[1]


def test_an_error_event_is_the_same_error_on_both_bindings() -> None:
    seen = []
    for binding, url in (("jsonrpc", RPC_URL), ("rest", REST_URL)):
        codec = codec_for(binding, "1.0", url)
        req = codec.encode(Op.SUBSCRIBE, TaskRef("t-1"))
        if binding == "jsonrpc":
            error = rpc_error_obj(1, -32001, "Task not found", _info("TASK_NOT_FOUND"))
        else:
            error = _status(404, "Task not found", "TASK_NOT_FOUND")
        with pytest.raises(TaskNotFoundError) as info:
            codec.event_decoder(req).decode(json.dumps(error))
        err = info.value
        assert (err.agent, err.method, err.request_id) == (url, req.name, req.request_id)
        assert (err.operation, err.task_id) == ("subscribe", "t-1")
        seen.append(_what(err))
    assert seen[0] == seen[1]


def test_a_payload_that_does_not_fit_names_the_call() -> None:
    # The payload decoders are pure and know no call: the codec raises a new error that does.
    codec = codec_for("jsonrpc", "1.0", RPC_URL)
    req = codec.encode(Op.GET, GET)
    body = json.dumps(rpc_result(req.request_id, {"id": "t-1"})).encode()  # no status
    with pytest.raises(A2AProtocolError) as info:
        codec.decode(req, HttpStatus(200), {}, body)
    err = info.value
    assert (err.agent, err.method, err.operation, err.request_id) == (
        RPC_URL,
        "GetTask",
        "get",
        req.request_id,
    )
    shown_once(err)


# -- through the client: both bindings, errors of the transport ----------------------------------


def _rest_card() -> dict[str, Any]:
    rest = {"url": REST_URL, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
    return v1_card(supportedInterfaces=[rest])


Handler = Callable[[httpx.Request], Any]


@asynccontextmanager
async def client_for(binding: str, handle: Handler, **options: Any) -> AsyncIterator[A2AClient]:
    """A client speaking ``binding`` to an agent whose calls ``handle`` answers."""

    async def serve(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/.well-known/agent-card.json":
            return httpx.Response(200, json=_rest_card())
        answer = handle(request)
        return await answer if inspect.isawaitable(answer) else answer  # type: ignore[no-any-return]

    where: dict[str, Any] = {"endpoint": RPC_URL, "protocol": "1.0"}
    if binding == "rest":
        where = {"url": BASE}
    async with (
        httpx.AsyncClient(transport=httpx.MockTransport(serve)) as http,
        A2AClient(http_client=http, **where, **options) as client,
    ):
        yield client


def _raiser(exc_type: type[httpx.TransportError]) -> Handler:
    def handle(request: httpx.Request) -> httpx.Response:
        raise exc_type("boom", request=request)

    return handle


@pytest.mark.parametrize(
    "exc_type", [httpx.ReadTimeout, httpx.ConnectError, httpx.ConnectTimeout, httpx.ReadError]
)
async def test_transport_failures_are_the_same_error_on_both_bindings(
    exc_type: type[httpx.TransportError],
) -> None:
    seen = []
    for binding, url in (("jsonrpc", RPC_URL), ("rest", REST_URL)):
        async with client_for(binding, _raiser(exc_type)) as client:
            with pytest.raises(A2AConnectionError) as info:
                await client.get_task("t-1")
        err = info.value
        assert (err.agent, err.operation) == (url, "get")
        assert err.method == ("GetTask" if binding == "jsonrpc" else "GET /tasks/t-1")
        assert (err.request_id is None) is (binding == "rest")
        # get is retried: the copy that says so is caused by the error built from httpx's.
        first = causes(err)
        assert isinstance(first[-1], exc_type) and len(first) == 3
        built = first[1]
        assert isinstance(built, A2AConnectionError) and built.attempts == 1
        assert (built.agent, built.method, built.request_id) == (
            err.agent,
            err.method,
            err.request_id,
        )
        what = _what(err)
        called = url + ("/tasks/t-1" if binding == "rest" else "")
        what["message"] = what["message"].replace(called, "<the agent>")
        seen.append(what)
    assert seen[0] == seen[1]
    assert seen[0]["attempts"] == 3 and seen[0]["message"].endswith("(gave up after 3 attempts)")


@on_mock_clock()
async def test_a_deadline_is_the_same_error_on_both_bindings() -> None:
    async def hang(request: httpx.Request) -> httpx.Response:
        await anyio.sleep_forever()
        raise AssertionError

    seen = []
    for binding, url in (("jsonrpc", RPC_URL), ("rest", REST_URL)):
        async with client_for(binding, hang, timeout=5) as client:
            with pytest.raises(A2ATimeoutError) as info:
                await client.get_task("t-1")
        err = info.value
        assert err.__cause__ is None  # built once, by the deadline
        assert (err.agent, err.operation, err.timeout) == (url, "get", "deadline")
        assert err.method == ("GetTask" if binding == "jsonrpc" else "GET /tasks/t-1")
        assert (err.request_id == 1) is (binding == "jsonrpc")
        seen.append(_what(err))
    assert seen[0] == seen[1]


# -- through the client: context at the top, nothing changed on the way up -----------------------


async def test_a_jsonrpc_error_reaches_the_caller_as_the_codec_built_it() -> None:
    agent = FakeAgent(v1_card())
    agent.errors["GetTask"] = {"code": -32001, "message": "gone", "data": _info("TASK_NOT_FOUND")}
    async with (
        httpx.AsyncClient(transport=agent.transport()) as http,
        A2AClient(BASE, http_client=http) as client,
    ):
        await client.get_card()
        with pytest.raises(TaskNotFoundError) as info:
            await client.get_task("t-9")
    err = info.value
    assert err.__cause__ is None and err.attempts == 1
    assert (err.agent, err.method, err.operation) == (RPC_URL, "GetTask", "get")
    assert (err.request_id, err.task_id) == (agent.calls[-1]["id"], "t-9")


async def test_an_http_error_of_a_rest_agent_names_the_interface() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, json=_status(404, "gone", "TASK_NOT_FOUND"))

    async with client_for("rest", handle) as client:
        with pytest.raises(TaskNotFoundError) as info:
            await client.get_task("t-9")
    err = info.value
    assert err.__cause__ is None
    assert (err.agent, err.method, err.operation, err.request_id) == (
        REST_URL,
        "GET /tasks/t-9",
        "get",
        None,
    )
    assert err.task_id == "t-9"


async def test_an_httpx_error_is_mapped_once_with_the_call() -> None:
    async with client_for("jsonrpc", _raiser(httpx.ConnectError), retry=RetryPolicy(1)) as client:
        with pytest.raises(A2AConnectionError) as info:
            await client.send_message("x")
    err = info.value
    assert isinstance(err.__cause__, httpx.ConnectError)
    assert (err.agent, err.method, err.operation, err.request_id) == (
        RPC_URL,
        "SendMessage",
        "send",
        1,
    )
    assert not err.request_sent


async def test_ping_and_card_errors_say_so() -> None:
    async with client_for("jsonrpc", _raiser(httpx.ConnectError), retry=RetryPolicy(1)) as client:
        with pytest.raises(A2AConnectionError) as info:
            await client.ping()
    assert (info.value.agent, info.value.operation) == (RPC_URL, "ping")

    def missing(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404)

    async with (
        httpx.AsyncClient(transport=httpx.MockTransport(missing)) as http,
        A2AClient(BASE, http_client=http) as client,
    ):
        with pytest.raises(A2ADiscoveryError) as card:
            await client.send_message("x")
    err = card.value
    assert err.not_found and err.__cause__ is None
    assert (err.agent, err.operation, err.method) == (BASE, "card", None)
    assert str(err).endswith(f"(card at {BASE})")


async def test_an_oversize_card_is_told_by_its_limit_not_by_its_message() -> None:
    host = "https://bytes.example.com"  # "bytes" in every message about this agent

    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("agent-card.json"):
            return httpx.Response(200, content=b"{" + b" " * MAX_CARD_BYTES + b"}")
        return httpx.Response(404)

    def undecodable(request: httpx.Request) -> httpx.Response:
        headers = {"content-encoding": "gzip", "content-type": "application/json"}
        return httpx.Response(200, headers=headers, content=b"not gzip at all")

    for handler, expected in ((handle, "is larger than"), (undecodable, "undecodable")):
        async with (
            httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http,
            A2AClient(host, http_client=http, retry=RetryPolicy(1)) as client,
        ):
            with pytest.raises(A2ADiscoveryError) as info:
                await client.get_card()
        err = info.value
        assert expected in err.message
        assert (err.agent, err.operation) == (host, "card")
        cause = err.__cause__
        assert isinstance(cause, A2AProtocolError)
        assert cause.limit == (MAX_CARD_BYTES if handler is handle else None)


def test_the_cli_tells_a_missing_card_by_its_flag() -> None:
    found = classify(A2ADiscoveryError("no agent card found (x)"))
    assert found.code == "A2ACLI_ERR_CARD_INVALID"
    missing = classify(A2ADiscoveryError("nothing at the usual places", not_found=True))
    assert missing.code == "A2ACLI_ERR_CARD_NOT_FOUND"


async def test_the_token_endpoint_failing_names_the_call_that_needed_it() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/token":
            return httpx.Response(400, json={"error": "invalid_client"})
        return httpx.Response(200, json=rpc_result(1, V1_TASK))

    auth = OAuth2ClientCredentials(BASE + "/token", "client", "wrong")
    async with client_for("jsonrpc", handle, auth=auth) as client:
        with pytest.raises(A2AAuthError) as info:
            await client.get_task("t-1")
    err = info.value
    assert "the token endpoint" in err.message and err.status_code == 400
    assert (err.agent, err.method, err.operation, err.request_id) == (
        RPC_URL,
        "GetTask",
        "get",
        1,
    )
    shown_once(err)


async def test_the_schemes_of_the_card_come_in_a_new_error() -> None:
    card = v1_card(
        securitySchemes={"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
        securityRequirements=[{"schemes": {"bearer": {"list": ["tasks.read"]}}}],
    )

    def handle(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json=card)
        return httpx.Response(401, text="who are you?")

    async with (
        httpx.AsyncClient(transport=httpx.MockTransport(handle)) as http,
        A2AClient(BASE, http_client=http) as client,
    ):
        with pytest.raises(A2AAuthError) as info:
            await client.get_task("t-1")
    err = info.value
    assert err.schemes == ["bearer (HTTP Bearer with scopes tasks.read)"]
    assert err.message == "HTTP 401: who are you? (the agent asks for: " + err.schemes[0] + ")"
    assert (err.agent, err.method, err.request_id) == (RPC_URL, "GetTask", 1)
    shown_once(err)


async def test_giving_up_is_a_new_error_caused_by_the_last_one() -> None:
    def busy(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, text="busy")

    async with client_for("jsonrpc", busy) as client:
        with pytest.raises(A2AHTTPError) as info:
            await client.get_task("t-1")
    err = info.value
    assert (err.attempts, err.status_code, err.retryable) == (3, 503, True)
    assert err.message == "HTTP 503: busy (gave up after 3 attempts)"
    last = err.__cause__
    assert isinstance(last, A2AHTTPError) and last.__cause__ is None
    assert (last.attempts, last.message) == (1, "HTTP 503: busy")
    assert {**_what(last), "attempts": 3, "message": err.message} == _what(err)
    assert (last.request_id, err.request_id) == (1, 1)


@on_mock_clock()
@pytest.mark.retry_delays
async def test_giving_up_at_the_retry_deadline_says_so() -> None:
    def later(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, headers={"Retry-After": "5"})

    policy = RetryPolicy(attempts=5, deadline=1.0)
    async with client_for("jsonrpc", later, retry=policy) as client:
        with pytest.raises(A2AHTTPError) as info:
            await client.get_task("t-1")
    err = info.value
    assert err.attempts == 1
    assert err.message == "HTTP 503 (gave up after the 1.0s retry deadline)"
    assert isinstance(err.__cause__, A2AHTTPError) and err.__cause__.message == "HTTP 503"


# -- streams: the events before a failure ---------------------------------------------------------


def _stream_agent(payloads: Callable[[Any], list[Any]], **body: Any) -> FakeAgent:
    agent = FakeAgent(None)

    def respond(req_id: Any, params: Any) -> httpx.Response:
        text = sse_text(payloads(req_id))
        return sse_response(ScriptedBody([text.encode()], **body))

    agent.responders["SendStreamingMessage"] = respond
    return agent


@asynccontextmanager
async def stream_client(agent: FakeAgent, **options: Any) -> AsyncIterator[A2AClient]:
    async with (
        httpx.AsyncClient(transport=agent.transport()) as http,
        A2AClient(endpoint=RPC_URL, protocol="1.0", http_client=http, **options) as client,
    ):
        yield client


async def test_an_error_event_comes_back_with_the_events_before_it() -> None:
    agent = _stream_agent(
        lambda req_id: [
            rpc_result(req_id, {"task": V1_TASK}),
            rpc_result(req_id, V1_STATUS),
            rpc_error_obj(req_id, -32603, "the agent crashed"),
        ],
        hang=True,
    )
    received: list[Any] = []
    async with stream_client(agent) as client:
        with pytest.raises(A2AServerError) as info:
            await drain(client.stream_message("x"), received)
    err = info.value
    assert err.events == received and len(received) == 2
    assert (err.agent, err.method, err.operation, err.request_id) == (
        RPC_URL,
        "SendStreamingMessage",
        "stream",
        1,
    )
    assert isinstance(err, A2AServerError)
    shown_once(err)


async def test_a_stream_that_ends_early_says_where_and_what_came_before() -> None:
    agent = _stream_agent(lambda req_id: [rpc_result(req_id, {"task": V1_TASK})])
    async with stream_client(agent, resume=False) as client:
        with pytest.raises(A2AConnectionError, match="ended before") as info:
            await drain(client.stream_message("x"))
    err = info.value
    assert [type(e) for e in err.events] == [Task]
    assert (err.agent, err.method, err.request_id) == (RPC_URL, "SendStreamingMessage", 1)
    shown_once(err)


@on_mock_clock()
async def test_a_stream_time_limit_says_everything_and_comes_from_the_connection() -> None:
    agent = _stream_agent(lambda req_id: [rpc_result(req_id, {"task": V1_TASK})], hang=True)
    async with stream_client(agent, idle_timeout=5) as client:
        with pytest.raises(A2ATimeoutError) as info:
            await drain(client.stream_message("x"))
    err = info.value
    assert err.timeout == "stream-idle"
    assert [type(e) for e in err.events] == [Task]
    where = (RPC_URL, "SendStreamingMessage", "stream", 1)
    assert (err.agent, err.method, err.operation, err.request_id) == where
    # The connection's own error, with the events the stream delivered, in its place.
    assert str(err).startswith("stream idle timeout: nothing from ")
    shown_once(err)


def test_an_error_given_context_is_shown_once_in_its_traceback() -> None:
    def deep() -> None:
        raise A2AProtocolError("bad shape") from ValueError("the reason")

    with pytest.raises(A2AProtocolError) as info:
        try:
            deep()
        except A2AProtocolError as exc:
            instead(located(exc, {"agent": RPC_URL}))
    text = "".join(traceback.format_exception(info.value))
    assert text.count("A2AProtocolError: bad shape") == 1 and info.value.agent == RPC_URL
    assert "in deep" in text and "ValueError: the reason" in text  # its frames and its cause
