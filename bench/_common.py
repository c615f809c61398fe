"""Shared pieces of the benchmarks: recorded v1.0 frames, mock transports, statistics.

The response bodies are built from the recorded frames in ``tests/frames/v1_0/``; only the
JSON-RPC ``id`` is replaced, per request, by the one the client sent (a2a-anyio checks it,
as a correct client must). The substitution is a few bytes joined, the same for every
client measured.
"""

from __future__ import annotations

import copy
import json
import re
import statistics
import uuid
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
FRAMES = ROOT / "tests" / "frames" / "v1_0"
URL = "http://agent.bench/a2a/jsonrpc"

_ID = re.compile(rb'"id":\s*("(?:[^"\\]|\\.)*"|-?\d+)')


def compact(value: Any) -> bytes:
    """JSON as a Python A2A server sends it (starlette's JSONResponse: compact, UTF-8)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def request_id(body: bytes) -> bytes:
    """The JSON-RPC id of a request body, as JSON bytes (the first ``"id"`` member).

    A2A request params carry ``messageId``/``taskId``/``contextId`` but no member named
    ``id`` before the envelope's own, so the first match is the envelope id.
    """
    m = _ID.search(body)
    return m.group(1) if m else b"null"


# -- unary: SendMessage -> completed Task with one artifact ---------------------------------


def unary_result() -> dict[str, Any]:
    """The recorded SendMessage result (a completed Task), cut to its first artifact."""
    frame = json.loads((FRAMES / "send_message_task.json").read_text())
    result: dict[str, Any] = copy.deepcopy(frame["response"]["body"]["result"])
    result["task"]["artifacts"] = result["task"]["artifacts"][:1]
    return result


def unary_template() -> tuple[bytes, bytes]:
    """The response body around the id: ``head + id + tail``."""
    head = b'{"jsonrpc":"2.0","id":'
    tail = b',"result":' + compact(unary_result()) + b"}"
    return head, tail


def unary_transport() -> httpx.MockTransport:
    """Answers every POST with the recorded SendMessage response (the request's id echoed)."""
    head, tail = unary_template()
    headers = {"content-type": "application/json"}

    def handler(request: httpx.Request) -> httpx.Response:
        body = head + request_id(request.content) + tail
        return httpx.Response(200, headers=headers, content=body)

    return httpx.MockTransport(handler)


def floor_request_body(req_id: int, method: str = "SendMessage") -> bytes:
    """The request the floor sends: the same v1.0 message a2a-anyio builds for ``"hello"``."""
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": req_id,
            "method": method,
            "params": {
                "message": {
                    "messageId": str(uuid.uuid4()),
                    "role": "ROLE_USER",
                    "parts": [{"text": "hello"}],
                }
            },
        }
    ).encode()


FLOOR_HEADERS = {"Content-Type": "application/json", "A2A-Version": "1.0"}
SSE_HEADERS = {**FLOOR_HEADERS, "Accept": "text/event-stream", "Cache-Control": "no-store"}


# -- streaming: SendStreamingMessage -> status and artifact updates -------------------------


def _recorded_stream() -> list[dict[str, Any]]:
    frame = json.loads((FRAMES / "stream_message.json").read_text())
    sse: str = frame["response"]["sse"]
    out = []
    for block in sse.split("\r\n\r\n"):
        if block.startswith("data: "):
            out.append(json.loads(block[len("data: ") :])["result"])
    return out


def stream_results(events: int, *, task_id: str | None = None) -> list[dict[str, Any]]:
    """``events`` StreamResponse results shaped like the recorded v1.0 stream.

    A Task snapshot, then every tenth event a WORKING status update with an agent message,
    the others artifact chunks (``append``) of one report, the last chunk marked
    ``lastChunk``, and a final COMPLETED status update.
    """
    if events < 4:
        raise ValueError("a stream needs at least 4 events")
    rec = _recorded_stream()
    snapshot, working, first_chunk, _, _, completed = rec
    tid = task_id or snapshot["task"]["id"]
    ctx = snapshot["task"]["contextId"]

    def retask(value: dict[str, Any]) -> dict[str, Any]:
        value = copy.deepcopy(value)
        for kind in ("task", "statusUpdate", "artifactUpdate"):
            if kind in value:
                key = "id" if kind == "task" else "taskId"
                value[kind][key] = tid
        return value

    out = [retask(snapshot)]
    chunk = 0
    for i in range(1, events - 1):
        if i % 10 == 1:
            out.append(retask(working))
            continue
        ev = retask(first_chunk)
        upd = ev["artifactUpdate"]
        upd["artifact"]["parts"] = [{"text": f" token {chunk}"}]
        if chunk:
            upd["append"] = True
        if i == events - 2:
            upd["lastChunk"] = True
        chunk += 1
        out.append(ev)
    out.append(retask(completed))
    assert out[-1]["statusUpdate"]["contextId"] == ctx
    return out


def sse_templates(results: Sequence[dict[str, Any]]) -> list[bytes]:
    """Each event as the bytes before its id: ``data: {...,"id":`` (append id + ``}\\n\\n``)."""
    return [b'data: {"jsonrpc":"2.0","result":' + compact(r) + b',"id":' for r in results]


SSE_TAIL = b"}\n\n"


def sse_body(templates: Sequence[bytes], req_id: bytes, per_chunk: int) -> list[bytes]:
    """The event-stream body for one request, ``per_chunk`` events in each body chunk."""
    events = [t + req_id + SSE_TAIL for t in templates]
    if per_chunk <= 1:
        return events
    return [b"".join(events[i : i + per_chunk]) for i in range(0, len(events), per_chunk)]


def stream_transport(templates: Sequence[bytes], per_chunk: int = 1) -> httpx.MockTransport:
    """Answers every POST with a streamed event-stream body (the request's id echoed)."""
    headers = {"content-type": "text/event-stream", "cache-control": "no-store"}

    def handler(request: httpx.Request) -> httpx.Response:
        chunks = sse_body(templates, request_id(request.content), per_chunk)

        async def body() -> AsyncIterator[bytes]:
            for chunk in chunks:
                yield chunk

        return httpx.Response(200, headers=headers, content=body())

    return httpx.MockTransport(handler)


# -- a2a-sdk helpers ------------------------------------------------------------------------


def sdk_card(url: str) -> Any:
    """A v1.0 JSON-RPC AgentCard (protobuf) for the a2a-sdk client factory."""
    from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface

    return AgentCard(
        name="bench",
        description="bench agent",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(protocol_binding="JSONRPC", url=url, protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
    )


def sdk_client(http: httpx.AsyncClient, url: str, *, streaming: bool) -> Any:
    """An a2a-sdk 1.x client on ``http`` (``ClientFactory(ClientConfig(...)).create(card)``)."""
    from a2a.client import ClientConfig, ClientFactory

    config = ClientConfig(streaming=streaming, httpx_client=http)
    return ClientFactory(config).create(sdk_card(url))


def sdk_request(text: str = "hello") -> Any:
    """A SendMessageRequest with one text part and a fresh message id."""
    from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest

    return SendMessageRequest(
        message=Message(role=Role.ROLE_USER, parts=[Part(text=text)], message_id=str(uuid.uuid4()))
    )


# -- statistics -----------------------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def round_ratio(per_round: dict[str, list[float]], a: str, b: str) -> float | None:
    """The median over rounds of a / b, each round's two timings taken back to back.

    Steadier than the ratio of the medians when the machine's speed drifts during a run.
    """
    if a not in per_round or b not in per_round:
        return None
    return statistics.median(x / y for x, y in zip(per_round[a], per_round[b], strict=True))


def rotate(items: Sequence[Any], k: int) -> list[Any]:
    """``items`` rotated by ``k``: each round runs the contenders in a different order."""
    k %= len(items)
    return [*items[k:], *items[:k]]
