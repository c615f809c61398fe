"""Every code block of README.md and docs/*.md is tested like code (see ``blocks.py``).

Python blocks run against the docs' local agents (``world.py``): a block that awaits at its
top level runs on asyncio and on trio; one that starts its own event loop runs once. Every
Python block, runnable or illustrative, is type-checked with the project's strict mypy
settings. Illustrative shell blocks must parse (``bash -n``, and the command line's own parser
for each ``a2a-anyio`` command). Registry files (``yaml``, ``toml``) must load, and ``json``
blocks parse (an MCP host's configuration must start ``a2a-anyio mcp`` rightly). ``console``
blocks are the command line's real output, checked by ``test_cli_output.py``. Another
library's code (``docs: before``, in the migration guide) is shown, not checked.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import shlex
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest

from a2a_anyio import AgentRegistry

from .blocks import DOCS, PLACEHOLDER_URL, ROOT, Block, all_blocks, blocks, doc_files
from .world import World, enter_given, world

BLOCKS = [b for b in all_blocks() if not b.before]
PYTHON = [b for b in BLOCKS if b.lang == "python"]
RUNNABLE = [b for b in PYTHON if not b.illustrative]
SHELL_LANGS = ("bash", "sh", "shell")
BLOCK_TIMEOUT = 30.0


def _awaits_at_top_level(code: str) -> bool:
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT | ast.PyCF_ONLY_AST
    tree = compile(code, "<block>", "exec", flags=flags, dont_inherit=True)
    compiled = compile(tree, "<block>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    return bool(compiled.co_flags & inspect.CO_COROUTINE)  # the module body awaits


def _given(block: Block) -> tuple[list[str], str]:
    """The names a block is given, and the imports its declarations need."""
    tree = ast.parse(block.given)
    names = [
        node.target.id
        for node in tree.body
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    ]
    imports = "\n".join(
        ast.unparse(node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
    )
    return names, imports


def _params() -> Iterator[Any]:
    for block in RUNNABLE:
        if _awaits_at_top_level(block.code):
            for backend in ("asyncio", "trio"):
                yield pytest.param(block, backend, id=f"{block.where}-{backend}")
        else:
            yield pytest.param(block, None, id=block.where)


@pytest.fixture(scope="module")
def docs_world() -> Iterator[World]:
    with world() as w:
        yield w


def test_every_block_is_tested() -> None:
    """Each block is a language the tests know what to do with, so none goes unchecked."""
    untested = []
    for block in BLOCKS:
        known = (
            block.lang in ("python", "console", "yaml", "toml", "json", "")
            or (block.lang in SHELL_LANGS and block.illustrative)
            or (block.lang == "text" and "terminal" in block.flags)
        )
        if not known:
            untested.append(f"{block.where}: {block.lang or 'no language'}")
    assert untested == [], "blocks no test checks (see docs/contributing.md)"
    assert len(PYTHON) >= 10 and len(RUNNABLE) >= 6  # the parser found them


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("block", "backend"), list(_params()))
def test_python_block_runs(
    block: Block, backend: str | None, docs_world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    names, imports = _given(block)
    # Line numbers in tracebacks are the Markdown file's.
    source = "\n" * block.line + block.code.replace(PLACEHOLDER_URL, docs_world.url)
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    code = compile(source, str(block.path), "exec", flags=flags, dont_inherit=True)
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    exec(imports, namespace)
    if backend is None:
        namespace.update({name: docs_world.given(name)() for name in names})
        exec(code, namespace)
    else:

        async def run() -> None:
            with anyio.fail_after(BLOCK_TIMEOUT):
                async with AsyncExitStack() as stack:
                    namespace.update(await enter_given(stack, docs_world, names))
                    await eval(code, namespace)

        anyio.run(run, backend=backend)
    capsys.readouterr()


def _module(block: Block) -> tuple[str, int]:
    """A block as a module mypy can check, and how many lines come before the block's."""
    prelude = "from __future__ import annotations\n" + block.given
    if _awaits_at_top_level(block.code):
        prelude += "\n\nasync def _block() -> None:\n"
        body = textwrap.indent(block.code, "    ")
    else:
        body = block.code
    return prelude + body, prelude.count("\n")


@pytest.mark.timeout(180)
def test_python_blocks_type_check(tmp_path: Path) -> None:
    """mypy --strict, as for the project's own code: a copied example is well typed."""
    where: dict[str, tuple[Block, int]] = {}
    for block in PYTHON:
        name = re.sub(r"\W", "_", f"{block.path.stem}_{block.line}").lower()
        text, offset = _module(block)
        (tmp_path / f"{name}.py").write_text(text)
        where[f"{name}.py"] = (block, offset)
    proc = subprocess.run(
        [
            sys.executable, "-m", "mypy",
            "--config-file", str(ROOT / "pyproject.toml"),
            "--cache-dir", str(ROOT / ".mypy_cache"),
            "--no-error-summary", "--hide-error-context", "--no-pretty",
            *sorted(where),
        ],
        cwd=tmp_path, capture_output=True, text=True, timeout=170, check=False,
    )  # fmt: skip
    errors = []
    for line in proc.stdout.splitlines():
        match = re.match(r"(\w+\.py):(\d+): (.*)", line)
        if match and match[1] in where:
            block, offset = where[match[1]]
            doc_line = block.line + int(match[2]) - offset
            errors.append(f"{block.path.relative_to(ROOT)}:{doc_line}: {match[3]}")
        elif line.strip():
            errors.append(line)
    assert proc.returncode == 0 and not errors, "\n".join(errors) or proc.stderr


def _commands(code: str) -> Iterator[list[str]]:
    """The simple commands of a shell block: split at ``&&``, ``||``, ``;`` and ``|``."""
    for line in code.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        command: list[str] = []
        for token in lexer:
            if token in ("&&", "||", ";", "|", "&"):
                if command:
                    yield command
                command = []
            else:
                command.append(token)
        if command:
            yield command


def _a2a_anyio_argv(command: list[str]) -> list[str] | None:
    while command and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", command[0]):
        command = command[1:]  # VAR=value prefixes
    if command[:2] == ["uv", "run"]:
        command = [c for c in command[2:] if c != "--frozen"]
    if command and command[0] == "a2a-anyio":
        return command[1:]
    return None


@pytest.mark.parametrize(
    "block",
    [b for b in BLOCKS if b.lang in SHELL_LANGS],
    ids=str,
)
def test_illustrative_shell_block_parses(block: Block) -> None:
    from a2a_anyio.cli._grammar import build_parser, finish_args

    syntax = subprocess.run(
        ["bash", "-n"], input=block.code, capture_output=True, text=True, check=False
    )
    assert syntax.returncode == 0, syntax.stderr
    for command in _commands(block.code):
        argv = _a2a_anyio_argv(command)
        if argv is None:
            continue
        args, extra = build_parser().parse_known_args(argv)
        assert extra == [], f"{block.where}: unknown arguments {extra} in {command}"
        finish_args(args)


@pytest.mark.parametrize("path", doc_files(), ids=lambda p: p.name)
def test_registry_blocks_load(path: Path, tmp_path: Path) -> None:
    """A ``yaml`` or ``toml`` block is a registry file; the blocks of one page agree."""
    loaded = []
    for i, block in enumerate(b for b in BLOCKS if b.path == path and b.lang in ("yaml", "toml")):
        file = tmp_path / f"agents{i}.{block.lang}"
        file.write_text(block.code)
        loaded.append(AgentRegistry.from_file(file))
    for registry in loaded[1:]:
        assert list(registry) == list(loaded[0])
        assert {g: registry.group(g) for g in registry.group_names()} == {
            g: loaded[0].group(g) for g in loaded[0].group_names()
        }


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.lang == "json"], ids=str)
def test_json_blocks_parse(block: Block) -> None:
    """A ``json`` block is JSON; an MCP host's configuration in one starts ``a2a-anyio``
    with arguments its parser takes."""
    from a2a_anyio.cli._grammar import build_parser, finish_args

    config = json.loads(block.code)
    for name, server in config.get("mcpServers", {}).items():
        if Path(server.get("command", "")).name == "a2a-anyio":
            args, extra = build_parser().parse_known_args(server["args"])
            assert extra == [], f"{block.where}: {name}: unknown arguments {extra}"
            finish_args(args)
            assert args.command == "mcp", f"{block.where}: {name} starts no MCP server"


# An install command, and the arguments after it on its line (up to a comment, the end of
# inline code, or the next command). ``uv pip install`` and ``python -m pip install`` end in ``pip install`` too.
_INSTALL = re.compile(
    r"\b(?:pip3?\s+install|pipx\s+install|uv\s+(?:add|tool\s+install)|poetry\s+add|pdm\s+add"
    r"|pipenv\s+install)\b(?P<args>[^`#\n;&|]*)"
)
_OUR_NAME = re.compile(r"a2a[-_.]anyio(?![-_.\w])", re.IGNORECASE)


def index_installs(line: str) -> list[str]:
    """The requirements on ``line`` that install a2a-anyio by its name from a package index
    (``pip install 'a2a-anyio[cli]'``), where none has it; a path or a direct reference
    (``"a2a-anyio[cli] @ file:///..."``) installs the checkout."""
    found = []
    for match in _INSTALL.finditer(line):
        words = re.findall(r"'[^']*'|\"[^\"]*\"|\S+", match["args"])
        for i, word in enumerate(words):
            requirement = word.strip("'\"")
            direct = "@" in requirement or words[i + 1 : i + 2] == ["@"]
            if _OUR_NAME.match(requirement) and not direct:
                found.append(requirement)
    return found


def test_no_doc_installs_a2a_anyio_from_a_package_index() -> None:
    """a2a-anyio is installed from its checkout (the README's Install): by its name, an index
    has nothing to give, or someone else's package."""
    assert index_installs("pip install 'a2a-anyio[testing]'") == ["a2a-anyio[testing]"]
    assert index_installs("`uv add a2a_anyio`, `python -m pip install -U A2A-anyio`") == [
        "a2a_anyio",
        "A2A-anyio",
    ]
    for fine in (
        'pip install ".[testing]"',
        'pip install "/path/to/a2a-anyio[cli]"',
        'pip install "a2a-anyio[testing] @ file:///path/to/a2a-anyio"',
        "pip install a2a-anyio @ file:///path/to/a2a-anyio",
        "pip install a2a-sdk uv",
        "pip install uv && uv run a2a-anyio demo",
    ):
        assert index_installs(fine) == [], fine
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in doc_files()
        for number, line in _lines(path)
        if index_installs(line)
    ]
    assert found == [], "install it from the checkout (README, Install)"


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """Each line of a page, and each inline code span that a line break splits, on one line."""
    text = path.read_text(encoding="utf-8")
    yield from enumerate(text.splitlines(), 1)
    prose = re.sub(r"^(```+).*?^\1", lambda m: "\n" * m[0].count("\n"), text, flags=re.M | re.S)
    for span in re.finditer(r"`[^`]+`", prose):
        if "\n" in span[0]:
            yield prose.count("\n", 0, span.start()) + 1, span[0].replace("\n", " ")


def test_every_migration_section_has_a_before_and_a_runnable_after() -> None:
    """docs/migrating.md: each client's section shows its example both ways, the new one run;
    so does each of its subsections that shows the old code."""
    page = DOCS / "migrating.md"
    lines = page.read_text(encoding="utf-8").splitlines()
    starts = [i + 1 for i, line in enumerate(lines) if line.startswith("## ")]
    assert len(starts) == 6  # one per client design the guide covers
    for start, end in zip(starts, [*starts[1:], sys.maxsize], strict=True):
        found = [b for b in blocks(page) if start < b.line < end]
        assert any(b.before for b in found), f"{page.name}:{start}: no 'before' example"
        assert any(b in RUNNABLE for b in found), f"{page.name}:{start}: no runnable example"
    parts = [i + 1 for i, line in enumerate(lines) if line.startswith(("## ", "### "))]
    for start, end in zip(parts, [*parts[1:], sys.maxsize], strict=True):
        found = [b for b in blocks(page) if start < b.line < end]
        if any(b.before for b in found):
            assert any(b in RUNNABLE for b in found), f"{page.name}:{start}: no runnable after"


def test_python_blocks_are_formatted() -> None:
    """``ruff format --check .`` (the README's command) covers the code blocks of Markdown."""
    files = [str(p) for p in doc_files()]
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", *files],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
