"""Which wire a client speaks: the candidates an agent offers, the one in use, what was learned.

A card (or a bare endpoint) gives an ordered list of wire codecs. The first is used until an
answer says "wrong dialect"; then the next one, and that choice is remembered per URL in a
``LearnedWires`` that a pool's clients share.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

import anyio

from a2a_anyio._bindings import WireCodec, codec_for
from a2a_anyio._dialects.card import candidates
from a2a_anyio._errors import (
    A2AClientError,
    A2ADiscoveryError,
    A2AHTTPError,
    MethodNotFoundError,
    VersionNotSupportedError,
    install_extra,
    instead,
    located,
    shown,
)
from a2a_anyio._http import resolve
from a2a_anyio._model import AgentCard

Wire = tuple[str, str, str]
"""(binding, version, interface URL)."""


class LearnedWires:
    """What worked for each URL after a fallback: owned by a client, or shared by the
    clients of one pool."""

    def __init__(self) -> None:
        self._by_key: dict[str, Wire] = {}

    def get(self, key: str) -> Wire | None:
        """What worked for ``key``, if anything was learned."""
        return self._by_key.get(key)

    def learn(self, key: str, codec: WireCodec) -> None:
        """Remember that ``codec``'s binding and version at its URL worked for ``key``."""
        self._by_key[key] = _wire(codec)


def _wire(codec: WireCodec) -> Wire:
    return codec.binding, codec.version, codec.url


class Wires:
    """The wire codecs of one client's agent: found once (single-flight), then the one in use
    moves on only after an answer that says it is the wrong one."""

    def __init__(self, key: str, *, tenant: str | None, extensions: tuple[str, ...]) -> None:
        self.key = key
        self.tenant = tenant
        self.extensions = extensions
        self.learned = LearnedWires()
        self.codec: WireCodec | None = None
        self.candidates: list[WireCodec] = []
        self._lock = anyio.Lock()

    async def resolve(self, find: Callable[[], Awaitable[list[WireCodec]]]) -> WireCodec:
        """The codec in use: the first of the candidates ``find`` gives, or what was learned."""
        if self.codec is not None:
            return self.codec
        async with self._lock:
            if self.codec is None:
                self.candidates = await find()
                self.codec = self._learned_codec() or self.candidates[0]
            return self.codec

    def jsonrpc(self) -> WireCodec | None:
        """A JSON-RPC codec of the agent's, the one in use first (None: it has none)."""
        if self.codec is not None and self.codec.binding == "jsonrpc":
            return self.codec
        return next((c for c in self.candidates if c.binding == "jsonrpc"), None)

    def fall_back(self, codec: WireCodec, exc: A2AClientError) -> bool:
        """After an answer that says "wrong dialect", move to the next candidate (once each);
        after one that names the wire spoken there (``A2AHTTPError.speaks``), to that wire."""
        if codec not in self.candidates:
            return False
        if isinstance(exc, A2AHTTPError) and exc.speaks not in (None, codec.version):
            assert exc.speaks is not None
            return self._move_to((codec.binding, exc.speaks, codec.url))
        wrong = isinstance(exc, (MethodNotFoundError, VersionNotSupportedError)) or (
            codec.binding == "rest"
            and isinstance(exc, A2AHTTPError)
            and exc.status_code in (404, 405)
        )
        index = self.candidates.index(codec) + 1
        if not wrong or index >= len(self.candidates):
            return False
        self.codec = next_codec = self.candidates[index]
        self.learned.learn(self.key, next_codec)
        return True

    def _learned_codec(self) -> WireCodec | None:
        """The candidate that worked before (for this client or another of its pool); a wire
        an answer named is made again, it is no candidate of the card."""
        learned = self.learned.get(self.key)
        if learned is None:
            return None
        for codec in self.candidates:
            if _wire(codec) == learned:
                return codec
        if not any(c.url == learned[2] for c in self.candidates):
            return None  # the card moved on
        return self._add(learned)

    def _move_to(self, wire: Wire) -> bool:
        """Use ``wire`` from now on (False: in use already)."""
        codec = next((c for c in self.candidates if _wire(c) == wire), None)
        if codec is None:
            codec = self._add(wire)
        elif codec is self.codec:
            return False
        self.codec = codec
        self.learned.learn(self.key, codec)
        return True

    def _add(self, wire: Wire) -> WireCodec:
        binding, version, url = wire
        codec = codec_for(binding, version, url, tenant=self.tenant, extensions=self.extensions)
        self.candidates.append(codec)
        return codec


def endpoint_candidates(
    endpoint: str, protocol: str, *, tenant: str | None, extensions: tuple[str, ...]
) -> list[WireCodec]:
    """The codecs to try at a bare JSON-RPC endpoint, which states no version: in order.
    (0.2 speaks the methods of 0.3, so it is no separate guess.)"""
    versions = [v for v in ("1.0", "0.3", "legacy") if protocol in ("auto", v)]
    if protocol == "0.2":
        versions = ["0.2"]
    return [
        codec_for("jsonrpc", v, endpoint, tenant=tenant, extensions=extensions) for v in versions
    ]


def grpc_target(base: str, ref: str) -> tuple[str, str | None]:
    """A card's gRPC interface URL as the gRPC transport takes it, and why it cannot be
    called (None: it can). A bare ``host:port`` is reached as the card was: with TLS when
    the card came over https; ``grpc://`` and ``grpcs://`` are cleartext and TLS. The gRPC
    extra must be installed."""
    missing = grpc_missing()
    if missing is not None:
        return (
            ref,
            f"is gRPC, which needs the grpc extra ({missing} is missing: {install_extra('grpc')})",
        )
    scheme, sep, rest = ref.partition("://")
    if not sep:
        scheme, rest = ("https" if urlsplit(base).scheme == "https" else "http"), ref
    scheme = {"grpc": "http", "grpcs": "https"}.get(scheme.lower(), scheme)
    return resolve(base, f"{scheme}://{rest}")


def grpc_missing() -> str | None:
    """The module of the ``grpc`` extra that is not installed (None: it is all there)."""
    for name in ("h2", "google.protobuf", "google.rpc"):
        try:
            found = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            found = None
        if found is None:
            return name
    return None


def card_candidates(
    card: AgentCard,
    card_url: str | None,
    base: str,
    *,
    protocol: str,
    bindings: tuple[str, ...],
    tenant: str | None,
    extensions: tuple[str, ...],
    agent: str | None,
) -> list[WireCodec]:
    """The codecs of the card's interfaces this client can call, best first; each with its
    variants (tried once when it answers 404). Relative URLs are the card's own (``base``)."""
    try:
        usable = candidates(card, protocol, bindings, card_url)
    except A2AClientError as exc:  # the card's reader knows no agent
        instead(located(exc, {"agent": agent, "operation": "card"}))
    out, unusable = [], []
    for iface in usable:
        if iface.binding == "GRPC":
            url, problem = grpc_target(base, iface.url)
        else:
            url, problem = resolve(base, iface.url)
        if problem is not None:
            unusable.append(f"{shown(iface.url, 200)} {problem}")
            continue
        codec = codec_for(
            iface.binding,
            iface.protocol_version or "0.3",
            url,
            tenant=tenant or iface.tenant,
            extensions=extensions,
        )
        out += [codec, *codec.variants()]
    if not out:
        raise A2ADiscoveryError(
            f"agent {shown(card.name)} offers no interface URL this client can call: "
            + "; ".join(unusable),
            agent=agent,
            operation="card",
        )
    return out
