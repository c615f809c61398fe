"""Ctrl-C in the command line, as its user meets it: a real SIGINT to the process, on each
backend, against a2a-sdk servers in processes of their own. The tasks the command started are
cancelled on their agents and each is named on stderr; ``--no-cancel`` leaves them running and
names them; the exit status is 130 either way."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from contextlib import ExitStack

import pytest

from a2a_anyio import SyncA2AClient, Task, TaskState

from .conftest import CLI_TIMEOUT, clean_env

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a POSIX signal")

COMMANDS = {"send": ["send"], "send --stream": ["send", "--stream"], "fan-out": ["fan-out"]}


def new_tasks(clients: list[SyncA2AClient], before: set[str]) -> list[tuple[int, Task]]:
    """The tasks of the agents that are not in ``before``: (which agent, task)."""
    return [
        (i, task)
        for i, client in enumerate(clients)
        for task in client.list_tasks(limit=100).tasks
        if task.id not in before
    ]


@pytest.mark.parametrize("no_cancel", [False, True], ids=["cancel", "no-cancel"])
@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_ctrl_c_cancels_the_tasks_the_command_started(
    strict_server: str, compat_server: str, backend: str, command: str, no_cancel: bool
) -> None:
    urls = [strict_server, compat_server] if command == "fan-out" else [strict_server]
    with ExitStack() as stack:
        clients = [stack.enter_context(SyncA2AClient(url)) for url in urls]
        before = {t.id for c in clients for t in c.list_tasks(limit=100).tasks}
        agents = [arg for url in urls for arg in ("-a", url)]
        text = f"slow {uuid.uuid4()}"
        args = ["--backend", backend, *agents, *COMMANDS[command], text]
        if no_cancel:
            args.append("--no-cancel")
        proc = subprocess.Popen(
            [sys.executable, "-m", "a2a_anyio.cli", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=clean_env(),
        )
        try:
            deadline = time.monotonic() + CLI_TIMEOUT
            started: list[tuple[int, Task]] = []
            while len(started) < len(urls) and time.monotonic() < deadline:
                time.sleep(0.05)
                found = new_tasks(clients, before)
                started = [(i, t) for i, t in found if t.status.state is TaskState.WORKING]
            assert len(started) == len(urls), f"no working task on each agent: {found}"
            time.sleep(0.3)  # the command has read the task's first events by now
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=CLI_TIMEOUT)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert proc.returncode == 130, err
        assert "Traceback" not in err
        lines = err.splitlines()
        assert lines[-1] == "error: interrupted"
        states = [clients[i].get_task(task.id).status.state for i, task in started]
        for i, task in started:
            if no_cancel:
                ref = urls[i]
                assert (
                    f"task {task.id} left running on {ref}: cancel it with "
                    f"a2a-anyio -a {ref} task cancel {task.id}"
                ) in lines
            else:
                assert f"cancelled task {task.id} on {urls[i]}" in lines
        assert len(lines) == len(started) + 1, err  # one line per task, then the interrupt
        if no_cancel:
            assert states == [TaskState.WORKING] * len(started)
            for i, task in started:  # the agent's own timer would end it in 30 s
                clients[i].cancel_task(task.id)
        else:
            assert states == [TaskState.CANCELED] * len(started)
