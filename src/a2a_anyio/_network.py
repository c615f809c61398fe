"""The network policy (``network_policy=``): which addresses the URLs an agent gives may
reach, and requests pinned to the address that was checked.

A card names URLs (its interfaces, a JWKS, files) and a server names others (a redirect's
``Location``). Followed blindly, they let an agent on the internet make the client call what
only the client's machine can reach: a loopback service, a private network, a cloud's
metadata address (server-side request forgery). ``NetworkPolicy.check`` decides, for one URL,
from the addresses its host resolves to; the transport of ``_http_pinned`` connects to the
very address it checked (the ``Host`` header and the TLS server name stay the name's), so that a
name answered with a public address for the check and a private one for the connection (DNS
rebinding) reaches nothing it should not.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio
from anyio.abc import ByteStream

from a2a_anyio._errors import A2AClientError, A2AConnectionError, clipped

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
#: Resolves a host name and port to the addresses it may be reached at (as text).
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]

#: The scopes of an address, from the narrowest reach to the widest.
SCOPES = ("loopback", "link-local", "private", "reserved", "public")
#: The key of the extension an ``HttpTransport`` sets on each request it builds: the
#: ``NetworkGuard`` of the client that sends it.
EXTENSION = "a2a_anyio.network"
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))


class A2ANetworkPolicyError(A2AClientError):
    """The network policy refused a URL: ``url``, the ``address`` its host resolved to, and
    the ``rule`` that refused it (``"loopback"``, ``"link-local"``, ``"private"`` or
    ``"reserved"``: the scope of the address, which the user's own URL is not in)."""

    def __init__(self, message: str, *, url: str, address: str, rule: str, **context: Any) -> None:
        super().__init__(message, **context)
        self.url = url
        self.address = address
        self.rule = rule


def _embedded(ip: IPAddress) -> IPAddress:
    """The IPv4 address an IPv6 one carries (IPv4-mapped, NAT64, 6to4), else ``ip``."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return ip.ipv4_mapped
        if any(ip in net for net in _NAT64):
            return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if ip.sixtofour is not None:
            return ip.sixtofour
    return ip


def scope_of(ip: IPAddress) -> str:
    """The scope of an address (one of ``SCOPES``), of the IPv4 address it carries when it
    is IPv4-mapped, NAT64 or 6to4: ``loopback`` (127.0.0.0/8, ::1, and the unspecified
    0.0.0.0 and ::, which reach this host), ``link-local`` (169.254.0.0/16, where clouds
    answer metadata, and fe80::/10), ``reserved`` (multicast, 240.0.0.0/4, ::/8...),
    ``private`` (any other address that
    is not globally reachable: 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10,
    fc00::/7...), else ``public``."""
    ip = _embedded(ip)
    if ip.is_loopback or ip.is_unspecified:  # a connection to 0.0.0.0 reaches this host
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_multicast or ip.is_reserved:
        return "reserved"
    return "public" if ip.is_global else "private"


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and a loopback address as written (127.0.0.0/8, ``::1``); not
    for 0.0.0.0, which a server binds to listen on every interface."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def literal(host: str) -> IPAddress | None:
    """The address ``host`` spells, or None for a name: IPv6 (bracketed or not, with a zone
    or not), and IPv4 in every spelling a resolver takes (``127.0.0.1``, ``2130706433``,
    ``0x7f000001``, ``0177.0.0.1``, ``127.1``)."""
    bare = host.strip("[]")
    try:
        return ipaddress.ip_address(bare)
    except ValueError:
        pass
    if bare and all(c in "0123456789abcdefxABCDEFX." for c in bare) and bare[0].isdigit():
        try:
            return ipaddress.IPv4Address(socket.inet_aton(bare))
        except OSError:
            return None
    return None


async def _system_resolver(host: str, port: int) -> Sequence[str]:
    answers = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(sockaddr[0]) for *_, sockaddr in answers]


def _network(value: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    try:
        return ipaddress.ip_network(value, strict=False)
    except (TypeError, ValueError):
        raise ValueError(f"allow holds networks such as '10.1.0.0/16', not {value!r}") from None


@dataclass(frozen=True, slots=True)
class NetworkPolicy:
    """Which addresses the URLs an agent gives (a card's interfaces, a redirect, a JWKS or
    file URL) may reach; off unless given (``network_policy=NetworkPolicy()``).

    A URL whose host resolves to a loopback, link-local, private or reserved address
    (``scope_of``) is refused with ``A2ANetworkPolicyError``, unless the user's own URL (a
    client's ``url``, ``endpoint`` and ``trusted_origins``) resolves into that same scope: an
    agent at ``http://localhost:8000`` may name ``http://127.0.0.1:9000``, one on the internet
    may not. Every address a name resolves to must pass. ``allow`` lists networks
    (``"10.1.0.0/16"``) whose addresses are taken as public. With ``pin`` (the default), a
    request connects to the address that was checked (``Host`` and the TLS server name stay
    the name's), against DNS rebinding. ``resolver`` (async: host, port -> addresses) replaces
    the system's.
    """

    pin: bool = True
    allow: Sequence[str] = ()
    resolver: Resolver | None = field(default=None, compare=False)
    _allowed: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = field(
        default=(), init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if not isinstance(self.pin, bool):
            raise TypeError(f"pin must be a bool, not {type(self.pin).__name__}")
        if isinstance(self.allow, str):
            raise TypeError("allow is a sequence of networks, not one str")
        object.__setattr__(self, "allow", tuple(self.allow))
        object.__setattr__(self, "_allowed", tuple(_network(n) for n in self.allow))
        if self.resolver is not None and not callable(self.resolver):
            raise TypeError("resolver must be an async function (host, port) -> addresses")

    def scope(self, ip: IPAddress) -> str:
        """``scope_of(ip)``, or ``public`` for an address of ``allow``."""
        if any(ip in net or _embedded(ip) in net for net in self._allowed):
            return "public"
        return scope_of(ip)

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        """The addresses of ``host``: an address literal as it is, ``localhost`` and the
        names under it (RFC 6761) loopback, any other name as the resolver answers.

        Raises:
            A2AConnectionError: the name does not resolve.
        """
        ip = literal(host)
        if ip is not None:
            return [ip]
        name = host.rstrip(".").lower()
        if name == "localhost" or name.endswith(".localhost"):
            return [ipaddress.IPv4Address("127.0.0.1"), ipaddress.IPv6Address("::1")]
        resolve = self.resolver or _system_resolver
        try:
            answers = await resolve(name, port)
            found = [ipaddress.ip_address(str(a).split("%")[0]) for a in answers]
        except (OSError, ValueError) as exc:
            raise A2AConnectionError(
                f"cannot resolve {clipped(host, 100)}: {exc}", request_sent=False
            ) from exc
        if not found:
            raise A2AConnectionError(f"{clipped(host, 100)} resolves to no address")
        return list(dict.fromkeys(found))

    async def scopes(self, urls: Iterable[str]) -> frozenset[str]:
        """The scopes the addresses of ``urls`` (the user's own) are in; a URL that does
        not resolve adds none."""
        found: set[str] = set()
        for url in urls:
            host, port = _host_port(url)
            try:
                found.update(self.scope(ip) for ip in await self.resolve(host, port))
            except A2AConnectionError:
                continue
        return frozenset(found)

    async def check(self, url: str, own: Iterable[str] = ()) -> list[IPAddress]:
        """Whether ``url``, learned from an agent, may be requested by a client whose own
        URLs are ``own``: its host's addresses, each of them public or in a scope of an
        address of ``own``. This is the one decision of the policy; the client's requests
        (each hop of a redirect too) are checked by it, and so may any other fetch of a URL
        an agent gave.

        Raises:
            A2ANetworkPolicyError: an address is not allowed (the error names the URL, the
                address and the rule).
            A2AConnectionError: the host does not resolve.
        """
        return await self._check(url, await self.scopes(own))

    async def _check(self, url: str, allowed: frozenset[str]) -> list[IPAddress]:
        host, port = _host_port(url)
        addresses = await self.resolve(host, port)
        for ip in addresses:
            rule = self.scope(ip)
            if rule != "public" and rule not in allowed:
                shown = clipped(url, 200)
                inner = _embedded(ip)
                spelled = f"{ip} ({inner})" if inner != ip else str(ip)
                where = (
                    f"its address {spelled} is"
                    if literal(host) is not None
                    else f"its host {clipped(host, 100)} resolves to {spelled},"
                )
                raise A2ANetworkPolicyError(
                    f"the network policy refuses {shown}: {where} a {rule} address, and the "
                    f"agent's own URL is not {rule} (NetworkPolicy(allow=...) admits a network)",
                    url=shown,
                    address=str(ip),
                    rule=rule,
                )
        return addresses

    def guard(self, own: Iterable[str]) -> NetworkGuard:
        """The policy bound to a client's own URLs (``own``), for its requests."""
        return NetworkGuard(self, tuple(own))


def _host_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    default = 443 if parts.scheme in ("https", "grpcs") else 80
    return parts.hostname or "", port or default


class NetworkGuard:
    """A policy bound to one client's own URLs: the scopes they resolve to are learned at
    the first request and kept."""

    __slots__ = ("_lock", "_scopes", "own", "policy")

    def __init__(self, policy: NetworkPolicy, own: tuple[str, ...]) -> None:
        self.policy = policy
        self.own = own
        self._scopes: frozenset[str] | None = None
        self._lock: anyio.Lock | None = None

    async def check(self, url: str) -> list[IPAddress]:
        """``NetworkPolicy.check`` of ``url`` for this client.

        Raises:
            A2ANetworkPolicyError, A2AConnectionError: as ``NetworkPolicy.check``.
        """
        if self._scopes is None:
            if self._lock is None:
                self._lock = anyio.Lock()
            async with self._lock:
                if self._scopes is None:
                    self._scopes = await self.policy.scopes(self.own)
        return await self.policy._check(url, self._scopes)


def guarded(
    policy: NetworkPolicy | None, http_client: object, own: Sequence[str]
) -> NetworkGuard | None:
    """A client's ``network_policy`` bound to its own URLs, or None without one.

    Raises:
        TypeError: ``policy`` is not a ``NetworkPolicy``.
        ValueError: ``http_client`` is not one the library made with a network policy (an
            AgentPool's is): its requests would not be checked.
    """
    if policy is None:
        return None
    if not isinstance(policy, NetworkPolicy):
        raise TypeError(f"network_policy must be a NetworkPolicy, not {type(policy).__name__}")
    if http_client is not None and getattr(http_client, "network_policy", None) is None:
        raise ValueError(
            "network_policy needs the HTTP client the library makes (or an AgentPool's made "
            "with a network_policy): the requests of another http_client would not be checked"
        )
    return policy.guard(own)


async def connect_tcp(guard: NetworkGuard | None, url: str, host: str, port: int) -> ByteStream:
    """A TCP connection to ``host:port`` for ``url`` (a transport of its own, gRPC's): under
    a network guard, checked first and, when the policy pins, made to the address checked.

    Raises:
        A2ANetworkPolicyError, A2AConnectionError: as ``NetworkPolicy.check``.
        OSError: the connection failed.
    """
    if guard is None:
        return await anyio.connect_tcp(host, port)
    addresses = await guard.check(url)
    return await anyio.connect_tcp(str(addresses[0]) if guard.policy.pin else host, port)
