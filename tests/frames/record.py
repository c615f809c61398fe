"""Record real request/response frames from the a2a-sdk test server.

Run from the project root::

    uv run python tests/frames/record.py

It starts ``tests/interop/sdk_server.py`` (``--mode strict``, then ``--mode compat``) in a
subprocess, talks to it with plain httpx (no A2A client) and writes one JSON file per exchange:

* ``tests/frames/v1_0/``       JSON-RPC, v1.0 dialect (``A2A-Version: 1.0``), strict server
* ``tests/frames/v1_0_rest/``  HTTP+JSON, v1.0 (``A2A-Version: 1.0``), strict server
* ``tests/frames/v0_3/``       JSON-RPC, v0.3 dialect (no ``A2A-Version`` header), compat server

File layout (pretty-printed, sorted keys)::

    {"request":  {"method": "POST", "path": "/a2a/jsonrpc", "headers": {...}, "body": <JSON|null>},
     "response": {"status": 200, "content_type": "...", "body": <JSON>}}

For ``text/event-stream`` responses ``response.sse`` holds the raw stream text exactly as received
instead of ``body``. A non-JSON response body is stored as a string. ``card.json`` also keeps
the ``cache-control`` and ``etag`` response headers under ``response.headers``.

Task, context, artifact ids, timestamps, the port in card URLs and the ETag vary from run to
run; everything the recorder sends (JSON-RPC ids, message ids, push-config ids) is fixed.
Each run deletes the ``*.json`` files of the three directories before writing them again.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.abc
import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SERVER_SCRIPT = ROOT / "tests" / "interop" / "sdk_server.py"

JSONRPC_PATH = "/a2a/jsonrpc"
REST_PATH = "/a2a/rest"
CARD_PATH = "/.well-known/agent-card.json"

# Request headers worth keeping in a frame (lower-case).
RELEVANT_REQUEST_HEADERS = (
    "a2a-version",
    "a2a-extensions",
    "x-a2a-extensions",
    "content-type",
    "accept",
    "if-none-match",
)
CARD_RESPONSE_HEADERS = ("cache-control", "etag")

HOOK_URL = "https://client.example.com/a2a-hook"
HOOK_ID = "hook-1"
HOOK_TOKEN = "hook-token-123"

DATA_VALUE = {"city": "Paris", "count": 3, "ratio": 0.5, "tags": ["a", "b"], "nested": {"ok": True}}

START_TIMEOUT_S = 30.0
EXCHANGE_TIMEOUT_S = 30.0

Json = Any
SseEvent = tuple[str | None, Json]


class RecordingError(RuntimeError):
    """The server did not behave as the recorder expects."""


def check(condition: bool, what: str) -> None:
    if not condition:
        raise RecordingError(what)


# --------------------------------------------------------------------------------------------
# Server process
# --------------------------------------------------------------------------------------------


class SdkServer:
    """``sdk_server.py`` in a subprocess; ``base_url`` is known once it printed READY."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.base_url = ""
        self._process: anyio.abc.Process | None = None
        self._stderr: IO[bytes] | None = None

    async def __aenter__(self) -> SdkServer:
        # The SDK logs every error response (with tracebacks for some): keep that out of the
        # way and show it only if recording fails.
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in __aexit__
        self._process = await anyio.open_process(
            [sys.executable, str(SERVER_SCRIPT), "--mode", self.mode, "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        stdout = self._process.stdout
        assert stdout is not None
        buffer = b""
        with anyio.fail_after(START_TIMEOUT_S):
            while b"\n" not in buffer:
                try:
                    buffer += await stdout.receive()
                except anyio.EndOfStream:
                    raise RecordingError(f"{self.mode} server exited before READY") from None
        line = buffer.split(b"\n", 1)[0].decode()
        check(line.startswith("READY http://127.0.0.1:"), f"unexpected first line {line!r}")
        self.base_url = line.removeprefix("READY ").strip()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        process = self._process
        if process is None:
            return
        if process.returncode is None:
            process.terminate()
            with anyio.move_on_after(10):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()
        await process.aclose()
        stderr = self._stderr
        if stderr is not None:
            if exc_info[0] is not None or process.returncode != 0:
                stderr.seek(0)
                sys.stderr.write(f"--- {self.mode} server stderr ---\n")
                sys.stderr.write(stderr.read().decode(errors="replace"))
            stderr.close()
        if exc_info[0] is None:
            check(process.returncode == 0, f"{self.mode} server exit status {process.returncode}")


# --------------------------------------------------------------------------------------------
# Recording
# --------------------------------------------------------------------------------------------


def parse_sse(text: str) -> list[SseEvent]:
    """Minimal SSE parser (enough for sanity checks): (event name, decoded data) pairs."""
    events: list[SseEvent] = []
    normalized = text.replace("\r\n", "\n").replace("\r", "\n")
    for block in normalized.split("\n\n"):
        name: str | None = None
        data_lines: list[str] = []
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                name = value
            elif field == "data":
                data_lines.append(value)
        if data_lines:
            events.append((name, json.loads("\n".join(data_lines))))
    return events


def _decode_body(response: httpx.Response) -> Json:
    if not response.content:
        return None
    try:
        return json.loads(response.content)
    except ValueError:
        return response.text


class Recorder:
    """Sends requests to one server and writes one frame file per exchange into ``out_dir``."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        out_dir: Path,
        default_headers: dict[str, str],
    ) -> None:
        self.client = client
        self.out_dir = out_dir
        self.default_headers = default_headers
        self.written: list[Path] = []
        self._next_id = 0

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _headers(self, headers: dict[str, str] | None, has_body: bool, sse: bool) -> dict[str, str]:
        merged = dict(self.default_headers)
        if not has_body:
            merged.pop("Content-Type", None)
        if sse:
            merged["Accept"] = "text/event-stream"
        if headers is not None:
            for key, value in headers.items():
                for existing in [k for k in merged if k.lower() == key.lower()]:
                    del merged[existing]
                if value:
                    merged[key] = value
        return merged

    def _request_frame(self, request: httpx.Request, body: Json) -> dict[str, Json]:
        path = request.url.raw_path.decode("ascii")
        headers = {
            key: value
            for key, value in request.headers.items()
            if key.lower() in RELEVANT_REQUEST_HEADERS
        }
        return {"method": request.method, "path": path, "headers": headers, "body": body}

    def _write(self, name: str | None, frame: dict[str, Json]) -> None:
        if name is None:
            return
        path = self.out_dir / f"{name}.json"
        check(path not in self.written, f"frame {path} recorded twice")
        path.write_text(json.dumps(frame, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
        self.written.append(path)

    async def unary(
        self,
        name: str | None,
        method: str,
        path: str,
        body: Json = None,
        *,
        headers: dict[str, str] | None = None,
        params: dict[str, str] | None = None,
        keep_headers: tuple[str, ...] = (),
    ) -> httpx.Response:
        """One request/response exchange; ``name=None`` sends it without recording."""
        content = None if body is None else json.dumps(body).encode()
        request = self.client.build_request(
            method,
            path,
            content=content,
            params=params,
            headers=self._headers(headers, content is not None, sse=False),
        )
        with anyio.fail_after(EXCHANGE_TIMEOUT_S):
            response = await self.client.send(request)
        response_frame: dict[str, Json] = {
            "status": response.status_code,
            "content_type": response.headers.get("content-type"),
            "body": _decode_body(response),
        }
        if keep_headers:
            response_frame["headers"] = {
                key: response.headers[key] for key in keep_headers if key in response.headers
            }
        self._write(
            name, {"request": self._request_frame(request, body), "response": response_frame}
        )
        return response

    async def stream(
        self,
        name: str | None,
        method: str,
        path: str,
        body: Json = None,
        *,
        headers: dict[str, str] | None = None,
        after_first_event: Callable[[], Coroutine[Any, Any, None]] | None = None,
    ) -> tuple[httpx.Response, str]:
        """A streaming exchange: reads the body to its end; returns (response, raw text).

        ``after_first_event`` runs concurrently once the first complete SSE event arrived
        (used to cancel a task while subscribed to it).
        """
        content = None if body is None else json.dumps(body).encode()
        request = self.client.build_request(
            method,
            path,
            content=content,
            headers=self._headers(headers, content is not None, sse=True),
        )
        chunks: list[bytes] = []
        with anyio.fail_after(EXCHANGE_TIMEOUT_S):
            async with anyio.create_task_group() as tg:
                response = await self.client.send(request, stream=True)
                try:
                    started = False
                    async for chunk in response.aiter_raw():
                        chunks.append(chunk)
                        seen = b"".join(chunks)
                        if (
                            after_first_event is not None
                            and not started
                            and (b"\n\n" in seen or b"\r\n\r\n" in seen)
                        ):
                            started = True
                            tg.start_soon(after_first_event)
                finally:
                    await response.aclose()
        raw = b"".join(chunks).decode("utf-8")
        content_type = response.headers.get("content-type") or ""
        response_frame: dict[str, Json] = {
            "status": response.status_code,
            "content_type": response.headers.get("content-type"),
        }
        if content_type.startswith("text/event-stream"):
            response_frame["sse"] = raw
        else:
            response_frame["body"] = json.loads(raw) if raw else None
        self._write(
            name, {"request": self._request_frame(request, body), "response": response_frame}
        )
        return response, raw

    async def rpc(
        self, name: str | None, method: str, params: Json = None, **kwargs: Any
    ) -> httpx.Response:
        """Record one JSON-RPC call to the JSON-RPC endpoint."""
        body: dict[str, Json] = {"jsonrpc": "2.0", "id": self.next_id(), "method": method}
        if params is not None:
            body["params"] = params
        return await self.unary(name, "POST", JSONRPC_PATH, body, **kwargs)

    async def rpc_stream(
        self, name: str | None, method: str, params: Json, **kwargs: Any
    ) -> list[Json]:
        """Record one streaming JSON-RPC call; the decoded results of its events."""
        body = {"jsonrpc": "2.0", "id": self.next_id(), "method": method, "params": params}
        response, raw = await self.stream(name, "POST", JSONRPC_PATH, body, **kwargs)
        check(response.status_code == 200, f"{name}: HTTP {response.status_code}")
        return sse_results(raw, jsonrpc=True)


def result(response: httpx.Response) -> Json:
    """The JSON-RPC result of a response (a recording error if it carries none)."""
    payload = response.json()
    check("result" in payload, f"expected a result, got {payload!r}")
    return payload["result"]


def error_code(response: httpx.Response) -> int:
    """The JSON-RPC error code of a response (a recording error if it carries none)."""
    payload = response.json()
    check("error" in payload, f"expected an error, got {payload!r}")
    return int(payload["error"]["code"])


def reset_dir(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)
    for old in path.glob("*.json"):
        old.unlink()


# --------------------------------------------------------------------------------------------
# v1.0 payload helpers
# --------------------------------------------------------------------------------------------


def v1_message(message_id: str, *parts: Json, task_id: str = "", context_id: str = "") -> Json:
    message: dict[str, Json] = {"messageId": message_id, "role": "ROLE_USER", "parts": list(parts)}
    if task_id:
        message["taskId"] = task_id
    if context_id:
        message["contextId"] = context_id
    return message


def v1_text(text: str) -> Json:
    return {"text": text}


def sse_results(raw: str, *, jsonrpc: bool) -> list[Json]:
    results = []
    for event_name, data in parse_sse(raw):
        check(event_name is None, f"unexpected SSE event {event_name!r}: {data!r}")
        results.append(data["result"] if jsonrpc else data)
    return results


def v1_state(result: Json) -> str:
    """State from a v1.0 StreamResponse / SendMessageResponse / Task."""
    for key in ("task", "statusUpdate"):
        if key in result:
            return str(result[key]["status"]["state"])
    return str(result["status"]["state"])


# --------------------------------------------------------------------------------------------
# v1.0 JSON-RPC (strict server)
# --------------------------------------------------------------------------------------------


async def record_v1_jsonrpc(client: httpx.AsyncClient, out_dir: Path) -> list[Path]:
    rec = Recorder(
        client,
        out_dir,
        {"A2A-Version": "1.0", "Content-Type": "application/json", "Accept": "application/json"},
    )

    call, call_stream = rec.rpc, rec.rpc_stream

    card = await rec.unary("card", "GET", CARD_PATH, keep_headers=CARD_RESPONSE_HEADERS)
    check(card.status_code == 200 and "supportedInterfaces" in card.json(), "card")

    sent = result(
        await call(
            "send_message_task",
            "SendMessage",
            {"message": v1_message("v1-msg-task", v1_text("hello"), {"data": DATA_VALUE})},
        )
    )
    check(v1_state(sent) == "TASK_STATE_COMPLETED", "send_message_task state")
    done_task_id = sent["task"]["id"]
    done_context_id = sent["task"]["contextId"]

    reply = result(
        await call(
            "send_message_message",
            "SendMessage",
            {"message": v1_message("v1-msg-message", v1_text("message ping"))},
        )
    )
    check("message" in reply, "send_message_message returns a message")

    failed = result(
        await call(
            "send_message_failed",
            "SendMessage",
            {"message": v1_message("v1-msg-fail", v1_text("fail please"))},
        )
    )
    check(v1_state(failed) == "TASK_STATE_FAILED", "send_message_failed state")

    waiting = result(
        await call(
            "send_message_input_required",
            "SendMessage",
            {"message": v1_message("v1-msg-input", v1_text("input please"))},
        )
    )
    check(v1_state(waiting) == "TASK_STATE_INPUT_REQUIRED", "send_message_input_required state")
    continued = result(
        await call(
            "send_message_continue",
            "SendMessage",
            {
                "message": v1_message(
                    "v1-msg-input-2",
                    v1_text("more details"),
                    task_id=waiting["task"]["id"],
                    context_id=waiting["task"]["contextId"],
                )
            },
        )
    )
    check(v1_state(continued) == "TASK_STATE_COMPLETED", "send_message_continue state")

    slow = result(
        await call(
            "send_message_return_immediately",
            "SendMessage",
            {
                "message": v1_message("v1-msg-slow", v1_text("slow job")),
                "configuration": {"returnImmediately": True},
            },
        )
    )
    slow_id = slow["task"]["id"]
    canceled = result(await call("cancel_task", "CancelTask", {"id": slow_id}))
    check(v1_state(canceled) == "TASK_STATE_CANCELED", "cancel_task state")

    got = result(await call("get_task", "GetTask", {"id": done_task_id, "historyLength": 1}))
    check(got["id"] == done_task_id, "get_task id")
    listed = result(await call("list_tasks", "ListTasks", {"contextId": done_context_id}))
    check([t["id"] for t in listed["tasks"]] == [done_task_id], "list_tasks content")

    events = await call_stream(
        "stream_message",
        "SendStreamingMessage",
        {"message": v1_message("v1-msg-stream", v1_text("stream please"))},
    )
    check(v1_state(events[-1]) == "TASK_STATE_COMPLETED", "stream_message last state")
    events = await call_stream(
        "stream_input_required",
        "SendStreamingMessage",
        {"message": v1_message("v1-msg-stream-input", v1_text("input via stream"))},
    )
    check(v1_state(events[-1]) == "TASK_STATE_INPUT_REQUIRED", "stream_input_required state")
    events = await call_stream(
        "stream_message_reply",
        "SendStreamingMessage",
        {"message": v1_message("v1-msg-stream-message", v1_text("message via stream"))},
    )
    check(len(events) == 1 and "message" in events[0], "stream_message_reply")

    slow = result(
        await call(
            None,
            "SendMessage",
            {
                "message": v1_message("v1-msg-slow-2", v1_text("slow job to watch")),
                "configuration": {"returnImmediately": True},
            },
        )
    )
    watched_id = slow["task"]["id"]

    async def cancel_watched() -> None:
        await call(None, "CancelTask", {"id": watched_id})

    events = await call_stream(
        "subscribe", "SubscribeToTask", {"id": watched_id}, after_first_event=cancel_watched
    )
    check("task" in events[0], "subscribe starts with the task")
    check(v1_state(events[-1]) == "TASK_STATE_CANCELED", "subscribe ends canceled")

    hook = {
        "taskId": done_task_id,
        "id": HOOK_ID,
        "url": HOOK_URL,
        "token": HOOK_TOKEN,
        "authentication": {"scheme": "Bearer", "credentials": "hook-secret"},
    }
    created = result(await call("push_config_create", "CreateTaskPushNotificationConfig", hook))
    check(created["id"] == HOOK_ID, "push_config_create id")
    result(
        await call(
            "push_config_get",
            "GetTaskPushNotificationConfig",
            {"taskId": done_task_id, "id": HOOK_ID},
        )
    )
    configs = result(
        await call("push_config_list", "ListTaskPushNotificationConfigs", {"taskId": done_task_id})
    )
    check(len(configs["configs"]) == 1, "push_config_list")
    await call(
        "push_config_delete",
        "DeleteTaskPushNotificationConfig",
        {"taskId": done_task_id, "id": HOOK_ID},
    )

    extended = result(await call("extended_card", "GetExtendedAgentCard"))
    check([s["id"] for s in extended["skills"]] == ["echo", "extended-skill"], "extended card")

    check(
        error_code(await call("error_task_not_found", "GetTask", {"id": "no-such-task"})) == -32001,
        "error_task_not_found",
    )
    check(
        error_code(
            await call(
                "error_method_not_found",
                "message/send",
                {
                    "message": {
                        "kind": "message",
                        "messageId": "v1-msg-wrong-dialect",
                        "role": "user",
                        "parts": [{"kind": "text", "text": "hello"}],
                    }
                },
            )
        )
        == -32601,
        "error_method_not_found",
    )
    check(
        error_code(
            await call(
                "error_version_not_supported",
                "SendMessage",
                {"message": v1_message("v1-msg-no-version", v1_text("hello"))},
                headers={"A2A-Version": ""},
            )
        )
        == -32009,
        "error_version_not_supported",
    )
    check(
        error_code(await call("error_task_not_cancelable", "CancelTask", {"id": done_task_id}))
        == -32002,
        "error_task_not_cancelable",
    )
    # Sent like a real subscription (Accept: text/event-stream); the error still comes back as
    # a plain application/json response because the SDK pulls the first event before SSE starts.
    _response, raw = await rec.stream(
        "error_subscribe_terminal",
        "POST",
        JSONRPC_PATH,
        {
            "jsonrpc": "2.0",
            "id": rec.next_id(),
            "method": "SubscribeToTask",
            "params": {"id": done_task_id},
        },
    )
    check(json.loads(raw)["error"]["code"] == -32004, "error_subscribe_terminal")
    check(
        error_code(
            await call(
                "error_invalid_params",
                "SendMessage",
                {"message": {"messageId": "v1-msg-invalid", "role": "ROLE_USER", "parts": []}},
            )
        )
        == -32602,
        "error_invalid_params",
    )
    return rec.written


# --------------------------------------------------------------------------------------------
# v1.0 HTTP+JSON (strict server)
# --------------------------------------------------------------------------------------------


async def record_v1_rest(client: httpx.AsyncClient, out_dir: Path) -> list[Path]:
    rec = Recorder(
        client,
        out_dir,
        {
            "A2A-Version": "1.0",
            "Content-Type": "application/a2a+json",
            "Accept": "application/a2a+json, application/json",
        },
    )

    def ok(response: httpx.Response) -> Json:
        check(response.status_code == 200, f"HTTP {response.status_code}: {response.text}")
        return response.json()

    def error_reason(response: httpx.Response) -> tuple[int, str]:
        payload = response.json()
        reasons = [d.get("reason") for d in payload["error"].get("details", [])]
        return response.status_code, str(reasons[0] if reasons else None)

    async def send(name: str | None, body: Json) -> Json:
        return ok(await rec.unary(name, "POST", f"{REST_PATH}/message:send", body))

    async def stream(name: str, path: str, body: Json) -> list[Json]:
        response, raw = await rec.stream(name, "POST", path, body)
        check(response.status_code == 200, f"{name}: HTTP {response.status_code}")
        return sse_results(raw, jsonrpc=False)

    sent = await send(
        "send_message_task",
        {"message": v1_message("rest-msg-task", v1_text("hello"), {"data": DATA_VALUE})},
    )
    check(v1_state(sent) == "TASK_STATE_COMPLETED", "send_message_task state")
    done_task_id = sent["task"]["id"]
    done_context_id = sent["task"]["contextId"]

    reply = await send(
        "send_message_message", {"message": v1_message("rest-msg-message", v1_text("message ping"))}
    )
    check("message" in reply, "send_message_message")
    failed = await send(
        "send_message_failed", {"message": v1_message("rest-msg-fail", v1_text("fail please"))}
    )
    check(v1_state(failed) == "TASK_STATE_FAILED", "send_message_failed")
    waiting = await send(
        "send_message_input_required",
        {"message": v1_message("rest-msg-input", v1_text("input please"))},
    )
    check(v1_state(waiting) == "TASK_STATE_INPUT_REQUIRED", "send_message_input_required")
    continued = await send(
        "send_message_continue",
        {
            "message": v1_message(
                "rest-msg-input-2",
                v1_text("more details"),
                task_id=waiting["task"]["id"],
                context_id=waiting["task"]["contextId"],
            )
        },
    )
    check(v1_state(continued) == "TASK_STATE_COMPLETED", "send_message_continue")

    slow = await send(
        "send_message_return_immediately",
        {
            "message": v1_message("rest-msg-slow", v1_text("slow job")),
            "configuration": {"returnImmediately": True},
        },
    )
    slow_id = slow["task"]["id"]
    canceled = ok(await rec.unary("cancel_task", "POST", f"{REST_PATH}/tasks/{slow_id}:cancel", {}))
    check(v1_state(canceled) == "TASK_STATE_CANCELED", "cancel_task")

    got = ok(
        await rec.unary(
            "get_task", "GET", f"{REST_PATH}/tasks/{done_task_id}", params={"historyLength": "1"}
        )
    )
    check(got["id"] == done_task_id, "get_task")
    listed = ok(
        await rec.unary(
            "list_tasks", "GET", f"{REST_PATH}/tasks", params={"contextId": done_context_id}
        )
    )
    check([t["id"] for t in listed["tasks"]] == [done_task_id], "list_tasks")

    events = await stream(
        "stream_message",
        f"{REST_PATH}/message:stream",
        {"message": v1_message("rest-msg-stream", v1_text("stream please"))},
    )
    check(v1_state(events[-1]) == "TASK_STATE_COMPLETED", "stream_message")
    events = await stream(
        "stream_input_required",
        f"{REST_PATH}/message:stream",
        {"message": v1_message("rest-msg-stream-input", v1_text("input via stream"))},
    )
    check(v1_state(events[-1]) == "TASK_STATE_INPUT_REQUIRED", "stream_input_required")
    events = await stream(
        "stream_message_reply",
        f"{REST_PATH}/message:stream",
        {"message": v1_message("rest-msg-stream-message", v1_text("message via stream"))},
    )
    check(len(events) == 1 and "message" in events[0], "stream_message_reply")

    for name, verb in (("subscribe", "POST"), ("subscribe_get", "GET")):
        watched = await send(
            None,
            {
                "message": v1_message(f"rest-msg-slow-{verb}", v1_text("slow job to watch")),
                "configuration": {"returnImmediately": True},
            },
        )
        watched_id = watched["task"]["id"]

        async def cancel_watched(task_id: str = watched_id) -> None:
            await rec.unary(None, "POST", f"{REST_PATH}/tasks/{task_id}:cancel", {})

        response, raw = await rec.stream(
            name,
            verb,
            f"{REST_PATH}/tasks/{watched_id}:subscribe",
            {} if verb == "POST" else None,
            after_first_event=cancel_watched,
        )
        check(response.status_code == 200, f"{name}: HTTP {response.status_code}")
        events = sse_results(raw, jsonrpc=False)
        check("task" in events[0], f"{name} starts with the task")
        check(v1_state(events[-1]) == "TASK_STATE_CANCELED", f"{name} ends canceled")

    configs_path = f"{REST_PATH}/tasks/{done_task_id}/pushNotificationConfigs"
    created = ok(
        await rec.unary(
            "push_config_create",
            "POST",
            configs_path,
            {
                "id": HOOK_ID,
                "url": HOOK_URL,
                "token": HOOK_TOKEN,
                "authentication": {"scheme": "Bearer", "credentials": "hook-secret"},
            },
        )
    )
    check(created["id"] == HOOK_ID, "push_config_create")
    ok(await rec.unary("push_config_get", "GET", f"{configs_path}/{HOOK_ID}"))
    listed_configs = ok(await rec.unary("push_config_list", "GET", configs_path))
    check(len(listed_configs["configs"]) == 1, "push_config_list")
    deleted = await rec.unary("push_config_delete", "DELETE", f"{configs_path}/{HOOK_ID}")
    check(deleted.status_code == 200, f"push_config_delete HTTP {deleted.status_code}")

    extended = ok(await rec.unary("extended_card", "GET", f"{REST_PATH}/extendedAgentCard"))
    check([s["id"] for s in extended["skills"]] == ["echo", "extended-skill"], "extended card")

    check(
        error_reason(
            await rec.unary("error_task_not_found", "GET", f"{REST_PATH}/tasks/no-such-task")
        )
        == (404, "TASK_NOT_FOUND"),
        "error_task_not_found",
    )
    # An operation the binding does not have: no route, plain-text Starlette 404.
    # (A single-segment unknown path such as /message:foo gets a 307 to "/message:foo/"
    # instead, because of the SDK's "/{tenant}" mount and Starlette's redirect_slashes.)
    not_routed = await rec.unary(
        "error_method_not_found", "POST", f"{REST_PATH}/tasks/{done_task_id}:pause", {}
    )
    check(not_routed.status_code == 404, "error_method_not_found")
    # Quirk: a v0.3 REST path (/v1/...) is not a 404 on a v1.0-only SDK server; the SDK's
    # "/{tenant}" mount takes "v1" as a tenant and serves the request as v1.0.
    as_tenant = ok(
        await rec.unary(
            "quirk_v03_path_as_tenant",
            "POST",
            f"{REST_PATH}/v1/message:send",
            {"message": v1_message("rest-msg-v03-path", v1_text("hello"))},
        )
    )
    check(v1_state(as_tenant) == "TASK_STATE_COMPLETED", "quirk_v03_path_as_tenant")
    check(
        error_reason(
            await rec.unary(
                "error_version_not_supported",
                "POST",
                f"{REST_PATH}/message:send",
                {"message": v1_message("rest-msg-no-version", v1_text("hello"))},
                headers={"A2A-Version": ""},
            )
        )[1]
        == "VERSION_NOT_SUPPORTED",
        "error_version_not_supported",
    )
    check(
        error_reason(
            await rec.unary(
                "error_task_not_cancelable", "POST", f"{REST_PATH}/tasks/{done_task_id}:cancel", {}
            )
        )[1]
        == "TASK_NOT_CANCELABLE",
        "error_task_not_cancelable",
    )
    response, _raw = await rec.stream(
        "error_subscribe_terminal", "POST", f"{REST_PATH}/tasks/{done_task_id}:subscribe", {}
    )
    check(response.status_code >= 400, "error_subscribe_terminal")
    invalid = await rec.unary(
        "error_invalid_params",
        "POST",
        f"{REST_PATH}/message:send",
        {"message": {"messageId": "rest-msg-invalid", "role": "ROLE_USER", "parts": []}},
    )
    check(invalid.status_code == 400, "error_invalid_params")
    return rec.written


# --------------------------------------------------------------------------------------------
# v0.3 JSON-RPC (compat server)
# --------------------------------------------------------------------------------------------


def v03_message(message_id: str, *parts: Json, task_id: str = "", context_id: str = "") -> Json:
    message: dict[str, Json] = {
        "kind": "message",
        "messageId": message_id,
        "role": "user",
        "parts": list(parts),
    }
    if task_id:
        message["taskId"] = task_id
    if context_id:
        message["contextId"] = context_id
    return message


def v03_text(text: str) -> Json:
    return {"kind": "text", "text": text}


def v03_state(result: Json) -> str:
    return str(result["status"]["state"])


async def record_v03_jsonrpc(client: httpx.AsyncClient, out_dir: Path) -> list[Path]:
    rec = Recorder(
        client, out_dir, {"Content-Type": "application/json", "Accept": "application/json"}
    )

    call, call_stream = rec.rpc, rec.rpc_stream

    card = await rec.unary("card", "GET", CARD_PATH, keep_headers=CARD_RESPONSE_HEADERS)
    check(card.status_code == 200 and card.json().get("protocolVersion") == "0.3", "card")

    sent = result(
        await call(
            "send_message_task",
            "message/send",
            {
                "message": v03_message(
                    "v03-msg-task", v03_text("hello"), {"kind": "data", "data": DATA_VALUE}
                )
            },
        )
    )
    check(sent["kind"] == "task" and v03_state(sent) == "completed", "send_message_task")
    done_task_id = sent["id"]

    reply = result(
        await call(
            "send_message_message",
            "message/send",
            {"message": v03_message("v03-msg-message", v03_text("message ping"))},
        )
    )
    check(reply["kind"] == "message", "send_message_message")
    failed = result(
        await call(
            "send_message_failed",
            "message/send",
            {"message": v03_message("v03-msg-fail", v03_text("fail please"))},
        )
    )
    check(v03_state(failed) == "failed", "send_message_failed")
    waiting = result(
        await call(
            "send_message_input_required",
            "message/send",
            {"message": v03_message("v03-msg-input", v03_text("input please"))},
        )
    )
    check(v03_state(waiting) == "input-required", "send_message_input_required")
    continued = result(
        await call(
            "send_message_continue",
            "message/send",
            {
                "message": v03_message(
                    "v03-msg-input-2",
                    v03_text("more details"),
                    task_id=waiting["id"],
                    context_id=waiting["contextId"],
                )
            },
        )
    )
    check(v03_state(continued) == "completed", "send_message_continue")

    slow = result(
        await call(
            "send_message_non_blocking",
            "message/send",
            {
                "message": v03_message("v03-msg-slow", v03_text("slow job")),
                "configuration": {"blocking": False},
            },
        )
    )
    canceled = result(await call("cancel_task", "tasks/cancel", {"id": slow["id"]}))
    check(v03_state(canceled) == "canceled", "cancel_task")

    got = result(await call("get_task", "tasks/get", {"id": done_task_id, "historyLength": 1}))
    check(got["id"] == done_task_id, "get_task")

    events = await call_stream(
        "stream_message",
        "message/stream",
        {"message": v03_message("v03-msg-stream", v03_text("stream please"))},
    )
    check(events[-1].get("final") is True and v03_state(events[-1]) == "completed", "stream")
    events = await call_stream(
        "stream_input_required",
        "message/stream",
        {"message": v03_message("v03-msg-stream-input", v03_text("input via stream"))},
    )
    check(v03_state(events[-1]) == "input-required", "stream_input_required")
    events = await call_stream(
        "stream_message_reply",
        "message/stream",
        {"message": v03_message("v03-msg-stream-message", v03_text("message via stream"))},
    )
    check(len(events) == 1 and events[0]["kind"] == "message", "stream_message_reply")

    watched = result(
        await call(
            None,
            "message/send",
            {
                "message": v03_message("v03-msg-slow-2", v03_text("slow job to watch")),
                "configuration": {"blocking": False},
            },
        )
    )

    async def cancel_watched() -> None:
        await call(None, "tasks/cancel", {"id": watched["id"]})

    events = await call_stream(
        "subscribe", "tasks/resubscribe", {"id": watched["id"]}, after_first_event=cancel_watched
    )
    check(v03_state(events[-1]) == "canceled", "subscribe ends canceled")

    created = result(
        await call(
            "push_config_create",
            "tasks/pushNotificationConfig/set",
            {
                "taskId": done_task_id,
                "pushNotificationConfig": {
                    "id": HOOK_ID,
                    "url": HOOK_URL,
                    "token": HOOK_TOKEN,
                    "authentication": {"schemes": ["Bearer"], "credentials": "hook-secret"},
                },
            },
        )
    )
    check(created["pushNotificationConfig"]["id"] == HOOK_ID, "push_config_create")
    result(
        await call(
            "push_config_get",
            "tasks/pushNotificationConfig/get",
            {"id": done_task_id, "pushNotificationConfigId": HOOK_ID},
        )
    )
    configs = result(
        await call("push_config_list", "tasks/pushNotificationConfig/list", {"id": done_task_id})
    )
    check(isinstance(configs, list) and len(configs) == 1, "push_config_list")
    await call(
        "push_config_delete",
        "tasks/pushNotificationConfig/delete",
        {"id": done_task_id, "pushNotificationConfigId": HOOK_ID},
    )

    extended = result(await call("extended_card", "agent/getAuthenticatedExtendedCard"))
    check([s["id"] for s in extended["skills"]] == ["echo", "extended-skill"], "extended card")

    check(
        error_code(await call("error_task_not_found", "tasks/get", {"id": "no-such-task"}))
        == -32001,
        "error_task_not_found",
    )
    check(
        error_code(await call("error_method_not_found", "tasks/list", {})) == -32601,
        "error_method_not_found",
    )
    check(
        error_code(await call("error_task_not_cancelable", "tasks/cancel", {"id": done_task_id}))
        == -32002,
        "error_task_not_cancelable",
    )
    # Unlike v1.0, the v0.3 adapter answers this with an SSE stream holding one error event.
    response, raw = await rec.stream(
        "error_subscribe_terminal",
        "POST",
        JSONRPC_PATH,
        {
            "jsonrpc": "2.0",
            "id": rec.next_id(),
            "method": "tasks/resubscribe",
            "params": {"id": done_task_id},
        },
    )
    check(
        response.headers["content-type"].startswith("text/event-stream")
        and parse_sse(raw)[-1][1]["error"]["code"] == -32004,
        "error_subscribe_terminal",
    )
    check(
        error_code(
            await call(
                "error_invalid_params",
                "message/send",
                {"message": {"kind": "message", "messageId": "v03-msg-invalid", "parts": []}},
            )
        )
        # The SDK's v0.3 adapter reports params that fail validation as -32600, not -32602.
        == -32600,
        "error_invalid_params",
    )
    return rec.written


# --------------------------------------------------------------------------------------------


RecordFn = Callable[[httpx.AsyncClient, Path], Coroutine[Any, Any, list[Path]]]


async def record_against(mode: str, *jobs: tuple[RecordFn, Path]) -> list[Path]:
    """Starts the server in ``mode`` and runs each recorder against it."""
    written: list[Path] = []
    timeout = httpx.Timeout(EXCHANGE_TIMEOUT_S)
    async with (
        SdkServer(mode) as server,
        httpx.AsyncClient(base_url=server.base_url, timeout=timeout) as client,
    ):
        for record, out_dir in jobs:
            written += await record(client, out_dir)
    return written


async def main() -> None:
    targets = {
        "v1_0": HERE / "v1_0",
        "v1_0_rest": HERE / "v1_0_rest",
        "v0_3": HERE / "v0_3",
    }
    for path in targets.values():
        reset_dir(path)

    written = await record_against(
        "strict",
        (record_v1_jsonrpc, targets["v1_0"]),
        (record_v1_rest, targets["v1_0_rest"]),
    )
    written += await record_against("compat", (record_v03_jsonrpc, targets["v0_3"]))

    for path in written:
        print(path.relative_to(ROOT))
    print(f"{len(written)} frames written")


if __name__ == "__main__":
    anyio.run(main)
