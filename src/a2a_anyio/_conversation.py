"""Conversations: the context and the open task of a dialogue with one agent, kept across
turns (``client.conversation()``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from a2a_anyio._errors import A2AProtocolError, AuthRequiredError, ContextMismatchError
from a2a_anyio._model import Message, StreamEvent, Task, TaskState
from a2a_anyio._stream import MessageStream, StreamHooks

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from a2a_anyio._options import SendOptions, StreamOptions
    from a2a_anyio._prepare import MessageInput

#: What a conversation's state looks like, said by the error that refuses one.
STATE_SHAPE = (
    'a conversation state is a dict {"context_id": str or None, "task": a task dict or None, '
    '"history": [{"sent": a message dict, "task" or "message": a dict}, ...]}, '
    "as Conversation.state() returns it"
)


class ConversationClient(Protocol):
    """What a conversation asks of its client (an ``A2AClient``)."""

    url: str | None
    endpoint: str | None

    async def send_message(
        self, message: MessageInput, **options: Unpack[SendOptions]
    ) -> Task | Message: ...

    def stream_message(
        self, message: MessageInput, **options: Unpack[StreamOptions]
    ) -> MessageStream: ...


@dataclass(slots=True)
class ConversationTurn:
    """One turn: the message sent and what came back (a Task, the agent's Message, or None
    while a stream has brought nothing yet)."""

    sent: Message
    received: Task | Message | None = None


class Conversation:
    """A dialogue with one agent: every turn goes in the same context, and a turn after an
    interrupted (or unfinished) task continues that task.

    Made by ``A2AClient.conversation()``. ``send`` and ``stream`` take the options and give
    the results of ``A2AClient.send_message`` and ``stream_message``, ``context_id`` and
    ``task_id`` aside: the conversation sets those. The first answer sets ``context_id``
    when none was given. ``task`` is the open task (None when the last one finished),
    ``history`` the turns, ``state()`` a plain dict to resume from
    (``client.conversation(state=...)``).

    An agent that answers a turn in another context than the conversation's is refused with
    ``ContextMismatchError`` (both ids on it, the answer in its ``events``), and the
    conversation takes nothing from that answer: its context and open task stay as they
    were. The protocol has an agent keep the context a message names; one that moves the
    dialogue elsewhere would have the next turns land in a context the caller never chose,
    the earlier turns out of the agent's sight, and following it silently would hide that.
    To go on where the agent went, start a conversation there:
    ``client.conversation(error.received_context_id)``. Before the first answer names a
    context (none was given), any context is the conversation's.
    """

    def __init__(
        self,
        client: ConversationClient,
        context_id: str | None = None,
        *,
        state: Mapping[str, Any] | None = None,
        coerce: Callable[[MessageInput], Message],
        schemes: Callable[[], list[str]],
    ) -> None:
        if context_id is not None and not isinstance(context_id, str):
            raise TypeError(f"context_id must be a str, not {type(context_id).__name__}")
        self._client = client
        self._coerce = coerce  # the client's: what it accepts as a message
        self._schemes = schemes  # what the agent's card asks for
        self._context_id = context_id
        self._task: Task | None = None
        self._history: list[ConversationTurn] = []
        self._stream: MessageStream | None = None  # the latest turn's, while it tells more
        if state is not None:
            if context_id is not None:
                raise ValueError("give a conversation a context_id or a state, not both")
            self._restore(state)

    @property
    def context_id(self) -> str | None:
        """The context every turn goes in (None before the first answer, if none was given)."""
        self._observe()
        return self._context_id

    @property
    def task(self) -> Task | None:
        """The open task: the latest one, unless it is terminal (then None)."""
        self._observe()
        return self._task

    @property
    def history(self) -> list[ConversationTurn]:
        """The turns so far, oldest first (a copy)."""
        self._observe()
        return list(self._history)

    @property
    def auth_required(self) -> AuthRequiredError | None:
        """What ``send`` raises when the open task is ``auth-required`` (for a ``stream``,
        whose events show it as they are); None otherwise."""
        task = self.task
        if task is None or task.status.state is not TaskState.AUTH_REQUIRED:
            return None
        return AuthRequiredError(
            task=task,
            schemes=self._schemes(),
            agent=self._client.url or self._client.endpoint,
            operation="send",
        )

    async def send(self, message: MessageInput, **options: Unpack[SendOptions]) -> Task | Message:
        """Send the next turn (``A2AClient.send_message``'s options); its Task or Message.

        Raises:
            AuthRequiredError: the task is ``auth-required``; it stays the open task, so that
                a turn after the credentials are fixed continues it.
            ContextMismatchError: the agent answered in another context than the
                conversation's; the turn is not recorded, the answer is in the error's ``events``.
            TypeError: ``context_id`` or ``task_id`` given (the conversation sets them), or
                what ``send_message`` raises.
            A2AClientError: as ``A2AClient.send_message``; the conversation is then unchanged.
        """
        sent = self._next_turn(message, options)
        result = await self._client.send_message(sent, **options)
        if self._elsewhere(result):
            raise self._moved(result, "send")
        self._record(ConversationTurn(sent, result))
        failed = self.auth_required
        if failed is not None:
            raise failed
        return result

    def stream(self, message: MessageInput, **options: Unpack[StreamOptions]) -> MessageStream:
        """Send the next turn as ``A2AClient.stream_message`` does (its options), and return
        its stream; the conversation learns the task from the stream's events as they are
        read. An ``auth-required`` end is one of those events (see ``auth_required``). An
        event in another context than the conversation's ends the stream with
        ``ContextMismatchError`` (raised while it is read); the turn then stays in
        ``history`` with nothing received.

        Raises:
            TypeError: ``context_id`` or ``task_id`` given (the conversation sets them), or
                what ``stream_message`` raises.
        """
        sent = self._next_turn(message, options)
        stream = self._client.stream_message(sent, **options)
        if self._context_id is not None:
            stream._hooks = _InContext(self, stream._hooks)
        self._history.append(ConversationTurn(sent))
        self._stream = stream
        return stream

    def state(self) -> dict[str, Any]:
        """The conversation as a plain (JSON-ready) dict: ``client.conversation(state=...)``
        resumes it, in this process or another."""
        task = self.task
        return {
            "context_id": self._context_id,
            "task": task.to_dict() if task is not None else None,
            "history": [_turn_dict(turn) for turn in self._history],
        }

    def __repr__(self) -> str:
        task = self.task
        open_task = f" task={task.id!r} {task.status.state.value}" if task else ""
        return f"<Conversation context={self._context_id!r}{open_task} turns={len(self._history)}>"

    # -- what the turns tell ------------------------------------------------------------------

    def _next_turn(self, message: MessageInput, options: Mapping[str, Any]) -> Message:
        """The message of the next turn: in the context, to the open task if any."""
        given = sorted({"context_id", "task_id"} & options.keys())
        if given:
            raise TypeError(f"a conversation sets {' and '.join(given)} itself: leave it out")
        self._observe()
        self._stream = None
        sent = self._coerce(message)
        task = self._task
        return replace(
            sent,
            context_id=self._context_id or sent.context_id,
            task_id=task.id if task is not None else sent.task_id,
        )

    def _elsewhere(self, answer: StreamEvent) -> bool:
        """True when ``answer`` names a context and the conversation another one."""
        received = answer.context_id
        return self._context_id is not None and bool(received) and received != self._context_id

    def _moved(self, answer: StreamEvent, operation: str | None = None) -> ContextMismatchError:
        """The error that refuses ``answer``, in another context than the conversation's."""
        assert self._context_id is not None and answer.context_id
        client = self._client
        return ContextMismatchError(
            expected_context_id=self._context_id,
            received_context_id=answer.context_id,
            events=[answer],
            agent=client.url or client.endpoint,
            operation=operation,
        )

    def _observe(self) -> None:
        """Take in what the latest turn's stream has shown so far (nothing from a stream
        in another context)."""
        stream = self._stream
        if stream is None:
            return
        shown = stream.message or stream.task
        if shown is not None and not self._elsewhere(shown):
            self._history[-1].received = shown
            self._learn(shown)

    def _record(self, turn: ConversationTurn) -> None:
        self._history.append(turn)
        if turn.received is not None:
            self._learn(turn.received)

    def _learn(self, result: Task | Message) -> None:
        if result.context_id:
            self._context_id = result.context_id
        if isinstance(result, Task):
            self._task = None if result.status.state.is_terminal else result

    def _restore(self, state: Mapping[str, Any]) -> None:
        try:
            context_id, task, history = state["context_id"], state["task"], state["history"]
            if context_id is not None and not isinstance(context_id, str):
                raise TypeError
            self._context_id = context_id
            self._task = Task.from_dict(task) if task is not None else None
            self._history = [_turn_from(turn) for turn in history]
        except (KeyError, TypeError, AttributeError, A2AProtocolError):
            raise ValueError(f"not a conversation state: {STATE_SHAPE}") from None


class _InContext:
    """The hooks of a conversation's stream: an event in another context than the
    conversation's ends the stream with ``ContextMismatchError``; the stream's own hooks
    (the client's interceptors) are told of everything else as before."""

    def __init__(self, conversation: Conversation, hooks: StreamHooks | None) -> None:
        self._conversation = conversation
        self._hooks = hooks

    async def begin(self) -> None:
        if self._hooks is not None:
            await self._hooks.begin()

    async def event(self, event: StreamEvent) -> None:
        if self._conversation._elsewhere(event):
            raise self._conversation._moved(event)
        if self._hooks is not None:
            await self._hooks.event(event)

    async def end(self, result: Task | Message | None, error: Exception | None) -> Exception | None:
        if self._hooks is None:
            return error
        return await self._hooks.end(result, error)

    def left(self, exc: BaseException | None) -> None:
        if self._hooks is not None:
            self._hooks.left(exc)


def _turn_dict(turn: ConversationTurn) -> dict[str, Any]:
    out: dict[str, Any] = {"sent": turn.sent.to_dict()}
    if isinstance(turn.received, Task):
        out["task"] = turn.received.to_dict()
    elif isinstance(turn.received, Message):
        out["message"] = turn.received.to_dict()
    return out


def _turn_from(turn: Mapping[str, Any]) -> ConversationTurn:
    received: Task | Message | None = None
    if turn.get("task") is not None:
        received = Task.from_dict(turn["task"])
    elif turn.get("message") is not None:
        received = Message.from_dict(turn["message"])
    return ConversationTurn(Message.from_dict(turn["sent"]), received)
