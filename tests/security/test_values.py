"""Every value a server sends is untrusted: a bad one is a typed ``A2AClientError``.

A hostile agent (an ``httpx.MockTransport`` handler of the suite's own, which can send bytes
no real server library would) answers with ``Retry-After`` values no one can read, SSE
``retry:`` and ``id:`` fields of thousands of digits, card interface URLs and redirect
``Location`` values that cannot be requested, ETags a header cannot carry back, task and
context ids with lone surrogates, and JSON numbers beyond Python's int-string limit. Every
call ends with a result or an ``A2AClientError`` subclass that says what was wrong, never a
``ValueError``, ``UnicodeError``, ``OverflowError`` or ``KeyError``. The last test sends
mutated answers of each shape (hypothesis).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from a2a_anyio import (
    A2AClient,
    A2AClientError,
    A2AConnectionError,
    A2ADiscoveryError,
    A2AHTTPError,
    A2AProtocolError,
    A2ATimeoutError,
    OAuth2ClientCredentials,
    RetryAttempt,
    RetryPolicy,
    Task,
    TaskState,
)
from a2a_anyio.testing import serve_app
from tests.unit._support import (
    MOCK_CLOCK_BACKENDS,
    mock_clock_options,
    on_mock_clock,
    rpc_result,
    v1_card,
)
from tests.unit.test_fuzz import REQ_ID, envelopes, http_bodies, mutated_frames, sse_bodies

pytestmark = pytest.mark.anyio

OWN = "https://agent.example.com"
RPC = OWN + "/a2a"
REST = OWN + "/rest"
TASK: dict[str, Any] = {
    "id": "t-1",
    "contextId": "c-1",
    "status": {"state": "TASK_STATE_COMPLETED"},
}
WORKING: dict[str, Any] = {**TASK, "status": {"state": "TASK_STATE_WORKING"}}
CARD_PATH = "/.well-known/agent-card.json"
Override = Callable[[httpx.Request], httpx.Response | None]


def interface(url: str, binding: str = "JSONRPC") -> dict[str, str]:
    return {"url": url, "protocolBinding": binding, "protocolVersion": "1.0"}


def body(value: Any) -> bytes:
    """JSON as a server writes it; lone surrogates become ``\\udXXX`` escapes."""
    return json.dumps(value).encode()


def jsonrpc(request: httpx.Request) -> tuple[Any, str, Any]:
    call = json.loads(request.content)
    return call["id"], call["method"], call.get("params")


class Agent:
    """A v1.0 agent behind a MockTransport: its card (JSON-RPC and REST interfaces, or those
    given), well-formed answers to every operation, and ``override`` to answer otherwise."""

    def __init__(self, *interfaces: dict[str, str], task: dict[str, Any] = TASK) -> None:
        self.card = v1_card(
            supportedInterfaces=list(interfaces) or [interface(RPC), interface(REST, "HTTP+JSON")]
        )
        self.task = task
        self.requests: list[httpx.Request] = []
        self.override: Override | None = None

    @property
    def calls(self) -> list[httpx.Request]:
        """The requests but the card's."""
        return [r for r in self.requests if r.url.path != CARD_PATH]

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        await anyio.lowlevel.checkpoint()
        if self.override is not None and (answer := self.override(request)) is not None:
            return answer
        return self.normal(request)

    def normal(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if request.method == "GET" and "well-known" in path:
            return httpx.Response(200, content=body(self.card))
        if path.startswith("/rest"):
            if path.endswith(":send"):
                return httpx.Response(200, content=body({"task": self.task}))
            if path == "/rest/tasks":
                return httpx.Response(200, content=body({"tasks": [self.task]}))
            return httpx.Response(200, content=body(self.task))
        if request.method != "POST":
            return httpx.Response(405)
        req_id, method, _ = jsonrpc(request)
        result = {"task": self.task} if method == "SendMessage" else self.task
        if method == "ListTasks":
            result = {"tasks": [self.task]}
        return httpx.Response(200, content=body(rpc_result(req_id, result)))

    def client(self, url: str = OWN, **options: Any) -> A2AClient:
        http = httpx.AsyncClient(transport=httpx.MockTransport(self.handle))
        return A2AClient(url, http_client=http, **options)


def sse(*payloads: Any, extra: bytes = b"") -> httpx.Response:
    """An event stream carrying ``payloads``, each event preceded by the ``extra`` lines."""
    events = b"".join(extra + b"data: " + body(p) + b"\n\n" for p in payloads)
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=events)


# -- Retry-After -------------------------------------------------------------------------------
#
# An unreadable Retry-After is ignored: the policy's backoff is used, and a 503 carrying one is
# no refusal (a send is not retried). A date in the past means now. A huge value is capped at
# ``max_retry_after``, which ends the call at once when it falls past the call's deadline.

UNREADABLE = [
    "²".encode(),  # superscript two: str.isdigit() says yes, float() says no
    "¹²³".encode(),
    b"\xb2",  # the same superscript in Latin-1
    "١٢".encode(),  # Arabic-Indic digits
    "\uff11\uff12".encode(),  # fullwidth digits
    b"-1",
    b"+3",
    b"1.5",
    b"1e3",
    b"0x10",
    b"soon",
    b"3, 4",
    b"Mon, 32 Foo 2025 99:99:99 GMT",
    b"Wed, 21 Oct 99999 07:28:00 GMT",
    b"Wed, 21 Oct 2015 07:28:00 +9999",
]
PAST = [
    b"0",
    b"Wed, 21 Oct 2015 07:28:00 GMT",
    b"Thu, 01 Jan 1970 00:00:00 GMT",
    b"Mon, 01 Jan 0001 00:00:00 GMT",
]
HUGE = [b"9" * 5000, b"1" + b"0" * 30, b"Fri, 31 Dec 9999 23:59:59 GMT"]


def busy_once(status: int, retry_after: bytes) -> Override:
    """Answer the first request but the card's with ``status`` and ``Retry-After``."""
    answered: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response | None:
        if "well-known" in request.url.path or answered:
            return None
        answered.append(request)
        return httpx.Response(status, headers=[(b"retry-after", retry_after)], text="busy")

    return answer


@on_mock_clock()
@pytest.mark.parametrize("value", UNREADABLE, ids=repr)
@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_an_unreadable_retry_after_is_ignored(value: bytes, binding: str) -> None:
    agent = Agent()
    seen: list[RetryAttempt] = []
    policy = RetryPolicy(backoff=8, max_backoff=8, on_retry=seen.append)
    async with agent.client(bindings=(binding,), retry=policy) as client:
        await client.get_card()
        agent.override = busy_once(503, value)
        start = anyio.current_time()
        task = await client.get_task("t-1")  # retried after the backoff
        took = anyio.current_time() - start
        agent.override = busy_once(503, value)
        with pytest.raises(A2AHTTPError) as info:
            await client.send_message("hi")  # not a refusal: a send is not repeated
    assert task.id == "t-1"
    [attempt] = seen
    assert isinstance(attempt.error, A2AHTTPError) and attempt.error.retry_after is None
    assert 0 <= attempt.delay <= 8 and took == pytest.approx(attempt.delay)
    assert info.value.status_code == 503 and info.value.retry_after is None
    assert len(agent.calls) == 3


@on_mock_clock()
@pytest.mark.parametrize("value", UNREADABLE[:4], ids=repr)
async def test_an_unreadable_retry_after_on_the_card_is_ignored(value: bytes) -> None:
    agent = Agent()
    first: list[httpx.Request] = []

    def busy_card(request: httpx.Request) -> httpx.Response | None:
        if first:
            return None
        first.append(request)
        return httpx.Response(503, headers=[(b"retry-after", value)])

    agent.override = busy_card
    start = anyio.current_time()
    async with agent.client(retry=RetryPolicy(backoff=8, max_backoff=8)) as client:
        card = await client.get_card()
    assert 0 <= anyio.current_time() - start <= 8
    assert card.name == "Test Agent" and len(agent.requests) == 2


@on_mock_clock()
@pytest.mark.parametrize("value", PAST, ids=repr)
@pytest.mark.parametrize("status", [429, 503])
async def test_a_retry_after_in_the_past_means_now(value: bytes, status: int) -> None:
    agent = Agent()
    seen: list[RetryAttempt] = []
    policy = RetryPolicy(backoff=1000, max_backoff=1000, on_retry=seen.append)
    async with agent.client(retry=policy) as client:
        await client.get_card()
        agent.override = busy_once(status, value)
        start = anyio.current_time()
        result = await client.send_message("hi")  # a refusal: even a send is sent again
        assert anyio.current_time() == start
    assert isinstance(result, Task)
    assert [a.delay for a in seen] == [0.0]
    assert isinstance(seen[0].error, A2AHTTPError) and seen[0].error.retry_after == 0.0
    assert len(agent.calls) == 2


@on_mock_clock()
@pytest.mark.parametrize("value", HUGE, ids=lambda v: repr(v[:20]))
async def test_a_huge_retry_after_ends_the_call_at_its_deadline(value: bytes) -> None:
    agent = Agent()
    async with agent.client(timeout=30) as client:
        await client.get_card()
        agent.override = busy_once(429, value)
        start = anyio.current_time()
        with pytest.raises(A2ATimeoutError) as info:
            await client.send_message("hi")
        assert anyio.current_time() == start  # not waited
    assert info.value.timeout == "deadline" and "past the call's deadline" in str(info.value)
    cause = info.value.__cause__
    assert isinstance(cause, A2AHTTPError) and cause.retry_after is not None
    assert cause.retry_after > 30
    # Without a deadline, the wait is capped at max_retry_after.
    async with agent.client(timeout=None, retry=RetryPolicy(max_retry_after=120)) as client:
        agent.override = busy_once(503, value)
        start = anyio.current_time()
        task = await client.get_task("t-1")
        assert anyio.current_time() - start == 120
    assert task.id == "t-1"


# -- SSE fields --------------------------------------------------------------------------------

SSE_FIELDS = [
    b"retry: " + b"9" * 5000 + b"\n",
    b"retry: " + "²".encode() + b"\n",
    b"retry: -1\nretry: 1e9\n",
    b"id: " + b"9" * 5000 + b"\n",
    b"id: a\x00b\n",
    b"id: \xff\xfe\n",
    b"event: " + b"x" * 5000 + b"\n",
    b"retry\nid\nevent\n",
]


@pytest.mark.parametrize("extra", SSE_FIELDS, ids=lambda v: repr(v[:20]))
@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_sse_retry_and_id_fields_of_any_size_are_ignored(extra: bytes, binding: str) -> None:
    agent = Agent()
    events = [{"task": WORKING}, {"statusUpdate": {**TASK, "taskId": "t-1"}}]

    def stream(request: httpx.Request) -> httpx.Response | None:
        if "well-known" in request.url.path:
            return None
        if binding == "rest":
            return sse(*events, extra=extra)
        req_id, _, _ = jsonrpc(request)
        return sse(*(rpc_result(req_id, e) for e in events), extra=extra)

    agent.override = stream
    async with (
        agent.client(bindings=(binding,)) as client,
        client.stream_message("hi") as stream_,
    ):
        result = await stream_.result()
    assert isinstance(result, Task) and result.state is TaskState.COMPLETED


# -- URLs from the server: card interfaces and redirects -----------------------------------------

BAD_URLS = [
    ("file:///etc/passwd", "not an absolute http(s) URL"),
    ("ftp://agent.example.com/a2a", "not an absolute http(s) URL"),
    ("javascript:alert(1)", "not an absolute http(s) URL"),
    ("data:application/json,{}", "not an absolute http(s) URL"),
    ("http:///a2a", "not an absolute http(s) URL"),
    ("http://agent.example.com:99999/a2a", "invalid port"),
    ("http://agent.example.com:0/a2a", "invalid port"),
    ("http://agent.example.com:-1/a2a", "invalid port"),
    ("http://agent.example.com:8o8o/a2a", "invalid port"),
    ("//agent.example.com:99999/a2a", "invalid port"),  # relative, on the card's scheme
    ("http://[::1/a2a", "cannot be read"),
    ("//[::1/a2a", "cannot be read"),
    ("http://[zz::1]/a2a", "cannot be read"),
    ("https://agent.example.com/a\x00b", "cannot be read"),
]
SURROGATES = [
    ("http://\ud800.example/a2a", "lone surrogate"),
    ("https://agent.example.com/\udc80", "lone surrogate"),
]
Operation = Callable[[A2AClient], Awaitable[object]]


async def _stream(client: A2AClient) -> object:
    async with client.stream_message("hi") as stream:
        return await stream.result()


OPERATIONS: dict[str, Operation] = {
    "send": lambda c: c.send_message("hi"),
    "get": lambda c: c.get_task("t-1"),
    "stream": _stream,
    "call": lambda c: c.call("GetTask", {"id": "t-1"}),
}


@pytest.mark.parametrize(("url", "why"), BAD_URLS + SURROGATES, ids=repr)
@pytest.mark.parametrize("operation", sorted(OPERATIONS))
async def test_a_card_interface_url_that_cannot_be_called(
    url: str, why: str, operation: str
) -> None:
    agent = Agent(interface(url))
    async with agent.client() as client:
        with pytest.raises(A2ADiscoveryError, match=re.escape(why)) as info:
            await OPERATIONS[operation](client)
    assert "no interface URL this client can call" in str(info.value)
    assert agent.calls == []


@pytest.mark.parametrize(
    ("url", "called"),
    [
        ("/rpc", OWN + "/rpc"),
        ("rpc", OWN + "/.well-known/rpc"),  # relative to the card's own URL
        ("../a2a", OWN + "/a2a"),
        ("//agent.example.com:8443/a2a", "https://agent.example.com:8443/a2a"),
    ],
)
async def test_a_relative_interface_url_is_the_cards_own(url: str, called: str) -> None:
    agent = Agent(interface(url))
    async with agent.client() as client:
        await client.get_task("t-1")
    assert [str(r.url) for r in agent.calls] == [called]


async def test_an_interface_that_cannot_be_called_is_skipped_for_the_next() -> None:
    agent = Agent(interface("javascript:alert(1)"), interface(RPC))
    async with agent.client() as client:
        await client.get_task("t-1")
    assert [str(r.url) for r in agent.calls] == [RPC]


def redirect(location: bytes, status: int = 307) -> Override:
    """Answer the agent's endpoint with a redirect to ``location`` (the card is served)."""

    def answer(request: httpx.Request) -> httpx.Response | None:
        if request.url.path != "/a2a":
            return None
        return httpx.Response(status, headers=[(b"location", location)])

    return answer


@pytest.mark.parametrize(("url", "why"), BAD_URLS, ids=repr)
@pytest.mark.parametrize("operation", ["send", "get", "stream"])
async def test_a_redirect_that_cannot_be_followed(url: str, why: str, operation: str) -> None:
    agent = Agent(interface(RPC))
    agent.override = redirect(url.encode())
    async with agent.client() as client:
        with pytest.raises(A2AProtocolError, match="refusing a redirect") as info:
            await OPERATIONS[operation](client)
    assert why in str(info.value) or "Location cannot be read" in str(info.value)
    assert [r.url.path for r in agent.calls] == ["/a2a"]  # nothing else was asked, once


@pytest.mark.parametrize(
    ("location", "followed"),
    [
        (b"/a2a-new", OWN + "/a2a-new"),
        (b"a2a-new", OWN + "/a2a-new"),
        (b"//agent.example.com:8443/b", "https://agent.example.com:8443/b"),
        ("https://agent.example.com/é".encode(), OWN + "/%C3%A9"),
        (b"https://agent.example.com/\xed\xa0\x80", OWN + "/%C3%AD%C2%A0%C2%80"),
    ],
)
async def test_a_redirect_that_can_be_followed_is(location: bytes, followed: str) -> None:
    agent = Agent(interface(RPC))
    agent.override = redirect(location, 308)
    async with agent.client() as client:
        await client.get_task("t-1")
    assert [str(r.url) for r in agent.calls] == [RPC, followed]


@pytest.mark.parametrize("location", [b"http://[::1/token", b"https://agent.example.com:0/t"])
async def test_a_token_endpoint_redirect_that_cannot_be_read_is_refused(location: bytes) -> None:
    """The OAuth token request holds the client secret: a redirect whose Location cannot be
    read is refused (as one to another origin when only its origin cannot be read)."""
    agent = Agent(interface(RPC))

    def token(request: httpx.Request) -> httpx.Response | None:
        if request.url.path == "/token":
            return httpx.Response(307, headers=[(b"location", location)])
        return None

    agent.override = token
    auth = OAuth2ClientCredentials(OWN + "/token", "client", "secret")
    async with agent.client(auth=auth) as client:
        with pytest.raises(A2AClientError, match=r"refusing a redirect|another origin"):
            await client.get_task("t-1")
    assert [r.url.path for r in agent.requests] == ["/token"]  # nothing sent elsewhere


# -- ETag --------------------------------------------------------------------------------------

BAD_ETAGS = [
    '"étag"'.encode(),  # UTF-8
    b'"\xff"',  # Latin-1
    b'"a\x01b"',  # a control character
    b'"' + b"x" * 10_000 + b'"',  # longer than any header should carry back
]


@pytest.mark.parametrize("etag", BAD_ETAGS, ids=lambda v: repr(v[:10]))
async def test_an_etag_a_header_cannot_carry_does_not_poison_refreshes(etag: bytes) -> None:
    agent = Agent()
    etags = [etag, b'"v2"', b'"v2"']
    answers: list[int] = []

    def card(request: httpx.Request) -> httpx.Response | None:
        if "well-known" not in request.url.path:
            return None
        tag = etags[len(answers)]
        answers.append(304 if request.headers.get("if-none-match") == '"v2"' else 200)
        if answers[-1] == 304:
            return httpx.Response(304, headers=[(b"etag", tag)])
        return httpx.Response(200, headers=[(b"etag", tag)], content=body(agent.card))

    agent.override = card
    async with agent.client() as client:
        for _ in range(3):
            await client.get_card(refresh=True)
        await client.get_task("t-1")
    cards = [r for r in agent.requests if "well-known" in r.url.path]
    assert [r.headers.get("if-none-match") for r in cards] == [None, None, '"v2"']
    assert answers == [200, 200, 304]


# -- task and context ids with lone surrogates ----------------------------------------------------

ODD = {"id": "t-\ud800", "contextId": "c-\udc80", "status": {"state": "TASK_STATE_COMPLETED"}}


async def test_ids_with_lone_surrogates_go_back_over_jsonrpc_as_they_came() -> None:
    agent = Agent(interface(RPC), task=ODD)
    async with agent.client() as client:
        task = await client.send_message("hi")
        assert isinstance(task, Task) and task.id == "t-\ud800"
        again = await client.get_task(task.id)
        await client.send_message("more", task_id=task.id, context_id=task.context_id)
    assert again.id == task.id
    _, _, params = jsonrpc(agent.calls[1])
    assert params["id"] == "t-\ud800"  # the escape it sent, read back the same
    _, _, params = jsonrpc(agent.calls[2])
    assert params["message"]["contextId"] == "c-\udc80"


ODD_REST: dict[str, Operation] = {
    "get": lambda c: c.get_task("t-\ud800"),
    "cancel": lambda c: c.cancel_task("t-\ud800"),
    "list": lambda c: c.list_tasks(context_id="c-\udc80"),
    "list-cursor": lambda c: c.list_tasks(cursor="\udfff"),
    "push_get": lambda c: c.get_push_config("t-\ud800", "p"),
    "push_delete": lambda c: c.delete_push_config("t-1", "p-\ud800"),
}


@pytest.mark.parametrize("operation", sorted(ODD_REST))
async def test_ids_with_lone_surrogates_cannot_go_into_a_rest_path(operation: str) -> None:
    agent = Agent(interface(REST, "HTTP+JSON"), task=ODD)
    async with agent.client() as client:
        task = await client.send_message("hi")
        assert isinstance(task, Task) and task.id == "t-\ud800"
        with pytest.raises(A2AProtocolError, match="lone surrogate"):
            await ODD_REST[operation](client)
        with pytest.raises(A2AProtocolError, match="lone surrogate"):
            async with client.subscribe(task.id):
                pass
    assert [r.url.path for r in agent.calls] == ["/rest/message:send"]  # nothing more was sent


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_resuming_a_task_whose_id_holds_a_lone_surrogate(binding: str) -> None:
    """Over JSON-RPC the stream re-attaches with the id as it came; over REST no URL can carry
    it, and the cut ends the stream with A2AConnectionError saying so."""
    odd_working = {**ODD, "status": {"state": "TASK_STATE_WORKING"}}
    done = {"statusUpdate": {"taskId": ODD["id"], "contextId": ODD["contextId"], **ODD}}
    agent = Agent(task=ODD)
    opened: list[str] = []

    def stream(request: httpx.Request) -> httpx.Response | None:
        if "well-known" in request.url.path or request.method == "GET":
            return None
        if binding == "rest":
            if not request.url.path.endswith(":stream"):
                return None
            opened.append(request.url.path)
            return sse({"task": odd_working})  # ends while the task works
        req_id, method, params = jsonrpc(request)
        if method not in ("SendStreamingMessage", "SubscribeToTask"):
            return None
        opened.append(method if params.get("id") is None else f"{method} {params['id']}")
        events = [{"task": odd_working}] + ([done] if method == "SubscribeToTask" else [])
        return sse(*(rpc_result(req_id, e) for e in events))

    agent.override = stream
    async with agent.client(bindings=(binding,)) as client:
        if binding == "jsonrpc":
            async with client.stream_message("hi") as s:
                result = await s.result()
            assert isinstance(result, Task) and result.state is TaskState.COMPLETED
            assert opened == ["SendStreamingMessage", "SubscribeToTask t-\ud800"]
            return
        with pytest.raises(A2AConnectionError, match="lone surrogate"):
            async with client.stream_message("hi") as s:
                await s.result()
    # neither the re-attach nor the poll that follows could be sent
    assert [r.url.path for r in agent.calls] == opened == ["/rest/message:stream"]


# -- JSON numbers beyond the int-string limit ---------------------------------------------------

BIG = b"1" * 5000  # int("1" * 5000) raises ValueError: over sys.int_info.default_max_str_digits


def with_big_number(template: bytes) -> Callable[[httpx.Request], bytes]:
    """``template`` with ``ID`` as the request's JSON-RPC id and ``N`` as 5000 digits."""

    def build(request: httpx.Request) -> bytes:
        req_id = json.loads(request.content)["id"] if request.content else 1
        return template.replace(b"ID", str(req_id).encode()).replace(b"N", BIG)

    return build


BIG_NUMBERS = {
    "jsonrpc-result": b'{"jsonrpc": "2.0", "id": ID, "result": {"id": N}}',
    "jsonrpc-id": b'{"jsonrpc": "2.0", "id": N, "result": {}}',
    "jsonrpc-error-code": b'{"jsonrpc": "2.0", "id": ID, "error": {"code": N, "message": "x"}}',
    "rest-body": b'{"id": "t-1", "status": {"state": N}}',
}


@pytest.mark.parametrize("shape", sorted(BIG_NUMBERS))
async def test_json_numbers_beyond_the_int_string_limit(shape: str) -> None:
    rest = shape.startswith("rest")
    agent = Agent(interface(REST, "HTTP+JSON") if rest else interface(RPC))
    build = with_big_number(BIG_NUMBERS[shape])

    def answer(request: httpx.Request) -> httpx.Response | None:
        if "well-known" in request.url.path:
            return None
        return httpx.Response(200, content=build(request))

    agent.override = answer
    async with agent.client() as client:
        with pytest.raises(A2AProtocolError, match=r"not JSON|Exceeds the limit"):
            await client.get_task("t-1")


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_json_numbers_beyond_the_limit_in_events_errors_and_cards(binding: str) -> None:
    agent = Agent()

    def answer(request: httpx.Request) -> httpx.Response | None:
        if "well-known" in request.url.path:
            return None
        if request.url.path.endswith("stream") or b"Streaming" in request.content:
            event = b'data: {"jsonrpc": "2.0", "id": 1, "result": {"task": {"id": N}}}\n\n'
            content = event.replace(b"N", BIG)
            return httpx.Response(
                200, headers={"content-type": "text/event-stream"}, content=content
            )
        return httpx.Response(500, content=b'{"error": {"code": N}}'.replace(b"N", BIG))

    agent.override = answer
    async with agent.client(bindings=(binding,), retry=RetryPolicy(attempts=1)) as client:
        with pytest.raises(A2AProtocolError, match="not JSON"):
            await _stream(client)
        with pytest.raises(A2AHTTPError) as info:
            await client.get_task("t-1")
        assert info.value.status_code == 500
    agent = Agent()
    agent.override = lambda r: httpx.Response(200, content=b'{"name": N}'.replace(b"N", BIG))
    async with agent.client() as client:
        with pytest.raises(A2ADiscoveryError, match="not JSON"):
            await client.get_card()


@pytest.mark.parametrize("expires_in", [b"1" + b"0" * 400, BIG, b'"1e999999"'])
async def test_a_token_lifetime_beyond_any_float(expires_in: bytes) -> None:
    agent = Agent(interface(RPC))

    def token(request: httpx.Request) -> httpx.Response | None:
        if request.url.path != "/token":
            return None
        content = b'{"access_token": "t0k3n", "expires_in": ' + expires_in + b"}"
        return httpx.Response(200, content=content)

    agent.override = token
    auth = OAuth2ClientCredentials(OWN + "/token", "client", "secret")
    async with agent.client(auth=auth) as client:
        if expires_in.startswith(b'"'):  # 1e999999 seconds is infinity: the token is kept
            await client.get_task("t-1")
            return
        with pytest.raises(A2AClientError, match="bad token response"):  # on the card request
            await client.get_task("t-1")


@pytest.mark.parametrize("declared", [BIG, "²".encode(), b"-1", b"12 34"], ids=lambda v: v[:8])
async def test_a_content_length_of_any_spelling(declared: bytes) -> None:
    agent = Agent(interface(RPC))

    def answer(request: httpx.Request) -> httpx.Response | None:
        if "well-known" in request.url.path:
            return None
        content = body(rpc_result(jsonrpc(request)[0], TASK))
        headers = [(b"content-length", declared), (b"content-type", b"application/json")]
        return httpx.Response(200, headers=headers, content=content)

    agent.override = answer
    async with agent.client() as client:
        with contextlib.suppress(A2AProtocolError):  # over the limit: refused unread
            assert (await client.get_task("t-1")).id == "t-1"


# -- the same over real sockets ----------------------------------------------------------------


async def test_over_real_sockets_bad_header_values_are_handled_alike() -> None:
    """Through httpx's network transport (h11 on both ends): an ETag outside ASCII, an
    unreadable Retry-After, then a redirect to a broken IPv6 literal."""
    seen: list[dict[str, str]] = []
    retried: list[RetryAttempt] = []
    rpc_answers = [
        Response(b"busy", 503, headers={"content-type": "text/plain"}),
        Response(b"", 307),
    ]
    rpc_answers[0].raw_headers.append((b"retry-after", "\u00b2".encode()))
    rpc_answers[1].raw_headers.append((b"location", b"http://[::1/a2a"))

    async def card(request: Request) -> Response:
        seen.append(dict(request.headers))
        answer = Response(body(v1_card(url=str(request.base_url) + "a2a")))
        answer.raw_headers += [
            (b"etag", '"\u00e9"'.encode()),
            (b"content-type", b"application/json"),
        ]
        return answer

    async def rpc(request: Request) -> Response:
        return rpc_answers.pop(0)

    app = Starlette(routes=[Route(CARD_PATH, card), Route("/a2a", rpc, methods=["POST"])])
    async with (
        serve_app(app, "127.0.0.1") as url,
        A2AClient(url, retry=RetryPolicy(backoff=0, on_retry=retried.append)) as client,
    ):
        await client.get_card()
        await client.get_card(refresh=True)
        with pytest.raises(A2AProtocolError, match="refusing a redirect"):
            await client.get_task("t-1")
    assert [h.get("if-none-match") for h in seen] == [None, None]
    [attempt] = retried  # the 503, read as one, retried after the backoff; the redirect refused
    assert isinstance(attempt.error, A2AHTTPError) and attempt.error.status_code == 503
    assert attempt.error.retry_after is None and rpc_answers == []


# -- any answer of each shape, mutated -----------------------------------------------------------

HEADER_VALUES = st.one_of(
    st.sampled_from(UNREADABLE + PAST + HUGE + [b"1", b"120"]),
    st.sampled_from([u.encode("utf-8", "surrogatepass") for u, _ in BAD_URLS + SURROGATES]),
    st.sampled_from([b"/a2a", b"//agent.example.com:8443/x", b"https://elsewhere.example/a2a"]),
    st.sampled_from([*BAD_ETAGS, b'"v1"', b'W/"v1"']),
    st.binary(max_size=30).filter(lambda b: b"\n" not in b and b"\r" not in b),
)
HEADER_NAMES = st.sampled_from(["retry-after", "location", "etag", "content-type", "cache-control"])
CONTENT_TYPES = [
    b"application/json",
    b"application/a2a+json",
    b"text/event-stream",
    b"text/html",
    b"text/event-stream; charset=utf-16",
    "application/json; charset=é".encode(),
    b"\xff",
]
STATUSES = st.sampled_from([200, 200, 200, 200, 301, 302, 303, 304, 307, 308, 404, 429, 500, 503])


def _card_with(url: str) -> bytes:
    return body(v1_card(supportedInterfaces=[interface(url), interface(REST, "HTTP+JSON")]))


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    """A body of any of the shapes: JSON-RPC or REST JSON, an event stream, a card."""
    kind = draw(st.sampled_from(["frame", "envelope", "http", "sse", "card", "big-number"]))
    if kind == "frame":
        return body(draw(mutated_frames()))
    if kind == "envelope":
        return body(draw(envelopes))
    if kind == "http":
        raw: bytes = draw(http_bodies)
        return raw
    if kind == "sse":
        stream: bytes = draw(sse_bodies())
        return draw(st.sampled_from([b"", *SSE_FIELDS])) + stream
    if kind == "card":
        url = draw(st.sampled_from([u for u, _ in BAD_URLS + SURROGATES] + [RPC, "/a2a"]))
        return _card_with(url)
    frame = body(draw(mutated_frames()))
    numbers = [m.span() for m in re.finditer(rb"-?\d+", frame)]
    if not numbers:
        return frame
    start, end = draw(st.sampled_from(numbers))
    return frame[:start] + BIG + frame[end:]


@st.composite
def answers(draw: st.DrawFn) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    headers = [(b"content-type", draw(st.sampled_from(CONTENT_TYPES)))]
    for _ in range(draw(st.integers(0, 3))):
        headers.append((draw(HEADER_NAMES).encode(), draw(HEADER_VALUES)))
    return draw(STATUSES), headers, draw(bodies())


async def _run_hostile(
    script: list[tuple[int, list[tuple[bytes, bytes]], bytes]], binding: str, op: str
) -> None:
    """The client against an agent that answers the requests with ``script``, then normally
    (a well-formed card and results): a result or an A2AClientError, and no hang."""
    agent = Agent()
    queue = list(script)

    def answer(request: httpx.Request) -> httpx.Response | None:
        if not queue:
            return None
        status, headers, content = queue.pop(0)
        sent = json.loads(request.content) if request.content else None
        if isinstance(sent, dict) and "id" in sent and "jsonrpc" in sent:  # answer with its id
            req_id = json.dumps(sent["id"]).encode()
            content = content.replace(json.dumps(REQ_ID).encode(), req_id)
            content = content.replace(b'"id": 1', b'"id": ' + req_id)
        return httpx.Response(status, headers=headers, content=content)

    agent.override = answer
    with anyio.fail_after(3600):  # virtual time
        async with agent.client(bindings=(binding,)) as client:
            with contextlib.suppress(A2AClientError):
                await client.get_card()
            with contextlib.suppress(A2AClientError):
                await client.get_card(refresh=True)
            with contextlib.suppress(A2AClientError):
                await OPERATIONS[op](client)


@pytest.mark.parametrize("backend", MOCK_CLOCK_BACKENDS)
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    script=st.lists(answers(), min_size=1, max_size=4),
    binding=st.sampled_from(["jsonrpc", "rest"]),
    op=st.sampled_from(sorted(OPERATIONS)),
)
def test_mutated_answers_of_every_shape_raise_only_client_errors(
    backend: str,
    script: list[tuple[int, list[tuple[bytes, bytes]], bytes]],
    binding: str,
    op: str,
) -> None:
    options = mock_clock_options(backend)
    anyio.run(lambda: _run_hostile(script, binding, op), backend=backend, backend_options=options)
