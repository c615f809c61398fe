"""The public surface: ``__all__`` is complete and sorted, the core stays sans-IO."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import a2a_anyio

SRC = Path(a2a_anyio.__file__).parent


def test_all_is_sorted_and_complete() -> None:
    assert a2a_anyio.__all__ == sorted(a2a_anyio.__all__)
    for name in a2a_anyio.__all__:  # first: lazily loaded names appear once used
        assert hasattr(a2a_anyio, name), name
    public = {
        name
        for name, obj in vars(a2a_anyio).items()
        if not name.startswith("_") and not inspect.ismodule(obj)
    }
    assert public == set(a2a_anyio.__all__) - {"__version__"}
    for name in a2a_anyio.__all__:
        assert hasattr(a2a_anyio, name), name


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_sans_io_core_imports_neither_httpx_nor_anyio() -> None:
    core = [
        SRC / "_model.py",
        SRC / "_errors.py",
        SRC / "_sse.py",
        *sorted((SRC / "_dialects").glob("*.py")),
    ]
    for path in core:
        assert not _imports(path) & {"httpx", "httpx_sse", "anyio"}, path


def test_only_the_io_boundary_imports_httpx() -> None:
    # The server-side extras (the testing kit, the push receiver) are not the client.
    server_side = {SRC / "push.py", *(SRC / "testing").rglob("*.py")}
    for path in SRC.rglob("*.py"):
        if path.name != "_http.py" and path not in server_side:
            assert not _imports(path) & {"httpx", "httpx_sse"}, path


def test_every_error_is_an_a2a_client_error() -> None:
    for name in a2a_anyio.__all__:
        obj = getattr(a2a_anyio, name)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            assert issubclass(obj, a2a_anyio.A2AClientError), name
