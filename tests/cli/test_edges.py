"""What a new user meets at the edges of the command line: agent references that cannot name
an agent, a closed output pipe, an agent whose stream cannot be read, a deadline that leaves a
task behind, a piped chat whose turns fail."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import Any

import anyio.to_thread
import pytest

from a2a_anyio import AgentPool, Task, TaskState
from a2a_anyio._asgi import HTTPRequest, Receive, Scope, Send
from a2a_anyio.testing import Emit, FakeAgent, SkillContext, serve_app, status

from .conftest import CLI_TIMEOUT, GOOD_TOKEN, clean_env, cli, run

NOT_AGENTS = [
    "htp://x",
    "ftp://files.example.com/card",
    "http:/x",
    "missing.json",
    "./missing.json",
]


@pytest.mark.parametrize("ref", NOT_AGENTS)
def test_a_reference_that_names_no_agent_is_refused_at_once(ref: str, tmp_path: Path) -> None:
    run = cli("-a", ref, "card", cwd=tmp_path)
    assert run.code == 2, run.err
    first = run.err.splitlines()[0]
    assert first.startswith("error: -a: ") and repr(ref) in first
    assert "an agent is an http(s) URL, a card file that exists, a name of the registry" in first
    assert "cannot connect" not in run.err


@pytest.mark.parametrize("ref", ["htp://x", "ftp://files.example.com/card", "http:/x"])
def test_the_library_reads_the_same_references_as_urls(ref: str) -> None:
    pool = AgentPool()
    with pytest.raises(ValueError, match="not an absolute http"):
        pool.client(ref)


CARD = {
    "name": "Card File Agent",
    "description": "An agent known by its card file.",
    "version": "1.0.0",
    "supportedInterfaces": [
        {"url": "http://127.0.0.1:9/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ],
    "capabilities": {"streaming": True},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "s", "name": "S", "description": "a skill", "tags": []}],
}


def _with_closed_stdout(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI run with ``args``, its standard output a pipe whose reader is gone before the
    first line: every write fails."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [sys.executable, "-m", "a2a_anyio.cli", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=clean_env(),
            timeout=CLI_TIMEOUT,
        )
    finally:
        os.close(write_end)


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX pipe")
@pytest.mark.parametrize(
    ("args", "code"),
    [(["card"], 141), (["-o", "json", "card"], 141), (["--help"], 0)],
    ids=["text", "json", "help"],
)
def test_a_pipe_closed_early_ends_the_command_quietly(
    args: list[str], code: int, tmp_path: Path
) -> None:
    """Exit 141 as if killed by SIGPIPE (argparse's help ignores the closed pipe: 0)."""
    card = tmp_path / "card.json"
    card.write_text(json.dumps(CARD))
    proc = _with_closed_stdout("-a", str(card), *args)
    assert proc.returncode == code, proc.stderr
    assert proc.stderr == ""


# -- send: an agent whose stream cannot be read; a deadline that leaves a task -----------------


class EventFrames:
    """A ``tasks/send`` agent (a FakeAgent) whose ``tasks/sendSubscribe`` answers with frames
    that are not A2A's: JSON-RPC notifications (``method``, ``params``, no ``result``), as a
    framework server does. ``tasks/send`` works."""

    def __init__(self, **options: Any) -> None:
        self.agent = FakeAgent(dialect="legacy", **options)
        self.subscribes = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.agent(scope, receive, send)
            return
        request = await HTTPRequest.read(scope, receive)
        body = request.json()
        if body.get("method") != "tasks/sendSubscribe":
            replayed = False

            async def again() -> dict[str, Any]:  # the body read, then what comes next
                nonlocal replayed
                if replayed:
                    return dict(await receive())
                replayed = True
                return {"type": "http.request", "body": request.body, "more_body": False}

            await self.agent(scope, again, send)
            return
        self.subscribes += 1
        params = {"id": body["params"]["id"], "status": {"state": "working"}, "final": False}
        frame = {"jsonrpc": "2.0", "method": "tasks/event", "params": params}
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        data = b"data: " + json.dumps(frame).encode() + b"\n\n"
        await send({"type": "http.response.body", "body": data, "more_body": False})


@pytest.mark.anyio
async def test_send_falls_back_to_a_plain_send_when_the_stream_cannot_be_read(
    anyio_backend: str,
) -> None:
    app = EventFrames()
    async with app.agent, serve_app(app) as url:
        plain = await run(anyio_backend, "-a", url, "--timeout", "20", "send", "hello")
        assert plain.code == 0, plain.err
        assert "State: completed" in plain.out
        assert plain.err == ""
        debug = await run(anyio_backend, "-a", url, "--debug", "send", "hello")
        assert debug.code == 0, debug.err
        said = [line for line in debug.err.splitlines() if "sending without streaming" in line]
        assert len(said) == 1, debug.err
        assert app.subscribes == 2  # the stream was tried each time
        # Asked for the stream itself, the user gets its error.
        streamed = await run(anyio_backend, "-a", url, "send", "--stream", "hello")
        assert streamed.code == 1
        assert "A2A_ANYIO_ERR_PROTOCOL" not in streamed.err
        assert streamed.err.startswith("error: ")
        assert "hint: the agent's answer does not fit the protocol" in streamed.err


async def _work_until_cancelled(ctx: SkillContext) -> AsyncIterator[Emit]:
    yield status("working", "on it")
    await ctx.wait_cancelled()


@pytest.mark.anyio
async def test_the_plain_send_a_stream_fell_back_to_is_cancelled_at_the_timeout(
    anyio_backend: str,
) -> None:
    app = EventFrames(answers_at_once=True)
    app.agent.skill("slow")(_work_until_cancelled)
    async with app.agent, serve_app(app) as url:
        cut = await run(anyio_backend, "-a", url, "--timeout", "2", "send", "slow")
        assert cut.code == 5, cut.err
        task = await canceled(app.agent)
    assert said_cancelled(task.id, url, cut.err), cut.err


def said_cancelled(task_id: str, url: str, err: str) -> bool:
    """The command said it cancelled the task: confirmed, or sent with its answer not awaited
    past --timeout (which an answer already there may beat)."""
    return (
        f"cancelled task {task_id} on {url}" in err
        or f"asked {url} to cancel task {task_id}: no answer awaited past --timeout" in err
    )


async def canceled(agent: FakeAgent) -> Task:
    """The agent's one task, once it is canceled: the command sent the cancel and may have
    left before the agent acted on it."""
    with anyio.fail_after(10):
        while (task := only(agent)).status.state is not TaskState.CANCELED:
            await anyio.sleep(0.02)
    return task


def only(agent: FakeAgent) -> Task:
    (task,) = agent.tasks.values()
    return task


@pytest.mark.anyio
@pytest.mark.parametrize("streams", [True, False], ids=["streaming", "answers-at-once"])
@pytest.mark.parametrize("stream_flag", [[], ["--stream"]], ids=["send", "send--stream"])
async def test_send_cancels_on_its_agent_the_task_its_timeout_cuts(
    anyio_backend: str, streams: bool, stream_flag: list[str]
) -> None:
    agent = FakeAgent(streaming=streams, answers_at_once=not streams)
    agent.skill("slow")(_work_until_cancelled)  # the first registered: every message
    async with agent.serve() as served:
        url = served.url
        cut = await run(anyio_backend, "-a", url, "--timeout", "1", "send", *stream_flag, "slow")
        assert cut.code == 5, cut.err
        task = await canceled(agent)
        assert said_cancelled(task.id, url, cut.err), cut.err
        kept = await run(
            anyio_backend, "-a", url, "--timeout", "1", "send", *stream_flag, "--no-cancel", "slow"
        )
        assert kept.code == 5, kept.err
        (left,) = [t for t in agent.tasks.values() if t.id != task.id]
        assert left.status.state is TaskState.WORKING
        assert f"task {left.id} left running on {url}" in kept.err


@pytest.mark.anyio
async def test_an_endpoint_url_given_for_the_agent_finds_its_card_at_the_origin(
    anyio_backend: str,
) -> None:
    async with FakeAgent(rpc_path="/a2a/jsonrpc").serve() as agent:
        found = await run(anyio_backend, "-a", f"{agent.url}/a2a/jsonrpc", "send", "hello")
        assert found.code == 0, found.err
        assert "State: completed" in found.out
        other = await run(anyio_backend, "-a", f"{agent.url}/a2a/other", "card")
        assert other.code == 3, other.err
        assert f"{agent.url}/.well-known/agent-card.json: the card of another service" in other.err


def test_a_piped_chat_whose_turns_fail_exits_with_their_status(auth_server: str) -> None:
    refused = cli("chat", auth_server, input="hi\nagain\n")
    assert refused.code == 4, refused.err
    assert refused.err.count("error: ") == 2
    wrong = cli("--bearer", "wrong", "chat", auth_server, input="hi\n")
    assert wrong.code == 4, wrong.err
    answered = cli("--bearer", GOOD_TOKEN, "chat", auth_server, input="hi\n")
    assert answered.code == 0, answered.err
    assert answered.out.startswith("authorized")


@pytest.mark.anyio
@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX pipe")
@pytest.mark.parametrize(
    "command", [["send", "--stream", "hi"], ["-o", "json", "send", "hi"], ["fan-out", "hi"]]
)
async def test_a_pipe_closed_under_a_command_that_talks_to_an_agent(
    anyio_backend: str, command: list[str]
) -> None:
    async with FakeAgent().serve() as agent:
        args = ["--backend", anyio_backend, "-a", agent.url, *command]
        proc = await anyio.to_thread.run_sync(partial(_with_closed_stdout, *args))
    assert proc.returncode == 141, proc.stderr
    assert proc.stderr == ""


@pytest.mark.anyio
@pytest.mark.parametrize("command", [["send"], ["send", "--stream"], ["fan-out"]])
async def test_a_cancel_the_agent_never_answers_keeps_within_the_timeout(
    anyio_backend: str, command: list[str]
) -> None:
    # Its answer is not awaited past --timeout: the command says the cancel went out, where
    # it waited for the cancel's own time limit (3 s more) and called it a failure.
    agent = FakeAgent()
    agent.skill("slow")(_work_until_cancelled)
    agent.fault("cancel", delay=60)
    async with agent.serve() as served:
        url = served.url
        cut = await run(anyio_backend, "-a", url, "--timeout", "1", *command, "slow")
        assert cut.code == 5, cut.err
        (task,) = agent.tasks.values()
        assert f"asked {url} to cancel task {task.id}: no answer awaited past --timeout" in (
            cut.err
        )
        assert "could not cancel" not in cut.err
        assert len(agent.requests_for("cancel")) == 1
