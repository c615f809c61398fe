"""The I/O side of the network policy (``_network``): a transport that checks each request
and connects to the address it checked."""

from __future__ import annotations

import httpx

from a2a_anyio._network import EXTENSION, NetworkGuard, NetworkPolicy, literal


class PinnedTransport(httpx.AsyncBaseTransport):
    """A transport that checks each request's URL against the network guard the request
    carries (``EXTENSION``; a request without one may reach public addresses only) and,
    when the policy pins, sends it to the address it checked: the URL's host becomes the
    address, the ``Host`` header and the TLS server name (httpcore's ``sni_hostname``
    extension) stay the name's, so the certificate is checked against the name."""

    def __init__(self, inner: httpx.AsyncBaseTransport, policy: NetworkPolicy) -> None:
        self.inner = inner
        self.policy = policy
        self._strict = policy.guard(())

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        guard = request.extensions.get(EXTENSION)
        if not isinstance(guard, NetworkGuard):
            guard = self._strict
        url = request.url
        addresses = await guard.check(str(url))
        if not guard.policy.pin or literal(url.host) is not None:
            return await self.inner.handle_async_request(request)
        extensions = {k: v for k, v in request.extensions.items() if k != EXTENSION}
        if url.scheme == "https":
            extensions["sni_hostname"] = url.host
        pinned = httpx.Request(
            request.method,
            url.copy_with(host=str(addresses[0])),
            headers=request.headers,  # its Host header is the name's
            stream=request.stream,
            extensions=extensions,
        )
        return await self.inner.handle_async_request(pinned)

    async def aclose(self) -> None:
        await self.inner.aclose()
