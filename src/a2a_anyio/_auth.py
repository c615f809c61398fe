"""Credentials: what a client attaches to requests (``auth=``, ``headers=``, ``cookies=``),
the checks they pass, and the origins they may go to. The schemes themselves (``Bearer``,
``Basic``, ``ApiKey``, OAuth 2.0) are in ``_auth_schemes``.

Everything here is applied per request by the I/O boundary, hop by hop, so a redirect or a card
that points elsewhere never carries credentials to an origin the user did not give them to.
"""

from __future__ import annotations

import inspect
import re
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager as ContextManager
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple, Protocol
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from a2a_anyio._model import AgentCard

Origin = tuple[str, str, int | None]


class FormPoster(Protocol):
    """Posts a form to a URL, or GETs it when the form is None, with ``headers`` of its own
    (no credentials of the client attached, no redirect to another origin followed);
    returns status and body."""

    def __call__(
        self,
        url: str,
        form: Mapping[str, str] | None,
        /,
        headers: Mapping[str, str] | None = None,
    ) -> Awaitable[tuple[int, bytes]]: ...


def origin_of(url: str) -> Origin:
    """(scheme, host, port) with the default port filled in."""
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), port


TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # an HTTP field name (RFC 9110)
HEADER_VALUE = re.compile(r"[\t\x20-\x7e]*")
COOKIE_VALUE = re.compile(r"[\x20-\x3a\x3c-\x7e]*")  # no ";": it would start another cookie
TEXT = re.compile(r"[^\x00-\x1f\x7f]*")  # no control character
_WHY = {
    HEADER_VALUE: "a character an HTTP header cannot carry (CR, LF, NUL, another control "
    "character, or one outside ASCII)",
    COOKIE_VALUE: "a character a cookie cannot carry (CR, LF, NUL, another control "
    "character, ';', or one outside ASCII)",
    TEXT: "a control character (CR, LF, NUL...)",
}


def check_value(what: str, value: object, allowed: re.Pattern[str]) -> None:
    """ValueError naming ``what`` (never showing ``value``) unless ``value`` is a str that
    ``allowed`` matches whole."""
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a str, not {type(value).__name__}")
    if not allowed.fullmatch(value):
        raise ValueError(f"{what} holds {_WHY[allowed]}")


def check_name(what: str, name: object) -> None:
    if not isinstance(name, str) or not TOKEN.fullmatch(name):
        raise ValueError(
            f"{what} has a name that is not an HTTP token (letters, digits, !#$%&'*+-.^_`|~)"
        )


#: The headers the wire needs as the client sets them (the framing, the media types it sends
#: and reads, the codings it decodes, the protocol version it speaks): no ``headers=`` may
#: name them, a client's or a call's.
PROTOCOL_HEADERS = (
    "Host", "Content-Length", "Transfer-Encoding", "Content-Type", "Accept", "Accept-Encoding",
    "A2A-Version",
)  # fmt: skip
_PROTOCOL = frozenset(name.lower() for name in PROTOCOL_HEADERS)


def check_headers(what: str, headers: object) -> None:
    """Refuse (``TypeError`` unless a mapping; ``ValueError`` naming the header, never its
    value) headers that cannot go into a request unchanged, or that would change how the
    wire is read: names that are not tokens or are among ``PROTOCOL_HEADERS``, values with
    CR, LF, NUL, another control character, or a character outside ASCII."""
    if not isinstance(headers, Mapping):
        raise TypeError(
            f"{what} must be a mapping of header names to str values, not {type(headers).__name__}"
        )
    for name, value in headers.items():
        check_name(what, name)
        if name.lower() in _PROTOCOL:
            raise ValueError(
                f"{what} cannot set {name!r}: the client sets it for the protocol "
                f"({', '.join(PROTOCOL_HEADERS)} are its own)"
            )
        check_value(f"{what}[{name!r}]", value, HEADER_VALUE)


def merged(*layers: Mapping[str, str]) -> dict[str, str]:
    """The headers of ``layers``, each layer's over those before it: names compare without
    case, and the last spelling of a name is the one sent (never two lines for one name)."""
    out: dict[str, str] = {}
    spelt: dict[str, str] = {}
    for layer in layers:
        for name, value in layer.items():
            key = name.lower()
            before = spelt.get(key)
            if before is not None:
                del out[before]
            spelt[key] = name
            out[name] = value
    return out


def check_options(
    auth: object, headers: Mapping[str, str] | None, cookies: Mapping[str, str] | None
) -> None:
    """Refuse (``ValueError`` naming the option, never its value) credentials that cannot
    go into a request unchanged: CR, LF, NUL or other control characters, non-ASCII header
    values, names that are not tokens, headers the protocol sets (``check_headers``)."""
    if isinstance(auth, str):
        check_value("auth", auth, HEADER_VALUE)
    elif isinstance(auth, Auth):
        auth.check()
    if headers is not None:
        check_headers("headers", headers)
    for name, value in (cookies or {}).items():
        check_name("cookies", name)
        check_value(f"cookies[{name!r}]", value, COOKIE_VALUE)


class Auth(ABC):
    """An auth scheme: sets what a request needs (a header, a query parameter, a cookie)."""

    @abstractmethod
    async def apply(self, url: str, headers: dict[str, str], post_form: FormPoster) -> str:
        """Add this scheme's credentials to ``headers``; return the URL to send (API keys in
        the query change it)."""

    async def refresh(self) -> bool:
        """After a 401: renew the credentials if this scheme can; True means try once more."""
        return False

    def check(self) -> None:  # noqa: B027 (a scheme with nothing to check keeps this one)
        """ValueError (naming the field, not its value) if a field cannot go into a request."""

    def secrets(self) -> tuple[str, ...]:
        """The secret values this scheme holds now, as sent (kept out of an agent's text
        before a model reads it)."""
        return ()

    def use_card(self, card: AgentCard) -> None:  # noqa: B027 (most schemes need no card)
        """Told the agent's card whenever the client learns it (``CardAuth`` chooses by it)."""


@dataclass(frozen=True, slots=True)
class MutualTLS:
    """A client certificate for the TLS handshake (not a header: it configures the client)."""

    cert: str
    key: str | None = None
    password: str | None = field(default=None, repr=False)


class CallableAuth(Auth):
    """A function (sync or async) that returns the whole ``Authorization`` value; it is
    called for every request, and once more after a 401."""

    def __init__(self, provider: Callable[[], str | Awaitable[str]]) -> None:
        self._provider = provider
        self._last: str | None = None

    async def apply(self, url: str, headers: dict[str, str], post_form: FormPoster) -> str:
        value = self._provider()
        if inspect.isawaitable(value):
            value = await value
        value = str(value)
        if not HEADER_VALUE.fullmatch(value):
            raise ValueError(f"the auth function returned a value that holds {_WHY[HEADER_VALUE]}")
        headers["Authorization"] = self._last = value
        return url

    async def refresh(self) -> bool:
        return True

    def secrets(self) -> tuple[str, ...]:
        """The last value the function returned, and its token."""
        return authorization_secrets(self._last) if self._last else ()

    def __repr__(self) -> str:
        return f"CallableAuth({getattr(self._provider, '__name__', 'provider')})"


def authorization_secrets(value: str) -> tuple[str, ...]:
    """A header value and, for ``Scheme token``, the token alone."""
    token = value.strip().partition(" ")[2].strip()
    return (value, token) if token else (value,)


AuthInput = str | Auth | MutualTLS | Callable[[], str | Awaitable[str]] | None


_NO_HEADERS: Mapping[str, str] = MappingProxyType({})


class Credentials(NamedTuple):
    """What a client may attach to a request, and the origins it may attach it for.

    ``headers`` are the client's (``headers=``, ``cookies=``, an ``auth=`` string);
    ``auth`` a scheme that adds its own; ``call_headers`` those of one call (its
    ``headers=`` over the context's, see ``A2AClient.request_headers``), set over both.
    ``policy`` says what happens to a request for another origin: ``"strip"`` sends it
    without credentials, ``"refuse"`` raises instead.
    """

    headers: dict[str, str]
    auth: Auth | None
    origins: frozenset[Origin]
    policy: str = "strip"
    call_headers: Mapping[str, str] = _NO_HEADERS

    @property
    def present(self) -> bool:
        return bool(self.headers) or self.auth is not None or bool(self.call_headers)

    def allows(self, url: str) -> bool:
        return origin_of(url) in self.origins

    @property
    def unschemed(self) -> bool:
        """True when the ``Authorization`` value sent has no scheme (a bare token such as
        ``secret-token``, where ``Bearer secret-token`` was meant)."""
        if self.auth is not None:
            return False  # a scheme sets its own value
        value = None
        for name, given in (*self.headers.items(), *self.call_headers.items()):
            if name.lower() == "authorization":
                value = given  # the call's over the client's
        return value is not None and " " not in value.strip()

    def secrets(self) -> tuple[str, ...]:
        """Every secret value these credentials send: the headers' values (an
        ``Authorization`` value's token too, a cookie's value too) and the scheme's."""
        found: list[str] = []
        for name, value in (*self.headers.items(), *self.call_headers.items()):
            found += authorization_secrets(value)
            if name.lower() == "cookie":
                found += [p.partition("=")[2].strip() for p in value.split(";")]
        if self.auth is not None:
            found += self.auth.secrets()
        return tuple(s for s in dict.fromkeys(found) if s)

    def for_call(self, *layers: Mapping[str, str]) -> Credentials:
        """These credentials with the headers of one call, each layer over those before it
        (checked already: ``check_headers``)."""
        return self._replace(call_headers=merged(self.call_headers, *layers))

    def __repr__(self) -> str:
        names = sorted({*self.headers, *self.call_headers})
        return f"<Credentials headers={names} auth={self.auth!r} origins={sorted(self.origins)}>"


def credentials(
    auth: AuthInput,
    headers: Mapping[str, str] | None,
    cookies: Mapping[str, str] | None,
    origins: Iterable[str],
    policy: str,
) -> Credentials:
    """The credentials of a client: ``auth`` (a value, a scheme or a function), ``headers``
    and ``cookies`` (all treated as secret), bound to the origins of ``origins``."""
    if policy not in ("strip", "refuse"):
        raise ValueError(f"cross-origin policy must be 'strip' or 'refuse', not {policy!r}")
    check_options(auth, headers, cookies)
    origins = list(origins)
    for url in origins:
        parts = urlsplit(url)
        if parts.username is not None or parts.password is not None:
            raise ValueError(
                "a URL given to the client (url, endpoint or trusted_origins) holds a user "
                "name or password: give credentials with auth= (Basic(...)) instead"
            )
    static = dict(headers or {})
    if cookies:
        static["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
    scheme: Auth | None = None
    if isinstance(auth, str):
        static["Authorization"] = auth
    elif isinstance(auth, Auth):
        scheme = auth
    elif isinstance(auth, MutualTLS) or auth is None:
        pass  # a certificate configures the connection, not the request
    elif callable(auth):
        scheme = CallableAuth(auth)
    else:
        raise ValueError(f"auth must be a str, an auth scheme or a function, not {auth!r}")
    return Credentials(static, scheme, frozenset(origin_of(u) for u in origins), policy)


#: The headers of the ``request_headers`` blocks a task or thread is in, per client. Each
#: task starts with a copy of its spawner's (asyncio and trio alike); a sync facade's calls
#: take the calling thread's to the portal (``_sync_portal.Calls``).
REQUEST_HEADERS: ContextVar[Mapping[object, Mapping[str, str]]] = ContextVar(
    "a2a_anyio_request_headers", default=MappingProxyType({})
)


def request_headers(owner: object, headers: Mapping[str, str]) -> ContextManager[None]:
    """A block in which every call of ``owner`` (a client) begun in this task adds
    ``headers`` over those of the blocks around it.

    Raises:
        ValueError, TypeError: as ``check_headers`` (at once, not on entering the block).
    """
    check_headers("request_headers", headers)
    return _scoped(owner, dict(headers))


@contextmanager
def _scoped(owner: object, headers: Mapping[str, str]) -> Iterator[None]:
    scoped = REQUEST_HEADERS.get()
    own = merged(scoped.get(owner, {}), headers)
    token = REQUEST_HEADERS.set(MappingProxyType({**scoped, owner: own}))
    try:
        yield
    finally:
        REQUEST_HEADERS.reset(token)


def call_credentials(
    owner: object, base: Credentials, headers: Mapping[str, str] | None
) -> Credentials:
    """The credentials of one call of ``owner``: ``base`` with the headers of the
    ``request_headers`` blocks it is begun in and its own ``headers`` over them.

    Raises:
        ValueError, TypeError: as ``check_headers``.
    """
    scoped = REQUEST_HEADERS.get().get(owner)
    if headers is not None:
        check_headers("headers", headers)
    if not scoped and not headers:
        return base
    return base.for_call(scoped or {}, headers or {})
