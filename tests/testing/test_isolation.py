"""The testing kit and the push receiver stay out of the client: optional, imported lazily."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import a2a_anyio

SRC = Path(a2a_anyio.__file__).parent


def _imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_client_modules_never_import_server_pieces() -> None:
    # _asgi.py is a server piece itself: the ASGI plumbing the testing kit and push.py share.
    server = ("a2a_anyio.testing", "a2a_anyio.push", "a2a_anyio._asgi")
    client = [*SRC.glob("_*.py"), *(SRC / "_dialects").glob("*.py"), SRC / "__init__.py"]
    client.remove(SRC / "_asgi.py")
    for path in client:
        for name in _imported_modules(path):
            assert not name.startswith(server), (path, name)


def test_the_server_plumbing_imports_no_server_piece_above_it() -> None:
    """push.py and the testing kit import _asgi.py; it imports neither."""
    for name in _imported_modules(SRC / "_asgi.py"):
        assert not name.startswith(("a2a_anyio.testing", "a2a_anyio.push")), name


def test_server_dependencies_load_only_when_serving() -> None:
    code = (
        "import sys, a2a_anyio, a2a_anyio.testing, a2a_anyio.push; "
        "print(sorted(m for m in ('hypercorn', 'starlette') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.anyio
async def test_serving_without_hypercorn_is_one_plain_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No exception group: the missing extra is named before any task group starts."""
    import importlib.util

    from a2a_anyio.testing import FakeAgent

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "hypercorn" else real(name, *a),
    )
    with pytest.raises(RuntimeError, match=r"pip install 'a2a-anyio\[testing\]'"):
        async with FakeAgent().serve():
            pass
