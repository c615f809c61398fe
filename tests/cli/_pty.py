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
from pathlib import Path


def run_in_pty(
    *args: str,
    env: dict[str, str],
    timeout: float = 30.0,
    columns: int = 140,
    cwd: Path | None = None,
) -> tuple[int, str]:
    """Run the CLI with a pseudo-terminal of 40 lines and ``columns`` as stdin/stdout/stderr;
    return its status and the raw bytes it wrote there (read until it exits, bounded by
    ``timeout``)."""
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
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
            elif proc.poll() is not None:
                break
        code = proc.wait(timeout=max(0.1, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return code, b"".join(chunks).decode("utf-8", "replace")
