"""``a2a-anyio mcp``: the bridge as an MCP host meets it, through the MCP SDK's own client, over
stdio (the host starts the command) and over streamable HTTP, the bridge on the test's
backend. The agents are FakeAgents served by the test on 127.0.0.1."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio
import pytest
from anyio.abc import Process
from anyio.from_thread import start_blocking_portal
from anyio.streams.text import TextReceiveStream
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from a2a_anyio import TaskState
from a2a_anyio._agent_text import unfenced
from a2a_anyio._network import is_loopback
from a2a_anyio.cli import main
from a2a_anyio.cli._mcp import unique
from a2a_anyio.testing import FakeAgent
from tests.testing._helpers import wait_until
from tests.testing.test_tool import Slow, fenced, make_agent

from .conftest import clean_env, closed_port

pytestmark = pytest.mark.anyio
LIMIT = 40.0


@asynccontextmanager
async def bridge(
    backend: str, *args: str, env: dict[str, str] | None = None, errlog: TextIO | None = None
) -> AsyncIterator[ClientSession]:
    """An MCP client session with ``a2a-anyio --backend BACKEND ARGS... mcp``, started over
    stdio as an MCP host starts it."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "a2a_anyio.cli", "--backend", backend, *args],
        env=env if env is not None else clean_env(),
    )
    with tempfile.TemporaryFile("w+") as log:
        async with (
            stdio_client(params, errlog=errlog or log) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


class Progress:
    """An MCP progress callback that keeps what it is told, and tells when a text came."""

    def __init__(self, wanted: str = "") -> None:
        self.messages: list[str] = []
        self.values: list[float] = []
        self.wanted = wanted
        self.came = anyio.Event()

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.values.append(progress)
        self.messages.append(message or "")
        if self.wanted and self.wanted == message:
            self.came.set()


def text(result: Any) -> str:
    [content] = result.content
    return str(content.text)


async def test_an_mcp_host_lists_the_tools_and_calls_an_agent(anyio_backend_name: str) -> None:
    agent = make_agent("1.0")
    async with agent.serve():
        with anyio.fail_after(LIMIT):
            async with bridge(anyio_backend_name, "-a", agent.url, "mcp") as session:
                tools = (await session.list_tools()).tools
                progress = Progress()
                result = await session.call_tool(
                    "Table_Booker", {"text": "march", "skill": "report"}, progress_callback=progress
                )
    names = [tool.name for tool in tools]
    assert names == ["Table_Booker", "list_agents", "get_task", "cancel_task"]
    schema = tools[0].input_schema
    assert schema["required"] == ["text"] and "skill" in schema["properties"]
    assert tools[0].description is not None
    assert tools[0].description.endswith(
        fenced(
            "Table Booker: Books tables in restaurants. Skills: report (Report: Writes a report.); book (Book: Books a table.); vault (Vault); fail (Fail); reject (Reject); echo (Echo); hello (Hello)."
        )
    )
    assert not result.is_error
    assert text(result).startswith(fenced("part 1 and part 2") + "\ndata: ")
    structured = result.structured_content
    assert structured is not None
    assert (structured["state"], structured["data"]) == ("completed", [{"pages": 2}])
    # The agent's events, as they came: MCP progress notifications.
    assert progress.values == sorted(progress.values) and len(progress.values) >= 4
    assert f"working: {fenced('writing')}" in progress.messages
    assert f"working: {fenced('part 1')}" in progress.messages
    assert progress.messages[-1] == "completed"


async def test_an_agent_that_asks_for_input_is_answered_with_its_context(
    anyio_backend_name: str,
) -> None:
    agent = make_agent("0.3")
    async with agent.serve():
        with anyio.fail_after(LIMIT):
            async with bridge(anyio_backend_name, "-a", agent.url, "mcp") as session:
                asked = await session.call_tool("Table_Booker", {"text": "two", "skill": "book"})
                assert asked.structured_content is not None
                context = asked.structured_content["context_id"]
                done = await session.call_tool(
                    "Table_Booker", {"text": "Friday", "context_id": context}
                )
    assert not asked.is_error
    assert text(asked).startswith(
        f"The agent asks for more input: {fenced('which date?')}\nTo answer,"
    )
    assert f"context_id {context}" in text(asked)  # as the model reads it: fenced
    assert done.structured_content is not None
    assert done.structured_content["task_id"] == asked.structured_content["task_id"]
    assert text(done).startswith(fenced(f"booked on Friday in {unfenced(context)}"))


async def test_cancelling_the_mcp_request_cancels_the_agents_task(anyio_backend_name: str) -> None:
    slow = Slow()
    agent = make_agent("1.0", slow)
    async with agent.serve():
        with anyio.fail_after(LIMIT):
            async with bridge(anyio_backend_name, "-a", agent.url, "mcp") as session:
                progress = Progress(wanted=f"working: {fenced('thinking')}")
                async with anyio.create_task_group() as tg:

                    async def call() -> None:
                        await session.call_tool(
                            "Table_Booker",
                            {"text": "think", "skill": "slow"},
                            progress_callback=progress,
                        )

                    tg.start_soon(call)
                    await progress.came.wait()
                    tg.cancel_scope.cancel()  # the client sends notifications/cancelled
                [task] = agent.tasks.values()
                await wait_until(lambda: agent.get_task(task.id).state is TaskState.CANCELED)
    assert [r.op for r in agent.requests if r.op == "cancel"] == ["cancel"]


async def test_failures_are_results_the_model_reads(anyio_backend_name: str) -> None:
    agent = make_agent("1.0")
    async with agent.serve():
        with anyio.fail_after(LIMIT):
            async with bridge(anyio_backend_name, "-a", agent.url, "mcp") as session:
                failed = await session.call_tool("Table_Booker", {"text": "x", "skill": "fail"})
                wrong = await session.call_tool("Table_Booker", {"text": "x", "colour": "red"})
                agent.fault(op="stream", http_status=500)
                broken = await session.call_tool("Table_Booker", {"text": "x", "skill": "echo"})
                with pytest.raises(MCPError, match="no tool named 'nope'"):
                    await session.call_tool("nope", {})
    assert failed.is_error
    assert text(failed).startswith(f"The agent's task failed: {fenced('no table left')}")
    assert wrong.is_error and text(wrong) == (
        "Table_Booker has no argument 'colour': it takes text, data, skill, context_id"
    )
    assert broken.is_error and text(broken).startswith("The call failed: ⟦agent⟧HTTP 500")


async def test_list_agents_get_task_and_cancel_task(anyio_backend_name: str) -> None:
    agent = make_agent("1.0")
    down = f"http://127.0.0.1:{closed_port()}"
    with tempfile.TemporaryFile("w+") as log:
        async with agent.serve():
            served = agent.url
            with anyio.fail_after(LIMIT):
                async with bridge(
                    anyio_backend_name, "-a", agent.url, "-a", down, "--timeout", "5", "mcp",
                    errlog=log,
                ) as session:  # fmt: skip
                    listed = await session.call_tool("list_agents", {})
                    asked = await session.call_tool("Table_Booker", {"text": "x", "skill": "book"})
                    assert asked.structured_content is not None
                    task_id = asked.structured_content["task_id"]
                    by_task = {"agent": "Table_Booker", "task_id": task_id}
                    got = await session.call_tool("get_task", by_task)
                    canceled = await session.call_tool("cancel_task", by_task)
                    unknown = await session.call_tool("get_task", {**by_task, "agent": "x"})
                    tools = [t.name for t in (await session.list_tools()).tools]
        log.seek(0)
        warnings = log.read()
    assert listed.structured_content is not None
    first, second = listed.structured_content["agents"]
    assert (first["tool"], first["url"], first["streaming"]) == ("Table_Booker", served, True)
    book = {"id": fenced("book"), "name": fenced("Book"), "description": fenced("Books a table.")}
    assert book in first["skills"]
    assert (second["tool"], second["url"]) == (None, down)
    assert "cannot connect" in second["error"]
    assert json.loads(text(listed)) == listed.structured_content
    assert tools == ["Table_Booker", "list_agents", "get_task", "cancel_task"]
    assert f"warning: {down}: cannot connect" in warnings
    assert got.structured_content is not None
    assert (got.structured_content["state"], got.structured_content["message"]) == (
        "input-required",
        fenced("which date?"),
    )
    assert canceled.structured_content is not None
    assert canceled.structured_content["state"] == "canceled" and canceled.is_error
    assert agent.get_task(unfenced(task_id)).state is TaskState.CANCELED
    assert unknown.is_error and "the argument 'agent' of get_task is the name of" in text(unknown)


async def test_the_registry_gives_the_agents_and_their_credentials(
    anyio_backend_name: str, tmp_path: Path
) -> None:
    guarded = make_agent("1.0", auth="Bearer s3cret")
    twin = make_agent("0.3")  # the same name: its tool is Table_Booker_2
    other = FakeAgent(name="Other agent")
    async with guarded.serve(), twin.serve(), other.serve():
        (tmp_path / "agents.yaml").write_text(
            f"""\
agents:
  - name: guarded
    url: {guarded.url}
    token_env: GUARDED_TOKEN
    tags: [booking]
  - name: twin
    url: {twin.url}
    tags: [booking]
  - name: other
    url: {other.url}
"""
        )
        env = clean_env(A2A_ANYIO_CONFIG=str(tmp_path / "agents.yaml"), GUARDED_TOKEN="s3cret")
        with anyio.fail_after(LIMIT):
            async with bridge(anyio_backend_name, "mcp", env=env) as session:
                everyone = [t.name for t in (await session.list_tools()).tools]
                result = await session.call_tool("Table_Booker", {"text": "hi", "skill": "echo"})
            async with bridge(anyio_backend_name, "mcp", "--group", "booking", env=env) as session:
                grouped = [t.name for t in (await session.list_tools()).tools]
    assert everyone == ["Table_Booker", "Table_Booker_2", "Other_agent", *BRIDGE]
    assert grouped == ["Table_Booker", "Table_Booker_2", *BRIDGE]
    assert text(result).startswith(fenced("echo hi null echo"))  # the registry's token was sent
    assert guarded.requests_for("stream")[0].headers["authorization"] == "Bearer s3cret"


BRIDGE = ["list_agents", "get_task", "cancel_task"]


@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM", "end of stdin"])
async def test_over_stdio_a_signal_or_the_hosts_end_stops_it_cleanly(
    anyio_backend_name: str, stop: str
) -> None:
    agent = make_agent("1.0")
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "host", "version": "1"},
        },
    }
    async with agent.serve():
        command = [
            sys.executable, "-m", "a2a_anyio.cli", "--backend", anyio_backend_name,
            "-a", agent.url, "mcp",
        ]  # fmt: skip
        with anyio.fail_after(LIMIT):
            process = await anyio.open_process(command, env=clean_env())
            async with process:
                assert process.stdin is not None and process.stdout is not None
                await process.stdin.send(json.dumps(initialize).encode() + b"\n")
                answer = await process.stdout.receive()  # the server reads stdin: it serves
                if stop == "end of stdin":
                    await process.stdin.aclose()
                else:
                    process.send_signal(getattr(signal, stop))
                code = await process.wait()
                assert process.stderr is not None
                err = b"".join([chunk async for chunk in process.stderr])
    assert json.loads(answer)["id"] == 1
    assert (code, err) == (0, b"")


# -- over streamable HTTP ----------------------------------------------------------------------


async def _until_serving(process: Process, err: list[str]) -> str:
    assert process.stderr is not None
    async for chunk in TextReceiveStream(process.stderr):
        err.append(chunk)
        said = "".join(err)
        if "/mcp (Ctrl-C stops it)" in said:
            return said.split(" at ", 1)[1].split()[0]
    raise AssertionError(f"the bridge did not start: {''.join(err)}")


# The SDK's streamable HTTP client leaves the async generators of each response to the garbage
# collector, which trio warns about (asyncio does not): the client's, not the bridge's.
@pytest.mark.filterwarnings("ignore:Async generator 'httpx2.:ResourceWarning")
@pytest.mark.filterwarnings("ignore:Async generator 'httpcore2.:ResourceWarning")
async def test_streamable_http_on_127_0_0_1_and_ctrl_c_stops_it_cleanly(
    anyio_backend_name: str,
) -> None:
    slow = Slow()
    agent = make_agent("1.0", slow)
    port = closed_port()
    err: list[str] = []
    async with agent.serve():
        command = [
            sys.executable, "-m", "a2a_anyio.cli", "--backend", anyio_backend_name,
            "-a", agent.url, "mcp", "--http", "--port", str(port),
        ]  # fmt: skip
        with anyio.fail_after(LIMIT):
            process = await anyio.open_process(command, env=clean_env(), stdin=subprocess.DEVNULL)
            async with process:
                url = await _until_serving(process, err)
                async with (
                    streamable_http_client(url) as (read, write),
                    ClientSession(read, write) as session,
                ):
                    await session.initialize()
                    tools = [t.name for t in (await session.list_tools()).tools]
                    progress = Progress(wanted=f"working: {fenced('thinking')}")
                    asked = await session.call_tool(
                        "Table_Booker", {"text": "x", "skill": "book"}, progress_callback=progress
                    )
                    async with anyio.create_task_group() as tg:

                        async def call() -> None:
                            await session.call_tool(
                                "Table_Booker",
                                {"text": "think", "skill": "slow"},
                                progress_callback=progress,
                            )

                        tg.start_soon(call)
                        await progress.came.wait()
                        tg.cancel_scope.cancel()
                    slow_task = next(t for t in agent.tasks.values() if t.id != asked_id(asked))
                    await wait_until(
                        lambda: agent.get_task(slow_task.id).state is TaskState.CANCELED
                    )
                process.send_signal(signal.SIGINT)
                assert process.stderr is not None
                async for chunk in TextReceiveStream(process.stderr):
                    err.append(chunk)
                code = await process.wait()
    assert url == f"http://127.0.0.1:{port}/mcp"
    assert tools == ["Table_Booker", *BRIDGE]
    assert "which date?" in progress.messages[1]
    assert code == 0, "".join(err)  # a server that Ctrl-C stops, stopped cleanly
    assert "".join(err) == f"MCP over streamable HTTP at {url} (Ctrl-C stops it)\n"


def asked_id(result: Any) -> str:
    return unfenced(str(result.structured_content["task_id"]))


async def test_a_host_that_is_not_loopback_is_warned_about(anyio_backend_name: str) -> None:
    # 192.0.2.1 (TEST-NET-1) is no address of this machine: the bind fails after the warning.
    agent = make_agent("1.0")
    async with agent.serve():
        with anyio.fail_after(LIMIT):
            done = await anyio.run_process(
                [
                    sys.executable, "-m", "a2a_anyio.cli", "--backend", anyio_backend_name,
                    "-a", agent.url, "mcp", "--http", "--host", "192.0.2.1", "--port", "0",
                ],
                env=clean_env(),
                check=False,
            )  # fmt: skip
    stderr = done.stderr.decode()
    assert stderr.startswith(
        "warning: --host 192.0.2.1 is not a loopback address: whoever can reach it may call "
        "your agents, with the credentials this bridge holds\n"
    )
    assert done.returncode != 0 and "Traceback" not in stderr


def test_loopback_hosts() -> None:
    assert all(map(is_loopback, ["127.0.0.1", "127.8.0.1", "localhost", "::1", "[::1]"]))
    assert not any(map(is_loopback, ["0.0.0.0", "::", "192.168.1.2", "example.com"]))


def test_tool_names_are_made_unique() -> None:
    taken = {"a", "a_2", "list_agents"}
    assert unique("a", taken) == "a_3"
    assert unique("list_agents", taken) == "list_agents_2"
    assert unique("b", taken) == "b"
    assert unique("x" * 64, {"x" * 64}) == "x" * 62 + "_2"


# -- in process: no MCP SDK, no agents, --list-tools ----------------------------------------


def test_without_the_extra_the_error_says_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # import mcp fails, as without the extra
    code = main(["-a", "http://127.0.0.1:9", "mcp"])
    assert code == 2
    assert capsys.readouterr().err.startswith(
        "error: a2a-anyio mcp needs the MCP SDK, the a2a-anyio[mcp] extra: "
        "pip install '.[mcp]' in a2a-anyio's checkout"
    )


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_list_tools_needs_no_sdk(
    backend: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = make_agent("legacy")
    with (
        start_blocking_portal(backend) as portal,  # the agent's own loop, on 127.0.0.1
        portal.wrap_async_context_manager(agent.serve()),
    ):
        monkeypatch.setitem(sys.modules, "mcp", None)
        code = main(["--backend", backend, "-a", agent.url, "mcp", "--list-tools"])
    listed = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [t["name"] for t in listed["tools"]] == ["Table_Booker", *BRIDGE]
    assert listed["tools"][0]["inputSchema"]["required"] == ["text"]


def test_no_agents_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("A2A_ANYIO_CONFIG", str(tmp_path / "none.yaml"))
    (tmp_path / "none.yaml").write_text("agents: []\n")
    assert main(["mcp", "--list-tools"]) == 2
    assert capsys.readouterr().err.startswith(
        "error: no agents to serve: name them with -a, a registry group with --group, "
        "or define agents in the registry"
    )


async def test_what_an_agent_writes_reaches_the_host_fenced_and_without_credentials(
    anyio_backend_name: str,
) -> None:
    from tests.testing.test_tool import HIDDEN, JWT, KEY, TOKEN, hostile_agent

    agent = hostile_agent()
    async with agent.serve():
        with anyio.fail_after(LIMIT):
            async with bridge(
                anyio_backend_name, "-a", agent.url, "--bearer", TOKEN, "--api-key", KEY, "mcp"
            ) as session:
                [tool] = [
                    t for t in (await session.list_tools()).tools if t.name.startswith("Helper")
                ]
                progress = Progress()
                result = await session.call_tool(
                    tool.name, {"text": "hi", "skill": "ok"}, progress_callback=progress
                )
                listed = await session.call_tool("list_agents", {})
    shown = [
        tool.description or "",
        text(result),
        json.dumps(result.structured_content, ensure_ascii=False),
        text(listed),
        *progress.messages,
    ]
    for seen in shown:
        for secret in (TOKEN, KEY, JWT, *HIDDEN):
            assert secret not in seen
    assert "⟦agent⟧" in text(result) and "[/agent]" in text(result)  # the forged fence, defused
    assert text(result).count("⟦/agent⟧") == text(result).count("⟦agent⟧")
