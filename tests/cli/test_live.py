"""The live displays, checked in a pseudo-terminal: what a person at a terminal sees."""

from __future__ import annotations

import json
import re

from ._pty import run_in_pty
from .conftest import clean_env

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def test_fan_out_draws_a_live_line_per_agent(registry_env: dict[str, str]) -> None:
    code, raw = run_in_pty("-a", "reviewers", "fan-out", "stream", env=registry_env)
    assert code == 0, raw
    assert "\x1b[?25l" in raw  # the live view hides the cursor while it redraws
    assert "\x1b[3" in raw  # colours (a state's)
    screen = ANSI.sub("", raw)
    # While running: one line per agent with its mark, state and latest message ...
    frames = screen.split("agents done")
    assert len(frames) >= 2 and "2/2" in frames[-2][-10:], screen
    for name in ("strict", "compat"):
        live = [line for line in frames[-2].splitlines() if name in line]
        assert live and "✓" in live[-1] and "completed" in live[-1], screen
        assert "part 1 part 2 part 3" in live[-1]
    # ... then the summary table.
    summary = frames[-1]
    assert "Agent" in summary and "Result" in summary
    assert all(name in summary for name in ("strict", "compat"))


def test_send_stream_shows_the_task_live_then_the_result(strict_server: str) -> None:
    code, raw = run_in_pty("-a", strict_server, "send", "--stream", "stream", env=clean_env())
    assert code == 0, raw
    assert "\x1b[?25l" in raw
    screen = ANSI.sub("", raw)
    assert "Artifact: report" in screen and "part 1 part 2 part 3" in screen
    assert "State: completed" in screen


def test_json_output_has_no_terminal_codes_even_on_a_terminal(strict_server: str) -> None:
    code, raw = run_in_pty("-a", strict_server, "-o", "json", "send", "hello", env=clean_env())
    assert code == 0, raw
    assert "\x1b" not in raw
    doc = json.loads(raw.replace("\r\n", "\n"))
    assert doc["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
