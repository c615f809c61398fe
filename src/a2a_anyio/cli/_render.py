"""Output: protocol JSON, plain ``Label: value`` text, and rich text on a terminal."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import IO, Any

from rich.console import Console
from rich.highlighter import JSONHighlighter
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from a2a_anyio._dialects.v1 import encode_stream_response
from a2a_anyio._model import (
    AgentCard,
    Artifact,
    DataPart,
    FilePart,
    JSONDict,
    Message,
    Part,
    PushNotificationConfig,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskPage,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_anyio.cli._errors import OutputClosed
from a2a_anyio.cli._safe import clean, safe_text

STATE_STYLES = {
    TaskState.SUBMITTED: "blue",
    TaskState.WORKING: "cyan",
    TaskState.INPUT_REQUIRED: "yellow",
    TaskState.AUTH_REQUIRED: "yellow",
    TaskState.COMPLETED: "green",
    TaskState.CANCELED: "magenta",
    TaskState.FAILED: "red",
    TaskState.REJECTED: "red",
    TaskState.UNKNOWN: "dim",
}

# -- the wire form of results (json output) ------------------------------------------------

WireObject = Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent | TaskPage


def wire(obj: WireObject) -> JSONDict:
    """The object as the agent sent it (its ``raw`` dict), else as the codec writes it in
    v1.0 (``to_dict``): a task folded from a stream's events is no one object the agent sent."""
    raw = obj.raw
    return raw if raw is not None else obj.to_dict("1.0")


def response(event: StreamEvent) -> JSONDict:
    """A SendMessageResponse or StreamResponse (one of task, message, statusUpdate,
    artifactUpdate) holding ``wire(event)``."""
    return encode_stream_response(event, wire)


def push_config_wire(config: PushNotificationConfig) -> JSONDict:
    """A push config in v1.0 without its token and credentials, which are never printed."""
    return replace(config, token=None, auth_credentials=None).to_dict("1.0")


# -- plain words for objects ----------------------------------------------------------------


def state_name(status: TaskStatus) -> str:
    """The state in words (an unknown wire value as the agent wrote it)."""
    if status.state is TaskState.UNKNOWN and status.wire_state:
        return status.wire_state
    return status.state.value


def part_text(part: Part) -> str:
    """A part as readable text: text as is, data as JSON, a file by name, type and size."""
    if isinstance(part, TextPart):
        return part.text
    if isinstance(part, DataPart):
        return json.dumps(part.data, indent=2, ensure_ascii=False)
    assert isinstance(part, FilePart)
    what = part.name or part.url or "file"
    details = [part.media_type or "unknown type"]
    if part.data is not None:
        details.append(f"{len(part.data)} bytes")
    elif part.url and part.name:
        details.append(part.url)
    return f"[file {what} ({', '.join(details)})]"


def parts_text(parts: Sequence[Part]) -> str:
    """Every part as text: adjacent text parts joined as they are, the others on own lines."""
    chunks: list[tuple[str, bool]] = []
    for part in parts:
        text, is_text = part_text(part), isinstance(part, TextPart)
        if is_text and chunks and chunks[-1][1]:
            chunks[-1] = (chunks[-1][0] + text, True)
        else:
            chunks.append((text, is_text))
    return "\n".join(c for c, _ in chunks)


def one_line(text: str, width: int = 60) -> str:
    """``text`` on one line, cut to ``width`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


# -- the printer ---------------------------------------------------------------------------


def output_closed(stream: IO[str]) -> OutputClosed:
    """The error that ends the command once ``stream``'s reader has gone; what is still
    buffered for ``stream`` (written at exit) goes to the null device instead (the way
    Python's documentation of SIGPIPE describes)."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError):  # a stream that is no file (a test's StringIO)
        return OutputClosed()
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)
    return OutputClosed()


class _Console(Console):
    """A rich console that ends the command quietly when its reader has gone."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise output_closed(self.file)


class Printer:
    """Writes data to stdout and diagnostics to stderr, every text through ``clean``.

    ``fmt`` is ``text`` or ``json``. Text goes through rich, with colours and tables, when
    stdout is a terminal; otherwise it is plain ``Label: value`` lines with no control
    sequences, and tables are aligned columns. Rich is only ever given ``Text`` objects, so
    nothing an agent writes is read as markup.
    """

    def __init__(
        self, fmt: str = "text", *, stdout: IO[str] | None = None, stderr: IO[str] | None = None
    ) -> None:
        self.fmt = fmt
        self.out = stdout or sys.stdout
        self.tty = self.out.isatty()
        self.console = _Console(file=self.out, highlight=False, soft_wrap=True)
        self.err = _Console(file=stderr or sys.stderr, highlight=False, soft_wrap=True)

    @property
    def json_mode(self) -> bool:
        return self.fmt == "json"

    @property
    def rich(self) -> bool:
        """True when text output is drawn with rich (stdout is a terminal)."""
        return self.tty and not self.json_mode

    def _write(self, text: str) -> None:
        try:
            self.out.write(text + "\n")
            self.out.flush()
        except BrokenPipeError:
            raise output_closed(self.out) from None

    # data

    def json(self, doc: Any) -> None:
        """One JSON document."""
        self._write(clean(json.dumps(doc, indent=2, ensure_ascii=False), multiline=True))

    def jsonl(self, doc: Any) -> None:
        """One JSON Lines record, flushed at once."""
        self._write(clean(json.dumps(doc, ensure_ascii=False, separators=(",", ":"))))

    def json_view(self, doc: Any) -> None:
        """A JSON value for a reader: highlighted on a terminal, else as ``json``."""
        if not self.rich:
            self.json(doc)
            return
        text = json.dumps(doc, indent=2, ensure_ascii=False)
        self.console.print(JSONHighlighter()(safe_text(text, multiline=True)))

    def line(self, text: str | Text = "") -> None:
        if self.rich:
            self.console.print(safe_text(text))
        else:
            self._write(clean(str(text)))

    def paragraph(self, body: str) -> None:
        """Content on lines of its own, without a label (its newlines kept)."""
        if self.rich:
            self.console.print(safe_text(body, multiline=True))
        else:
            self._write(clean(body, multiline=True))

    def field(self, label: str, value: Any, style: str | None = None) -> None:
        value = clean("" if value is None else str(value))
        if self.rich:
            self.console.print(Text.assemble((f"{label}: ", "bold"), (value, style or "")))
        else:
            self._write(f"{label}: {value}")

    def block(self, label: str, body: str, title: str | None = None) -> None:
        """Content that does not fit on a line: ``Label: title``, the content, a blank line."""
        heading = f"{label}: {clean(title)}" if title else label
        if self.rich:
            self.console.print(
                Panel(
                    safe_text(body, multiline=True),
                    title=Text(heading),
                    title_align="left",
                    expand=False,
                )
            )
        else:
            self._write(heading if title else f"{label}:")
            self._write(clean(body, multiline=True))
            self._write("")

    def table(
        self, columns: Sequence[str], rows: Sequence[Sequence[str | Text]], title: str | None = None
    ) -> None:
        if self.rich:
            table = Table(
                title=Text(title) if title else None, title_justify="left", header_style="bold"
            )
            for col in columns:
                table.add_column(Text(col), overflow="fold")
            for row in rows:
                table.add_row(*(safe_text(cell) for cell in row))
            self.console.print(table)
            return
        if title:
            self._write(f"{title}:")
        cells = [[c.upper() for c in columns]] + [[clean(str(c)) for c in row] for row in rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
        for r in cells:
            self._write("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())

    def state(self, status: TaskStatus) -> Text:
        return Text(state_name(status), style=STATE_STYLES.get(status.state, ""))

    # diagnostics

    def _diagnostic(self, *parts: tuple[str, str], multiline: bool = False) -> None:
        self.err.print(Text.assemble(*((clean(t, multiline=multiline), s) for t, s in parts)))

    def note(self, message: str) -> None:
        self._diagnostic((message, "dim"))

    def warn(self, message: str) -> None:
        self._diagnostic(("warning: ", "yellow bold"), (message, ""))

    def error(self, message: str, hint: str | None = None) -> None:
        self._diagnostic(("error: ", "red bold"), (message, ""))
        if hint:
            self._diagnostic(("hint: ", "bold"), (hint, ""))

    def debug(self, message: str, *, multiline: bool = False) -> None:
        """A ``--debug`` line (``multiline``: a traceback, which keeps its lines)."""
        self._diagnostic((message, "dim"), multiline=multiline)


# -- objects as text -----------------------------------------------------------------------


def print_result(p: Printer, result: Task | Message, *, resume: str | None = None) -> None:
    if isinstance(result, Task):
        print_task(p, result, resume=resume)
    else:
        print_message(p, result)


def print_message(p: Printer, msg: Message) -> None:
    p.field("Message ID", msg.message_id)
    if msg.context_id:
        p.field("Context ID", msg.context_id)
    if msg.task_id:
        p.field("Task ID", msg.task_id)
    p.field("Role", msg.role.value)
    p.block("Message", parts_text(msg.parts))


def print_task(p: Printer, task: Task, *, resume: str | None = None, history: bool = False) -> None:
    p.field("Task ID", task.id)
    p.field("Context ID", task.context_id or "")
    p.field("State", state_name(task.status), STATE_STYLES.get(task.state))
    if task.status.message is not None:
        p.field("Status message", one_line(parts_text(task.status.message.parts), 200))
    if task.status.timestamp:
        p.field("Updated", task.status.timestamp)
    for artifact in task.artifacts:
        print_artifact(p, artifact)
    if history and task.history:
        lines = [f"{m.role.value}: {one_line(parts_text(m.parts), 200)}" for m in task.history]
        p.block("History", "\n".join(lines))
    if resume and task.state.is_interrupted:
        p.field("Resume", resume.replace("{task_id}", task.id))


def print_artifact(p: Printer, artifact: Artifact) -> None:
    p.block("Artifact", parts_text(artifact.parts), artifact.name or artifact.artifact_id)


def print_event(p: Printer, event: StreamEvent) -> None:
    """One event of a stream in the plain form: ``Event: kind``, its fields, a blank line."""
    if isinstance(event, Task):
        p.field("Event", "task")
        p.field("Task ID", event.id)
        p.field("Context ID", event.context_id or "")
        p.field("State", state_name(event.status))
    elif isinstance(event, Message):
        p.field("Event", "message")
        print_message(p, event)
        return
    elif isinstance(event, TaskStatusUpdateEvent):
        p.field("Event", "status-update")
        p.field("State", state_name(event.status))
        if event.status.message is not None:
            p.field("Status message", one_line(parts_text(event.status.message.parts), 200))
    else:
        p.field("Event", "artifact-update")
        how = " (appended)" if event.append else ""
        name = (event.artifact.name or event.artifact.artifact_id) + how
        p.block("Artifact", parts_text(event.artifact.parts), name)
        return
    p.line()


def print_card(p: Printer, card: AgentCard) -> None:
    p.field("Name", card.name)
    if card.description:
        p.field("Description", card.description)
    if card.version:
        p.field("Version", card.version)
    if card.provider is not None:
        url = f" ({card.provider.url})" if card.provider.url else ""
        p.field("Provider", card.provider.organization + url)
    if card.documentation_url:
        p.field("Documentation", card.documentation_url)
    caps = card.capabilities
    yes = {True: "yes", False: "no"}
    p.field("Streaming", yes[caps.streaming])
    p.field("Push notifications", yes[caps.push_notifications])
    p.field("Extended card", yes[caps.extended_agent_card])
    for ext in caps.extensions:
        p.field("Extension", ext.uri + (" (required)" if ext.required else ""))
    for iface in card.interfaces:
        version = f" {iface.protocol_version}" if iface.protocol_version else ""
        p.field("Interface", f"{iface.binding}{version} {iface.url}")
    for name, scheme in card.security_schemes.items():
        detail = " ".join(
            x for x in (scheme.scheme, scheme.bearer_format, scheme.location, scheme.name) if x
        )
        p.field("Security", f"{name}: {scheme.type}" + (f" {detail}" if detail else ""))
    if card.default_input_modes:
        p.field("Input modes", ", ".join(card.default_input_modes))
    if card.default_output_modes:
        p.field("Output modes", ", ".join(card.default_output_modes))
    if card.skills:
        rows = [
            [s.id, s.name, one_line(s.description or "", 70), ", ".join(s.tags)]
            for s in card.skills
        ]
        p.table(["Skill", "Name", "Description", "Tags"], rows, title="Skills")


def print_push_config(p: Printer, config: PushNotificationConfig) -> None:
    p.field("Task ID", config.task_id or "")
    p.field("Config ID", config.id or "")
    p.field("URL", config.url)
    if config.token:
        p.field("Token", "(set)")
    if config.auth_scheme:
        p.field("Auth scheme", config.auth_scheme)


def task_rows(p: Printer, tasks: Sequence[Task]) -> list[list[str | Text]]:
    rows: list[list[str | Text]] = []
    for t in tasks:
        state: str | Text = p.state(t.status) if p.rich else state_name(t.status)
        latest = t.text or (parts_text(t.status.message.parts) if t.status.message else "")
        rows.append([t.id, t.context_id or "", state, one_line(latest, 50)])
    return rows
