"""Running the command line in a pseudo-terminal, as a user's terminal would."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Sequence
from pathlib import Path

#: What a user does once the text before it shows: types a string (a line ends with "\n";
#: "\x04" is Ctrl-D) or sends a signal (``signal.SIGINT`` is Ctrl-C).
Action = tuple[str, str | int]


def run_in_pty(
    *args: str,
    env: dict[str, str],
    timeout: float = 30.0,
    columns: int = 140,
    cwd: Path | None = None,
    steps: Sequence[Action] = (),
) -> tuple[int, str]:
    """Run the CLI with a pseudo-terminal of 40 lines and ``columns`` as stdin/stdout/stderr;
    return its status and the raw bytes it wrote there (read until it exits, bounded by
    ``timeout``: past it the CLI is killed).

    ``steps`` act as its user: each ``(text, act)`` waits until ``text`` shows after where the
    step before found its own, then types ``act`` or sends that signal.
    """
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "a2a_anyio.cli", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**env, "TERM": "xterm-256color", "COLUMNS": str(columns), "LINES": "40"},
        cwd=cwd,
        close_fds=True,
    )
    os.close(slave)
    output = bytearray()
    todo = list(steps)
    seen = 0  # where the next step's text is looked for
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if todo:
                wanted, act = todo[0]
                at = output.find(wanted.encode(), seen)
                if at >= 0:
                    seen = at + len(wanted.encode())
                    todo.pop(0)
                    if isinstance(act, str):
                        os.write(master, act.encode())
                    else:
                        proc.send_signal(act)
                    continue
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not data:
                    break
                output += data
            elif proc.poll() is not None:
                break
        if proc.poll() is None:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
    finally:
        if proc.poll() is None:
            proc.kill()
        code = proc.wait()
        os.close(master)
    return code, output.decode("utf-8", "replace")
