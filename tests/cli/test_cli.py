"""The a2a-anyio command line, run as a subprocess against real A2A servers."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from a2a_anyio._fanout import CUT_AT_DEADLINE
from a2a_anyio.cli import main
from a2a_anyio.cli._grammar import build_parser
from a2a_anyio.testing import FakeAgent

from .conftest import GOOD_TOKEN, Run, clean_env, cli, closed_port


def task_of(run: Run) -> dict[str, Any]:
    assert run.code == 0, run.err
    doc = run.json()
    assert set(doc) == {"task"}, doc
    task: dict[str, Any] = doc["task"]
    return task


def state(task: dict[str, Any]) -> str:
    return str(task["status"]["state"])


# -- help ------------------------------------------------------------------------------------


def _parsers(parser: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    out = [(path, parser)]
    for action in parser._actions:
        if action.__class__.__name__ == "_SubParsersAction":
            for name, sub in action.choices.items():
                out += _parsers(sub, (*path, name))
    return out


def test_help_of_every_command_reads_well(capsys: pytest.CaptureFixture[str]) -> None:
    script = Path(sys.executable).with_name("a2a-anyio")  # the console script
    run = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0
    for command in ("card", "send", "task", "push-config", "call", "agents", "fan-out", "ping"):
        assert command in run.stdout
    assert "exit status" in run.stdout and "--agent" in run.stdout
    seen = set()
    for path, parser in _parsers(build_parser()):
        text = parser.format_help()
        seen.add(" ".join(path))
        assert text.startswith("usage: a2a-anyio"), path
        first = text.split("\n\n")[1]
        assert first[0].isupper() and first.rstrip().endswith("."), (path, first)
    assert {"task get", "task push-config create", "push-config delete", "demo"} <= seen
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.startswith("a2a-anyio ")


# -- card, send, tasks ---------------------------------------------------------------------


def test_card_text_and_card_file(strict_server: str, tmp_path: Path) -> None:
    text = cli("card", "get", "-a", strict_server)  # options after the command work too
    assert text.code == 0, text.err
    assert "Name: SDK Test Agent" in text.out and "Streaming: yes" in text.out
    assert "Interface: JSONRPC 1.0" in text.out
    assert "\x1b[" not in text.out  # plain when piped
    with urllib.request.urlopen(f"{strict_server}/.well-known/agent-card.json", timeout=10) as f:
        card = json.load(f)
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card))
    from_file = cli("-a", str(path), "card", "-o", "json")
    assert from_file.json() == card


def test_send_json_and_the_v03_dialect(strict_server: str, compat_server: str) -> None:
    task = task_of(cli("-a", strict_server, "-o", "json", "send", "hello"))
    assert state(task) == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"][0]["text"] == "echo: hello"
    old = task_of(
        cli(
            "-a",
            compat_server,
            "--protocol",
            "0.3",
            "-o",
            "json",
            "send",
            "hi",
            "--data",
            '{"n": 1}',
        )
    )
    assert old["kind"] == "task" and old["status"]["state"] == "completed"  # as the agent sent it
    assert old["artifacts"][1]["parts"][0]["data"] == {"n": 1}


def test_send_stream_as_json_lines_and_as_text(strict_server: str) -> None:
    run = cli("-a", strict_server, "send", "--stream", "-o", "json", "stream")
    assert run.code == 0, run.err
    events = run.jsonl()
    assert "task" in events[0]
    assert [
        e["artifactUpdate"]["artifact"]["parts"][0]["text"] for e in events if "artifactUpdate" in e
    ] == [
        "part 1",
        " part 2",
        " part 3",
    ]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    text = cli("-a", strict_server, "send", "--stream", "stream")
    assert text.code == 0, text.err
    assert "Event: status-update" in text.out and "Artifact: report" in text.out
    assert text.out.rstrip().endswith("State: completed")  # the tail restates ids and state
    assert "Task ID: " in text.out.rstrip().splitlines()[-3]


def test_message_reply_and_interrupted_task_continued(strict_server: str) -> None:
    reply = cli("-a", strict_server, "-o", "json", "send", "message hi")
    assert reply.json()["message"]["parts"][0]["text"] == "pong: message hi"
    paused = cli("-a", strict_server, "send", "input")
    assert paused.code == 0  # a task waiting for input is a result
    assert "State: input-required" in paused.out and "Resume: a2a-anyio -a" in paused.out
    assert "input-required" in paused.err
    task_id = next(
        line.split(": ")[1] for line in paused.out.splitlines() if line.startswith("Task ID")
    )
    done = task_of(cli("-a", strict_server, "-o", "json", "send", "--task-id", task_id, "more"))
    assert done["id"] == task_id and state(done) == "TASK_STATE_COMPLETED"
    failed = cli("-a", strict_server, "-o", "json", "send", "fail")
    assert state(task_of(failed)) == "TASK_STATE_FAILED"  # exit 0: the outcome is data
    assert "ended failed" in failed.err


def test_send_follows_a_task_the_agent_answered_with_at_once(fasta2a_server: str) -> None:
    """fasta2a answers every send with a task just submitted: the CLI waits for its end."""
    done = task_of(cli("-a", fasta2a_server, "-o", "json", "send", "hello"))
    assert state(done) == "TASK_STATE_COMPLETED"
    assert done["artifacts"][0]["parts"][0]["text"] == "echo: hello"
    started = task_of(cli("-a", fasta2a_server, "-o", "json", "send", "--no-wait", "hello"))
    assert state(started) == "TASK_STATE_SUBMITTED"
    slow = cli("-a", fasta2a_server, "--timeout", "1", "send", "slow")
    assert slow.code != 0 and "deadline" in slow.err


def test_no_wait_then_task_get_wait_and_list(strict_server: str) -> None:
    started = task_of(cli("-a", strict_server, "-o", "json", "send", "--no-wait", "stream"))
    assert state(started) in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
    got = cli(
        "-a", strict_server, "-o", "json", "task", "get", started["id"], "--wait", "--history", "5"
    )
    assert got.code == 0, got.err
    task = got.json()
    assert state(task) == "TASK_STATE_COMPLETED" and task["history"]
    listed = cli("-a", strict_server, "-o", "json", "task", "list", "--limit", "50")
    assert started["id"] in [t["id"] for t in listed.json()["tasks"]]


def test_subscribe_follows_a_task_that_another_run_cancels(strict_server: str) -> None:
    slow = task_of(cli("-a", strict_server, "-o", "json", "send", "--no-wait", "slow"))
    sub = subprocess.Popen(
        [sys.executable, "-m", "a2a_anyio.cli", "-a", strict_server, "-o", "json",
         "task", "subscribe", slow["id"], "--stream"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env(),
    )  # fmt: skip
    try:
        assert sub.stdout is not None
        first = json.loads(sub.stdout.readline())  # the snapshot: the stream is attached
        assert first["task"]["id"] == slow["id"]
        canceled = cli("-a", strict_server, "-o", "json", "task", "cancel", slow["id"])
        assert state(canceled.json()) == "TASK_STATE_CANCELED"
        rest, err = sub.communicate(timeout=20)
    finally:
        if sub.poll() is None:
            sub.kill()
            sub.communicate()
    assert sub.returncode == 0, err
    events = [json.loads(line) for line in rest.splitlines()]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_CANCELED"


def test_push_configs(compat_server: str) -> None:
    a = ["-a", compat_server, "-o", "json"]
    task = task_of(cli(*a, "send", "hello"))
    made = cli(
        *a,
        "push-config",
        "create",
        task["id"],
        "http://127.0.0.1:9/hook",
        "--config-id",
        "c1",
        "--token",
        "tok",
    )
    assert made.code == 0, made.err
    assert made.json()["url"] == "http://127.0.0.1:9/hook"
    listed = cli(*a, "task", "push-config", "list", task["id"])  # the spec's spelling too
    assert [c["id"] for c in listed.json()["configs"]] == ["c1"]
    assert cli(*a, "push-config", "get", task["id"], "c1").json()["id"] == "c1"
    deleted = cli(*a, "push-config", "delete", task["id"], "c1")
    assert deleted.code == 0 and deleted.json() == {}


def test_call_any_method_and_a_custom_endpoint(strict_server: str, compat_server: str) -> None:
    task = task_of(cli("-a", strict_server, "-o", "json", "send", "hello"))
    got = cli("-a", strict_server, "call", "GetTask", "--params", json.dumps({"id": task["id"]}))
    assert got.code == 0 and got.json()["id"] == task["id"]
    # A JSON-RPC service at a custom path, without a card: --endpoint.
    old = cli(
        "--endpoint", f"{compat_server}/a2a/jsonrpc", "--protocol", "0.3",
        "call", "message/send", "--params",
        json.dumps({"message": {"kind": "message", "messageId": "m1", "role": "user",
                                "parts": [{"kind": "text", "text": "message x"}]}}),
    )  # fmt: skip
    assert old.code == 0, old.err
    assert old.json()["parts"][0]["text"] == "pong: message x"


@pytest.mark.anyio
async def test_call_idempotent_retries_a_server_error(anyio_backend: str) -> None:
    """``call`` is retried after a refusal (429); after a 502 only with ``--idempotent``."""
    agent = FakeAgent()
    async with agent.serve():
        a = ["--backend", anyio_backend, "-a", agent.url, "-o", "json", "call", "ListTasks"]
        agent.fault("list", times=1, http_status=502)
        once = await anyio.to_thread.run_sync(partial(cli, *a))
        agent.fault("list", times=1, http_status=502)
        again = await anyio.to_thread.run_sync(partial(cli, *a, "--idempotent"))
        agent.fault("list", times=1, http_status=429, retry_after=0)
        refused = await anyio.to_thread.run_sync(partial(cli, *a))
    assert once.code == 1 and once.json()["error"]["code"] == "A2A_ANYIO_ERR_HTTP"
    assert again.code == 0 and "tasks" in again.json(), again.err
    assert refused.code == 0, refused.err
    assert [r.op for r in agent.requests if r.op != "card"] == ["list"] * 5


def test_trio_backend_and_debug_redacts_secrets(strict_server: str) -> None:
    run = cli(
        "-a", strict_server, "--backend", "trio", "--debug", "--bearer", "s3cr3t-bearer",
        "--api-key", "s3cr3t-key", "--header", "X-Custom: s3cr3t-header", "send", "hello",
    )  # fmt: skip
    assert run.code == 0, run.err
    assert "State: completed" in run.out
    # send follows the task through its stream (Ctrl-C can then cancel it)
    assert "-> POST" in run.err and "SendStreamingMessage" in run.err and "***" in run.err
    assert "s3cr3t" not in run.err and "s3cr3t" not in run.out


# -- exit codes ----------------------------------------------------------------------------


def test_exit_3_when_the_agent_is_unreachable() -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    run = cli("-a", url, "-o", "json", "send", "hello")
    assert run.code == 3
    assert run.json()["error"]["code"] == "A2ACLI_ERR_UNREACHABLE"
    assert "error: cannot connect" in run.err
    missing = cli("-a", "no-such-agent", "card", env=clean_env(A2A_ANYIO_CONFIG=""))
    assert missing.code == 3 and "not a URL, a card file" in missing.err


def test_exit_4_when_authentication_is_refused(auth_server: str) -> None:
    missing = cli("-a", auth_server, "-o", "json", "send", "hello")
    assert missing.code == 4
    assert missing.json()["error"]["code"] == "A2ACLI_ERR_CREDENTIALS_MISSING"
    assert missing.json()["error"]["a2aCode"] == 401
    wrong = cli("-a", f"{auth_server}/private/", "--bearer", "wrong", "card")  # the card's 401
    assert wrong.code == 4 and "refused the credentials" in wrong.err
    good = cli("-a", auth_server, "--bearer", GOOD_TOKEN, "send", "hello")
    assert good.code == 0 and "authorized" in good.out


def test_exit_5_on_timeout(slow_server: str) -> None:
    start = time.monotonic()
    run = cli("-a", slow_server, "--timeout", "1", "-o", "json", "send", "hello")
    assert run.code == 5, run.err
    assert run.json()["error"]["code"] == "A2ACLI_ERR_TIMEOUT"
    assert time.monotonic() - start < 15


def test_an_agent_cut_at_the_deadline_reads_the_same_in_fan_out_and_demo(
    strict_server: str, slow_server: str
) -> None:
    run = cli("-a", strict_server, "-a", slow_server, "--timeout", "2", "fan-out", "hello")
    assert run.code == 5, run.err
    rows = {line.split()[0]: line for line in run.out.splitlines()[1:]}
    assert CUT_AT_DEADLINE not in rows[strict_server]
    assert f" {CUT_AT_DEADLINE} " in rows[slow_server]
    assert (
        f"warning: {slow_server}: {CUT_AT_DEADLINE}: no answer within the timeout of 2.0s"
        in run.err
    )
    demo = {a["agent"]: a for a in cli("-o", "json", "demo").json()["agents"]}
    assert demo["archivist"]["state"] == CUT_AT_DEADLINE == "cancelled at the deadline"


def test_exit_2_on_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["send", "--bogus"]) == 2
    out, err = capsys.readouterr()
    assert "usage: a2a-anyio send" in err and "unrecognized arguments: --bogus" in err
    assert out == ""
    assert main(["-o", "json", "send", "--media-type", "text/plain"]) == 2
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "A2ACLI_ERR_USAGE"
    assert main(["send", "hi"]) == 2
    assert "which agent?" in capsys.readouterr().err
    assert main(["-a", "http://127.0.0.1:9", "--header", "no colon", "card"]) == 2


def test_exit_1_when_the_agent_reports_an_error(strict_server: str) -> None:
    not_found = cli("-a", strict_server, "-o", "json", "task", "get", "no-such-task")
    assert not_found.code == 1
    assert not_found.json()["error"]["code"] == "TaskNotFoundError"
    assert not_found.json()["error"]["a2aCode"] == -32001
    assert "hint: list the agent's tasks" in not_found.err


# -- the registry ----------------------------------------------------------------------------


def test_registry_names_with_env_interpolation(registry_env: dict[str, str]) -> None:
    missing = cli("-a", "guarded", "send", "hi", env=registry_env)
    assert missing.code == 2
    assert "GUARDED_TOKEN" in missing.err and "agents.yaml" in missing.err
    env = {**registry_env, "GUARDED_TOKEN": GOOD_TOKEN, "GUARDED_KEY": "key-from-env"}
    run = cli("-a", "guarded", "--debug", "-o", "json", "send", "hi", env=env)
    assert run.code == 0, run.err
    assert run.json()["message"]["parts"][0]["text"] == "authorized; X-Api-Key=key-from-env"
    assert GOOD_TOKEN not in run.err and "key-from-env" not in run.err

    listed = cli("agents", "-o", "json", env=registry_env).json()
    assert [a["name"] for a in listed["agents"]] == ["strict", "compat", "guarded", "down"]
    assert listed["groups"]["sdk"] == ["strict", "compat"]
    assert listed["agents"][2]["headers"] == ["X-Api-Key"]  # names, never values
    text = cli("agents", env=registry_env)
    assert "bearer $GUARDED_TOKEN" in text.out and "reviewers" in text.out


def test_a_mistyped_registry_name_gets_a_hint_naming_the_closest(tmp_path: Path) -> None:
    config = tmp_path / "agents.yaml"
    down = f"http://127.0.0.1:{closed_port()}"
    config.write_text(
        f"agents:\n  - {{name: billing.v2, url: {down}}}\n  - {{name: billing.v1, url: {down}}}\n"
        f"groups:\n  reviewers: [billing.v2]\n"
    )
    env = clean_env(A2A_ANYIO_CONFIG=str(config))
    group = cli("-a", "reviewrs", "fan-out", "hi", env=env)
    assert group.code == 3
    assert group.err.splitlines() == [
        f"error: 'reviewrs' is not a URL, a card file, or an agent or group of {config}",
        "hint: did you mean 'reviewers'? (a2a-anyio agents lists the registry)",
    ]
    # A name that could be a host is tried as one (here one that does not resolve), and the
    # failure names the host it tried and, in its hint, the registry's closest names.
    host = cli("-a", "biling.v2", "--timeout", "10", "-o", "json", "card", env=env)
    assert host.code == 3, host.err
    error = host.json()["error"]
    assert error["code"] == "A2ACLI_ERR_UNREACHABLE"
    assert "https://biling.v2/.well-known/agent-card.json" in error["message"]
    assert error["hint"] == (
        f"'biling.v2' is not in {config}, so it was tried as a host; "
        "did you mean 'billing.v2' or 'billing.v1'?"
    )


def test_fan_out_a_group_and_ping(registry_env: dict[str, str]) -> None:
    run = cli("-a", "reviewers", "-o", "json", "fan-out", "stream", env=registry_env)
    assert run.code == 0, run.err
    results = run.json()["results"]
    assert [r["agent"] for r in results] == ["strict", "compat"]
    # Both tasks are folded from streamed events: v1.0, though compat speaks v0.3.
    assert [r["response"]["task"]["status"]["state"] for r in results] == [
        "TASK_STATE_COMPLETED"
    ] * 2
    lines = cli("-a", "sdk", "-o", "json", "fan-out", "--stream", "hello", env=registry_env)
    events = lines.jsonl()
    assert {e["agent"] for e in events} == {"strict", "compat"} and all(
        "event" in e for e in events
    )
    partial = cli("-a", "everyone", "fan-out", "hello", env=registry_env)
    assert partial.code == 3  # one agent unreachable
    assert "completed" in partial.out and "down" in partial.err
    summary = partial.out.splitlines()
    assert summary[0].split() == ["AGENT", "STATE", "TIME", "RESULT"]
    pinged = cli("-a", "sdk", "ping", "-o", "json", env=registry_env)
    assert pinged.code == 0
    assert [r["card"]["name"] for r in pinged.json()["results"]] == ["SDK Test Agent"] * 2


def test_ping_reports_an_agent_whose_variable_is_missing_and_pings_the_others(
    registry_env: dict[str, str],
) -> None:
    run = cli("ping", env=registry_env)  # GUARDED_TOKEN is not set
    assert run.code == 1  # a configuration error (2) and an unreachable agent (3) disagree
    rows = {line.split()[0]: line for line in run.out.splitlines()[1:]}
    assert list(rows) == ["strict", "compat", "guarded", "down"]
    assert " ok " in rows["strict"] and " ok " in rows["compat"]
    assert "A2A_ANYIO_ERR_CONFIG" in rows["guarded"]
    assert "A2ACLI_ERR_UNREACHABLE" in rows["down"]
    assert "warning: guarded: " in run.err and "GUARDED_TOKEN is not set" in run.err

    pinged = cli("-a", "reviewers", "-a", "guarded", "-o", "json", "ping", env=registry_env)
    assert pinged.code == 2  # only the missing variable: a configuration error
    results = {r["agent"]: r for r in pinged.json()["results"]}
    assert results["strict"]["ok"] and results["compat"]["ok"]
    assert results["guarded"]["error"]["code"] == "A2A_ANYIO_ERR_CONFIG"
