"""The blocking twin of a conversation (``SyncA2AClient.conversation()``)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from a2a_anyio._conversation import Conversation, ConversationTurn
from a2a_anyio._errors import AuthRequiredError
from a2a_anyio._model import Message, Task
from a2a_anyio._stream import MessageStream
from a2a_anyio._sync_portal import Calls

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from a2a_anyio._options import SendOptions, StreamOptions
    from a2a_anyio._prepare import MessageInput
    from a2a_anyio._sync import SyncMessageStream


class SyncConversation:
    """A ``Conversation`` for blocking code (``SyncA2AClient.conversation()``): ``send`` and
    ``stream`` block as ``SyncA2AClient.send_message`` and ``stream_message`` do; the rest
    is the conversation's."""

    def __init__(
        self,
        conversation: Conversation,
        calls: Calls,
        wrap: Callable[[Callable[[], MessageStream]], SyncMessageStream],
    ) -> None:
        self._conversation = conversation
        self._calls = calls
        self._wrap = wrap

    @property
    def conversation(self) -> Conversation:
        """The async conversation this one runs."""
        return self._conversation

    @property
    def context_id(self) -> str | None:
        """As ``Conversation.context_id``."""
        return self._conversation.context_id

    @property
    def task(self) -> Task | None:
        """As ``Conversation.task``."""
        return self._conversation.task

    @property
    def history(self) -> list[ConversationTurn]:
        """As ``Conversation.history``."""
        return self._conversation.history

    @property
    def auth_required(self) -> AuthRequiredError | None:
        """As ``Conversation.auth_required``."""
        return self._conversation.auth_required

    def send(self, message: MessageInput, **options: Unpack[SendOptions]) -> Task | Message:
        """As ``Conversation.send``, blocking.

        Raises:
            AuthRequiredError: as ``Conversation.send``.
            A2AClientError: as ``SyncA2AClient.send_message``.
            TypeError: as ``Conversation.send``.
        """
        return self._calls.run(functools.partial(self._conversation.send, message, **options))

    def stream(self, message: MessageInput, **options: Unpack[StreamOptions]) -> SyncMessageStream:
        """As ``Conversation.stream``, for a plain ``for``.

        Raises:
            TypeError: as ``Conversation.stream``.
        """
        return self._wrap(functools.partial(self._conversation.stream, message, **options))

    def state(self) -> dict[str, Any]:
        """As ``Conversation.state``."""
        return self._conversation.state()

    def __repr__(self) -> str:
        return f"<Sync{repr(self._conversation).removeprefix('<')}"
