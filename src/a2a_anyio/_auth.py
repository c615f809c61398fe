"""Credentials: the auth schemes agents declare, and the origins credentials may go to.

Everything here is applied per request by the I/O boundary, hop by hop, so a redirect or a card
that points elsewhere never carries credentials to an origin the user did not give them to.
"""

from __future__ import annotations

import base64
import inspect
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import anyio

from a2a_anyio._errors import A2AAuthError, A2AProtocolError

Origin = tuple[str, str, int | None]
#: Posts a form to a URL (no credentials of the client attached); returns status and body.
FormPoster = Callable[[str, Mapping[str, str]], Awaitable[tuple[int, bytes]]]


def origin_of(url: str) -> Origin:
    """(scheme, host, port) with the default port filled in."""
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), port


def _hidden(secret: str) -> str:
    return "***" if secret else "''"


_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # an HTTP field name (RFC 9110)
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e]*")
_COOKIE_VALUE = re.compile(r"[\x20-\x3a\x3c-\x7e]*")  # no ";": it would start another cookie
_TEXT = re.compile(r"[^\x00-\x1f\x7f]*")  # no control character
_WHY = {
    _HEADER_VALUE: "a character an HTTP header cannot carry (CR, LF, NUL, another control "
    "character, or one outside ASCII)",
    _COOKIE_VALUE: "a character a cookie cannot carry (CR, LF, NUL, another control "
    "character, ';', or one outside ASCII)",
    _TEXT: "a control character (CR, LF, NUL...)",
}


def _check(what: str, value: object, allowed: re.Pattern[str]) -> None:
    """ValueError naming ``what`` (never showing ``value``) unless ``value`` is a str that
    ``allowed`` matches whole."""
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a str, not {type(value).__name__}")
    if not allowed.fullmatch(value):
        raise ValueError(f"{what} holds {_WHY[allowed]}")


def _check_name(what: str, name: object) -> None:
    if not isinstance(name, str) or not _TOKEN.fullmatch(name):
        raise ValueError(
            f"{what} has a name that is not an HTTP token (letters, digits, !#$%&'*+-.^_`|~)"
        )


def check_options(
    auth: object, headers: Mapping[str, str] | None, cookies: Mapping[str, str] | None
) -> None:
    """Refuse (``ValueError`` naming the option, never its value) credentials that cannot
    go into a request unchanged: CR, LF, NUL or other control characters, non-ASCII header
    values, names that are not tokens."""
    if isinstance(auth, str):
        _check("auth", auth, _HEADER_VALUE)
    elif isinstance(auth, Auth):
        auth.check()
    for name, value in (headers or {}).items():
        _check_name("headers", name)
        _check(f"headers[{name!r}]", value, _HEADER_VALUE)
    for name, value in (cookies or {}).items():
        _check_name("cookies", name)
        _check(f"cookies[{name!r}]", value, _COOKIE_VALUE)


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


@dataclass(frozen=True, slots=True, repr=False)
class Bearer(Auth):
    """``Authorization: Bearer <token>``."""

    token: str

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Refuse a token a header cannot carry.

        Raises:
            ValueError: the token holds CR, LF or NUL (the message names the field, not the value).
        """
        _check("Bearer token", self.token, _HEADER_VALUE)

    async def apply(self, url: str, headers: dict[str, str], post_form: FormPoster) -> str:
        """Set ``Authorization: Bearer <token>``; the URL is unchanged."""
        headers["Authorization"] = f"Bearer {self.token}"
        return url

    def __repr__(self) -> str:
        return f"Bearer(token={_hidden(self.token)})"


@dataclass(frozen=True, slots=True, repr=False)
class Basic(Auth):
    """``Authorization: Basic base64(user:password)``."""

    username: str
    password: str

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Refuse a username or password a request cannot carry.

        Raises:
            ValueError: a field holds CR, LF or NUL (named, not quoted).
        """
        _check("Basic username", self.username, _TEXT)
        _check("Basic password", self.password, _TEXT)

    async def apply(self, url: str, headers: dict[str, str], post_form: FormPoster) -> str:
        """Set ``Authorization: Basic base64(user:password)``; the URL is unchanged."""
        pair = f"{self.username}:{self.password}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
        return url

    def __repr__(self) -> str:
        return f"Basic(username={self.username!r}, password={_hidden(self.password)})"


@dataclass(frozen=True, slots=True, repr=False)
class ApiKey(Auth):
    """An API key in a header (default ``X-API-Key``), a query parameter or a cookie."""

    value: str
    name: str = "X-API-Key"
    location: str = "header"

    def __post_init__(self) -> None:
        if self.location not in ("header", "query", "cookie"):
            raise ValueError(f"location must be header, query or cookie, not {self.location!r}")
        self.check()

    def check(self) -> None:
        """Refuse a name or value the key's location cannot carry.

        Raises:
            ValueError: a name that is not a header or cookie name, or a value with CR, LF, NUL
                (or, in a cookie, a character cookies cannot hold).
        """
        if self.location == "query":
            _check("ApiKey name", self.name, _TEXT)
            _check("ApiKey value", self.value, _TEXT)
            return
        _check_name("ApiKey", self.name)
        _check(
            "ApiKey value",
            self.value,
            _HEADER_VALUE if self.location == "header" else _COOKIE_VALUE,
        )

    async def apply(self, url: str, headers: dict[str, str], post_form: FormPoster) -> str:
        """Put the key in its header, cookie or query parameter; the URL changes for the query."""
        if self.location == "header":
            headers[self.name] = self.value
        elif self.location == "cookie":
            cookie = f"{self.name}={self.value}"
            headers["Cookie"] = f"{headers['Cookie']}; {cookie}" if "Cookie" in headers else cookie
        else:
            parts = urlsplit(url)
            query = [*parse_qsl(parts.query, keep_blank_values=True), (self.name, self.value)]
            return urlunsplit(parts._replace(query=urlencode(query)))
        return url

    def __repr__(self) -> str:
        return f"ApiKey(name={self.name!r}, location={self.location!r}, value=***)"


#: What an access token may hold (visible ASCII: RFC 6750's b64token and a little more).
_TOKEN_CHARS = re.compile(r"[\x21-\x7e]+")


@dataclass(slots=True, repr=False)
class OAuth2ClientCredentials(Auth):
    """OAuth 2.0 client credentials: a token from ``token_url``, cached until it expires and
    fetched again once after a 401."""

    token_url: str
    client_id: str
    client_secret: str
    scopes: tuple[str, ...] = ()
    audience: str | None = None
    _token: str | None = field(default=None, init=False)
    _expires: float = field(default=0.0, init=False)
    _lock: anyio.Lock | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Refuse a token URL that is not http(s), or fields a request cannot carry.

        Raises:
            ValueError: the field at fault, named but not quoted.
        """
        _check("OAuth2ClientCredentials token_url", self.token_url, _TEXT)
        if urlsplit(self.token_url).scheme not in ("http", "https"):
            raise ValueError("OAuth2ClientCredentials token_url must be an absolute http(s) URL")
        _check("OAuth2ClientCredentials client_id", self.client_id, _TEXT)
        _check("OAuth2ClientCredentials client_secret", self.client_secret, _TEXT)
        for scope in self.scopes:
            _check("OAuth2ClientCredentials scopes", scope, _TEXT)
        if self.audience is not None:
            _check("OAuth2ClientCredentials audience", self.audience, _TEXT)

    async def apply(self, url: str, headers: dict[str, str], post_form: FormPoster) -> str:
        """Set ``Authorization: Bearer <token>``, fetching a token first when there is none or it
        expired (one request for many concurrent calls).

        Raises:
            A2AAuthError: the token endpoint refused the client.
            A2AProtocolError: the token endpoint's answer holds no usable token.
        """
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:  # one token request for many concurrent calls
            if self._token is None or anyio.current_time() >= self._expires:
                await self._fetch(post_form)
        headers["Authorization"] = f"Bearer {self._token}"
        return url

    async def _fetch(self, post_form: FormPoster) -> None:
        form = {
            "grant_type": "client_credentials",
            "client_id": self.client_id,
            "client_secret": self.client_secret,
        }
        if self.scopes:
            form["scope"] = " ".join(self.scopes)
        if self.audience:
            form["audience"] = self.audience
        status, body = await post_form(self.token_url, form)
        if status != 200:
            raise A2AAuthError(status, f"the token endpoint {self.token_url} refused the client")
        try:
            value = json.loads(body)
            token = value["access_token"]
            lifetime = float(value.get("expires_in", 3600))
        except (ValueError, KeyError, TypeError, OverflowError) as exc:  # 10**400: OverflowError
            raise A2AProtocolError(f"bad token response from {self.token_url}") from exc
        if not isinstance(token, str) or not token:
            raise A2AProtocolError(f"bad token response from {self.token_url}")
        if not _TOKEN_CHARS.fullmatch(token):
            # Never quoted: the text would go into error messages and logs.
            raise A2AProtocolError(
                f"bad token response from {self.token_url}: the access token holds characters "
                "an HTTP header cannot carry"
            )
        self._token = token
        # Renew a little early rather than send a token that expires on the way.
        self._expires = anyio.current_time() + max(0.0, lifetime - 30.0)

    async def refresh(self) -> bool:
        """After a 401: forget the token, so the next try fetches a new one; returns True."""
        self._token = None
        return True

    def __repr__(self) -> str:
        return (
            f"OAuth2ClientCredentials(token_url={self.token_url!r}, "
            f"client_id={self.client_id!r}, client_secret=***)"
        )


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

    async def apply(self, url: str, headers: dict[str, str], post_form: FormPoster) -> str:
        value = self._provider()
        if inspect.isawaitable(value):
            value = await value
        value = str(value)
        if not _HEADER_VALUE.fullmatch(value):
            raise ValueError(f"the auth function returned a value that holds {_WHY[_HEADER_VALUE]}")
        headers["Authorization"] = value
        return url

    async def refresh(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"CallableAuth({getattr(self._provider, '__name__', 'provider')})"


AuthInput = str | Auth | MutualTLS | Callable[[], str | Awaitable[str]] | None


@dataclass(slots=True, repr=False)
class Credentials:
    """What a client may attach to a request, and the origins it may attach it for.

    ``policy`` says what happens to a request for another origin: ``"strip"`` sends it
    without credentials, ``"refuse"`` raises instead.
    """

    headers: dict[str, str]
    auth: Auth | None
    origins: frozenset[Origin]
    policy: str = "strip"

    @property
    def present(self) -> bool:
        return bool(self.headers) or self.auth is not None

    def allows(self, url: str) -> bool:
        return origin_of(url) in self.origins

    def __repr__(self) -> str:
        names = sorted(self.headers)
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
