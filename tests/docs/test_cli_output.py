"""docs/cli.md shows what the commands print: each console block is run again, in order, against
the servers the page names (``cli_session.py``) and must match, up to ids, times and durations.

When a change to the command line changes its output on purpose, ``python -m tests.docs.regen``
rewrites the blocks that changed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .blocks import blocks
from .cli_session import DOC, Session, run_page
from .regen import diff, same


@pytest.mark.interop
@pytest.mark.timeout(180)
def test_cli_md_shows_what_the_commands_print(tmp_path: Path) -> None:
    with Session(tmp_path) as session:
        results = run_page(session, blocks(DOC))
    assert len(results) >= 40
    drift = [f"{r.block.where}:\n{diff(r)}" for r in results if not same(r.block, r.text)]
    assert drift == [], (
        "docs/cli.md no longer shows what the commands print; if the change is meant, "
        "run `python -m tests.docs.regen`:\n" + "\n".join(drift)
    )
