"""The runnable examples run, on both event loops, against a real local agent."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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
