"""The transport boundary (``_transport``): the table a codec's transport is chosen from,
the status type each transport gives, and the limits every transport keeps alike
(``_transport_rules``)."""

from __future__ import annotations

import json

import anyio
import anyio.lowlevel
import httpx
import pytest

from a2a_anyio import A2AHTTPError, A2ATimeoutError
from a2a_anyio._auth import credentials
from a2a_anyio._bindings import CODECS, codec_for
from a2a_anyio._bindings.base import HttpStatus
from a2a_anyio._dialects import TaskRef
from a2a_anyio._dialects.ops import Op
from a2a_anyio._http import MAX_PARSED_URLS, HttpTransport
from a2a_anyio._transport import TRANSPORTS, Carriers, HttpWire, TransportOptions
from a2a_anyio._transport_rules import StreamTimeouts

from ._support import jump, on_mock_clock

pytestmark = pytest.mark.anyio

URL = "http://agent.example/rest"


@pytest.mark.parametrize(("binding", "version"), sorted(CODECS))
def test_every_codec_names_a_transport_of_the_table(binding: str, version: str) -> None:
    assert codec_for(binding, version, URL).transport in TRANSPORTS


async def test_a_client_makes_each_transport_once_at_its_first_request() -> None:
    http = HttpTransport()
    carriers = Carriers(http, TransportOptions())
    rest = codec_for("rest", "1.0", URL)
    first = carriers.of(rest)
    assert isinstance(first, HttpWire)
    assert carriers.of(codec_for("jsonrpc", "0.3", URL)) is first
    await carriers.aclose()
    await http.aclose()


async def test_an_http_answer_has_an_http_status_and_its_error_a_plain_int() -> None:
    def missing(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, json={"error": "no such task"})

    http = HttpTransport(httpx.AsyncClient(transport=httpx.MockTransport(missing)))
    codec = codec_for("rest", "1.0", URL)
    req = codec.encode(Op.GET, TaskRef("t-1"))
    try:
        reply = await HttpWire(http).unary(req, credentials(None, None, None, [URL], "strip"), {})
    finally:
        await http.aclose()
    assert (type(reply.status), reply.status) == (HttpStatus, 404)
    with pytest.raises(A2AHTTPError) as info:
        codec.decode(req, reply.status, reply.headers, reply.content)
    assert type(info.value.status_code) is int  # the transport's type stays inside
    assert json.loads(reply.content) == {"error": "no such task"}


@on_mock_clock()
async def test_the_idle_limit_counts_from_the_last_bytes() -> None:
    timeouts = StreamTimeouts(URL, {"agent": URL}, idle=3, open=None)
    with timeouts.waiting() as scope:
        await anyio.sleep(2)
        timeouts.touch()
        await anyio.sleep(2)  # 4 s since the wait began, 2 s since the last bytes
    assert not scope.cancelled_caught
    timeouts.done()
    timeouts.touch()  # no wait now: nothing to push back
    with timeouts.waiting() as scope:
        jump(3)
        await anyio.sleep(1)
    assert scope.cancelled_caught
    error = timeouts.idle_expired()
    assert (error.timeout, error.agent) == ("stream-idle", URL)
    assert error.message == f"stream idle timeout: nothing from {URL} within 3s"


@on_mock_clock()
async def test_the_open_limit_and_its_error() -> None:
    timeouts = StreamTimeouts(URL, {"agent": URL}, idle=None, open=2)
    started = anyio.current_time()
    with timeouts.opening() as scope:
        await anyio.sleep(10)
    assert isinstance(scope, anyio.CancelScope) and scope.cancelled_caught
    assert anyio.current_time() - started == pytest.approx(2)
    error = timeouts.open_expired()
    assert isinstance(error, A2ATimeoutError)
    assert (error.timeout, error.message) == (
        "stream-open",
        f"stream open timeout: no whole answer from {URL} within 2s",
    )
    without = StreamTimeouts(URL, {}, idle=None, open=None)
    with without.opening():
        await anyio.sleep(10)  # no limit: not cut


@on_mock_clock()
async def test_an_open_limit_a_fan_outs_scope_keeps_sooner_makes_no_scope() -> None:
    from a2a_anyio._deadline import held

    timeouts = StreamTimeouts(URL, {"agent": URL}, idle=None, open=5)
    with anyio.move_on_after(2):
        assert isinstance(timeouts.opening(), anyio.CancelScope)  # the caller's may move
        await anyio.lowlevel.checkpoint()
    with anyio.move_on_after(2) as around, held(around):
        opening = timeouts.opening()
        assert not isinstance(opening, anyio.CancelScope)
        with opening:
            await anyio.sleep(10)
    assert around.cancelled_caught
    with anyio.move_on_after(9) as around, held(around):
        assert isinstance(timeouts.opening(), anyio.CancelScope)
        await anyio.lowlevel.checkpoint()


async def test_each_request_goes_to_its_own_url_and_few_parsed_urls_are_kept() -> None:
    seen: list[str] = []

    def echo(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, json={})

    mock = httpx.MockTransport(echo)
    http = HttpTransport(httpx.AsyncClient(transport=mock, params={"k": "v"}))
    urls = [
        f"http://agent.example/t/{i % (MAX_PARSED_URLS + 7)}" for i in range(3 * MAX_PARSED_URLS)
    ]
    try:
        for url in urls:
            await http.request("GET", url)
    finally:
        await http.aclose()
    assert seen == [f"{url}?k=v" for url in urls]  # the client's params added once, each time
    assert len(http._urls) == MAX_PARSED_URLS
