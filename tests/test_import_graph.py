"""No import circle in ``src/``: module-level and deferred imports (inside functions) alike,
imports under ``TYPE_CHECKING`` aside. A package's ``__init__`` that re-exports its modules is
no circle of theirs: a module that imports its own package's name is counted, the package
loading its modules is not."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import a2a_anyio

SRC = Path(a2a_anyio.__file__).parent
PACKAGE = "a2a_anyio"


def _modules() -> dict[str, Path]:
    found = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join([PACKAGE, *parts])] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(
    name: str, path: Path, modules: dict[str, Path], *, typing_too: bool = False
) -> set[str]:
    """The modules of the package that ``name`` imports, at any depth of its code (those
    imported for type checkers only too, if ``typing_too``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    wanted: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test) and not typing_too:
            for statement in node.orelse:
                visit(statement)
            return
        if isinstance(node, ast.Import):
            wanted.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            for alias in node.names:  # ``from pkg import module`` names the module
                sub = f"{module}.{alias.name}"
                wanted.add(sub if sub in modules else module)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text()))
    found = set()
    for module in wanted:
        while module not in modules and "." in module:
            module = module.rpartition(".")[0]
        if module in modules and module != name:
            found.add(module)
    return found


def _circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[frozenset[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                circles.append(frozenset(group))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return circles


def test_no_import_circle_in_src() -> None:
    modules = _modules()
    graph = {name: _imported(name, path, modules) for name, path in modules.items()}
    short = len(PACKAGE) + 1
    circles = [sorted(m[short:] for m in circle) for circle in _circles(graph)]
    assert circles == []


def test_the_client_and_what_it_makes_do_not_import_each_other() -> None:
    # Even for type checkers: a product (a conversation, a tool, a stream) names what it
    # needs of its client in a protocol of its own.
    modules = _modules()
    graph = {n: _imported(n, p, modules, typing_too=True) for n, p in modules.items()}
    client = f"{PACKAGE}._client"
    short = len(PACKAGE) + 1
    circles = [sorted(m[short:] for m in c) for c in _circles(graph) if client in c]
    assert circles == []


def test_the_model_reads_and_writes_plain_dicts_when_imported_first() -> None:
    # The codecs import the model: the package wires them into it, whatever is imported first.
    code = (
        "from a2a_anyio._model import Task\n"
        "task = Task.from_dict({'id': 't', 'status': {'state': 'completed'}})\n"
        "print(task.to_dict()['status']['state'], task.to_dict('0.3')['status']['state'])"
    )
    run = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True)
    assert (run.returncode, run.stdout.split()) == (0, ["TASK_STATE_COMPLETED", "completed"])


def test_the_circle_finder_finds_a_deferred_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [frozenset({"a", "b", "c"})]


# -- cancelling what was abandoned: one owner -------------------------------------------------

#: What decides that a task on an agent is to be cancelled because its call was abandoned: the
#: tracker of the task seen last, the test of "was this abandoned", the request that cancels.
#: ``_abandon.py`` owns them; everything else hands its calls to a ``CancelGuard``.
DECIDERS = frozenset({"LastSeen", "abandons", "cancel_abandoned"})
#: The modules that call ``cancel_task`` because a user asked for it, not for a call it left:
#: the command ``task cancel``, chat's ``/cancel``, the MCP bridge's tool, ``a2a_anyio.cancel_task``,
#: and the conformance run (its cancel check, and the tasks its checks started, ended before it
#: reports).
ASKED_BY_THE_USER = frozenset(
    {"cli._commands", "cli._chat", "cli._mcp", "_oneshot", "_conformance"}
)


def _cancel_decisions(tree: ast.AST) -> list[str]:
    """What ``tree`` does that decides a cancel of an abandoned task: a name of
    ``DECIDERS``, a private ``cancel`` member of another object (``client._cancel...``), a
    call of ``cancel_task``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.alias) and node.name in DECIDERS:
            found.append(f"imports {node.name}")
        elif isinstance(node, ast.Name) and node.id in DECIDERS:
            found.append(f"uses {node.id}")
        elif isinstance(node, ast.Attribute):
            owner = node.value.id if isinstance(node.value, ast.Name) else None
            if node.attr in DECIDERS:
                found.append(f"uses .{node.attr}")
            elif node.attr.startswith("_") and "cancel" in node.attr and owner != "self":
                found.append(f"reaches {owner or '...'}.{node.attr}")
            elif (
                node.attr == "cancel_task"
                and getattr(getattr(node, "parent", None), "func", None) is node
            ):
                found.append("calls cancel_task")
        for child in ast.iter_child_nodes(node):
            child.parent = node  # type: ignore[attr-defined]
    return found


def test_no_module_but_abandon_decides_to_cancel_an_abandoned_task() -> None:
    short = len(PACKAGE) + 1
    decided = {}
    for name, path in _modules().items():
        module = name[short:]
        if module == "_abandon" or module.startswith("testing."):
            continue  # the owner; the fake agent, which ends its own skills
        found = _cancel_decisions(ast.parse(path.read_text()))
        if module in ASKED_BY_THE_USER:
            found = [what for what in found if what != "calls cancel_task"]
        if found:
            decided[module] = sorted(set(found))
    assert decided == {}


def test_the_cancel_check_finds_a_module_that_decides() -> None:
    code = (
        "from a2a_anyio._abandon import LastSeen\n"
        "async def leave(client, seen):\n"
        "    if abandons(exc):\n"
        "        await client._cancel_abandoned(seen)\n"
        "        await client.cancel_task(seen.task_id)\n"
    )
    assert sorted(_cancel_decisions(ast.parse(code))) == [
        "calls cancel_task",
        "imports LastSeen",
        "reaches client._cancel_abandoned",
        "uses abandons",
    ]
