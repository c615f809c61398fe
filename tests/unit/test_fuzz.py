"""Property tests: whatever a server sends, only ``A2AClientError``s come out of the client.

Every decoder (both dialects, cards, JSON-RPC envelopes, HTTP answers) is fed arbitrary JSON
values and mutated recorded frames (fields deleted, replaced by values of the wrong type);
whole SSE bodies, split anywhere, go through a real ``A2AClient`` stream on a streamed
``httpx.MockTransport`` body. The property: a decoded value, or an ``A2AClientError``; never a
``KeyError``, ``TypeError``, ``ValueError``, ``RecursionError``... and never a hang.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from a2a_anyio import A2AClient, A2AClientError
from a2a_anyio._bindings.jsonrpc import decode_http, unwrap
from a2a_anyio._dialects import Dialect, Op
from a2a_anyio._dialects.card import parse_card
from a2a_anyio._dialects.legacy import LEGACY
from a2a_anyio._dialects.v03 import V02, V03
from a2a_anyio._dialects.v1 import V1

from ._support import (
    BASE,
    FRAMES,
    MOCK_CLOCK_BACKENDS,
    RPC_URL,
    ScriptedBody,
    mock_clock_options,
    sse_payloads,
)

FUZZ = settings(
    max_examples=120,
    deadline=None,
    # The autouse fixture of this folder (no retry delays) is meant to span every example.
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
BACKENDS = ["asyncio", "trio"]

# -- what the recorded frames hold ------------------------------------------------------------


def _frame_values() -> list[Any]:
    """Every JSON value of the recorded frames: bodies, event payloads, and their results."""
    out: list[Any] = []
    for path in sorted(FRAMES.glob("*/*.json")):
        response = json.loads(path.read_text())["response"]
        values = [response["body"]] if "body" in response else []
        values += sse_payloads(response.get("sse", ""))
        for value in values:
            out.append(value)
            if isinstance(value, dict) and isinstance(value.get("result"), (dict, list)):
                out.append(value["result"])
    return out


def _walk(value: Any) -> tuple[set[str], set[str]]:
    """The object keys and the short string values found anywhere in ``value``."""
    keys: set[str] = set()
    words: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            keys.update(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and len(item) <= 40:
            words.add(item)
    return keys, words


FRAME_VALUES = _frame_values()
_KEYS, _WORDS = _walk(FRAME_VALUES)
KEYS = sorted(
    _KEYS
    | {"kind", "type", "final", "append", "lastChunk", "statusUpdate", "artifactUpdate", "file"}
    | {"bytes", "uri", "raw", "url", "data", "text", "error", "code", "reason", "@type"}
)
WORDS = sorted(
    _WORDS
    | {"task", "message", "status-update", "artifact-update", "text", "file", "data"}
    | {"TASK_STATE_COMPLETED", "TASK_STATE_WORKING", "completed", "ROLE_AGENT", "agent"}
)

# -- strategies --------------------------------------------------------------------------------

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(WORDS)
)
json_values = st.recursive(
    scalars,
    lambda kids: (
        st.lists(kids, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), kids, max_size=6)
    ),
    max_leaves=30,
)
#: One value of each JSON type, to put where another type belongs.
wrong_types: st.SearchStrategy[Any] = st.sampled_from(
    [None, True, False, 0, -1, 2**64, 1.5, "", "x", [], [None], {}]
).map(
    copy.deepcopy  # a fresh object each time: the same one twice could make a cycle
)

Path = tuple[str | int, ...]


def _paths(value: Any, prefix: Path = ()) -> list[Path]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += _paths(item, (*prefix, index))
    return out


def _mutate(value: Any, path: Path, replacement: Any, *, delete: bool) -> Any:
    if not path:
        return None if delete else replacement
    parent = value
    for step in path[:-1]:
        parent = parent[step]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = replacement
    return value


@st.composite
def mutated_frames(draw: st.DrawFn, pool: list[Any] = FRAME_VALUES) -> Any:
    """A recorded value with 1 to 3 fields deleted or replaced (by a wrong type or anything)."""
    value = copy.deepcopy(draw(st.sampled_from(pool)))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(value)))
        how = draw(st.sampled_from(["delete", "wrong-type", "anything"]))
        replacement = copy.deepcopy(draw(wrong_types if how == "wrong-type" else json_values))
        value = _mutate(value, path, replacement, delete=how == "delete")
    return value


# Objects shaped like the protocol's, each field present or not, well typed or not.
def field(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A field's value: well typed two times in three, else null or a value of another type."""
    # (one_of would merge the repeated branches: the weights are drawn explicitly)
    return st.integers(0, 5).flatmap(
        lambda i: strategy if i < 4 else st.none() if i == 4 else wrong_types
    )


def obj(
    required: dict[str, st.SearchStrategy[Any]],
    optional: dict[str, st.SearchStrategy[Any]] | None = None,
) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {k: field(v) for k, v in required.items()},
        optional={k: field(v) for k, v in (optional or {}).items()},
    )


short = st.text(max_size=6)
strings = st.lists(short, max_size=2)
meta = st.dictionaries(short, json_values, max_size=2)
url = st.sampled_from(["https://a.example/x", "/relative", "", "not a url"])
b64 = st.sampled_from(["aGVsbG8=", "aGVsbG8", "a-_b", "!!!", "", "\u00e9"])
states = st.sampled_from(
    [
        *["TASK_STATE_WORKING", "TASK_STATE_COMPLETED", "TASK_STATE_INPUT_REQUIRED", "completed"],
        *["working", "input-required", "canceled", "TASK_STATE_CANCELLED", "bogus", 3],
    ]
)
roles = st.sampled_from(["ROLE_USER", "ROLE_AGENT", "user", "agent", 2, "x"])
kinds = st.sampled_from(["text", "file", "data", "task", "message", "status-update", "bogus"])

v1_part = obj(
    {},
    {"text": short, "raw": b64, "url": url, "data": json_values, "mediaType": short}
    | {"filename": short, "metadata": meta},
)
v03_part = obj(
    {"kind": kinds},
    {"text": short, "data": json_values, "metadata": meta, "type": kinds}
    | {
        "file": obj(
            {},
            {"bytes": b64, "uri": url, "mimeType": short, "name": short, "fileWithUri": url},
        )
    },
)
parts = st.lists(v1_part | v03_part, max_size=3)
message = obj(
    {"parts": parts, "role": roles, "messageId": short},
    {"kind": st.just("message"), "contextId": short, "taskId": short, "metadata": meta}
    | {"extensions": strings, "referenceTaskIds": strings},
)
status = obj({"state": states}, {"message": message, "timestamp": short})
artifact = obj(
    {"artifactId": short, "parts": parts},
    {"name": short, "description": short, "metadata": meta, "extensions": strings},
)
task = obj(
    {"id": short, "status": status},
    {"kind": st.just("task"), "contextId": short, "metadata": meta}
    | {"artifacts": st.lists(artifact, max_size=2), "history": st.lists(message, max_size=2)},
)
status_update = obj(
    {"taskId": short, "status": status},
    {"kind": st.just("status-update"), "contextId": short, "final": st.booleans()}
    | {"metadata": meta},
)
artifact_update = obj(
    {"taskId": short, "artifact": artifact},
    {"kind": st.just("artifact-update"), "contextId": short, "append": st.booleans()}
    | {"lastChunk": st.booleans(), "metadata": meta},
)
v1_event = st.one_of(
    obj({"task": task}),
    obj({"message": message}),
    obj({"statusUpdate": status_update}),
    obj({"artifactUpdate": artifact_update}),
)
v03_event = task | message | status_update | artifact_update
task_page = obj(
    {"tasks": st.lists(task, max_size=2)},
    {"nextPageToken": short, "pageSize": st.integers(), "totalSize": st.integers()},
)
auth = obj({}, {"scheme": short, "schemes": strings, "credentials": short})
push_fields = {"url": url, "id": short, "token": short, "authentication": auth}
push_config = obj(
    {},
    {"taskId": short, "pushNotificationConfig": obj({}, push_fields)} | push_fields,
)
push_configs = st.lists(push_config, max_size=2) | obj(
    {"configs": st.lists(push_config, max_size=2)}, {"nextPageToken": short}
)
scheme = obj(
    {},
    {"type": short, "scheme": short, "bearerFormat": short, "in": short, "location": short}
    | {"name": short, "flows": meta, "openIdConnectUrl": url, "description": short}
    | {"httpAuthSecurityScheme": obj({}, {"scheme": short}), "apiKeySecurityScheme": meta},
)
card = obj(
    {"name": short},
    {
        "description": short,
        "version": short,
        "url": url,
        "protocolVersion": st.sampled_from(["1.0", "0.3.0", "0.2.5", "v1", "", "1"]),
        "preferredTransport": st.sampled_from(["JSONRPC", "HTTP+JSON", "GRPC", "rest", "x"]),
        "additionalInterfaces": st.lists(obj({"url": url}, {"transport": short}), max_size=2),
        "supportedInterfaces": st.lists(
            obj(
                {"url": url},
                {"protocolBinding": short, "protocolVersion": short, "tenant": short},
            ),
            max_size=2,
        ),
        "capabilities": obj(
            {},
            {"streaming": st.booleans(), "pushNotifications": st.booleans()}
            | {"extendedAgentCard": st.booleans(), "stateTransitionHistory": st.booleans()}
            | {"extensions": st.lists(obj({"uri": short}, {"required": st.booleans()}))},
        ),
        "skills": st.lists(
            obj({"id": short, "name": short}, {"tags": strings, "inputModes": strings}),
            max_size=2,
        ),
        "securitySchemes": st.dictionaries(short, scheme, max_size=2),
        "securityRequirements": st.lists(
            obj({"schemes": st.dictionaries(short, obj({"list": strings}), max_size=2)})
        ),
        "security": st.lists(st.dictionaries(short, strings, max_size=2), max_size=2),
        "authentication": obj({}, {"schemes": strings, "credentials": short}),
        "provider": obj({}, {"organization": short, "url": url}),
        "defaultInputModes": strings,
        "supportsAuthenticatedExtendedCard": st.booleans(),
    },
)
shaped = st.one_of(v1_event, v03_event, task_page, push_configs, card)

values = json_values | mutated_frames() | st.sampled_from(FRAME_VALUES) | shaped

#: JSON nesting depths around and beyond the interpreter's recursion limit.
DEPTHS = st.sampled_from([10, 1000, 3000, 100_000])

REQ_ID = "$REQ-ID$"  # replaced by the id of the request when the body is served
error_objects = st.fixed_dictionaries(
    {},
    optional={
        "code": st.sampled_from([-32603, -32001, -32004, -32009, 0]) | json_values,
        "message": st.text(max_size=10) | json_values,
        "data": json_values
        | st.just([{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "X"}]),
    },
)
envelopes = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0") | json_values, "id": st.just(REQ_ID) | json_values},
    optional={"result": values, "error": error_objects | json_values},
)

# -- every decoder -----------------------------------------------------------------------------

#: Every decoder, with the input it is meant for (it also gets anything else).
DECODERS: dict[str, tuple[Callable[[Any], object], st.SearchStrategy[Any]]] = {
    "v1.decode_send_result": (
        V1.payloads[Op.SEND].decode,
        obj({"task": task}) | obj({"message": message}),
    ),
    "v1.decode_event": (V1.payloads[Op.STREAM].decode, v1_event),
    "v1.decode_task": (V1.payloads[Op.GET].decode, task),
    "v1.decode_task_page": (V1.payloads[Op.LIST].decode, task_page),
    "v1.decode_push_config": (V1.payloads[Op.PUSH_GET].decode, push_config),
    "v1.decode_push_configs": (V1.payloads[Op.PUSH_LIST].decode, push_configs),
    "v1.decode_message": (V1.decode_message, message),
    "v1.decode_card": (V1.payloads[Op.EXTENDED_CARD].decode, card),
    "v03.decode_send_result": (V03.payloads[Op.SEND].decode, task | message),
    "v03.decode_event": (V03.payloads[Op.STREAM].decode, v03_event),
    "v03.decode_task": (V03.payloads[Op.GET].decode, task),
    "v03.decode_push_config": (V03.payloads[Op.PUSH_GET].decode, push_config),
    "v03.decode_push_configs": (V03.payloads[Op.PUSH_LIST].decode, push_configs),
    "v03.decode_message": (V03.decode_message, message),
    "parse_card": (parse_card, card),
}


def decoded_or_client_error(call: Callable[[], object]) -> None:
    """The property: ``call`` returns, or raises an ``A2AClientError``; anything else escapes."""
    with contextlib.suppress(A2AClientError):
        call()


@pytest.mark.parametrize("name", sorted(DECODERS))
@FUZZ
@given(data=st.data())
def test_decoders_raise_only_client_errors(name: str, data: st.DataObject) -> None:
    decoder, meant_for = DECODERS[name]
    value = data.draw(meant_for if data.draw(st.booleans()) else values, label="value")
    decoded_or_client_error(lambda: decoder(value))


#: Inputs found to escape as something else than an ``A2AClientError``.
EDGE_INPUTS = [
    # ProtoJSON allows null for an unset field: FilePart(data=None, url=None) -> ValueError.
    pytest.param(
        V1.decode_message,
        {"role": "ROLE_AGENT", "messageId": "m", "parts": [{"url": None}]},
        id="v1-part-url-null",
    ),
    pytest.param(
        V1.payloads[Op.STREAM].decode,
        {
            "artifactUpdate": {
                "taskId": "t",
                "artifact": {"artifactId": "a", "parts": [{"url": None}]},
            }
        },
        id="v1-artifact-part-url-null",
    ),
]


@pytest.mark.parametrize(("decoder", "value"), EDGE_INPUTS)
def test_edge_inputs_raise_only_client_errors(decoder: Callable[[Any], object], value: Any) -> None:
    decoded_or_client_error(lambda: decoder(value))


@FUZZ
@given(
    value=envelopes | values,
    expected=st.sampled_from([1, "1", 7, "abc"]),
    dialect=st.sampled_from([V1, V03, V02, LEGACY]),
)
def test_unwrap_raises_only_client_errors(
    value: Any, expected: int | str, dialect: Dialect
) -> None:
    value = json.loads(json.dumps(value).replace(json.dumps(REQ_ID), json.dumps(expected)))
    decoded_or_client_error(lambda: unwrap(value, expected, codes=dialect.errors))


def _dumps(value: Any) -> bytes:
    return json.dumps(value).replace(json.dumps(REQ_ID), "1").encode()


@st.composite
def truncated_json(draw: st.DrawFn) -> bytes:
    raw = _dumps(draw(envelopes | values))
    return raw[: draw(st.integers(0, len(raw)))]


http_bodies = (
    st.binary(max_size=300)
    | (envelopes | values).map(_dumps)
    | truncated_json()
    # Nesting deeper than the interpreter's recursion limit.
    | DEPTHS.map(lambda n: b"[" * n + b"]" * n)
    | DEPTHS.map(lambda n: b'{"result":' * n)
)


@FUZZ
@given(
    status=st.integers(0, 999) | st.sampled_from([200, 401, 403, 429, 502, 503]),
    content=http_bodies,
    dialect=st.sampled_from([V1, V03]),
)
@example(status=200, content=b"[" * 100_000, dialect=V1)
def test_decode_http_raises_only_client_errors(
    status: int, content: bytes, dialect: Dialect
) -> None:
    decoded_or_client_error(lambda: decode_http(status, content, 1, codes=dialect.errors))


# -- SSE bodies through a real client ----------------------------------------------------------

NEWLINES = [b"\n", b"\r\n", b"\r"]


def _data_lines(value: Any, indent: int | None) -> bytes:
    text = json.dumps(value, indent=indent)
    return b"\n".join(b"data: " + line.encode() for line in text.split("\n"))


sse_lines = st.one_of(
    envelopes.map(lambda e: _data_lines(e, None)),
    envelopes.map(lambda e: _data_lines(e, 1)),
    st.text(max_size=30).map(lambda t: b"data:" + t.encode()),
    DEPTHS.map(lambda n: b"data: " + b"[" * n + b"]" * n),
    st.sampled_from(
        [
            *[b"", b": ping", b"event: error", b"event: message", b"id: 1", b"retry: 100"],
            *[b"retry: x", b"data", b"data:", b":", b"\xff\xfe", b"data: \xc3"],
        ]
    ),
    st.binary(max_size=20),
)


@st.composite
def sse_bodies(draw: st.DrawFn) -> bytes:
    """An event stream: mostly well-framed lines of all kinds, sometimes any bytes."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.binary(max_size=200))
    lines = draw(st.lists(sse_lines, max_size=10))
    out = b"".join(line + draw(st.sampled_from(NEWLINES)) for line in lines)
    return out + draw(st.sampled_from([b"", b"\n", b"\r\n\r\n"]))


@st.composite
def responses(draw: st.DrawFn) -> tuple[int, str, bytes, list[int]]:
    """(status, content type, body, chunk sizes) of one answer."""
    if draw(st.integers(0, 4)) == 0:
        status = draw(st.sampled_from([200, 400, 404, 429, 500, 502]))
        ctype = draw(st.sampled_from(["application/json", "text/html", "", "text/event-stream"]))
        body = draw(sse_bodies() | http_bodies)
    else:
        status, ctype, body = 200, "text/event-stream", draw(sse_bodies())
    return status, ctype, body, draw(st.lists(st.integers(1, 40), max_size=30))


def _chunks(body: bytes, sizes: list[int]) -> list[bytes]:
    out, pos = [], 0
    for size in sizes:
        if pos >= len(body):
            break
        out.append(body[pos : pos + size])
        pos += size
    if pos < len(body):
        out.append(body[pos:])
    return out


def _handler(
    answers: list[tuple[int, str, bytes, list[int]]],
) -> Callable[[httpx.Request], httpx.Response]:
    """Answers the n-th request with ``answers[n]`` (the last one again after the end)."""
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        status, ctype, body, sizes = answers[min(len(seen), len(answers)) - 1]
        req_id = json.loads(request.content)["id"]
        body = body.replace(json.dumps(REQ_ID).encode(), json.dumps(req_id).encode())
        headers = {"content-type": ctype} if ctype else {}
        return httpx.Response(status, headers=headers, stream=ScriptedBody(_chunks(body, sizes)))

    return handle


async def _stream_through_client(
    answers: list[tuple[int, str, bytes, list[int]]], protocol: str, *, resume: bool
) -> None:
    transport = httpx.MockTransport(_handler(answers))
    # A hang is a failure too; the total timeout bounds the polling of a task that never ends.
    with anyio.fail_after(600):
        async with (
            httpx.AsyncClient(transport=transport) as http,
            A2AClient(endpoint=RPC_URL, protocol=protocol, http_client=http) as client,
        ):
            try:
                async with client.stream_message(
                    "hello", resume=resume, total_timeout=300
                ) as stream:
                    async for _ in stream:
                        pass
            except A2AClientError:
                pass


@pytest.mark.parametrize("backend", BACKENDS)
@FUZZ
@given(answer=responses(), protocol=st.sampled_from(["1.0", "0.3"]))
@example(
    answer=(200, "text/event-stream", b"data: " + b"[" * 100_000 + b"\n\n", []), protocol="1.0"
)
def test_sse_bodies_raise_only_client_errors(
    backend: str, answer: tuple[int, str, bytes, list[int]], protocol: str
) -> None:
    anyio.run(lambda: _stream_through_client([answer], protocol, resume=False), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@FUZZ
@given(
    status=st.sampled_from([200, 200, 200, 304, 404, 500]),
    ctype=st.sampled_from(["application/json", "text/html", ""]),
    body=http_bodies | card.map(_dumps),
)
@example(status=200, ctype="application/json", body=b"[" * 100_000)
def test_card_bodies_raise_only_client_errors(
    backend: str, status: int, ctype: str, body: bytes
) -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        headers = {"content-type": ctype} if ctype else {}
        return httpx.Response(status, headers=headers, content=body)

    async def fetch() -> None:
        with anyio.fail_after(60):
            async with (
                httpx.AsyncClient(transport=httpx.MockTransport(handle)) as http,
                A2AClient(BASE, http_client=http) as client,
            ):
                with contextlib.suppress(A2AClientError):
                    await client.get_card()

    anyio.run(fetch, backend=backend)


@pytest.mark.parametrize("backend", MOCK_CLOCK_BACKENDS)
@settings(FUZZ, max_examples=60)
@example(
    answers=[(200, "text/event-stream", b"data: " + b"[" * 100_000 + b"\n\n", [])], protocol="1.0"
)
@given(
    answers=st.lists(responses(), min_size=1, max_size=4), protocol=st.sampled_from(["1.0", "0.3"])
)
def test_resumed_streams_raise_only_client_errors(
    backend: str, answers: list[tuple[int, str, bytes, list[int]]], protocol: str
) -> None:
    """Cut streams are re-attached and polled: every follow-up gets an answer of its own.

    On virtual clocks: polling a task that never ends sleeps for virtual minutes.
    """
    anyio.run(
        lambda: _stream_through_client(answers, protocol, resume=True),
        backend=backend,
        backend_options=mock_clock_options(backend),
    )
