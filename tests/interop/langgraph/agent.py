"""The LangGraph agent behind ``server.py``: plain Python nodes, no model.

The first text part of the user's latest message chooses what it does:

* ``message...``: answers ``pong: <text>``.
* ``stream...``: three progress messages (``part 1``, `` part 2``, `` part 3``), ~50 ms apart,
  then the answer ``part 1 part 2 part 3``.
* ``slow...``: waits up to 30 s (a run that is canceled stops there).
* ``input...``: interrupts with ``need more input``; resumed, answers ``echo: <reply>``.
* ``fail...``: raises ``ValueError("it failed")``.
* anything else: answers ``echo: <text>``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt

CHUNKS = ("part 1", " part 2", " part 3")
STEP_S = 0.05
SLOW_S = 30.0


class State(MessagesState):  # type: ignore[misc]
    sent: int  # progress messages sent so far in this turn


def _text(message: AnyMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if isinstance(b, dict))


def _asked(state: State) -> str:
    return next((_text(m) for m in reversed(state["messages"]) if m.type == "human"), "")


async def agent(state: State) -> dict[str, Any]:
    text = _asked(state)
    if text.startswith("message"):
        return {"messages": [AIMessage(f"pong: {text}")]}
    if text.startswith("input"):
        reply = interrupt("need more input")
        return {"messages": [AIMessage(f"echo: {reply}")]}
    if text.startswith("fail"):
        raise ValueError("it failed")
    if text.startswith("slow"):
        await asyncio.sleep(SLOW_S)
        return {"messages": [AIMessage("slow done")]}
    return {"messages": [AIMessage(f"echo: {text}")]}


async def progress(state: State) -> dict[str, Any]:
    sent = state.get("sent", 0)
    await asyncio.sleep(STEP_S)
    return {"messages": [AIMessage(CHUNKS[sent])], "sent": sent + 1}


async def answer(state: State) -> dict[str, Any]:
    return {"messages": [AIMessage("".join(CHUNKS))], "sent": 0}


def _start(state: State) -> str:
    return "progress" if _asked(state).startswith("stream") else "agent"


def _more(state: State) -> str:
    return "progress" if state["sent"] < len(CHUNKS) else "answer"


builder = StateGraph(State)
builder.add_node("agent", agent)
builder.add_node("progress", progress)
builder.add_node("answer", answer)
builder.add_conditional_edges(START, _start, ["agent", "progress"])
builder.add_conditional_edges("progress", _more, ["progress", "answer"])
builder.add_edge("agent", END)
builder.add_edge("answer", END)
graph = builder.compile()
