"""``SyncAgentTool``: an agent's tool whose calls block (``SyncA2AClient.as_tool()``)."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from a2a_anyio._model import AgentCard, Message, Task
from a2a_anyio._sync_portal import Calls, off_loop
from a2a_anyio._tool import AgentTool, AgentToolResult, ProgressCallback


class SyncAgentTool:
    """An ``AgentTool`` whose calls block (``SyncA2AClient.as_tool()``): the same name,
    description, parameters and dicts; ``tool(**arguments)`` and ``tool.call(arguments)``
    run the async tool on the client's event loop. A sync ``on_progress`` runs in a worker
    thread, as the sync client's ``on_event`` does."""

    def __init__(self, tool: AgentTool, calls: Calls) -> None:
        self._tool = tool
        self._calls = calls

    @property
    def tool(self) -> AgentTool:
        """The async tool this one runs."""
        return self._tool

    @property
    def name(self) -> str:
        """As ``AgentTool.name``."""
        return self._tool.name

    @property
    def description(self) -> str:
        """As ``AgentTool.description``."""
        return self._tool.description

    @property
    def parameters(self) -> dict[str, Any]:
        """As ``AgentTool.parameters``."""
        return self._tool.parameters

    @property
    def card(self) -> AgentCard:
        """As ``AgentTool.card``."""
        return self._tool.card

    def to_openai(self) -> dict[str, Any]:
        """As ``AgentTool.to_openai``."""
        return self._tool.to_openai()

    def to_anthropic(self) -> dict[str, Any]:
        """As ``AgentTool.to_anthropic``."""
        return self._tool.to_anthropic()

    def to_mcp(self) -> dict[str, Any]:
        """As ``AgentTool.to_mcp``."""
        return self._tool.to_mcp()

    def result(self, answer: Task | Message) -> AgentToolResult:
        """As ``AgentTool.result``."""
        return self._tool.result(answer)

    def __repr__(self) -> str:
        return f"<Sync{repr(self._tool).removeprefix('<')}"

    def __call__(self, **arguments: Any) -> AgentToolResult:
        """``tool(text=..., ...)``: the same as ``tool.call(arguments)``."""
        return self.call(arguments)

    def call(
        self, arguments: Mapping[str, Any], *, on_progress: ProgressCallback | None = None
    ) -> AgentToolResult:
        """As ``AgentTool.call``, blocking.

        Raises:
            ValueError: as ``AgentTool.call``.
            TypeError: as ``AgentTool.call``.
            A2AClientError: as ``AgentTool.call``.
            RuntimeError: the client is closed, or closed while the call ran.
        """
        run: Callable[[], Awaitable[AgentToolResult]] = functools.partial(
            self._tool.call, arguments, on_progress=off_loop(on_progress)
        )
        return self._calls.run(run)
