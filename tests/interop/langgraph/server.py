"""LangGraph's API server (``langgraph-api``, in-memory runtime, as ``langgraph dev`` runs it)
with its A2A endpoint, for interop tests.

It runs in its own virtual environment (``requirements.txt`` beside this file pins it; the
``langgraph_server`` fixture builds it), never in the project's. Run it as::

    <venv>/bin/python tests/interop/langgraph/server.py [--port 0]

It serves the graph of ``agent.py`` (plain Python nodes, no model) as assistant ``echo`` on
``127.0.0.1`` (port 0: a free port chosen by the OS), prints one line
``READY http://127.0.0.1:<port>/a2a/<assistant id>`` once that assistant answers (its A2A
endpoint, whose card is at ``.well-known/agent-card.json`` below it), and exits 0 on SIGTERM.
Its logs go to stderr; it works in a temporary directory (the runtime makes one there).

What LangGraph serves there: JSON-RPC only (``SendMessage``, ``SendStreamingMessage``,
``GetTask``, ``CancelTask``, ``ListTasks``, ``GetExtendedAgentCard``, and the v0.3 names of
the first four). A send waits for the run to end whatever the client asks for; a task's
answer is one artifact ``Assistant Response`` (the last agent message); no push configs, no
re-attaching to a task.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

HOST = "127.0.0.1"
GRAPH_ID = "echo"
GRAPH = Path(__file__).resolve().with_name("agent.py")
START_TIMEOUT_S = 60.0

# Read by langgraph_api when it is imported (run_server keeps what it does not set itself).
QUIET_ENV = {
    "LANGGRAPH_NO_VERSION_CHECK": "true",  # no call to PyPI at start
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "LOG_LEVEL": "WARNING",
    "LOG_COLOR": "false",
    "BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS": "1",  # SIGTERM does not wait for a slow run
}


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def _assistant_id(base_url: str) -> str | None:
    """The id of assistant ``echo``, once the server answers (else None)."""
    request = urllib.request.Request(
        f"{base_url}/assistants/search",
        data=json.dumps({"graph_id": GRAPH_ID}).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
            found = json.load(response)
    except (OSError, urllib.error.URLError, ValueError):
        return None
    return str(found[0]["assistant_id"]) if found else None


def _announce(ready: int) -> None:
    """Write ``READY <agent url>`` to ``ready`` once the assistant answers (bounded).

    The base URL is the one ``run_server`` settles on and exports (it takes another port if
    the one it was given has been taken meanwhile).
    """
    deadline = time.monotonic() + START_TIMEOUT_S
    with os.fdopen(ready, "w") as out:
        while time.monotonic() < deadline:
            base_url = os.environ.get("LANGGRAPH_API_URL")
            assistant = _assistant_id(base_url) if base_url else None
            if assistant is not None:
                out.write(f"READY {base_url}/a2a/{assistant}\n")
                return
            time.sleep(0.05)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=0, help="0 = a free port chosen by the OS")
    args = parser.parse_args(argv)
    port = args.port or _free_port()
    os.environ.update(QUIET_ENV)
    os.environ.pop("LANGGRAPH_API_URL", None)
    # The server logs to stdout: stdout becomes stderr, READY goes to the original stdout.
    ready = os.dup(sys.stdout.fileno())
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    threading.Thread(target=_announce, args=(ready,), daemon=True).start()

    from langgraph_api.cli import run_server

    # uvicorn restores these once it is done and re-raises the signal: run_server returns.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda _signum, _frame: None)
    with tempfile.TemporaryDirectory(prefix="langgraph-interop-") as workdir:
        os.chdir(workdir)
        run_server(
            HOST,
            port,
            reload=False,
            graphs={GRAPH_ID: f"{GRAPH}:graph"},
            n_jobs_per_worker=10,
            disable_persistence=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
