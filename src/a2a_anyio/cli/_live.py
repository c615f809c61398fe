"""Live views on a terminal: one streaming task, or one line per agent of a fan-out.

Every text they draw goes through ``clean`` (``_safe.py``), as the printer's does."""

from __future__ import annotations

import time
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from a2a_anyio._errors import A2ATimeoutError
from a2a_anyio._fanout import CUT_AT_DEADLINE
from a2a_anyio._model import (
    Message,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_anyio.cli._errors import Failure
from a2a_anyio.cli._render import STATE_STYLES, Printer, one_line, parts_text, state_name
from a2a_anyio.cli._safe import clean, safe_text

_ARTIFACT_LINES = 8


class AgentRow:
    """What one agent is doing: state, latest message, artifacts so far, time, outcome."""

    def __init__(self, name: str, url: str = "") -> None:
        self.name = name
        self.url = url
        self.state = "connecting"
        self.style = "dim"
        self.latest = ""
        self.task_id: str | None = None
        self.context_id: str | None = None
        self.artifacts: dict[str, tuple[str, str]] = {}  # id -> (name, text)
        self.spinner = Spinner("dots")
        self.result: Task | Message | None = None
        self.failure: Failure | None = None
        self.error: Exception | None = None
        self._start = time.perf_counter()
        self._end: float | None = None

    @property
    def elapsed(self) -> float:
        return (self._end or time.perf_counter()) - self._start

    @property
    def done(self) -> bool:
        return self._end is not None

    def _status(self, status: TaskStatus) -> None:
        self.state = state_name(status)
        self.style = STATE_STYLES.get(status.state, "")
        if status.message is not None:
            self.latest = parts_text(status.message.parts)

    def apply(self, event: StreamEvent) -> None:
        """Fold one event in."""
        if isinstance(event, Task):
            self.task_id, self.context_id = event.id, event.context_id
            self._status(event.status)
            for artifact in event.artifacts:
                text = parts_text(artifact.parts)
                self.artifacts[artifact.artifact_id] = (artifact.name or artifact.artifact_id, text)
                self.latest = self.latest or text
        elif isinstance(event, Message):
            self.state, self.style = "message", "green"
            self.latest = parts_text(event.parts)
        elif isinstance(event, TaskStatusUpdateEvent):
            self.task_id = self.task_id or event.task_id
            self._status(event.status)
        elif isinstance(event, TaskArtifactUpdateEvent):
            art = event.artifact
            name, old = self.artifacts.get(art.artifact_id, (art.name or art.artifact_id, ""))
            text = (old if event.append else "") + parts_text(art.parts)
            self.artifacts[art.artifact_id] = (art.name or name, text)
            self.latest = text

    def finish(self, result: Task | Message) -> None:
        self.result = result
        self.apply(result)
        if isinstance(result, Task) and result.text:
            self.latest = result.text
        self._end = time.perf_counter()

    def fail(self, error: Exception, failure: Failure) -> None:
        self.error, self.failure = error, failure
        self.state, self.style = "error", "red bold"
        self.latest = failure.message
        if isinstance(error, A2ATimeoutError) and error.timeout == "deadline":
            self.state, self.style = CUT_AT_DEADLINE, "yellow"
            written = "".join(text for _, text in self.artifacts.values())
            if written:
                self.latest = f"had written {written!r}"
        self._end = time.perf_counter()

    def state_text(self) -> Text:
        return safe_text(self.state, self.style)


class TaskView:
    """The live view of one streaming task: a status line and the artifacts as they grow."""

    def __init__(self, row: AgentRow) -> None:
        self.row = row

    def __rich__(self) -> RenderableType:
        row = self.row
        line = Text.assemble(
            (f"{clean(row.name)} ", "bold"),
            row.state_text(),
            (f"  {clean(one_line(row.latest, 70))}" if row.latest else "", ""),
            (f"  {row.elapsed:.1f}s", "dim"),
        )
        items: list[RenderableType] = []
        for name, text in row.artifacts.values():
            tail = "\n".join(text.splitlines()[-_ARTIFACT_LINES:])
            panel = Panel(
                safe_text(tail, multiline=True),
                title=safe_text(name),
                title_align="left",
                expand=False,
            )
            items.append(panel)
        head = Table.grid(padding=(0, 1))
        head.add_row(row.spinner if not row.done else Text(""), line)
        return Group(head, *items)


def live_task(p: Printer, row: AgentRow) -> AbstractContextManager[object]:
    """The live view of ``row``'s task while the block runs, when output is drawn with rich
    (it makes way for what follows)."""
    if not p.rich:
        return nullcontext()
    return Live(TaskView(row), console=p.console, refresh_per_second=10, transient=True)


def waiting(p: Printer) -> AbstractContextManager[object]:
    """A spinner on stderr while the block waits for an agent, on a terminal (not under
    ``-o json``)."""
    if p.err.is_terminal and not p.json_mode:
        return p.err.status("waiting for the agent…")
    return nullcontext()


class FanOutView:
    """The live view of a fan-out: one line per agent with its state and latest message."""

    def __init__(self, rows: list[AgentRow]) -> None:
        self.rows = rows

    def __rich__(self) -> RenderableType:
        table = Table(box=box.SIMPLE_HEAD, header_style="bold", expand=False)
        table.add_column("", width=1)
        table.add_column("Agent", no_wrap=True)
        table.add_column("State", no_wrap=True)
        table.add_column("Latest", overflow="ellipsis", no_wrap=True, max_width=60)
        table.add_column("Time", justify="right", no_wrap=True)
        for row in self.rows:
            mark: Any = (
                Text("✓", "green")
                if row.done and not row.failure
                else (Text("✗", "red") if row.failure else Spinner("dots"))
            )
            table.add_row(
                mark,
                safe_text(row.name),
                row.state_text(),
                safe_text(one_line(row.latest, 60)),
                Text(f"{row.elapsed:.1f}s"),
            )
        done = sum(r.done for r in self.rows)
        caption = Text(f"{done}/{len(self.rows)} agents done", style="dim")
        return Group(table, caption)
