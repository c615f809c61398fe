"""The interop matrix: every peer x binding x operation that ``test_matrix.py`` runs.

As a module (imported by ``conftest.py`` and ``test_matrix.py``) it defines the peers, what
each serves, how the peers that live outside the project's environment are provisioned (the
virtual environments of the a2a-sdk 0.3.x, fasta2a, python-a2a and LangGraph servers and of
the a2a-sdk 1.x gRPC server, the ``node_modules`` of the JS SDK and Mastra servers) and the results file the suite writes. As a script (standard
library only)::

    python tests/interop/matrix.py --prepare   # build .venv-interop/*, js/ and mastra/node_modules
    python tests/interop/matrix.py --render    # .results.json -> docs/interop.md

Each ``test_matrix.py`` run records the outcome of every cell it ran, per anyio backend, into
``tests/interop/.results.json`` (merged into what earlier runs recorded); ``--render`` turns
that file into the table of ``docs/interop.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

INTEROP_DIR = Path(__file__).resolve().parent
REPO_ROOT = INTEROP_DIR.parent.parent
LEGACY_SERVERS = INTEROP_DIR / "legacy_servers.py"
# The virtual environments of the Python peers (outside the project's, never committed).
LOCK_DIR = REPO_ROOT / ".venv-interop"
RESULTS_PATH = INTEROP_DIR / ".results.json"
DOC_PATH = REPO_ROOT / "docs" / "interop.md"

# Longest that building one peer's environment may take (pip install / npm ci).
PROVISION_TIMEOUT = 300.0

OPERATIONS = ("send", "stream", "get", "list", "cancel", "subscribe", "push", "extended_card")
OPERATION_TITLES = {
    "send": "send",
    "stream": "stream",
    "get": "get",
    "list": "list",
    "cancel": "cancel",
    "subscribe": "subscribe",
    "push": "push config",
    "extended_card": "extended card",
}
BINDINGS = ("jsonrpc", "rest", "grpc")
BINDING_TITLES = {"jsonrpc": "JSON-RPC", "rest": "HTTP+JSON", "grpc": "gRPC"}
BACKENDS = ("asyncio", "trio")

ALL_PUSH = frozenset({"create", "get", "list", "delete"})


@dataclass(frozen=True)
class Peer:
    """One server the client is pointed at, and what it serves per binding."""

    id: str
    title: str  # who built it
    version: str  # the protocol version spoken on the wire in these cells
    fixture: str  # the pytest fixture giving its base URL
    protocol: str  # the A2AClient(protocol=...) the cells use ("auto" unless forced)
    # binding -> the operations served there
    serves: dict[str, frozenset[str]]
    # binding -> the push-config operations served there (create / get / list / delete)
    push: dict[str, frozenset[str]] = field(default_factory=dict)
    path: str = ""  # appended to the fixture's base URL: the URL the client is given
    cookies: dict[str, str] | None = None
    # Where the answer to a message comes: a Message, else a task, the answer in its status
    # message ("status": dialect L, fasta2a, python-a2a) or in its artifact ("artifact")
    reply: Literal["message", "status", "artifact"] = "message"
    # True: an input prompt is the value of the task's "Interrupt" artifact's data (LangGraph)
    prompt_in_artifact: bool = False
    failure_text: str = "it failed"  # a failed task's status message
    push_config_ids: bool = True  # dialect L has one push config per task and no ids
    continues_tasks: bool = True  # False: a message to a task starts a new one (same context)
    artifact_names: bool = True  # False: artifacts come back without their names
    data_parts: bool = True  # False: a message's data parts do not come back from the agent
    refuses_data: bool = False  # True: a message with a data part is answered with an error
    failed_tasks: bool = True  # False: a failing task is answered with an error, not the task
    # how a stream shows progress: "chunks" (artifact chunks), "tasks" (whole tasks, no
    # chunks), "statuses" (working status updates carrying agent messages, then the answer)
    stream: str = "chunks"
    artifacts_on_get: bool = True  # False: a task got by id comes without its artifacts
    returns_early: bool = True  # False: a send waits for the task's end, blocking or not
    provisioned: bool = False  # needs an environment built on first use (slow once)
    note: str = ""

    def cells(self) -> Iterator[Cell]:
        for binding in BINDINGS:
            for op in OPERATIONS:
                if op in self.serves.get(binding, ()):
                    yield Cell(self, binding, op)


@dataclass(frozen=True)
class Cell:
    peer: Peer
    binding: str
    op: str

    @property
    def key(self) -> str:
        return f"{self.peer.id}/{self.binding}/{self.op}"

    @property
    def id(self) -> str:
        return f"{self.peer.id}-{self.binding}-{self.op}"


EVERYTHING = frozenset(OPERATIONS)
NO_LIST = EVERYTHING - {"list"}
LEGACY_OPS = frozenset({"send", "stream", "get", "cancel", "subscribe", "push"})
FASTA2A_OPS = frozenset({"send", "stream", "get", "cancel", "subscribe"})
PYA2A_OPS = frozenset({"send", "stream", "get", "cancel"})
LANGGRAPH_OPS = frozenset({"send", "stream", "get", "list", "cancel"})
MASTRA_OPS = LEGACY_OPS
MASTRA_CARD = "/api/.well-known/echo/agent-card.json"
MASTRA = Peer(
    id="mastra",
    title="Mastra (@mastra/server)",
    version="0.3",
    fixture="mastra_server",
    protocol="auto",
    serves={"jsonrpc": MASTRA_OPS},
    push={"jsonrpc": ALL_PUSH},
    path=MASTRA_CARD,
    reply="artifact",
    artifact_names=False,
    data_parts=False,
    refuses_data=True,
    failed_tasks=False,
    provisioned=True,
    # Mastra serves a card only at its agent's own path (not under the agent's URL): its
    # docs have users give that URL, as the client is given here.
    note=f"client given the card URL {MASTRA_CARD}",
)

PEERS: tuple[Peer, ...] = (
    Peer(
        id="sdk1-strict",
        title="a2a-sdk 1.x (Python), strict",
        version="1.0",
        fixture="strict_server",
        protocol="auto",
        serves={"jsonrpc": EVERYTHING, "rest": EVERYTHING},
        push={"jsonrpc": ALL_PUSH, "rest": ALL_PUSH},
    ),
    Peer(
        id="sdk1-compat-v1",
        title="a2a-sdk 1.x (Python), v0.3 compat on",
        version="1.0",
        fixture="compat_server",
        protocol="auto",
        serves={"jsonrpc": EVERYTHING, "rest": EVERYTHING},
        push={"jsonrpc": ALL_PUSH, "rest": ALL_PUSH},
    ),
    Peer(
        id="sdk1-compat-v03",
        title="a2a-sdk 1.x (Python), v0.3 compat on",
        version="0.3",
        fixture="compat_server",
        protocol="0.3",
        serves={"jsonrpc": NO_LIST, "rest": NO_LIST},
        # Its v0.3 REST adapter has no push-config DELETE route.
        push={"jsonrpc": ALL_PUSH, "rest": ALL_PUSH - {"delete"}},
        note='client told protocol="0.3"',
    ),
    Peer(
        id="sdk1-grpc-v1",
        title="a2a-sdk 1.x (Python), gRPC server (grpcio)",
        version="1.0",
        fixture="sdk1_grpc_server",
        protocol="auto",
        serves={"grpc": EVERYTHING},
        push={"grpc": ALL_PUSH},
        provisioned=True,
        note="its card lists gRPC interfaces only",
    ),
    Peer(
        id="sdk1-grpc-v03",
        title="a2a-sdk 1.x (Python), gRPC server (grpcio)",
        version="0.3",
        fixture="sdk1_grpc_server",
        protocol="0.3",
        serves={"grpc": NO_LIST},  # the v0.3 service has no ListTasks
        push={"grpc": ALL_PUSH},
        provisioned=True,
        note='client told protocol="0.3"',
    ),
    Peer(
        id="sdk03",
        title="a2a-sdk 0.3.x (Python)",
        version="0.3",
        fixture="sdk03_server",
        protocol="auto",
        serves={"jsonrpc": NO_LIST, "rest": NO_LIST},
        # The 0.3 SDK's REST adapter: push-config list raises "not implemented", no DELETE route.
        push={"jsonrpc": ALL_PUSH, "rest": frozenset({"create", "get"})},
        provisioned=True,
    ),
    Peer(
        id="sdk03-grpc",
        title="a2a-sdk 0.3.x (Python), gRPC server (grpcio)",
        version="0.3",
        fixture="sdk03_grpc_server",
        protocol="auto",
        # The 0.3 gRPC service has no ListTasks, and for the card only GetAgentCard (the
        # public card): its card announces no extended card.
        serves={"grpc": NO_LIST - {"extended_card"}},
        # Its gRPC service has no push-config list or delete.
        push={"grpc": frozenset({"create", "get"})},
        provisioned=True,
        note="its card lists a gRPC interface only",
    ),
    Peer(
        id="js-strict",
        title="@a2a-js/sdk (Node), strict",
        version="1.0",
        fixture="js_server",
        protocol="auto",
        serves={"jsonrpc": EVERYTHING, "rest": EVERYTHING},
        push={"jsonrpc": ALL_PUSH, "rest": ALL_PUSH},
        provisioned=True,
    ),
    Peer(
        id="js-compat-v1",
        title="@a2a-js/sdk (Node), legacyCompat on",
        version="1.0",
        fixture="js_compat_server",
        protocol="auto",
        serves={"jsonrpc": EVERYTHING, "rest": EVERYTHING},
        push={"jsonrpc": ALL_PUSH, "rest": ALL_PUSH},
        provisioned=True,
    ),
    Peer(
        id="js-compat-v03",
        title="@a2a-js/sdk (Node), legacyCompat on",
        version="0.3",
        fixture="js_compat_server",
        protocol="0.3",
        serves={"jsonrpc": NO_LIST, "rest": NO_LIST},
        push={"jsonrpc": ALL_PUSH, "rest": ALL_PUSH},
        provisioned=True,
        note='client told protocol="0.3"',
    ),
    Peer(
        id="js-grpc-v1",
        title="@a2a-js/sdk (Node), gRPC server (@grpc/grpc-js)",
        version="1.0",
        fixture="js_grpc_server",
        protocol="auto",
        serves={"grpc": EVERYTHING},
        push={"grpc": ALL_PUSH},
        provisioned=True,
        note="its card lists gRPC interfaces only",
    ),
    Peer(
        id="js-grpc-v03",
        title="@a2a-js/sdk (Node), gRPC server (@grpc/grpc-js)",
        version="0.3",
        fixture="js_grpc_server",
        protocol="0.3",
        serves={"grpc": NO_LIST},
        push={"grpc": ALL_PUSH},
        provisioned=True,
        note='client told protocol="0.3"',
    ),
    Peer(
        id="fasta2a",
        title="fasta2a (Python)",
        version="1.0",
        fixture="fasta2a_server",
        protocol="auto",
        serves={"jsonrpc": FASTA2A_OPS},
        reply="status",
        continues_tasks=False,
        provisioned=True,
        note="answers every send at once: the client follows the task up",
    ),
    Peer(
        id="pya2a",
        title="python-a2a (Python)",
        version="L (tasks/send), routed by path",
        fixture="pya2a_server",
        protocol="auto",
        serves={"jsonrpc": PYA2A_OPS},
        reply="status",
        artifact_names=False,
        data_parts=False,
        stream="tasks",
        provisioned=True,
        note="its card says v0.3 JSON-RPC",
    ),
    MASTRA,
    Peer(
        id="langgraph",
        title="LangGraph API server (Python), in-memory runtime",
        version="1.0",
        fixture="langgraph_server",
        protocol="auto",
        serves={"jsonrpc": LANGGRAPH_OPS},
        reply="artifact",
        prompt_in_artifact=True,
        failure_text="Error executing assistant: ValueError",
        artifact_names=False,
        data_parts=False,
        stream="statuses",
        artifacts_on_get=False,
        returns_early=False,
        provisioned=True,
        note="its URL is /a2a/{assistant_id}",
    ),
    Peer(
        id="v02",
        title="our v0.2.5 agent (legacy_servers.py)",
        version="0.2",
        fixture="v02_server",
        protocol="auto",
        serves={"jsonrpc": NO_LIST},
        push={"jsonrpc": ALL_PUSH},
        note="extended card by plain GET /agent/authenticatedExtendedCard",
    ),
    Peer(
        id="legacy",
        title="our tasks/send agent (legacy_servers.py)",
        version="L (tasks/send)",
        fixture="legacy_server",
        protocol="auto",
        serves={"jsonrpc": LEGACY_OPS},
        push={"jsonrpc": frozenset({"create", "get"})},
        reply="status",
        push_config_ids=False,
    ),
    Peer(
        id="legacy-cookie",
        title="our tasks/send agent behind a user= cookie",
        version="L (tasks/send)",
        fixture="legacy_cookie_server",
        protocol="auto",
        serves={"jsonrpc": LEGACY_OPS},
        push={"jsonrpc": frozenset({"create", "get"})},
        cookies={"user": "alice"},
        reply="status",
        push_config_ids=False,
        note="HTTP 401 without the cookie",
    ),
)

PEERS_BY_ID = {peer.id: peer for peer in PEERS}


def cells() -> list[Cell]:
    """Every served cell, in table order."""
    return [cell for peer in PEERS for cell in peer.cells()]


# --------------------------------------------------------------------------------------------
# Provisioning the peers that live outside the project's environment
# --------------------------------------------------------------------------------------------


class ProvisionError(RuntimeError):
    """A peer's environment could not be built: the interop suite cannot run that peer."""


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive file lock (two pytest runs must not build the same environment at once)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _run(cmd: list[str], cwd: Path, what: str, timeout: float) -> None:
    try:
        done = subprocess.run(
            cmd,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise ProvisionError(f"{what}: `{' '.join(cmd)}` took more than {timeout:.0f} s") from exc
    except OSError as exc:
        raise ProvisionError(f"{what}: cannot run `{' '.join(cmd)}`: {exc}") from exc
    if done.returncode != 0:
        output = (done.stdout + done.stderr)[-3000:]
        raise ProvisionError(f"{what}: `{' '.join(cmd)}` exited {done.returncode}:\n{output}")


@dataclass(frozen=True)
class PythonEnv:
    """A Python peer's own virtual environment: ``tests/interop/<name>/server.py`` (or
    ``script`` with ``args``) run in ``.venv-interop/<name>``, built from the exact pins of
    ``<name>/requirements.txt`` (``no_deps``: the pins are the whole environment, the
    packages' own requirements are not followed)."""

    name: str
    title: str
    no_deps: bool = False
    min_python: tuple[int, int] = (3, 10)  # its pins need at least this Python
    script: str | None = None  # a server script of tests/interop/ instead of <name>/server.py
    args: tuple[str, ...] = ()

    @property
    def requirements(self) -> Path:
        return INTEROP_DIR / self.name / "requirements.txt"

    @property
    def server(self) -> Path:
        return INTEROP_DIR / self.script if self.script else INTEROP_DIR / self.name / "server.py"

    @property
    def venv(self) -> Path:
        return LOCK_DIR / self.name

    def pinned(self, package: str) -> str | None:
        """The version ``requirements.txt`` pins ``package`` to."""
        with contextlib.suppress(OSError):
            for line in self.requirements.read_text().splitlines():
                if line.lower().startswith(f"{package.lower()}=="):
                    return line.split("==", 1)[1].strip()
        return None


SDK03_ENV = PythonEnv("sdk03", "a2a-sdk 0.3.x")
FASTA2A_ENV = PythonEnv("fasta2a", "fasta2a")
PYA2A_ENV = PythonEnv("pya2a", "python-a2a", no_deps=True)
LANGGRAPH_ENV = PythonEnv("langgraph", "LangGraph API server", min_python=(3, 11))
#: The a2a-sdk 1.x server of ``sdk_server.py`` with its gRPC extra (grpcio).
SDK1_GRPC_ENV = PythonEnv(
    "sdk1grpc", "a2a-sdk 1.x with gRPC", script="sdk_server.py", args=("--mode", "grpc")
)
#: The a2a-sdk 0.3.x server of ``sdk03/server.py`` with its gRPC extra (grpcio).
SDK03_GRPC_ENV = PythonEnv(
    "sdk03grpc", "a2a-sdk 0.3.x with gRPC", script="sdk03/server.py", args=("--mode", "grpc")
)
PYTHON_ENVS = (SDK03_ENV, FASTA2A_ENV, PYA2A_ENV, LANGGRAPH_ENV, SDK1_GRPC_ENV, SDK03_GRPC_ENV)


class PythonTooOld(ProvisionError):
    """This Python is older than a peer's pins allow: that peer cannot run here."""


def _stamp(env: PythonEnv) -> str:
    digest = hashlib.sha256(env.requirements.read_bytes())
    digest.update(sys.version.encode())
    digest.update(b"no-deps" if env.no_deps else b"deps")
    return digest.hexdigest()


def peer_python(env: PythonEnv, timeout: float = PROVISION_TIMEOUT) -> Path:
    """The Python of ``env``, its environment built (bounded) unless already current.

    Made from this interpreter (with ``uv venv`` + ``uv pip`` when uv is on hand, else
    ``venv`` + pip); a stamp file (hash of the pins + Python version) decides whether an
    existing one is reused.
    """
    if sys.version_info < env.min_python:
        wanted = ".".join(map(str, env.min_python))
        raise PythonTooOld(f"the {env.title} environment needs Python >= {wanted}")
    python = env.venv / "bin" / "python"
    stamp_file = env.venv / ".a2a-anyio-stamp"
    stamp = _stamp(env)
    with _locked(LOCK_DIR / f"{env.name}.lock"):
        if python.exists() and stamp_file.exists() and stamp_file.read_text() == stamp:
            return python
        deadline = time.monotonic() + timeout
        shutil.rmtree(env.venv, ignore_errors=True)
        what = f"building the {env.title} environment in {env.venv}"
        uv = os.environ.get("UV") or shutil.which("uv")
        if uv:  # fast, and needs no ensurepip in the base interpreter
            create = [uv, "venv", "--quiet", "--python", sys.executable, str(env.venv)]
            install = [uv, "pip", "install", "--quiet", "--python", str(python)]
        else:
            create = [sys.executable, "-m", "venv", str(env.venv)]
            install = [
                str(python),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ]
        if env.no_deps:
            install.append("--no-deps")
        _run(create, REPO_ROOT, what, timeout)
        _run(
            [*install, "-r", str(env.requirements)],
            REPO_ROOT,
            what,
            max(deadline - time.monotonic(), 1.0),
        )
        stamp_file.write_text(stamp)
    return python


def node() -> str:
    """The ``node`` executable (the JS peers need Node.js >= 20 and npm)."""
    found = shutil.which("node")
    if found is None:
        raise ProvisionError("the JS peers need Node.js (>= 20) and npm on PATH")
    return found


@dataclass(frozen=True)
class NodeEnv:
    """A JS peer: ``tests/interop/<name>/server.mjs`` run by Node in ``<name>/``, whose
    ``node_modules`` ``npm ci`` installs from the exact pins of ``<name>/package-lock.json``."""

    name: str
    title: str

    @property
    def dir(self) -> Path:
        return INTEROP_DIR / self.name

    @property
    def server(self) -> Path:
        return self.dir / "server.mjs"

    def locked(self, package: str) -> str | None:
        """The version ``package-lock.json`` pins ``package`` to."""
        with contextlib.suppress(OSError, ValueError, KeyError):
            lock = json.loads((self.dir / "package-lock.json").read_text())
            return str(lock["packages"][f"node_modules/{package}"]["version"])
        return None


JS_ENV = NodeEnv("js", "the JS SDK")
MASTRA_ENV = NodeEnv("mastra", "Mastra")
NODE_ENVS = (JS_ENV, MASTRA_ENV)


def node_modules(env: NodeEnv, timeout: float = PROVISION_TIMEOUT) -> Path:
    """``env``'s directory with its ``node_modules`` installed from the lock file (bounded)."""
    node()
    npm = shutil.which("npm")
    if npm is None:
        raise ProvisionError("the JS peers need npm on PATH")
    marker = env.dir / "node_modules" / ".package-lock.json"
    lock = env.dir / "package-lock.json"
    with _locked(LOCK_DIR / f"{env.name}.lock"):
        if marker.exists() and marker.stat().st_mtime >= lock.stat().st_mtime:
            return env.dir
        _run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            env.dir,
            f"installing {env.title} into {env.dir / 'node_modules'}",
            timeout,
        )
    return env.dir


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


def peer_versions() -> dict[str, str]:
    """The versions of the SDKs behind the peers, as installed or pinned."""
    versions: dict[str, str] = {}
    with contextlib.suppress(Exception):
        from importlib.metadata import version

        versions["a2a-sdk (1.x)"] = version("a2a-sdk")
    pins = {
        "a2a-sdk (0.3.x)": (SDK03_ENV, "a2a-sdk"),
        "fasta2a": (FASTA2A_ENV, "fasta2a"),
        "python-a2a": (PYA2A_ENV, "python-a2a"),
        "langgraph-api": (LANGGRAPH_ENV, "langgraph-api"),
        "grpcio": (SDK1_GRPC_ENV, "grpcio"),
    }
    for name, (env, package) in pins.items():
        pinned = env.pinned(package)
        if pinned is not None:
            versions[name] = pinned
    locks = {
        "@a2a-js/sdk": (JS_ENV, "@a2a-js/sdk"),
        "@grpc/grpc-js": (JS_ENV, "@grpc/grpc-js"),
        "@mastra/core": (MASTRA_ENV, "@mastra/core"),
        "@mastra/server": (MASTRA_ENV, "@mastra/server"),
    }
    for name, (node_env, package) in locks.items():
        locked = node_env.locked(package)
        if locked is not None:
            versions[name] = locked
    return versions


class Results:
    """Outcome of each cell per backend, merged across runs, kept in ``.results.json``."""

    def __init__(self, path: Path = RESULTS_PATH) -> None:
        self.path = path
        self.data: dict[str, Any] = {"cells": {}}
        with contextlib.suppress(OSError, ValueError):
            loaded = json.loads(path.read_text())
            if isinstance(loaded, dict) and isinstance(loaded.get("cells"), dict):
                self.data = loaded
        self._recorded: dict[tuple[str, str], dict[str, str]] = {}

    def record(self, cell: Cell, backend: str, outcome: str, detail: str = "") -> None:
        run = {"outcome": outcome, "detail": detail[:500]}
        self.data["cells"].setdefault(cell.key, {})[backend] = run
        self._recorded[cell.key, backend] = run

    def outcome(self, key: str) -> dict[str, dict[str, str]]:
        found = self.data["cells"].get(key, {})
        return found if isinstance(found, dict) else {}

    def save(self) -> None:
        """Write what this run recorded over what the file holds now: the processes of one
        test run (pytest-xdist) each record their own cells, and save in turn."""
        if not self._recorded:
            return
        with _locked(LOCK_DIR / "results.lock"):
            data = Results(self.path).data
            for (key, backend), run in self._recorded.items():
                data["cells"].setdefault(key, {})[backend] = run
            data["updated"] = datetime.datetime.now(datetime.timezone.utc).strftime(
                "%Y-%m-%d %H:%M UTC"
            )
            data["versions"] = peer_versions()
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
            os.replace(tmp, self.path)
        self.data = data


# --------------------------------------------------------------------------------------------
# Rendering docs/interop.md
# --------------------------------------------------------------------------------------------

PASS, FAIL, NOT_SERVED, NOT_RUN = "✅", "❌", "—", "?"


def _symbol(results: Results, cell_key: str) -> tuple[str, list[tuple[str, str]]]:
    runs = results.outcome(cell_key)
    failures = [
        (backend, str(run.get("detail", "")))
        for backend, run in sorted(runs.items())
        if run.get("outcome") != "pass"
    ]
    if not runs:
        return NOT_RUN, []
    if failures:
        return FAIL, failures
    return PASS, []


def render(results: Results) -> str:
    lines = [
        "# Interoperability matrix",
        "",
        "<!-- Generated by `python tests/interop/matrix.py --render` from the results that",
        "     `tests/interop/test_matrix.py` records; do not edit by hand. -->",
        "",
        "`tests/interop/test_matrix.py` points the same `A2AClient` calls at real A2A servers",
        "started on 127.0.0.1 (official SDK servers, servers built with libraries nobody here",
        "wrote, and small servers of our own for the dialects no maintained SDK serves), one",
        "binding at a time (`A2AClient(url, bindings=(binding,))`), on both anyio backends",
        "(asyncio and trio). The client is never told the version except in the rows marked so.",
        "",
        f"{PASS} passes on asyncio and trio · {FAIL} fails (see below) · {NOT_SERVED} not served by"
        f" that peer · {NOT_RUN} not run yet",
        "",
    ]
    versions = results.data.get("versions") or {}
    if versions:
        lines.append(
            "Peers: " + ", ".join(f"{name} {ver}" for name, ver in sorted(versions.items())) + "."
        )
    lines += [
        "",
        "| Peer | Version | Binding | "
        + " | ".join(OPERATION_TITLES[op] for op in OPERATIONS)
        + " |",
        "| --- | --- | --- | " + " | ".join(":---:" for _ in OPERATIONS) + " |",
    ]
    failures: list[tuple[str, str, str]] = []
    for peer in PEERS:
        for binding in BINDINGS:
            served = peer.serves.get(binding)
            if served is None:
                continue
            row = []
            for op in OPERATIONS:
                if op not in served:
                    row.append(NOT_SERVED)
                    continue
                cell = Cell(peer, binding, op)
                symbol, failed = _symbol(results, cell.key)
                row.append(symbol)
                failures += [(cell.key, backend, detail) for backend, detail in failed]
            title = peer.title + (f" ({peer.note})" if peer.note else "")
            lines.append(
                f"| {title} | {peer.version} | {BINDING_TITLES[binding]} | "
                + " | ".join(row)
                + " |"
            )
    lines += [
        "",
        "What each operation does: **send** a task with a data part (echo + data artifacts), a",
        "message answered by a Message (dialect L, fasta2a, python-a2a: by a task, the reply its",
        "status message; Mastra, LangGraph: its artifact), input-required then a follow-up on",
        "the same task, a failing task; **stream** three artifact chunks folded into one",
        "(python-a2a: whole tasks; LangGraph: three agent messages in working status updates,",
        "then the answer);",
        "**get** a task and a missing one (TaskNotFound); **list** the tasks of a context;",
        "**cancel** a working task; **subscribe** to a working task and see it canceled;",
        "**push config** create/get (and list/delete where served); **extended card** with its",
        "extra skill.",
        "",
        "Not served: no pre-1.0 server here lists tasks (and dialect L has no extended card). The",
        "client asks v0.3 agents anyway, as the spec's draft after v0.3 has it (`tasks/list`,",
        "`GET /v1/tasks`): every one answers `tasks/list` with -32601 (`UnsupportedOperationError`);",
        "over HTTP+JSON the 0.3.x SDK answers 500 (its handler raises NotImplementedError:",
        "`A2AHTTPError`), the 1.x SDK's v0.3 layer VERSION_NOT_SUPPORTED and the JS SDK an empty",
        "page (both route `/v1/tasks` to their v1.0 listing, with `v1` as its tenant). Push",
        "config list/delete are not in dialect L; the 0.3.x SDK's HTTP+JSON adapter serves push",
        "config create/get only, the 1.x SDK's v0.3 HTTP+JSON routes have no delete.",
        "",
        "The gRPC rows: a2a-sdk 1.x's own gRPC server (grpcio, `a2a-sdk[grpc]`), serving the",
        "v1.0 service (`lf.a2a.v1.A2AService`) and the v0.3 one (`a2a.v1.A2AService`) on one",
        "port, the same scripted agent as the other a2a-sdk 1.x rows. Its card, served over",
        "HTTP, lists GRPC 1.0 and GRPC 0.3 at a bare `127.0.0.1:<port>` and nothing else: the",
        "client calls gRPC with its default bindings too, as the only binding offered (the",
        "sync facade's interop tests do).",
        "The v0.3 service has no `ListTasks`. The JS SDK's gRPC rows are alike: its",
        "`grpcService` (v1.0) and `legacyGrpcService` (v0.3) on `@grpc/grpc-js`, the JS",
        "rows' scripted agent, a card of gRPC interfaces only. a2a-sdk 0.3.x's gRPC server",
        "(`a2a-sdk[grpc]` 0.3.x) serves the v0.3 service alone, without push-config list or",
        "delete; its `GetAgentCard` answers the public card, and its card announces no extended",
        "card. Its `SendMessage` handler, once its call is cut, still waits for the agent's end;",
        "a blocking send to it goes as `SendStreamingMessage` (when the agent streams), whose",
        "handler ends with the call.",
        "",
        "fasta2a serves JSON-RPC only (its card: one v1.0 interface). It answers every send at",
        "once with the task it submitted, blocking or not: the client follows the task up (it",
        "re-attaches, as fasta2a streams). A message always starts a new task, in the message's",
        "context (the follow-up to input-required is one). It answers push configs with -32003",
        "and listing tasks with -32004; it has no extended card.",
        "",
        "python-a2a's card says v0.3 JSON-RPC at its URL, where its server takes no JSON-RPC:",
        "it routes `tasks/send`, `tasks/get`, `tasks/cancel` and `tasks/sendSubscribe` by path",
        "(`/a2a/tasks/...`), and the client speaks that. Its stream is two whole tasks (the one",
        "received and the finished one), no chunks; it answers at once, with a task, never a",
        "message; artifacts lose their names and a message's data parts do not reach the agent",
        "(it keeps one content per message). Not served there, and the client says so:",
        "re-attaching (its `tasks/resubscribe` reports a running task as completed half a second",
        "later), push configs, listing tasks, an extended card, `call()`.",
        "",
        "LangGraph's API server (`langgraph-api`, in-memory runtime, as `langgraph dev` runs it)",
        "serves each assistant at `/a2a/{assistant_id}`, its card below that; the graph here is",
        "plain Python nodes. JSON-RPC only, its card one v1.0 interface; it also takes the v0.3",
        "names of send, stream, get and cancel. Its objects mix the versions: v1.0 methods, enum",
        'states (`TASK_STATE_COMPLETED`) and roles, `{"task": …}` around a sent task, and v0.3\'s',
        '`kind` fields. A stream opens v1.0-shaped (`{"task": …}`, submitted) and goes on',
        'v0.3-shaped (`"kind": "status-update"` with `TASK_STATE_WORKING`), which the v1.0',
        "dialect reads with v0.3's decoders. A send waits for the run's end,",
        "blocking or not (the cells start a slow task by a stream instead). The reply is always",
        "a task, its one artifact `Assistant Response` (the last agent message; data parts",
        "become graph input, the answer is text); input-required comes without a status message,",
        'the prompt in an `Interrupt` artifact (`{"id": …, "value": "need more input"}`), and',
        "the follow-up resumes the same task; a failed task says `Error executing assistant:",
        "ValueError` (the exception's class, not its message). A task got by id has no",
        "artifacts (the reply is in its history) and, completed, the status message `Task",
        "completed successfully`. While working, a stream carries each agent message in a",
        "working status update, then the answer as one artifact, then completed; a canceled",
        "task's open stream ends `completed` with an empty artifact (get says canceled). Not",
        "served: re-attaching (`SubscribeToTask` answers -32601), push configs (none on its",
        "card), an extended card (`GetExtendedAgentCard` answers with the public card, which",
        "announces none).",
        "",
        "Mastra serves A2A per agent under its `/api` prefix: the card at",
        "`/api/.well-known/{agentId}/agent-card.json` (v0.3, one JSON-RPC interface,",
        "`/api/a2a/{agentId}`), nothing at `/.well-known/agent-card.json` nor under the agent's",
        "URL. Given the card's URL, as Mastra's documentation tells its users, the client speaks",
        "v0.3 and every served cell passes (given the agent's URL, there is no card to find).",
        "Every answer is a task, the text in an artifact",
        "`response.txt` (never a Message, never a status message). A message with a data part is",
        'refused with -32603 ("Data parts are not supported in core messages"); a failing run',
        "is answered with -32603 carrying the error's message and stack (`A2AServerError`), the",
        "task stored failed (`Handler failed: ...`; a stream ends with that failed status).",
        "Input-required is a tool that suspends the run; the follow-up resumes it, same task.",
        "Not served: `tasks/list` (-32601 in v0.3) and an extended card (-32007, the card says",
        "none). `A2A-Version: 1.0` turns its payloads to v1.0 but not its method names: it",
        "answers `SendMessage` with HTTP 400 and a body that is not JSON-RPC, so a client given",
        "`endpoint=.../api/a2a/{agentId}` (which starts at v1.0) fails with `A2AHTTPError` unless",
        'told `protocol="0.3"`. Its packages ask for Node.js >= 22.13; they run on 20.',
        "",
        "Peers: `sdk_server.py` (a2a-sdk 1.x; `--mode grpc` in a virtualenv with its gRPC",
        "extra), `sdk03/server.py` (a2a-sdk 0.3.x; `--mode grpc` likewise),",
        "`fasta2a/server.py` (fasta2a), `pya2a/server.py` (python-a2a) and",
        "`langgraph/server.py` (LangGraph's API server, Python 3.11 or newer), each Python peer",
        "in a virtualenv of its own built from exact pins, `js/server.mjs` (@a2a-js/sdk under",
        "Node; `--mode grpc` on @grpc/grpc-js), `mastra/server.mjs` (a Mastra agent, its model the `ai` package's mock, served by",
        "@mastra/server through @mastra/hono) and `legacy_servers.py` (ours), all in",
        "`tests/interop/`.",
    ]
    if failures:
        lines += ["", "## Failures", "", "| Cell | Backend | Error |", "| --- | --- | --- |"]
        backends: dict[tuple[str, str], list[str]] = {}
        for key, backend, detail in failures:  # one row for the backends that failed alike
            backends.setdefault((key, " ".join(detail.split())), []).append(backend)
        for (key, detail), failed_on in backends.items():
            text = detail.replace("|", "\\|")
            if len(text) > 200:
                text = text[:199] + "…"
            lines.append(f"| `{key}` | {', '.join(failed_on)} | {text} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--render", action="store_true", help="write docs/interop.md")
    parser.add_argument(
        "--prepare",
        action="store_true",
        help="build the Python peers' venvs and the JS peers' modules",
    )
    parser.add_argument("--results", type=Path, default=RESULTS_PATH)
    parser.add_argument("--output", type=Path, default=DOC_PATH)
    args = parser.parse_args(argv)
    if not (args.render or args.prepare):
        parser.error("say --prepare and/or --render")
    if args.prepare:
        for env in PYTHON_ENVS:
            try:
                print(f"{env.title} environment: {peer_python(env)}")
            except PythonTooOld as exc:  # its cells are skipped on this Python
                print(f"skipped: {exc}")
        for node_env in NODE_ENVS:
            print(f"{node_env.title}: {node_modules(node_env) / 'node_modules'}")
    if args.render:
        if not args.results.exists():
            parser.error(f"{args.results} does not exist: run pytest tests/interop/test_matrix.py")
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(render(Results(args.results)))
        print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
