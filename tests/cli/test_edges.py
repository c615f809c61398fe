"""What a new user meets at the edges of the command line: agent references that cannot name
an agent, a closed output pipe, an agent whose stream cannot be read, a deadline that leaves a
task behind, a piped chat whose turns fail."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from a2a_anyio import AgentPool

from .conftest import CLI_TIMEOUT, clean_env, cli

NOT_AGENTS = ["htp://x", "ftp://files.example.com/card", "http:/x", "missing.json", "./missing.json"]


@pytest.mark.parametrize("ref", NOT_AGENTS)
def test_a_reference_that_names_no_agent_is_refused_at_once(ref: str, tmp_path: Path) -> None:
    run = cli("-a", ref, "card", cwd=tmp_path)
    assert run.code == 2, run.err
    first = run.err.splitlines()[0]
    assert first.startswith(f"error: -a {ref!r}: ")
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
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line: every write fails
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "a2a_anyio.cli", "-a", str(card), *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=clean_env(),
            timeout=CLI_TIMEOUT,
        )
    finally:
        os.close(write_end)
    assert proc.returncode == code, proc.stderr
    assert proc.stderr == ""
