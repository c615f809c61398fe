"""The runnable examples run, on both event loops, against a real local agent."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.interop.conftest import legacy_server, v02_server  # noqa: F401

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.interop
@pytest.mark.timeout(120)
def test_quickstart_on_asyncio_and_trio() -> None:
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "quickstart.py")],
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for backend in ("asyncio", "trio"):
        section = out.split(f"== {backend} ==", 1)[1].split("==", 1)[0]
        assert "card: SDK Test Agent 1.2.3" in section
        assert "is completed: 'echo: hello from a2a-anyio'" in section
        assert "stream: task completed: 'part 1 part 2 part 3'" in section
        assert "list: 1 task(s) in the context" in section
        assert "is canceled" in section


@pytest.mark.interop
@pytest.mark.timeout(120)
@pytest.mark.parametrize("server", ["v02_server", "legacy_server"])
def test_quickstart_against_an_agent_without_a_task_list(
    server: str, request: pytest.FixtureRequest
) -> None:
    """v0.2 and tasks/send agents do not list tasks: the example says so and goes on."""
    url = request.getfixturevalue(server)
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "quickstart.py"), "--url", url, "--backend", "trio"],
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "list: not offered by this agent (list is not part of " in proc.stdout
    assert "is canceled" in proc.stdout


# -- the examples that start their own local agents (FakeAgent, PushReceiver, serve_app) ------

BACKENDS = pytest.mark.parametrize("backend", ["asyncio", "trio"])
# "  name   0.12s  outcome": one AgentResult as fan_out_first.py prints it
RESULT_LINE = re.compile(r"^\s+(\w+)\s+([\d.]+)s\s+(.*)$")


def run_example(script: str, *args: str, expect_rc: int = 0) -> list[str]:
    """Run ``examples/<script>`` with this interpreter; its output lines."""
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=EXAMPLES.parent,
    )
    assert proc.returncode == expect_rc, proc.stdout + proc.stderr
    assert proc.stderr == "", proc.stderr
    assert time.monotonic() - start < 20, "an example should take a few seconds"
    return proc.stdout.splitlines()


def line_with(lines: list[str], text: str) -> int:
    """The index of the only line containing ``text``."""
    found = [i for i, line in enumerate(lines) if text in line]
    assert len(found) == 1, f"{text!r} in {found} of:\n" + "\n".join(lines)
    return found[0]


@pytest.mark.interop
@pytest.mark.timeout(90)
def test_trio_nursery() -> None:
    lines = run_example("trio_nursery.py")
    assert lines[0].startswith("local agent at http://127.0.0.1:")
    line_with(lines, "card: Trio Agent, streaming=True")
    line_with(lines, "ask: answer 'hello from trio' (completed)")
    a_done = line_with(lines, "stream-a: done: 'one two three'")
    b_done = line_with(lines, "stream-b: done: 'four five six seven'")
    # The two streams ran at the same time: each had a chunk before the other finished.
    assert line_with(lines, "stream-b: chunk 'four'") < a_done
    assert line_with(lines, "stream-a: chunk 'one'") < b_done
    line_with(lines, "slow: status working")
    moved_on = line_with(lines, "slow: no answer within 1.0s: moved on")
    assert max(a_done, b_done) < moved_on
    assert float(lines[moved_on].split("s]", 1)[0].strip("[ ")) >= 1.0
    assert line_with(lines, "slow: task canceled on the agent") == moved_on + 1
    assert lines[-1].endswith("nursery: every child finished")


@pytest.mark.interop
@pytest.mark.timeout(90)
@BACKENDS
def test_fan_out_first(backend: str) -> None:
    lines = run_example("fan_out_first.py", "--backend", backend)
    assert lines[0] == f"== {backend} =="
    second = line_with(lines, "no first, timeout=1.0s")
    for part, (header, *rows) in (("first", lines[1:second]), ("timeout", lines[second:])):
        assert header.endswith("to 4 agents"), header
        returned = float(rows[0].removeprefix("returned after ").removesuffix("s"))
        results = {}
        for row in rows[1:]:
            match = RESULT_LINE.match(row)
            assert match, row
            results[match[1]] = (float(match[2]), match[3])
        assert list(results) == ["fast", "steady", "broken", "slow"]  # in target order
        assert results["fast"][1] == "ok (completed) '5432 (after 0.1s of thought)'"
        assert results["steady"][1] == "ok (completed) '5432 (after 0.4s of thought)'"
        assert results["broken"][1].startswith("error [-32603] the knowledge base is offline")
        if part == "first":  # first=2: back once "steady" answered, "slow" cancelled
            assert 0.4 <= returned < 1.9
            assert results["slow"][1] == "cancelled (first reached)"
        else:  # the 1 s deadline cut "slow"
            assert 1.0 <= returned < 2.0
            assert results["slow"][1] == "cancelled (A2ATimeoutError)"
        assert results["fast"][0] < results["steady"][0] <= returned + 0.05


@pytest.mark.interop
@pytest.mark.timeout(90)
@BACKENDS
def test_messenger(backend: str) -> None:
    assert run_example("messenger.py", "--backend", backend) == [
        f"== {backend} ==",
        "greeter <- Ada: {'text': 'Hello, Ada!'}",
        "calculator <- {'op': 'sum', 'args': [1, 2, 3.5]}: {'result': 6.5}",
        "calculator <- please {'op': 'div', 'args': [1, 4]}: {'result': 0.25}",
        "greeter <- how is the weather?: task rejected: I only do greetings",
        "calculator <- {'op': 'div', 'args': [1, 0]}: "
        "task failed: ZeroDivisionError: float division by zero",
        "calculator <- {'op': 'pow', 'args': [2, 8]}: task failed: unknown op 'pow'",
    ]


@pytest.mark.interop
@pytest.mark.timeout(90)
@BACKENDS
def test_extension_client(backend: str) -> None:
    lines = run_example("extension_client.py", "--backend", backend)
    assert lines[0] == f"== {backend} =="
    assert re.fullmatch(r"local CSTP service at http://127\.0\.0\.1:\d+/cstp", lines[1])
    # The service answered the first request 503; the query was retried once.
    assert re.fullmatch(
        r"  retry: cstp\.queryDecisions got HTTP 503: busy, try again; again in 0\.\d\ds",
        lines[2],
    )
    assert lines[3:] == [
        "decision D-101 [accepted] Use PostgreSQL for orders",
        "decision D-117 [proposed] Shard the events database",
        "guardrail 'drop table users on prod': blocked by no-destructive-prod",
        "guardrail 'add an index on staging': allowed",
        "intent announced: I-0001",
        "refused: [-32602] query must not be empty (code -32602)",
    ]


@pytest.mark.interop
@pytest.mark.timeout(90)
def test_extension_client_unreachable_service() -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/cstp"
    lines = run_example("extension_client.py", "--url", url, expect_rc=1)
    assert sum("retry: cstp.queryDecisions got cannot connect" in line for line in lines) == 2
    assert lines[-1].startswith("CSTP failed: CstpUnavailableError: cannot connect to")
    assert "(gave up after 3 attempts)" in lines[-1]


@pytest.mark.interop
@pytest.mark.timeout(90)
@BACKENDS
def test_push_notifications(backend: str) -> None:
    lines = run_example("push_notifications.py", "--backend", backend)
    assert lines[0] == f"== {backend} =="
    assert lines[1].startswith("push receiver at http://127.0.0.1:")
    v03 = next(i for i, line in enumerate(lines) if line.startswith("v0.3: task "))
    v1_part, v03_part = lines[2:v03], lines[v03:]
    final = "task completed: \"3 batches of 'orders' copied\""
    # v1.0 posts stream events, in order, as they happen
    assert v1_part[0].startswith("v1.0: task ") and v1_part[0].endswith("started, submitted")
    v1_events = [line.split("] v1.0: ", 1)[1] for line in v1_part[1:-1]]
    assert v1_events[-3:] == [
        "status update: working 'batch 3/3 copied'",
        "artifact update: \"3 batches of 'orders' copied\"",
        "status update: completed 'done'",
    ]
    assert all(e.startswith("status update: working 'batch ") for e in v1_events[:-3])
    assert v1_part[-1] == f"v1.0: {final}"
    # v0.3 posts snapshots of the whole task
    v03_events = [line.split("] v0.3: ", 1)[1] for line in v03_part[1:-2]]
    assert v03_events[-2:] == [
        "Task snapshot: working 'batch 3/3 copied', 1 artifact(s)",
        "Task snapshot: completed 'done', 1 artifact(s)",
    ]
    assert all(e.startswith("Task snapshot: working 'batch ") for e in v03_events[:-1])
    assert v03_part[-2] == f"v0.3: {final}"
    counts = re.fullmatch(
        r"received (\d+): (\d+) in the v1\.0 form, (\d+) in the v0\.3 form", lines[-1]
    )
    assert counts, lines[-1]
    total, in_v1, in_v03 = map(int, counts.groups())
    assert (in_v1, in_v03) == (len(v1_events), len(v03_events)) and total == in_v1 + in_v03
    assert in_v1 >= 3 and in_v03 >= 3


@pytest.mark.parametrize("script", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_help_describes_the_example_in_whole_sentences(
    script: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--help`` shows the docstring's first paragraph, ending where its sentence ends."""
    import runpy

    monkeypatch.setattr(sys, "argv", [script, "--help"])
    monkeypatch.syspath_prepend(str(EXAMPLES))  # as when run as a script: its folder first
    with pytest.raises(SystemExit) as exit_:
        runpy.run_path(str(EXAMPLES / script), run_name="__main__")
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    description = " ".join(out.split("\n\n")[1].split())
    assert description.endswith("."), description
    assert "``" not in description
