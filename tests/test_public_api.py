"""The public surface: ``__all__`` is complete and sorted, the core stays sans-IO."""

from __future__ import annotations

import ast
import inspect
import json
import subprocess
import sys
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
        SRC / "_follower.py",
        SRC / "_reducer.py",
        *sorted((SRC / "_dialects").glob("*.py")),
        *sorted((SRC / "_bindings").glob("*.py")),
    ]
    for path in core:
        assert not _imports(path) & {"httpx", "httpx_sse", "anyio"}, path


def test_only_the_io_boundary_imports_httpx() -> None:
    # The server-side extras (the testing kit, the push receiver) are not the client.
    server_side = {SRC / "push.py", *(SRC / "testing").rglob("*.py")}
    for path in SRC.rglob("*.py"):
        if (
            path.name not in ("_http.py", "_http_sse.py", "_http_pinned.py")
            and path not in server_side
        ):
            assert not _imports(path) & {"httpx", "httpx_sse"}, path


def test_every_error_is_an_a2a_client_error() -> None:
    for name in a2a_anyio.__all__:
        obj = getattr(a2a_anyio, name)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            assert issubclass(obj, a2a_anyio.A2AClientError), name


def _private_names_of_httpx_and_httpcore() -> set[str]:
    """Private attribute names of httpx's and httpcore's clients, transports and models."""
    import httpcore
    import httpx

    objects: list[object] = [
        httpx.AsyncClient(),
        httpx.AsyncHTTPTransport(),
        httpx.Request("GET", "http://agent.test/"),
        httpx.Response(200),
        httpx.Timeout(1.0),
        httpx.Limits(),
        httpcore.AsyncConnectionPool(),
    ]
    names: set[str] = set()
    for obj in objects:
        attrs = set(getattr(obj, "__dict__", {}))
        for cls in type(obj).__mro__:
            attrs |= set(vars(cls)) | set(getattr(cls, "__slots__", ()))
        names |= {n for n in attrs if n.startswith("_") and not n.startswith("__")}
    return names


def test_no_private_attribute_of_httpx_or_httpcore_is_used() -> None:
    private = _private_names_of_httpx_and_httpcore()
    assert {"_transport", "_mounts", "_pool", "_transport_for_url"} <= private
    found = []
    for path in SRC.rglob("*.py"):
        assert "httpcore" not in _imports(path), path
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in private:
                own = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
                if not own:
                    found.append(f"{path.name}:{node.lineno} .{node.attr}")
            elif isinstance(node, ast.Constant) and node.value in private:
                found.append(f"{path.name}:{node.lineno} {node.value!r}")
    assert not found, found


def test_only_the_tracing_module_imports_opentelemetry() -> None:
    # It is imported for a client made with tracing=True only (tests/unit/test_tracing.py),
    # with the metrics it imports.
    for path in SRC.rglob("*.py"):
        if path.name not in ("_tracing.py", "_metrics.py"):
            assert "opentelemetry" not in _imports(path), path
            assert "_metrics" not in path.read_text(), path


#: Never loaded by ``import a2a_anyio`` nor by making a client: what a program that makes a
#: client and calls it may never need (the names, codecs and jar that load them on first use:
#: ``docs/architecture.md``).
LOADED_ON_FIRST_USE = frozenset(
    {
        "a2a_anyio._agent_text",
        "a2a_anyio._network",
        "a2a_anyio._auth_card",
        "a2a_anyio._auth_schemes",
        "a2a_anyio._cookies",
        "a2a_anyio._bindings.paths",
        "a2a_anyio._bindings.rest",
        "a2a_anyio._card_check",
        "a2a_anyio._answer_shapes",
        "a2a_anyio._conformance",
        "a2a_anyio._dialects.legacy",
        "a2a_anyio._dialects.plain",
        "a2a_anyio._dialects.v03_rest",
        "a2a_anyio._fanout",
        "a2a_anyio._jcs",
        "a2a_anyio._jwks",
        "a2a_anyio._oauth",
        "a2a_anyio._oauth_user",
        "a2a_anyio._oneshot",
        "a2a_anyio._pool",
        "a2a_anyio._push_verify",
        "a2a_anyio._registry",
        "a2a_anyio._signing",
        "a2a_anyio._signing_keys",
        "a2a_anyio._sync",
        "a2a_anyio._sync_pool",
        "a2a_anyio._sync_tool",
        "a2a_anyio._sync_conversation",
        "a2a_anyio._tool",
        "a2a_anyio.cli",
        "a2a_anyio.push",
        "a2a_anyio.testing",
    }
)
#: Not imported by ``import a2a_anyio`` (the http client may import them when one is made).
NOT_IMPORTED = frozenset({"anyio.lowlevel", "platform", "uuid"})


def _loaded_by(code: str) -> set[str]:
    """The modules ``code`` loads in a fresh interpreter, after a2a-anyio's dependencies.
    Those of ``NOT_IMPORTED`` that the dependencies loaded are forgotten first, so that
    importing them again shows (httpx's command line, when installed, loads ``uuid``)."""
    program = f"""import json, sys
import httpx, httpx_sse, anyio
for name in {sorted(NOT_IMPORTED)!r}:
    sys.modules.pop(name, None)
before = set(sys.modules)
{code}
print(json.dumps(sorted(set(sys.modules) - before)))"""
    run = subprocess.run(
        [sys.executable, "-I", "-c", program], capture_output=True, text=True, check=True
    )
    return set(json.loads(run.stdout))


def test_import_leaves_what_most_programs_never_need_to_first_use() -> None:
    loaded = _loaded_by("import a2a_anyio")
    assert not loaded & LOADED_ON_FIRST_USE
    assert not loaded & NOT_IMPORTED  # anyio.lowlevel: anyio leaves its core to the event loop
    # What a client needs for its calls is loaded, not left to its first attribute access.
    assert {"a2a_anyio._client", "a2a_anyio._bindings.jsonrpc", "a2a_anyio._stream"} <= loaded


def test_making_a_client_loads_no_more_of_them() -> None:
    loaded = _loaded_by('from a2a_anyio import A2AClient\nA2AClient("http://127.0.0.1:1")')
    assert not loaded & LOADED_ON_FIRST_USE


def test_each_lazy_name_loads_its_module_on_first_use() -> None:
    lazy = vars(a2a_anyio)["_LAZY"]
    assert set(lazy) <= set(a2a_anyio.__all__)
    assert set(lazy.values()) <= LOADED_ON_FIRST_USE
    for name, module in lazy.items():
        assert getattr(a2a_anyio, name) is getattr(sys.modules[module], name)
