"""A script interrupted by Ctrl-C: ``python interrupted_script.py URL BACKEND WHAT``.

WHAT is where the signal finds it: ``stream`` (reading a stream), ``send`` (a blocking send),
``wait`` (``wait()`` on a task), ``fan-out`` (``SyncAgentPool.fan_out``), or ``start``: a
blocking send still being started, the event loop held meanwhile by another thread's request;
there the script's own SIGINT handler raises ``KeyboardInterrupt`` only once the loop has
started the call and it has opened its request, as a signal handled late would find it.
The agent's ``hang`` skill never ends; its ``echo`` skill replies at once.

The script prints ``waiting`` once it is about to wait and, in its own
``except KeyboardInterrupt``, how many of its requests are open; then it makes one more call
with the same client or pool, prints ``after`` with its answer, and closes. The client's
interceptor prints how each send, stream and wait ended (``ended send interrupted``...).
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import AsyncIterator
from types import FrameType

import httpx

from a2a_anyio import Interceptor, Operation, SyncA2AClient, SyncAgentPool, Task

HANG = {"skillId": "hang"}
ECHO = {"skillId": "echo"}
TIMEOUT = 10.0


class Counting(httpx.AsyncHTTPTransport):
    """Counts the requests open: sent and not yet answered, or answered and their body not
    yet closed. With ``hold_next``, the next request holds the whole event loop until
    ``release`` is set. It keeps no connection open between requests: the script leaves
    its client open (the facade does not close one it is given)."""

    def __init__(self) -> None:
        super().__init__(limits=httpx.Limits(max_keepalive_connections=0))
        self.open = 0
        self.hold_next = False
        self.held = threading.Event()
        self.release = threading.Event()
        self.hanging = threading.Event()  # a request to the hanging skill is open

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.hold_next:
            self.hold_next = False
            self.held.set()
            self.release.wait(TIMEOUT)  # blocks the event loop's thread: nothing runs there
        self.open += 1
        if b'"hang"' in request.content:
            self.hanging.set()
        try:
            response = await super().handle_async_request(request)
        except BaseException:
            self.open -= 1
            raise
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = Body(response.stream, self)
        return response


class Body(httpx.AsyncByteStream):
    """A response's body, counted open until closed."""

    def __init__(self, stream: httpx.AsyncByteStream, counting: Counting) -> None:
        self.stream = stream
        self.counting = counting
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.stream:
            yield chunk

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            self.counting.open -= 1
        await self.stream.aclose()


HTTP = Counting()


class Endings(Interceptor):
    """An audit log of the calls the script makes (not of their look-ups, nor of the card
    read in another thread)."""

    def ended(self, op: Operation) -> None:
        if op.part_of is None and op.name in ("send", "stream", "wait"):
            print("ended", op.name, op.ending, flush=True)


def interrupt_once_hanging(signum: int, frame: FrameType | None) -> None:
    """Python's own handler, raising only once the held loop has started the call and the
    call has sent its request."""
    HTTP.release.set()
    HTTP.hanging.wait(TIMEOUT)
    raise KeyboardInterrupt


def client_script(url: str, backend: str, what: str) -> None:
    holder: threading.Thread | None = None
    http = httpx.AsyncClient(transport=HTTP)
    with SyncA2AClient(url, backend=backend, http_client=http, interceptors=[Endings()]) as client:
        try:
            if what == "stream":
                with client.stream_message("hang", metadata=HANG) as stream:
                    try:
                        for _ in stream:
                            print("waiting", flush=True)
                    except KeyboardInterrupt:
                        print("interrupted in the stream; open requests:", HTTP.open, flush=True)
                        raise
            elif what == "send":
                print("waiting", flush=True)
                client.send_message("hang", metadata=HANG)
            elif what == "wait":
                task = client.send_message("hang", metadata=HANG, blocking=False)
                assert isinstance(task, Task)
                print("waiting", flush=True)
                client.wait(task.id)
            else:
                signal.signal(signal.SIGINT, interrupt_once_hanging)
                HTTP.hold_next = True
                holder = threading.Thread(target=client.get_card, kwargs={"refresh": True})
                holder.start()
                HTTP.held.wait(TIMEOUT)
                print("waiting", flush=True)
                client.send_message("hang", metadata=HANG)  # started while the loop is held
        except KeyboardInterrupt:
            if holder is not None:
                holder.join()  # its request is not the interrupted call's
            print("caught; open requests:", HTTP.open, flush=True)
        print("after", client.send_message("again", metadata=ECHO).text, flush=True)


def pool_script(url: str, backend: str) -> None:
    with SyncAgentPool(backend=backend, http_client=httpx.AsyncClient(transport=HTTP)) as pool:
        try:
            print("waiting", flush=True)
            pool.fan_out([url, url], "hang", metadata=HANG)
        except KeyboardInterrupt:
            print("caught; open requests:", HTTP.open, flush=True)
        [result] = pool.fan_out([url], "again", metadata=ECHO)
        print("after", result.value.text if result.value else result.error, flush=True)


if __name__ == "__main__":
    url, backend, what = sys.argv[1:]
    if what == "fan-out":
        pool_script(url, backend)
    else:
        client_script(url, backend, what)
