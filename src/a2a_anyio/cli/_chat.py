"""``chat``: a conversation with one agent, a turn a line of standard input."""

from __future__ import annotations

import os
import signal
import stat
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import anyio.lowlevel
from anyio import CancelScope
from rich.text import Text

from a2a_anyio._client import A2AClient
from a2a_anyio._errors import AuthRequiredError
from a2a_anyio._groups import beside
from a2a_anyio._model import AgentCard, Message, Task, TaskState
from a2a_anyio.cli import _render as r
from a2a_anyio.cli._commands import MAX_INPUT_BYTES, message_metadata, warn_ended
from a2a_anyio.cli._context import Context, Target
from a2a_anyio.cli._errors import Failure, UsageError, exit_code_of
from a2a_anyio.cli._live import AgentRow, live_task, waiting

PROMPT = "you> "
HELP = (
    "/new      start a new conversation (a new context)",
    "/cancel   cancel the open task on the agent",
    "/exit     leave (Ctrl-D too)",
    "/help     this list",
    "Ctrl-C stops an answer; at the prompt it leaves. //text sends /text.",
)
_UNDERWAY = (TaskState.SUBMITTED, TaskState.WORKING)


async def chat(ctx: Context) -> int:
    target = ctx.target(ctx.args.agent_name)
    metadata = message_metadata(ctx)
    lines = LineReader(sys.stdin.fileno())
    client = await ctx.client(target)
    card = await ctx.card(client, target) if client.url is not None else None
    return await Chat(ctx, target, client, card, metadata, lines).run()


class LineReader:
    """The lines of a file descriptor, read without blocking the event loop: the wait for a
    terminal, a pipe or a socket can be cancelled; a file is read at once."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.tty = os.isatty(fd)
        mode = os.fstat(fd).st_mode
        self._waits = self.tty or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
        self._buffer = bytearray()
        self._eof = False

    async def readline(self) -> str | None:
        """The next line, without its end; None once the input has ended.

        Raises:
            UsageError: a line longer than ``MAX_INPUT_BYTES``.
        """
        while (end := self._buffer.find(b"\n")) < 0 and not self._eof:
            if len(self._buffer) > MAX_INPUT_BYTES:
                raise UsageError(f"a line of input is longer than {MAX_INPUT_BYTES >> 20} MiB")
            if self._waits:
                await anyio.wait_readable(self.fd)
            else:
                await anyio.lowlevel.checkpoint()
            data = os.read(self.fd, 65536)
            self._buffer += data
            self._eof = not data
        if end < 0:
            if not self._buffer:
                return None
            end = len(self._buffer)
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        return line.decode("utf-8", "replace")


class Chat:
    """One chat: the conversation, the line being answered, and what Ctrl-C does."""

    def __init__(
        self,
        ctx: Context,
        target: Target,
        client: A2AClient,
        card: AgentCard | None,
        metadata: dict[str, Any] | None,
        lines: LineReader,
    ) -> None:
        self.ctx = ctx
        self.p = ctx.p
        self.target = target
        self.client = client
        self.metadata = metadata
        self.lines = lines
        self.has_card = card is not None
        self.name = card.name if card is not None else target.name
        self.streams = card is None or card.capabilities.streaming  # no card: try
        self.conv = client.conversation(ctx.args.context_id)
        #: The task of an answer Ctrl-C stopped, still running on the agent.
        self._left_running: Task | None = None
        self._call: CancelScope | None = None  # the agent's answer being awaited
        self._interrupted = False
        #: What went wrong in the turns and commands of a chat read from a pipe or a file.
        self._failures: list[Failure] = []

    async def run(self) -> int:
        if self.lines.tty:
            how = "its answers stream" if self.streams else "it answers each message whole"
            self.p.note(f"Chat with {self.name} at {self.target.url}: {how}.")
            self.p.note("/help lists the commands; /exit or Ctrl-D leaves.")
        with anyio.open_signal_receiver(signal.SIGINT) as signals:
            async with beside() as group:
                group.start_soon(self._on_interrupt, signals, group.cancel_scope)
                await self._talk()
                group.cancel_scope.cancel()
        if self._interrupted:  # at the prompt: as Ctrl-C ends any other command
            if self.lines.tty:
                self.p.err.print()
            raise KeyboardInterrupt
        # Read from a pipe or a file, the chat is a script's: its status says what failed.
        return exit_code_of(self._failures)

    async def _on_interrupt(
        self, signals: AsyncIterator[signal.Signals], session: CancelScope
    ) -> None:
        async for _ in signals:
            if self._call is not None:
                self._call.cancel()
            else:
                self._interrupted = True
                session.cancel()

    async def _talk(self) -> None:
        while True:
            if self.lines.tty:
                self.p.err.print(Text(PROMPT, "bold"), end="")
            line = await self.lines.readline()
            if line is None:
                if self.lines.tty:
                    self.p.err.print()
                return
            text = line.strip()
            if text.startswith("/") and not text.startswith("//"):
                if not await self._command(text):
                    return
            elif text:
                await self._turn(text[1:] if text.startswith("//") else text)

    async def _command(self, text: str) -> bool:
        """Run a slash command; False to leave."""
        name = text.split()[0]
        if name == "/exit":
            return False
        if name == "/help":
            for line in HELP:
                self.p.note(line)
        elif name == "/new":
            self.conv = self.client.conversation()
            self._left_running = None
            self.p.note("a new conversation: the next message starts a new context")
        elif name == "/cancel":
            await self._cancel()
        else:
            self.p.error(f"no command {name}", "/help lists the commands")
        return True

    async def _cancel(self) -> None:
        task = self.conv.task or self._left_running
        if task is None:
            self.p.note("no open task to cancel")
            return
        self._left_running = None
        with self._stoppable() as scope:
            try:
                canceled = await self.client.cancel_task(task.id)
            except Exception as exc:
                self._report(exc)
                return
        if scope.cancelled_caught:
            self.p.note("stopped")
            return
        if self.conv.task is not None:  # the same context, without the task
            self.conv = self.client.conversation(self.conv.context_id)
        self.p.note(f"task {canceled.id} {r.state_name(canceled.status)}")

    async def _turn(self, text: str) -> None:
        with self._stoppable() as scope:
            try:
                result = await (self._stream(text) if self.streams else self._send(text))
            except Exception as exc:
                self._report(exc)
                return
        if not scope.cancelled_caught:
            self._show(result)
            return
        task = self.conv.task
        if task is None or task.state.is_interrupted:
            self.p.note("stopped")
            return
        # The agent goes on: the next message starts a new task in the context.
        self._left_running = task
        self.conv = self.client.conversation(self.conv.context_id)
        self.p.note(f"stopped; task {task.id} goes on at the agent: /cancel cancels it")

    @contextmanager
    def _stoppable(self) -> Iterator[CancelScope]:
        """A wait for the agent that Ctrl-C stops, instead of ending the chat."""
        with anyio.CancelScope() as scope:
            self._call = scope
            try:
                yield scope
            finally:
                self._call = None

    async def _stream(self, text: str) -> Task | Message | None:
        stream = self.conv.stream(
            text, metadata=self.metadata, total_timeout=self.ctx.args.timeout or None
        )
        row = AgentRow(self.name, self.target.url)
        with live_task(self.p, row):
            async with stream:
                async for event in stream:
                    row.apply(event)
        return stream.message or stream.task

    async def _send(self, text: str) -> Task | Message:
        with waiting(self.p):
            try:
                return await self.conv.send(
                    text, metadata=self.metadata, timeout=self.ctx.args.timeout or None
                )
            except AuthRequiredError as exc:  # shown as the turn's answer
                return exc.task

    def _show(self, result: Task | Message | None) -> None:
        p = self.p
        auth = self.conv.auth_required
        if p.json_mode:
            if result is not None:
                p.jsonl(r.response(result))
        elif auth is not None:
            p.field("Authentication required", auth.text or "(the agent says no more)", "yellow")
            declared = "nothing (it declares no security scheme)" if self.has_card else "(no card)"
            p.field("The card asks for", "; or ".join(auth.schemes) or declared)
        else:
            p.paragraph(answer_text(result))
        if isinstance(result, Task) and not warn_ended(p, result) and self.lines.tty:
            if auth is not None:
                p.note(
                    "the task waits: your next message continues it, with this chat's credentials"
                )
            elif result.state is TaskState.INPUT_REQUIRED:
                p.note("the agent asks: your next message answers it")
        if not p.json_mode:
            p.line()

    def _report(self, exc: Exception) -> None:
        self.ctx.debug.exception(exc)
        failure = self.ctx.failure(exc)
        self.ctx.report(failure, stream=True)
        if not self.lines.tty:
            self._failures.append(failure)


def answer_text(result: Task | Message | None) -> str:
    """What an answer says: a message's parts; a task's artifacts, then its status message
    once it no longer works; else its state."""
    if isinstance(result, Message):
        return r.parts_text(result.parts) or "(an empty message)"
    if result is None:
        return "(no answer)"
    texts = [r.parts_text(artifact.parts) for artifact in result.artifacts]
    message = result.status.message
    if message is not None and result.state not in _UNDERWAY:
        texts.append(r.parts_text(message.parts))
    return "\n".join(text for text in texts if text) or f"({r.state_name(result.status)})"
