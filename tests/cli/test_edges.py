"""What a new user meets at the edges of the command line: agent references that cannot name
an agent, a closed output pipe, an agent whose stream cannot be read, a deadline that leaves a
task behind, a piped chat whose turns fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from a2a_anyio import AgentPool

from .conftest import cli

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
