"""Regenerate the outputs shown in docs/cli.md: ``python -m tests.docs.regen``.

Every ``console`` block is run again (``cli_session.py``). A block whose output only differs in
what changes from run to run (ids, times, durations) is left as it is; the others get the new
output. ``--fresh`` rewrites every block with this run's ids and times. ``--check`` changes
nothing and exits 1 when a block would change (what ``tests/docs/test_cli_output.py`` does).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from .blocks import Block, blocks
from .cli_session import DOC, Result, Session, normalize, run_page


def same(block: Block, text: str) -> bool:
    """Whether the page's block and a run's text agree, up to what changes between runs."""
    old, new = normalize(block.code), normalize(text)
    if "unordered" in block.flags:
        return sorted(old.splitlines()) == sorted(new.splitlines())
    return old == new


def diff(result: Result) -> str:
    """How a block's output changed, up to what changes between runs."""
    import difflib

    old = normalize(result.block.code).splitlines()
    new = normalize(result.text).splitlines()
    return "\n".join(difflib.unified_diff(old, new, "the page", "this run", lineterm=""))


def run(fresh: bool = False) -> list[Result]:
    with tempfile.TemporaryDirectory() as tmp, Session(Path(tmp)) as session:
        return run_page(session, blocks(DOC), fresh=fresh)


def rewrite(text: str, results: list[Result], *, fresh: bool) -> tuple[str, list[Result]]:
    """``text`` (the page) with the blocks that changed replaced; and which ones did."""
    lines = text.splitlines(keepends=True)
    changed = [r for r in results if fresh or not same(r.block, r.text)]
    for result in sorted(changed, key=lambda r: r.block.line, reverse=True):
        start = result.block.line  # the line after the opening fence (0-based)
        end = start + len(result.block.code.splitlines())
        assert lines[end].strip().startswith("```"), result.block.where
        lines[start:end] = [result.text if result.text.endswith("\n") else result.text + "\n"]
    return "".join(lines), changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.docs.regen", description=__doc__)
    parser.add_argument("--fresh", action="store_true", help="rewrite every block")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 on drift")
    args = parser.parse_args(argv)
    results = run(fresh=args.fresh)
    text, changed = rewrite(DOC.read_text(encoding="utf-8"), results, fresh=args.fresh)
    for result in changed:
        print(f"{result.block.where}: {'rewritten' if args.fresh else 'changed'}")
        if args.check:
            print(diff(result))
    if args.check:
        return 1 if changed else 0
    DOC.write_text(text, encoding="utf-8")
    print(f"{len(results)} blocks run, {len(changed)} written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
