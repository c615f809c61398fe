"""A script interrupted by Ctrl-C: ``python interrupted_script.py URL BACKEND WHAT``.

WHAT is where it waits when the signal comes: ``stream`` (reading a stream), ``send`` (a
blocking send), ``wait`` (``wait()`` on a task) or ``fan-out`` (``SyncAgentPool.fan_out``).
The agent's ``hang`` skill never ends; its ``echo`` skill replies at once. The script prints ``waiting`` once it is about to wait,
``caught`` in its own ``except KeyboardInterrupt``, then, once it reads a line on stdin (the
test has looked at the agent meanwhile), makes one more call with the same client or pool and
prints ``after`` with its answer.
"""

from __future__ import annotations

import sys

from a2a_anyio import SyncA2AClient, SyncAgentPool, Task

HANG = {"skillId": "hang"}
ECHO = {"skillId": "echo"}


def client_script(url: str, backend: str, what: str) -> None:
    with SyncA2AClient(url, backend=backend) as client:
        try:
            if what == "stream":
                with client.stream_message("hang", metadata=HANG) as stream:
                    for _ in stream:
                        print("waiting", flush=True)
            elif what == "send":
                print("waiting", flush=True)
                client.send_message("hang", metadata=HANG)
            else:
                task = client.send_message("hang", metadata=HANG, blocking=False)
                assert isinstance(task, Task)
                print("waiting", flush=True)
                client.wait(task.id)
        except KeyboardInterrupt:
            print("caught", flush=True)
        sys.stdin.readline()
        print("after", client.send_message("again", metadata=ECHO).text, flush=True)


def pool_script(url: str, backend: str) -> None:
    with SyncAgentPool(backend=backend) as pool:
        try:
            print("waiting", flush=True)
            pool.fan_out([url, url], "hang", metadata=HANG)
        except KeyboardInterrupt:
            print("caught", flush=True)
        sys.stdin.readline()
        [result] = pool.fan_out([url], "again", metadata=ECHO)
        print("after", result.value.text if result.value else result.error, flush=True)


if __name__ == "__main__":
    url, backend, what = sys.argv[1:]
    if what == "fan-out":
        pool_script(url, backend)
    else:
        client_script(url, backend, what)
