"""The fenced code blocks of the documentation, and what each one asks of the tests.

A block is told apart by its language and by an HTML comment on the line(s) just before its
fence (docs/contributing.md explains them to writers):

``<!-- illustrative -->``
    Not run. A Python block is type-checked with mypy; a shell block is checked by ``bash -n``
    and every ``a2a-anyio`` command in it by the command line's own parser.
``<!-- given`` + Python declarations + ``-->``
    Names the block uses without defining them (``urls: list[str]``), with the imports their
    types need. mypy reads them as declarations; a runnable block gets their values from the
    docs' local agents (``tests/docs/world.py``). Combines with ``illustrative``.
``<!-- docs: background -->``, ``<!-- docs: unordered -->``
    For ``console`` blocks (commands and the output they printed, see ``cli_session.py``): the
    command keeps running while the next block runs; lines are compared in any order.
``<!-- docs: terminal -->``
    A ``text`` block that records a live view, or a chat, in a terminal (``cli_session.py``).
``<!-- docs: before -->``
    Code of another library, in any language, shown beside its a2a-anyio equivalent (the
    migration guide): neither run nor checked, since what it imports is not installed.

Without a comment, ``python`` blocks run (``test_code_blocks.py``), ``console`` blocks run and
their output is compared (``test_cli_output.py``), ``yaml``/``toml`` blocks are registry
files that must load, and ``json`` blocks must parse (an MCP host's configuration in one must
start ``a2a-anyio mcp`` with arguments the command line takes). Any other language, or a ``bash`` block that is not illustrative, fails
the tests: no block goes untested.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PLACEHOLDER_URL = "https://agent.example.com"

_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>```+)(?P<lang>[\w+-]*)\s*$")
_COMMENT_END = re.compile(r"-->\s*$")


def doc_files() -> list[Path]:
    """README.md and every page of docs/."""
    return [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language, its text and its directives."""

    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    flags: frozenset[str] = field(default_factory=frozenset)
    given: str = ""  # Python declarations from a ``<!-- given ... -->`` comment

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def illustrative(self) -> bool:
        return "illustrative" in self.flags

    @property
    def before(self) -> bool:
        """Another library's code, shown for comparison."""
        return "before" in self.flags

    def __str__(self) -> str:  # the test id
        return self.where


def _directive(lines: list[str], fence: int) -> tuple[frozenset[str], str]:
    """The flags and given declarations of the comment that ends just above ``fence``."""
    end = fence - 1
    while end >= 0 and not lines[end].strip():
        end -= 1
    if end < 0 or not _COMMENT_END.search(lines[end]):
        return frozenset(), ""
    start = end
    while start >= 0 and "<!--" not in lines[start]:
        start -= 1
    if start < 0:
        return frozenset(), ""
    text = "\n".join(lines[start : end + 1]).strip()
    body = text[text.index("<!--") + 4 : text.rindex("-->")]
    first, _, rest = body.strip("\n").partition("\n")
    words = first.replace(";", " ").replace(":", " ").split()
    flags: set[str] = set()
    given = ""
    if first.strip().startswith("docs:"):
        flags.update(w for w in words[1:])
    else:
        for word in words:
            if word in ("illustrative", "given"):
                flags.add(word)
        if "given" in flags:
            given = _dedent(rest)
    return frozenset(flags), given


def _dedent(text: str) -> str:
    import textwrap

    return textwrap.dedent(text).strip("\n") + "\n" if text.strip() else ""


def blocks(path: Path) -> list[Block]:
    """Every fenced block of a Markdown file, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, fence, lang = match["indent"], match["fence"], match["lang"]
        body: list[str] = []
        j = i + 1
        while j < len(lines) and lines[j].strip() != fence:
            line = lines[j]
            body.append(line[len(indent) :] if line.startswith(indent) else line.lstrip())
            j += 1
        flags, given = _directive(lines, i)
        code = "\n".join(body) + "\n" if body else ""
        out.append(Block(path, i + 1, lang, code, flags, given))
        i = j + 1
    return out


def all_blocks() -> list[Block]:
    return [b for path in doc_files() for b in blocks(path)]
