"""One-shot helpers for scripts that keep no client: each opens a client, calls, closes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from a2a_anyio._client import A2AClient
from a2a_anyio._model import AgentCard, DataPart, Message, Part, Role, Task, TextPart
from a2a_anyio._options import ClientOptions

if TYPE_CHECKING:
    from typing_extensions import Unpack


async def discover(url: str, **options: Unpack[ClientOptions]) -> AgentCard:
    """The agent card at ``url`` (options as for ``A2AClient``).

    Raises:
        A2ADiscoveryError: no card at ``url``, or not a card.
        A2AConnectionError: the agent cannot be reached (``A2ATimeoutError``: not within the timeout).
    """
    async with A2AClient(url, **options) as client:
        return await client.get_card()


async def send_text(
    url: str,
    text: str,
    *,
    tool: str | None = None,
    arguments: Any = None,
    **options: Unpack[ClientOptions],
) -> Task | Message:
    """Send ``text`` (and ``{"tool": ..., "arguments": ...}`` as a data part when ``tool`` is
    named) and return the resulting Task or Message.

    Raises:
        A2AClientError: as ``A2AClient.send_message``.
        TypeError: ``text`` is not a str (a message in another form is for ``send_message``).
    """
    if not isinstance(text, str):
        raise TypeError(
            f"text must be a str, not {type(text).__name__} "
            "(A2AClient.send_message takes a message in any form)"
        )
    parts: list[Part] = [TextPart(text)]
    if tool is not None:
        parts.append(
            DataPart({"tool": tool, "arguments": arguments if arguments is not None else {}})
        )
    async with A2AClient(url, **options) as client:
        return await client.send_message(Message(Role.USER, parts))


async def get_task(url: str, task_id: str, **options: Unpack[ClientOptions]) -> Task:
    """The task ``task_id`` of the agent at ``url``.

    Raises:
        TaskNotFoundError: the agent has no such task.
        A2AClientError: any other failure, as ``A2AClient.get_task``.
    """
    async with A2AClient(url, **options) as client:
        return await client.get_task(task_id)


async def cancel_task(url: str, task_id: str, **options: Unpack[ClientOptions]) -> Task:
    """Cancel the task ``task_id`` of the agent at ``url``.

    Raises:
        TaskNotFoundError: the agent has no such task.
        TaskNotCancelableError: the task is final, or the agent will not cancel it.
        A2AClientError: any other failure, as ``A2AClient.cancel_task``.
    """
    async with A2AClient(url, **options) as client:
        return await client.cancel_task(task_id)
