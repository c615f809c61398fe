"""``a2a-anyio chat``: a conversation at a terminal (a pseudo-terminal, typed into as its
prompts come) and through a pipe, against a FakeAgent served on 127.0.0.1 by the test's own
event loop, streaming or not; the CLI runs on the same backend as the test."""

from __future__ import annotations

import re
import signal
from collections.abc import AsyncGenerator
from functools import partial

import anyio
import pytest

from a2a_anyio import Message, Role, Task, TaskState
from a2a_anyio.cli._chat import PROMPT
from a2a_anyio.testing import FakeAgent, SkillContext, artifact, status
from a2a_anyio.testing._skills import Emit

from ._pty import Action, run_in_pty
from .conftest import clean_env, cli, closed_port, run
from .test_hostile import ACTIVE, RICH_OWN, SHOWN, assert_inert, hostile_agent

pytestmark = pytest.mark.anyio

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
TOKEN = "Bearer s3cret"


@pytest.fixture(params=[True, False], ids=["streaming", "not-streaming"])
def streaming(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


def chat_agent(streaming: bool, **options: object) -> FakeAgent:
    """Books a table (asking which date), opens a vault (asking for authentication), works
    until canceled (``slow``), or echoes."""
    agent = FakeAgent(streaming=streaming, **options)  # type: ignore[arg-type]

    @agent.skill("talk")
    async def talk(ctx: SkillContext) -> AsyncGenerator[Emit, Message | None]:
        text = ctx.text
        if text.startswith("book"):
            answer = yield status("input-required", "which date?")
            assert answer is not None
            yield artifact(f"booked {text.removeprefix('book ')} on {answer.text}")
        elif text.startswith("vault"):
            answer = yield status("auth-required", "sign in to the vault first")
            assert answer is not None
            yield artifact(f"opened after {answer.text}")
        elif text.startswith("slow"):
            yield status("working", "thinking")
            await anyio.sleep_forever()
        else:
            yield status("working", "thinking")
            yield artifact(f"echo: {text}")

    return agent


def typed(*lines: str) -> list[Action]:
    """Each line typed at its prompt."""
    return [(PROMPT, f"{line}\n") for line in lines]


async def in_pty(
    backend: str, agent: FakeAgent, steps: list[Action], *args: str
) -> tuple[int, str]:
    """The chat with ``agent`` in a pseudo-terminal, its user taking ``steps``; its status and
    its output without colours, each line as it ends up."""
    code, raw = await anyio.to_thread.run_sync(
        partial(
            run_in_pty,
            "--backend",
            backend,
            "chat",
            agent.url,
            *args,
            env=clean_env(),
            steps=steps,
        )
    )
    lines = ANSI.sub("", raw).replace("\r\n", "\n").split("\n")
    return code, "\n".join(line.rsplit("\r", 1)[-1] for line in lines)  # what each line shows


def tasks(agent: FakeAgent) -> list[Task]:
    return list(agent.tasks.values())


async def test_turns_share_a_context_and_a_question_is_answered_on_its_task(
    anyio_backend: str, streaming: bool
) -> None:
    agent = chat_agent(streaming)
    steps = typed("hello", "again", "book a table", "friday", "/new", "hi", "/exit")
    async with agent.serve():
        code, screen = await in_pty(anyio_backend, agent, steps)
    assert code == 0, screen
    for answer in ("echo: hello", "echo: again", "which date?", "booked a table on friday"):
        assert f"\n{answer}\n" in screen, screen
    assert "the agent asks: your next message answers it" in screen
    hello, again, booking, hi = tasks(agent)  # "friday" went to the booking task
    assert hello.context_id == again.context_id == booking.context_id
    assert hi.context_id != hello.context_id  # /new
    assert booking.state is TaskState.COMPLETED
    assert booking.text == "booked a table on friday"
    assert [m.text for m in booking.history if m.role is Role.USER] == ["book a table", "friday"]


async def test_auth_required_is_shown_as_such(anyio_backend: str, streaming: bool) -> None:
    agent = chat_agent(streaming, auth=TOKEN)
    steps = [*typed("vault"), (PROMPT, "\x04")]  # then Ctrl-D
    async with agent.serve():
        code, screen = await in_pty(anyio_backend, agent, steps, "--bearer", "s3cret")
    assert code == 0, screen
    assert "Authentication required: sign in to the vault first\n" in screen, screen
    assert "The card asks for: bearer (HTTP Bearer)\n" in screen
    assert "the task waits: your next message continues it" in screen
    assert "the agent asks" not in screen
    [vault] = tasks(agent)
    assert vault.state is TaskState.AUTH_REQUIRED


async def test_the_next_line_continues_an_auth_required_task(
    anyio_backend: str, streaming: bool
) -> None:
    agent = chat_agent(streaming)
    async with agent.serve():
        done = await run(anyio_backend, "chat", agent.url, input="vault\nsigned in\n")
    assert done.code == 0, done.err
    assert done.out == (
        "Authentication required: sign in to the vault first\n"
        "The card asks for: nothing (it declares no security scheme)\n\n"
        "opened after signed in\n\n"
    )
    [vault] = tasks(agent)
    assert vault.state is TaskState.COMPLETED


async def test_cancel_cancels_the_open_task(anyio_backend: str, streaming: bool) -> None:
    agent = chat_agent(streaming)
    steps = typed("book a table", "/cancel", "hello", "/cancel", "/exit")
    async with agent.serve():
        code, screen = await in_pty(anyio_backend, agent, steps)
    assert code == 0, screen
    booking, hello = tasks(agent)
    assert booking.state is TaskState.CANCELED
    assert f"task {booking.id} canceled\n" in screen, screen
    assert "\necho: hello\n" in screen  # a new task, in the same context
    assert hello.context_id == booking.context_id
    assert "no open task to cancel" in screen  # hello's task was done


async def test_ctrl_c_stops_an_answer_then_at_the_prompt_exits_130(
    anyio_backend: str, streaming: bool
) -> None:
    agent = chat_agent(streaming)
    shown = "thinking" if streaming else "waiting for the agent"  # a live view, or a spinner
    steps: list[Action] = [*typed("slow"), (shown, signal.SIGINT)]
    if streaming:  # the agent goes on with the task: cancel it
        steps += typed("/cancel")
    steps += [(PROMPT, signal.SIGINT)]
    async with agent.serve():
        code, screen = await in_pty(anyio_backend, agent, steps)
    assert code == 130, screen
    assert screen.endswith(f"{PROMPT}\nerror: interrupted\n"), screen
    if streaming:
        [slow] = tasks(agent)
        assert f"stopped; task {slow.id} goes on at the agent: /cancel cancels it" in screen
        assert slow.state is TaskState.CANCELED
    else:
        assert "\nstopped\n" in screen


async def test_piped_each_line_is_a_turn(anyio_backend: str, streaming: bool) -> None:
    agent = chat_agent(streaming)
    async with agent.serve():
        text = await run(anyio_backend, "chat", agent.url, input="hello\nagain\n")
        as_json = await run(
            anyio_backend,
            "-o",
            "json",
            "chat",
            agent.url,
            "--context-id",
            "c-1",
            input="hi\nbook\n",
        )
    assert (text.code, text.err) == (0, "")
    assert text.out == "echo: hello\n\necho: again\n\n"  # no prompt, an answer a line group
    assert (as_json.code, as_json.err) == (0, "")
    first, second = as_json.jsonl()  # one JSON object a turn
    assert first["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert second["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert first["task"]["contextId"] == second["task"]["contextId"] == "c-1"


async def test_an_error_of_one_turn_is_reported_and_the_chat_goes_on(
    anyio_backend: str, streaming: bool
) -> None:
    agent = chat_agent(streaming)
    async with agent.serve():
        for output in ("text", "json"):
            agent.fault("stream" if streaming else "send", times=1, error=-32603, message="down")
            done = await run(anyio_backend, "-o", output, "chat", agent.url, input="hi\nagain\n")
            assert done.code == 1, done.err  # piped, the status says a turn failed
            assert done.err.startswith("error: [-32603] down ("), done.err
            if output == "text":
                assert done.out == "echo: again\n\n"
            else:
                failed, answered = done.jsonl()
                assert failed["error"]["code"] == "InternalError"
                assert answered["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_agent_text_is_shown_inert(anyio_backend: str) -> None:
    agent = hostile_agent()
    async with agent.serve():
        piped = await run(anyio_backend, "chat", agent.url, input="hi\n")
        code, raw = await anyio.to_thread.run_sync(
            partial(
                run_in_pty,
                "--backend",
                anyio_backend,
                "chat",
                agent.url,
                env=clean_env(),
                steps=[*typed("hi"), (PROMPT, "\x04")],
            )
        )
    assert piped.code == 0, piped.err
    assert_inert(piped)
    assert code == 0, raw
    left = RICH_OWN.sub("", raw)
    found = ACTIVE.search(left.replace("\n", ""))
    assert found is None, (found, raw)
    assert "\x1b]" not in raw  # no OSC at all
    assert SHOWN[1] in left and "Chat with Hostile" in left  # the card's name too


def test_a_failure_at_the_start_exits_with_the_usual_status() -> None:
    down = cli("chat", f"http://127.0.0.1:{closed_port()}", input="hi\n")
    assert down.code == 3, down.err
    assert down.err.startswith("error: cannot connect to ")
    nobody = cli("chat", input="hi\n")
    assert (nobody.code, nobody.out) == (2, "")
    assert "error: which agent?" in nobody.err
    bad = cli("chat", "http://127.0.0.1:1", "--metadata", "[1]", input="hi\n")
    assert bad.code == 2 and "error: --metadata wants a JSON object" in bad.err
