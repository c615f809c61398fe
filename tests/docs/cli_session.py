"""The ``console`` blocks of docs/cli.md, run for real: what ``regen.py`` writes and
``test_cli_output.py`` compares.

A console block is a shell session: ``$ COMMAND`` lines, each followed by what it printed
(stdout, then stderr). The commands understood are ``a2a-anyio ...`` (its arguments expanded
by bash, so quoting, ``$'...'`` and ``$(...)`` work as in a shell; run in this process),
``SHELL-COMMAND | a2a-anyio ...`` (the command line in a process of its own, reading what the
shell command wrote), ``echo $?``, ``export NAME=value ...``, ``unset NAME ...`` and
``cat FILE``. A terminal block of ``a2a-anyio chat`` shows what was typed after each prompt:
the session types it there again.

The servers are the ones the page names, started afresh for each session on 127.0.0.1: the
a2a-sdk servers of ``tests/interop/sdk_server.py`` (strict v1.0, v0.3 compatibility, slow),
the 401 server of ``tests/cli/conftest.py``, a closed port, a hostile FakeAgent and one that
answers with files (behind a ``FileServer`` of its origin, ``tests/cli/conftest.py``). The page
shows them at fixed ports (``DOC_PORTS``); the session maps those to the real ones both
ways. A session's working directory holds the files the page uses (``agents.yaml``,
``bad.yaml``, ``pipe.yaml``, ``notes.txt``, ``broken-card.json``, ``local-card.json``).

Outputs hold values that change from run to run (ids, times, durations); ``normalize`` blanks
them, so two runs of an unchanged command compare equal. Ids a later command reuses (``task
get ID``) are carried over: each id of the page's output is mapped to the id this run printed
at the same place.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import selectors
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path

from anyio.from_thread import start_blocking_portal

from a2a_anyio.cli._chat import PROMPT
from a2a_anyio.testing import Emit, FakeAgent, SkillContext, artifact, status
from tests.cli._pty import run_in_pty
from tests.cli.conftest import FileServer, _AuthHandler

from .blocks import ROOT, Block

DOC = ROOT / "docs" / "cli.md"
DOC_PORTS = {"strict": 41000, "compat": 41001, "slow": 41002, "auth": 41003, "down": 41004}
DOC_PORTS["hostile"] = 41005
DOC_PORTS["files"] = 41006
SDK_SERVER = ROOT / "tests" / "interop" / "sdk_server.py"
START_TIMEOUT = 60.0
COLUMNS = "100"

UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
_VOLATILE = [
    (UUID, "<id>"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?"), "<time>"),
    (re.compile(r"\b\d+(\.\d+)?( ?(ms|s))\b"), "<duration>"),
    (re.compile(r"(Next cursor: |\"nextPageToken\": \")[A-Za-z0-9_=-]+"), r"\1<cursor>"),
    (re.compile(r"127\.0\.0\.1:(?!4100[0-6]\b)\d+"), "127.0.0.1:<port>"),  # the demo's agents
    (re.compile("[\u2800-\u28ff]"), "<spinner>"),  # a frame of a spinner
]

REGISTRY = """\
defaults: {timeout_seconds: 30, retries: 2}
agents:
  - name: strict
    url: http://127.0.0.1:41000
    tags: [sdk]
  - name: compat
    url: http://127.0.0.1:41001
    protocol: 0.3
    tags: [sdk]
  - name: guarded
    url: http://127.0.0.1:41003
    token_env: GUARDED_TOKEN
    headers: {X-Api-Key: "${GUARDED_KEY}"}
  - name: down
    url: http://127.0.0.1:41004
groups:
  reviewers: [strict, compat]
"""
BAD_REGISTRY = """\
agents:
  - name: a
    url: http://127.0.0.1:41000
    tokn_env: A_TOKEN
"""
NOTES = "Minutes of Monday's meeting: ship on Friday.\n"
BROKEN_CARD = """\
{
  "name": "Broken Agent",
  "description": "A card with mistakes",
  "version": "1.0.0",
  "supportedInterfaces": [
    {"url": "https://agent.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
    {"url": "agent.example.com/rpc", "protocolBinding": "GRCP", "protocolVersion": "1"}
  ],
  "capabilities": {"streaming": "yes"},
  "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
  "securityRequirements": [{"schemes": {"oauth": {}}}],
  "defaultInputModes": ["text"],
  "defaultOutputModes": ["text/plain"],
  "skills": [
    {"id": "echo", "name": "Echo", "description": "Echoes", "tags": []},
    {"id": "echo", "name": "Echo again", "description": "Echoes twice", "tags": []}
  ]
}
"""
LOCAL_CARD = """\
{
  "name": "Local Agent",
  "description": "A card as a first test server writes it",
  "version": "0.1.0",
  "supportedInterfaces": [
    {"url": "http://0.0.0.0:8000/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
  ],
  "capabilities": {},
  "defaultInputModes": ["text/plain"],
  "defaultOutputModes": ["text/plain"],
  "documentationUrl": "",
  "skills": [{"id": "echo", "name": "Echo", "description": "Echoes", "tags": []}]
}
"""
#: The AI Catalog the files agent's origin serves at /.well-known/ai-catalog.json.
CATALOG = """\
{
  "specVersion": "1.0",
  "host": {"displayName": "Example agents"},
  "entries": [
    {
      "identifier": "urn:air:example.com:a2a:strict",
      "type": "application/a2a-agent-card+json",
      "url": "http://127.0.0.1:41000",
      "tags": ["sdk"]
    },
    {
      "identifier": "urn:air:example.com:a2a:reports",
      "displayName": "Reports",
      "type": "application/a2a-agent-card+json",
      "url": "http://127.0.0.1:41006/.well-known/agent-card.json",
      "description": "Writes reports, with files"
    },
    {
      "identifier": "urn:air:example.com:a2a:local",
      "type": "application/a2a-agent-card+json",
      "url": "file:///etc/passwd"
    },
    {
      "identifier": "urn:air:example.com:mcp:weather",
      "type": "application/mcp-server-card+json",
      "url": "https://example.com/mcp"
    }
  ]
}
"""
REPORT_PDF = b"%PDF-1.7 (the quarterly report)\n"
FIGURES_CSV = b"quarter,revenue\nQ1,120\nQ2,135\n"


def normalize(text: str) -> str:
    """``text`` with what changes from run to run blanked and runs of blanks made one."""
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    lines = [re.sub(r"[ \t]+", " ", line).strip() for line in text.splitlines()]
    return "\n".join(lines).strip("\n")


# -- servers -----------------------------------------------------------------------------------


def _hostile_agent() -> FakeAgent:
    """An agent whose card and answers try to drive the terminal."""
    agent = FakeAgent(
        name="Helpful\x1b]0;owned\x07 [link=https://evil.example]Agent[/link]",
        description="Summarises\rState: completed",
    )

    @agent.skill("s", name="s", description="s")
    async def report(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("working")
        text = "Done.\x1b]8;;https://evil.example\x1b\\ Click here\x1b]8;;\x1b\\ \x1b[6n"
        yield artifact(text, name="report")

    return agent


def _files_agent() -> FakeAgent:
    """An agent that answers with a report: a PDF inline, its figures by URL on its own
    origin, and, asked for the appendix, a URL that is not there."""
    agent = FakeAgent(name="Report Agent", description="Writes reports, with files")

    @agent.skill("report", name="Report", description="A report as a PDF, its figures as CSV")
    async def report(ctx: SkillContext) -> AsyncIterator[Emit]:
        base = f"http://{ctx.headers['host']}/files"
        yield status("working", "writing")
        yield artifact(
            file=REPORT_PDF, media_type="application/pdf", filename="report.pdf", name="report"
        )
        yield artifact(url=f"{base}/figures.csv", media_type="text/csv", name="figures")
        if "appendix" in ctx.text:
            yield artifact(url=f"{base}/appendix.pdf", media_type="application/pdf")

    return agent


@contextlib.asynccontextmanager
async def _serve_files_agent() -> AsyncIterator[FileServer]:
    """The files agent served behind a FileServer of its origin."""
    agent = _files_agent()
    server = FileServer(agent, files={"/files/figures.csv": (200, FIGURES_CSV, {})})
    async with agent, server.serve():
        yield server


def _start_sdk_servers(specs: dict[str, list[str]]) -> dict[str, tuple[subprocess.Popen[str], str]]:
    """Start the a2a-sdk servers at once; their processes and base URLs once all are ready."""
    procs = {
        name: subprocess.Popen(
            [sys.executable, str(SDK_SERVER), *args, "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        for name, args in specs.items()
    }
    out: dict[str, tuple[subprocess.Popen[str], str]] = {}
    deadline = time.monotonic() + START_TIMEOUT
    try:
        for name, proc in procs.items():
            assert proc.stdout is not None
            sel = selectors.DefaultSelector()
            sel.register(proc.stdout, selectors.EVENT_READ)
            while name not in out:
                if time.monotonic() > deadline or not sel.select(deadline - time.monotonic()):
                    raise RuntimeError(f"the {name} server did not start")
                line = proc.stdout.readline()
                if line.startswith("READY "):
                    out[name] = (proc, line.split(" ", 1)[1].strip())
                elif not line and proc.poll() is not None:
                    raise RuntimeError(f"the {name} server exited")
    except BaseException:
        for proc in procs.values():
            _stop(proc)
        raise
    return out


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    if proc.stdout is not None:
        proc.stdout.close()


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


# -- the session -------------------------------------------------------------------------------


@dataclass
class Result:
    """What a block's commands printed, in the page's form (its ports)."""

    block: Block
    text: str  # the block's new text: commands and outputs


@dataclass
class _Background:
    block: Block
    command: str
    proc: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)


class Session:
    """Local servers, a working directory and an environment, for one run of the page."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self._stack = contextlib.ExitStack()
        try:
            self._start()
        except BaseException:
            self._stack.close()
            raise
        self.code = 0
        self.ids: dict[str, str] = {}  # the page's id -> this run's
        self.env = self._environment()
        self._write_files()

    def _start(self) -> None:
        servers = _start_sdk_servers(
            {
                "strict": ["--mode", "strict"],
                "compat": ["--mode", "compat"],
                "slow": ["--mode", "strict", "--delay", "30"],
            }
        )
        urls: dict[str, str] = {}
        for name, (proc, url) in servers.items():
            self._stack.callback(_stop, proc)
            urls[name] = url

        auth = ThreadingHTTPServer(("127.0.0.1", 0), _AuthHandler)
        thread = threading.Thread(target=auth.serve_forever, daemon=True)
        thread.start()
        self._stack.callback(auth.server_close)
        self._stack.callback(auth.shutdown)
        urls["auth"] = f"http://127.0.0.1:{auth.server_port}"
        urls["down"] = f"http://127.0.0.1:{_closed_port()}"
        portal = self._stack.enter_context(start_blocking_portal("asyncio"))
        hostile = self._stack.enter_context(
            portal.wrap_async_context_manager(_hostile_agent().serve())
        )
        urls["hostile"] = hostile.url
        files = self._stack.enter_context(portal.wrap_async_context_manager(_serve_files_agent()))
        urls["files"] = files.url
        # the page's port -> this run's, and back
        self.ports = {DOC_PORTS[n]: int(u.rsplit(":", 1)[1]) for n, u in urls.items()}
        self._files = files

    def close(self) -> None:
        self._stack.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _environment(self) -> dict[str, str]:
        skip = ("A2A_ANYIO_", "A2ACLI_", "FORCE_COLOR", "NO_COLOR", "GUARDED_")
        env = {k: v for k, v in os.environ.items() if not k.startswith(skip)}
        env.update(
            HOME=str(self.workdir),
            XDG_CONFIG_HOME=str(self.workdir / "config"),
            COLUMNS=COLUMNS,
            PYTHONUNBUFFERED="1",
        )
        return env

    def _write_files(self) -> None:
        (self.workdir / "agents.yaml").write_text(self.to_run(REGISTRY))
        (self.workdir / "bad.yaml").write_text(self.to_run(BAD_REGISTRY))
        (self.workdir / "notes.txt").write_text(NOTES)
        (self.workdir / "broken-card.json").write_text(BROKEN_CARD)
        (self.workdir / "local-card.json").write_text(LOCAL_CARD)
        catalog = self.to_run(CATALOG)
        (self.workdir / "ai-catalog.json").write_text(catalog)
        ctype = {"Content-Type": "application/ai-catalog+json"}
        self._files.files["/.well-known/ai-catalog.json"] = (200, catalog.encode(), ctype)
        os.mkfifo(self.workdir / "pipe.yaml")

    # -- the page's form and this run's ---------------------------------------------------

    def to_run(self, text: str) -> str:
        for doc, real in self.ports.items():
            text = text.replace(f"127.0.0.1:{doc}", f"127.0.0.1:{real}")
        for doc_id, real_id in self.ids.items():
            text = text.replace(doc_id, real_id)
        return text

    def to_doc(self, text: str, *, fresh: bool) -> str:
        for workdir in {str(self.workdir.resolve()), str(self.workdir)}:
            text = text.replace(workdir + os.sep, "")  # files of the working directory
        for doc, real in self.ports.items():
            text = text.replace(f"127.0.0.1:{real}", f"127.0.0.1:{doc}")
        if not fresh:
            for doc_id, real_id in self.ids.items():
                text = text.replace(real_id, doc_id)
        return text

    def learn_ids(self, shown: str, printed: str) -> None:
        """Map the ids of the page's output to this run's, place by place."""
        old, new = UUID.findall(shown), UUID.findall(printed)
        if len(old) == len(new):
            for a, b in zip(old, new, strict=True):
                self.ids.setdefault(a, b)

    # -- commands ---------------------------------------------------------------------------

    def command(self, line: str) -> str:
        """Run one command line (the page's form); what it printed (this run's form)."""
        line = self.to_run(line)
        words = shlex.split(line) if not line.startswith("a2a-anyio") else []
        if line.strip() == "echo $?":
            return f"{self.code}\n"
        if words[:1] == ["export"]:
            for word in words[1:]:
                name, _, value = word.partition("=")
                self.env[name] = value
            return ""
        if words[:1] == ["unset"]:
            for name in words[1:]:
                self.env.pop(name, None)
            return ""
        if words[:1] == ["cat"] and len(words) == 2:
            self.code = 0
            return (self.workdir / words[1]).read_text()
        producer, piped, rest = line.partition(" | a2a-anyio ")
        if piped:
            self.code, out, err = self._process(self._expand(rest), self._shell(producer))
            return out + err
        if not line.startswith("a2a-anyio "):
            raise ValueError(f"a command the docs' session cannot run: {line!r}")
        argv = self._expand(line[len("a2a-anyio ") :])
        self.code, out, err = self._main(argv)
        return out + err

    def _shell(self, command: str) -> bytes:
        """What a shell command writes to its standard output."""
        proc = subprocess.run(
            ["bash", "-c", command], capture_output=True, env=self.env, cwd=self.workdir, check=True
        )
        return proc.stdout

    def _process(self, argv: list[str], stdin: bytes) -> tuple[int, str, str]:
        """The command line in a process of its own, reading ``stdin``."""
        proc = subprocess.run(
            [sys.executable, "-m", "a2a_anyio.cli", *argv],
            input=stdin,
            capture_output=True,
            env=self.env,
            cwd=self.workdir,
            timeout=60,
        )
        return proc.returncode, proc.stdout.decode(), proc.stderr.decode()

    def _expand(self, rest: str) -> list[str]:
        """The arguments of a command line, as bash would pass them."""
        proc = subprocess.run(
            ["bash", "-c", f"printf '%s\\0' {rest}"],
            capture_output=True,
            env=self.env,
            cwd=self.workdir,
            check=True,
        )
        return proc.stdout.decode().split("\0")[:-1]

    def _main(self, argv: list[str]) -> tuple[int, str, str]:
        from a2a_anyio.cli import main

        out, err = io.StringIO(), io.StringIO()
        with (
            _environment(self.env),
            _chdir(self.workdir),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            try:
                code = main(argv)
            except SystemExit as exc:  # --help and --version exit as argparse does
                code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        return code, out.getvalue(), err.getvalue()

    def background(self, block: Block, line: str) -> _Background:
        """Start a command that runs while the next block's do (a shell of its own)."""
        argv = self._expand(self.to_run(line)[len("a2a-anyio ") :])
        proc = subprocess.Popen(
            [sys.executable, "-m", "a2a_anyio.cli", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=self.env,
            cwd=self.workdir,
        )
        started = _Background(block, line, proc)
        assert proc.stdout is not None
        first = proc.stdout.readline()  # it is attached once it printed something
        started.lines.append(first)
        return started

    def terminal(self, line: str, typed: list[str]) -> str:
        """Run a command in a pseudo-terminal: the last frame of its live view, then the screen
        once it exited (colours and cursor moves applied, not shown). With ``typed`` lines,
        each typed at a prompt of the chat, only the screen once it exited."""
        argv = self._expand(self.to_run(line)[len("a2a-anyio ") :])
        steps = [(PROMPT, f"{self.to_run(text)}\n") for text in typed]
        self.code, raw = run_in_pty(
            *argv, env=self.env, timeout=60, columns=int(COLUMNS), cwd=self.workdir, steps=steps
        )
        return screens(raw, frame=not typed)

    def finish(self, job: _Background) -> str:
        assert job.proc.stdout is not None
        # Read through the same buffered reader as the first line (communicate() with a
        # timeout reads the pipe directly and would lose what that reader holds).
        killer = threading.Timer(60, job.proc.kill)
        killer.start()
        try:
            rest = job.proc.stdout.read()
            self.code = job.proc.wait()
        finally:
            killer.cancel()
            job.proc.stdout.close()
        return "".join(job.lines) + rest


_TERMINAL = re.compile(
    r"\x1b\[\?25h|\x1b\[(\d*)A|\x1b\[2K|\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|[\r\n]|[^\x1b\r\n]+"
)


def screens(raw: str, *, frame: bool = True) -> str:
    """What a terminal showed: the screen when the live view ended (it shows the cursor again;
    unless not ``frame``), then the screen at the end, each without trailing blank lines."""
    lines = [""]
    row = col = 0
    last: list[str] = []
    for match in _TERMINAL.finditer(raw):
        token = match[0]
        if token == "\x1b[?25h":
            last = list(lines)
        elif match[1] is not None:
            row = max(0, row - int(match[1] or 1))
        elif token == "\x1b[2K":
            lines[row] = ""
        elif token.startswith("\x1b"):
            continue
        elif token == "\r":
            col = 0
        elif token == "\n":
            row += 1
            if row == len(lines):
                lines.append("")
        else:
            line = lines[row].ljust(col)
            lines[row] = line[:col] + token + line[col + len(token) :]
            col += len(token)

    def shown(screen: list[str]) -> str:
        text = "\n".join(line.rstrip() for line in screen).strip("\n")
        return text + "\n" if text else ""

    return (shown(last) if frame else "") + shown(lines)


@contextlib.contextmanager
def _chdir(path: Path) -> Iterator[None]:
    saved = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(saved)


@contextlib.contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


# -- a page ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """A ``$ command`` line of a block and the output the page shows for it."""

    command: str
    shown: str


def steps(block: Block) -> list[Step]:
    out: list[Step] = []
    for line in block.code.splitlines(keepends=True):
        if line.startswith("$ "):
            out.append(Step(line[2:].rstrip("\n"), ""))
        elif out:
            out[-1] = Step(out[-1].command, out[-1].shown + line)
        elif line.strip():
            raise ValueError(f"{block.where}: output before any command")
    return out


def run_page(session: Session, blocks: list[Block], *, fresh: bool = False) -> list[Result]:
    """Run every console block of the page in order; each one's text as this run printed it
    (in the page's form: its ports, and its ids unless ``fresh``)."""
    results: list[Result] = []
    pending: _Background | None = None
    for block in blocks:
        if block.lang == "text" and "terminal" in block.flags:
            (step,) = steps(block)
            typed = [
                line[len(PROMPT) :] for line in step.shown.splitlines() if line.startswith(PROMPT)
            ]
            printed = session.terminal(step.command, typed)
            results.append(Result(block, _text(session, [(step, printed)], fresh=fresh)))
            continue
        if block.lang != "console":
            continue
        if "background" in block.flags:
            pending = session.background(block, steps(block)[0].command)
            continue
        results.append(_run_block(session, block, fresh=fresh))
        if pending is not None:  # the next block ran: the background one ends now
            first, *rest = steps(pending.block)
            done = [(first, session.finish(pending))]
            done += [(step, session.command(step.command)) for step in rest]
            results.insert(
                len(results) - 1, Result(pending.block, _text(session, done, fresh=fresh))
            )
            pending = None
    assert pending is None, "a background block must be followed by another console block"
    return results


def _run_block(session: Session, block: Block, *, fresh: bool) -> Result:
    done = []
    for step in steps(block):
        printed = session.command(step.command)
        session.learn_ids(step.shown, printed)
        done.append((step, printed))
    return Result(block, _text(session, done, fresh=fresh))


def _text(session: Session, done: list[tuple[Step, str]], *, fresh: bool) -> str:
    lines = []
    for step, printed in done:
        command = session.to_doc(session.to_run(step.command), fresh=fresh)
        lines.append(f"$ {command}\n")
        lines.append(session.to_doc(printed, fresh=fresh))
    return "".join(lines)
