"""``a2a-anyio demo``: three local agents, one streaming fan-out, the laggard cut at the deadline."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ._pty import run_in_pty
from .conftest import clean_env, cli


def test_demo_plain_output_and_exit_code() -> None:
    run = cli("demo")
    assert run.code == 0, run.err
    out = run.out
    assert "speaks v1.0 over JSON-RPC" in out
    assert "speaks v0.3 over HTTP+JSON" in out
    assert "speaks tasks/send (legacy) over JSON-RPC" in out
    summary = out.split("Summary:", 1)[1]
    rows = {line.split()[0]: line for line in summary.splitlines()[2:] if line.strip()}
    assert "completed" in rows["newsroom"]
    assert "Agents talk to agents, on asyncio and trio." in rows["newsroom"]
    assert "completed" in rows["translator"]
    assert "cancelled at the deadline" in rows["archivist"]


def test_demo_json() -> None:
    run = cli("-o", "json", "demo")
    assert run.code == 0, run.err
    agents = {a["agent"]: a for a in run.json()["agents"]}
    assert agents["newsroom"]["state"] == "completed"
    assert agents["translator"]["state"] == "completed"
    assert agents["archivist"]["cancelled"] is True
    assert 2.9 < agents["archivist"]["elapsed"] < 5.0  # cut at the 3 s deadline


def test_demo_live_display_in_a_terminal() -> None:
    code, screen = run_in_pty("demo", env=clean_env())
    assert code == 0
    assert "agents done" in screen  # the live fan-out view was drawn
    assert "cancelled at the deadline" in screen
    assert "Summary" in screen


def test_demo_without_hypercorn_says_which_extra_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An install that lacks hypercorn (the cli extra brings it) gets one error line and a hint,
    not an exception group."""
    import importlib.util

    from a2a_anyio.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "hypercorn" else real(name, *a),
    )
    assert main(["demo"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        "error: the demo serves its agents with hypercorn, which is not installed",
        "hint: pip install '.[cli]' in a2a-anyio's checkout (the cli extra brings it)",
    ]


def test_the_cli_extra_brings_what_the_demo_needs() -> None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib

    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]
    cli_extra = " ".join(project["optional-dependencies"]["cli"])
    for needed in ("rich", "pyyaml", "hypercorn"):
        assert needed in cli_extra
