"""The auth schemes a user gives a client: ``Bearer``, ``Basic``, ``ApiKey`` (OAuth 2.0 is in
``_oauth``). Loaded when one is first used: a client given a plain ``auth=`` string
(or none) never needs them."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, quote_plus, urlencode, urlsplit, urlunsplit

from a2a_anyio._auth import (
    COOKIE_VALUE,
    HEADER_VALUE,
    TEXT,
    Auth,
    FormPoster,
    check_name,
    check_value,
)


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
