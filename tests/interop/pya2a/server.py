"""A real A2A server built with ``python-a2a`` (PyPI), for interop tests.

It runs in its own virtual environment (``requirements.txt`` beside this file pins it; the
``pya2a_server`` fixture builds it), never in the project's. Run it as::

    <venv>/bin/python tests/interop/pya2a/server.py [--port 0]

It binds ``127.0.0.1`` (port 0: a free port chosen by the OS), prints one line
``READY http://127.0.0.1:<port>`` once it accepts connections, and exits 0 on SIGTERM.

What python-a2a serves (``create_flask_app`` of an ``A2AServer``, on werkzeug's threaded
server): a card at ``/.well-known/agent-card.json`` (and ``agent.json``) that says v0.3
JSON-RPC at ``url`` with ``capabilities.google_a2a_compatible``; yet ``POST /`` takes no
JSON-RPC. JSON-RPC envelopes in the ``tasks/send`` dialect go to one path per method:
``/a2a/tasks/send``, ``/a2a/tasks/get``, ``/a2a/tasks/cancel`` and ``/a2a/tasks/stream``
(``tasks/sendSubscribe``: an event stream of two whole tasks, the one received and the one
``handle_task`` returned, as bare JSON with ``event:`` names). An unknown task is JSON-RPC
-32000 with HTTP 404. Its ``tasks/resubscribe`` reports a running task as completed after
half a second; push configs and an extended card are not served. A message keeps one
content: data parts do not reach the agent; artifacts lose their names.

The agent (``handle_task``), chosen by the first text of the user's message:

* ``message...``: completed, the status message ``pong: <text>``.
* ``stream...``: completed with artifact ``report`` in three text parts (no chunks: the
  stream carries whole tasks).
* ``slow...``: ``waiting`` (python-a2a's word for working) until canceled.
* ``input...``: input-required ("need more input"); the next message to the same task
  completes it with ``echo: <text>``.
* ``fail...``: failed ("it failed").
* anything else: completed with artifact ``echo: <text>``.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from typing import Any

from python_a2a import A2AServer
from python_a2a.models.task import Task, TaskState, TaskStatus
from python_a2a.server.http import create_flask_app
from werkzeug.serving import make_server

HOST = "127.0.0.1"


def _agent_message(text: str) -> dict[str, Any]:
    return {"role": "agent", "parts": [{"type": "text", "text": text}]}


def _text_artifact(*texts: str) -> dict[str, Any]:
    return {"parts": [{"type": "text", "text": t} for t in texts]}


def _first_text(message: Any) -> str:
    """The first text of a message in python-a2a's shape or in the Google one it converts."""
    if not isinstance(message, dict):
        return ""
    for part in message.get("parts") or ():
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            return str(part["text"])
    content = message.get("content")
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return str(content["text"])
    return ""


class InteropAgent(A2AServer):  # type: ignore[misc]
    """python-a2a's A2AServer with a ``handle_task`` of its own (its documented hook)."""

    def handle_task(self, task: Task) -> Task:
        text = _first_text(task.message)
        before = self.tasks.get(task.id)
        if before is not None and before.status.state == TaskState.INPUT_REQUIRED:
            task.artifacts = [_text_artifact(f"echo: {text}")]
            task.status = TaskStatus(state=TaskState.COMPLETED)
        elif text.startswith("message"):
            task.status = TaskStatus(
                state=TaskState.COMPLETED, message=_agent_message(f"pong: {text}")
            )
        elif text.startswith("stream"):
            task.artifacts = [_text_artifact("part 1", " part 2", " part 3")]
            task.status = TaskStatus(state=TaskState.COMPLETED)
        elif text.startswith("slow"):
            task.status = TaskStatus(state=TaskState.WAITING)
        elif text.startswith("input"):
            task.status = TaskStatus(
                state=TaskState.INPUT_REQUIRED, message=_agent_message("need more input")
            )
        elif text.startswith("fail"):
            task.status = TaskStatus(state=TaskState.FAILED, message=_agent_message("it failed"))
        else:
            task.artifacts = [_text_artifact(f"echo: {text}")]
            task.status = TaskStatus(state=TaskState.COMPLETED)
        return task


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=0, help="0 = a free port chosen by the OS")
    args = parser.parse_args(argv)
    # The agent's card needs its URL before the app exists: bind the port first.
    server = make_server(HOST, args.port, None, threaded=True)
    base_url = f"http://{HOST}:{server.server_port}"
    agent = InteropAgent(
        url=base_url, name="python-a2a interop agent", description="Echoes, waits and fails"
    )
    server.app = create_flask_app(agent)

    def stop(_signum: int, _frame: Any) -> None:
        raise SystemExit(0)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    sys.stdout.write(f"READY {base_url}\n")
    sys.stdout.flush()
    sys.stdout = sys.stderr  # no one reads stdout after READY: what the library prints goes here
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
