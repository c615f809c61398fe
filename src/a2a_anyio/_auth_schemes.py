"""The auth schemes a user gives a client: ``Bearer``, ``Basic``, ``ApiKey`` and OAuth 2.0
client credentials. Loaded when one is first used: a client given a plain ``auth=`` string
(or none) never needs them."""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, quote, quote_plus, urlencode, urlsplit, urlunsplit

import anyio

from a2a_anyio._auth import (
    COOKIE_VALUE,
    HEADER_VALUE,
    TEXT,
    Auth,
    FormPoster,
    check_name,
    check_value,
)
from a2a_anyio._errors import A2AAuthError, A2AProtocolError


def _hidden(secret: str) -> str:
    return "***" if secret else "''"


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
        check_value("Bearer token", self.token, HEADER_VALUE)

    async def apply(self, url: str, headers: dict[str, str], post_form: FormPoster) -> str:
        """Set ``Authorization: Bearer <token>``; the URL is unchanged."""
        headers["Authorization"] = f"Bearer {self.token}"
        return url

    def secrets(self) -> tuple[str, ...]:
        """The token."""
        return (self.token,)

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
        check_value("Basic username", self.username, TEXT)
        check_value("Basic password", self.password, TEXT)

    async def apply(self, url: str, headers: dict[str, str], post_form: FormPoster) -> str:
        """Set ``Authorization: Basic base64(user:password)``; the URL is unchanged."""
        pair = f"{self.username}:{self.password}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
        return url

    def secrets(self) -> tuple[str, ...]:
        """The password, and the pair as the header carries it."""
        pair = base64.b64encode(f"{self.username}:{self.password}".encode()).decode("ascii")
        return (self.password, pair)

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
            check_value("ApiKey name", self.name, TEXT)
            check_value("ApiKey value", self.value, TEXT)
            return
        check_name("ApiKey", self.name)
        check_value(
            "ApiKey value",
            self.value,
            HEADER_VALUE if self.location == "header" else COOKIE_VALUE,
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

    def secrets(self) -> tuple[str, ...]:
        """The key, and the key as a query carries it."""
        return (self.value, quote(self.value, safe=""), quote_plus(self.value))

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
        check_value("OAuth2ClientCredentials token_url", self.token_url, TEXT)
        if urlsplit(self.token_url).scheme not in ("http", "https"):
            raise ValueError("OAuth2ClientCredentials token_url must be an absolute http(s) URL")
        check_value("OAuth2ClientCredentials client_id", self.client_id, TEXT)
        check_value("OAuth2ClientCredentials client_secret", self.client_secret, TEXT)
        for scope in self.scopes:
            check_value("OAuth2ClientCredentials scopes", scope, TEXT)
        if self.audience is not None:
            check_value("OAuth2ClientCredentials audience", self.audience, TEXT)

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
            raise A2AAuthError(
                status_code=status,
                body=f"the token endpoint {self.token_url} refused the client",
            )
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

    def secrets(self) -> tuple[str, ...]:
        """The client secret, and the token fetched with it."""
        return (self.client_secret, *((self._token,) if self._token else ()))

    def __repr__(self) -> str:
        return (
            f"OAuth2ClientCredentials(token_url={self.token_url!r}, "
            f"client_id={self.client_id!r}, client_secret=***)"
        )
