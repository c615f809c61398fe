"""Quickstart: card, send, stream, get, list and cancel against an A2A agent, on asyncio and trio.

uv run python examples/quickstart.py                  # starts a local a2a-sdk agent
uv run python examples/quickstart.py --url URL        # any A2A agent
uv run python examples/quickstart.py --backend trio   # only one event loop
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio

from a2a_anyio import (
    A2AClient,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
    UnsupportedOperationError,
)

# The scripted agent built with the official a2a-sdk that the interop tests also use.
LOCAL_AGENT = Path(__file__).resolve().parent.parent / "tests" / "interop" / "sdk_server.py"


async def main(url: str) -> None:
    async with A2AClient(url) as client:
        card = await client.get_card()
        print(f"card: {card.name} {card.version} - {card.description}")
        print(f"  streaming={card.capabilities.streaming} skills={[s.id for s in card.skills]}")

        result = await client.send_message("hello from a2a-anyio")
        if isinstance(result, Message):
            print(f"send: agent replied {result.text!r}")
            return
        print(f"send: task {result.id} is {result.status.state.value}: {result.text!r}")

        async with client.stream_message("stream a short report") as stream:
            async for event in stream:
                if isinstance(event, TaskStatusUpdateEvent):
                    print(f"  stream: status {event.status.state.value}")
                elif isinstance(event, TaskArtifactUpdateEvent):
                    print(f"  stream: artifact chunk {event.artifact.text!r}")
        assert stream.task is not None
        print(f"stream: task {stream.task.status.state.value}: {stream.task.text!r}")

        again = await client.get_task(result.id)
        print(f"get: task {again.id} is {again.status.state.value}")

        try:  # an operation of A2A v0.3 and later: older agents do not list their tasks
            page = await client.list_tasks(context_id=result.context_id, limit=5)
        except UnsupportedOperationError as exc:
            print(f"list: not offered by this agent ({exc.message})")
        else:
            print(f"list: {len(page.tasks)} task(s) in the context")

        started = await client.send_message("slow job", blocking=False)
        assert isinstance(started, Task)
        canceled = await client.cancel_task(started.id)
        print(f"cancel: task {canceled.id} is {canceled.status.state.value}")


@contextlib.contextmanager
def local_agent() -> Iterator[str]:
    """Run the local a2a-sdk agent in a subprocess; yield its URL."""
    proc = subprocess.Popen(
        [sys.executable, str(LOCAL_AGENT), "--mode", "strict", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("READY "):
            raise SystemExit("the local agent did not start")
        yield line.split(" ", 1)[1].strip()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0].replace("``", ""))
    parser.add_argument("--url", help="an A2A agent's base URL (default: start a local one)")
    parser.add_argument("--backend", choices=["asyncio", "trio", "both"], default="both")
    args = parser.parse_args()
    backends = ["asyncio", "trio"] if args.backend == "both" else [args.backend]
    with contextlib.ExitStack() as stack:
        url = args.url or stack.enter_context(local_agent())
        for backend in backends:
            print(f"== {backend} ==")
            anyio.run(main, url, backend=backend)


if __name__ == "__main__":
    cli()
