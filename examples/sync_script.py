"""Sync script: card, send, stream and get against an A2A agent, with no async code at all.

uv run python examples/sync_script.py                  # starts a local a2a-sdk agent
uv run python examples/sync_script.py --url URL        # any A2A agent
uv run python examples/sync_script.py --backend trio   # the event loop the client runs on
"""

from __future__ import annotations

import argparse
import contextlib

from quickstart import local_agent  # the local agent of the quickstart, in this folder

from a2a_anyio import Message, SyncA2AClient, TaskArtifactUpdateEvent, TaskStatusUpdateEvent


def main(url: str, backend: str) -> None:
    with SyncA2AClient(url, backend=backend) as client:
        card = client.get_card()
        print(f"card: {card.name} {card.version} - {card.description}")

        result = client.send_message("hello from a sync script")
        if isinstance(result, Message):
            print(f"send: agent replied {result.text!r}")
            return
        print(f"send: task {result.id} is {result.status.state.value}: {result.text!r}")

        with client.stream_message("stream a short report") as stream:
            for event in stream:  # a plain for: each step runs on the client's event loop
                if isinstance(event, TaskStatusUpdateEvent):
                    print(f"  stream: status {event.status.state.value}")
                elif isinstance(event, TaskArtifactUpdateEvent):
                    print(f"  stream: artifact chunk {event.artifact.text!r}")
        assert stream.task is not None
        print(f"stream: task {stream.task.status.state.value}: {stream.task.text!r}")

        again = client.get_task(result.id)
        print(f"get: task {again.id} is {again.status.state.value}")


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0].replace("``", ""))
    parser.add_argument("--url", help="an A2A agent's base URL (default: start a local one)")
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        url = args.url or stack.enter_context(local_agent())
        print(f"== {args.backend} ==")
        main(url, args.backend)


if __name__ == "__main__":
    cli()
