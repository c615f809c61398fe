"""OAuth 2.0 access tokens: the grants (client credentials, token exchange, JWT bearer, device
code, authorization code with PKCE) over one token cache.

Every flow keeps its tokens in memory: one token request for many concurrent calls (an
``anyio.Lock``), renewed a little before it expires, through the refresh token when there is
one, and once after a 401. A token goes only where the client sends credentials (its
origins); a token request carries no credential of the client and never follows a redirect
to another origin (the I/O boundary's ``post_form``). No token shows in a repr, an error or a
log record.
"""

from __future__ import annotations

import base64
import inspect
import json
import math
import re
import time
from abc import abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote_plus

import anyio

from a2a_anyio._auth import TEXT, Auth, FormPoster, check_value
from a2a_anyio._errors import A2AAuthError, A2AProtocolError, shown

#: What an access token may hold (visible ASCII: RFC 6750's b64token and a little more).
_TOKEN_CHARS = re.compile(r"[\x21-\x7e]+")
#: An OAuth error code (RFC 6749 section 5.2: NQCHAR without the space).
_ERROR_CODE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]{1,64}")
#: Renew a token this many seconds before it expires rather than send one that expires on
#: the way.
EARLY = 30.0
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
DEVICE_CODE = "urn:ietf:params:oauth:grant-type:device_code"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"

Secret = str | Callable[[], str | Awaitable[str]]


@dataclass(frozen=True, slots=True, repr=False)
class TokenSet:
    """Tokens an authorization server issued: ``expires_at`` in seconds since the epoch
    (None: not said)."""

    access_token: str
    refresh_token: str | None = None
    expires_at: float | None = None
    scope: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON object of the tokens (``from_dict`` reads it back): it holds secrets."""
        return {
            "access_token": self.access_token,
            "refresh_token": self.refresh_token,
            "expires_at": self.expires_at,
            "scope": self.scope,
        }

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> TokenSet:
        """``to_dict``'s shape back; ValueError if it is not."""
        access, refresh = value.get("access_token"), value.get("refresh_token")
        expires, scope = value.get("expires_at"), value.get("scope")
        if not isinstance(access, str) or not _TOKEN_CHARS.fullmatch(access):
            raise ValueError("stored tokens hold no usable access token")
        if refresh is not None and not isinstance(refresh, str):
            raise ValueError("a stored refresh token is not a str")
        if expires is not None and not isinstance(expires, (int, float)):
            raise ValueError("a stored expiry is not a number")
        return cls(access, refresh, None if expires is None else float(expires), scope)

    def __repr__(self) -> str:
        return (
            f"TokenSet(access_token=***, refresh_token={'***' if self.refresh_token else None}, "
            f"expires_at={self.expires_at!r}, scope={self.scope!r})"
        )


class TokenError(A2AAuthError):
    """The token endpoint refused a grant; ``error`` is its OAuth error code (RFC 6749)."""

    def __init__(self, message: str, *, status_code: int, error: str, **kwargs: Any) -> None:
        super().__init__(message, status_code=status_code, **kwargs)
        self.error = error


def read_tokens(status: int, body: bytes, url: str, old: TokenSet | None = None) -> TokenSet:
    """A token response (RFC 6749 section 5.1) as a ``TokenSet``; a refused grant as
    ``TokenError`` (its error code, never the server's text); ``A2AProtocolError`` when the
    answer is no token response. A refresh that issues no new refresh token keeps ``old``'s.
    """
    try:
        value = json.loads(body)
    except ValueError:
        value = None
    if status != 200:
        error = value.get("error") if isinstance(value, dict) else None
        code = error if isinstance(error, str) and _ERROR_CODE.fullmatch(error) else "refused"
        raise TokenError(
            f"the token endpoint {shown(url, 200)} refused the grant ({code})",
            status_code=status,
            error=code,
        )
    if not isinstance(value, dict):
        raise A2AProtocolError(f"bad token response from {shown(url, 200)}: not a JSON object")
    token = value.get("access_token")
    if not isinstance(token, str) or not token:
        raise A2AProtocolError(f"bad token response from {shown(url, 200)}: no access_token")
    refresh = value.get("refresh_token")
    for what, given in (("access", token), ("refresh", refresh)):
        if given is not None and (not isinstance(given, str) or not _TOKEN_CHARS.fullmatch(given)):
            # Never quoted: the text would go into error messages and logs.
            raise A2AProtocolError(
                f"bad token response from {shown(url, 200)}: the {what} token holds characters "
                "an HTTP header cannot carry"
            )
    try:  # a number, or a string holding one (some servers); 1e999 is forever
        lifetime = float(value.get("expires_in", 3600))
    except (TypeError, ValueError, OverflowError) as exc:  # 10**400: OverflowError
        raise A2AProtocolError(
            f"bad token response from {shown(url, 200)}: bad expires_in"
        ) from exc
    if math.isnan(lifetime) or lifetime < 0:
        raise A2AProtocolError(f"bad token response from {shown(url, 200)}: bad expires_in")
    scope = value.get("scope")
    return TokenSet(
        token,
        refresh if isinstance(refresh, str) else (old.refresh_token if old else None),
        time.time() + min(lifetime, 10 * 365 * 86400.0),
        scope if isinstance(scope, str) else None,
    )


async def resolved(value: Secret) -> str:
    """A secret given as a str, or as a function (sync or async) that returns one."""
    if isinstance(value, str):
        return value
    got = value()
    if inspect.isawaitable(got):
        got = await got
    if not isinstance(got, str):
        raise TypeError(f"a token function must return a str, not {type(got).__name__}")
    return got


def check_url(what: str, url: object) -> None:
    check_value(what, url, TEXT)
    assert isinstance(url, str)
    if not re.match(r"https?://[^/?#]", url):
        raise ValueError(f"{what} must be an absolute http(s) URL")


class OAuth2Flow(Auth):
    """The token cache every OAuth 2.0 flow shares; a flow says how to get its first tokens
    (``obtain``). ``tokens`` starts it with tokens got before (e.g. kept by ``on_tokens``, a
    function called with each new ``TokenSet``); ``token_auth`` says how a client with a
    secret proves itself to the token endpoint (HTTP Basic unless told); ``refresh_url``
    is where a refresh token goes, when not to ``token_url``."""

    _kind = "OAuth2"

    def __init__(
        self,
        token_url: str,
        client_id: str | None,
        client_secret: str | None = None,
        scopes: Sequence[str] = (),
        *,
        tokens: TokenSet | None = None,
        on_tokens: Callable[[TokenSet], object] | None = None,
        token_auth: str = "client_secret_basic",
        refresh_url: str | None = None,
    ) -> None:
        if token_auth not in ("client_secret_basic", "client_secret_post"):
            raise ValueError(
                f"token_auth must be 'client_secret_basic' or 'client_secret_post', not {token_auth!r}"
            )
        self.token_auth = token_auth
        self.refresh_url = refresh_url
        if isinstance(scopes, str):
            raise TypeError("scopes is a sequence of str (('a', 'b')), not one str")
        self.token_url = token_url
        self.client_id = client_id
        self.client_secret = client_secret
        self.scopes = tuple(scopes)
        self.on_tokens = on_tokens
        self._tokens = tokens
        # Loop time when the access token should be renewed.
        self._renew_at = self._renew_time(tokens)
        self._lock: anyio.Lock | None = None
        # The access token each task last sent: after a 401, only that one is dropped, so
        # that many calls refused together renew it once.
        self._sent: ContextVar[str | None] = ContextVar("sent", default=None)
        self.check()

    @staticmethod
    def _renew_time(tokens: TokenSet | None) -> float:
        if tokens is None:
            return -math.inf
        if tokens.expires_at is None:
            return math.inf
        try:
            now = anyio.current_time()
        except RuntimeError:  # no event loop yet: the first apply sets it
            return math.nan
        return now + tokens.expires_at - time.time() - EARLY

    def check(self) -> None:
        """Refuse URLs that are not http(s), or fields a request cannot carry.

        Raises:
            ValueError: the field at fault, named but not quoted.
        """
        kind = self._kind
        check_url(f"{kind} token_url", self.token_url)
        if self.refresh_url is not None:
            check_url(f"{kind} refresh_url", self.refresh_url)
        if self.client_id is not None:
            check_value(f"{kind} client_id", self.client_id, TEXT)
        if self.client_secret is not None:
            check_value(f"{kind} client_secret", self.client_secret, TEXT)
        for scope in self.scopes:
            check_value(f"{kind} scopes", scope, TEXT)

    @property
    def tokens(self) -> TokenSet | None:
        """The tokens held now (None before the first)."""
        return self._tokens

    async def apply(self, url: str, headers: dict[str, str], post_form: FormPoster) -> str:
        """Set ``Authorization: Bearer <token>``, getting a token first when there is none or
        it is about to expire (one request for many concurrent calls).

        Raises:
            A2AAuthError: the authorization server refused the grant.
            A2AProtocolError: its answer holds no usable token.
        """
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            if math.isnan(self._renew_at):
                self._renew_at = self._renew_time(self._tokens)
            if self._tokens is None or anyio.current_time() >= self._renew_at:
                self._keep(await self._renewed(post_form))
            assert self._tokens is not None
            token = self._tokens.access_token
        headers["Authorization"] = f"Bearer {token}"
        self._sent.set(token)
        return url

    async def _renewed(self, post_form: FormPoster) -> TokenSet:
        old = self._tokens
        if old is not None and old.refresh_token:
            form = {"grant_type": "refresh_token", "refresh_token": old.refresh_token}
            try:
                return await self.token_request(post_form, form, old, self.refresh_url)
            except TokenError as exc:
                if exc.error != "invalid_grant":
                    raise
                # The refresh token expired or was revoked: get new tokens as at first.
        return await self.obtain(post_form)

    def _keep(self, tokens: TokenSet) -> None:
        self._tokens = tokens
        self._renew_at = self._renew_time(tokens)
        if self.on_tokens is not None:
            self.on_tokens(tokens)

    async def token_request(
        self,
        post_form: FormPoster,
        form: Mapping[str, str],
        old: TokenSet | None = None,
        url: str | None = None,
    ) -> TokenSet:
        """POST ``form`` to the token endpoint (``url``) with the client's identity (``token_auth``:
        HTTP Basic, ``client_secret_basic``, or in the form, ``client_secret_post``; a
        public client sends its ``client_id`` in the form); the tokens it issues."""
        full, headers = dict(form), {}
        if self.client_secret is not None and self.token_auth == "client_secret_basic":
            # RFC 6749 section 2.3.1: each part form-encoded, then Basic.
            pair = f"{quote_plus(self.client_id or '')}:{quote_plus(self.client_secret)}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        else:
            if self.client_id is not None:
                full["client_id"] = self.client_id
            if self.client_secret is not None:
                full["client_secret"] = self.client_secret
        url = url or self.token_url
        status, body = await post_form(url, full, headers)
        return read_tokens(status, body, url, old)

    @abstractmethod
    async def obtain(self, post_form: FormPoster) -> TokenSet:
        """The first tokens (or new ones when the refresh token no longer works)."""

    async def refresh(self) -> bool:
        """After a 401: drop the access token this task sent (unless another call renewed it
        already), so the next try gets a new one; returns True."""
        sent = self._sent.get()
        if self._tokens is not None and self._tokens.access_token == sent:
            self._renew_at = -math.inf
        return True

    def secrets(self) -> tuple[str, ...]:
        """The client secret and the tokens held now."""
        held = self._tokens
        tokens = () if held is None else (held.access_token, held.refresh_token or "")
        return tuple(v for v in (self.client_secret, *tokens) if v)

    def _scope_form(self) -> dict[str, str]:
        return {"scope": " ".join(self.scopes)} if self.scopes else {}

    def __repr__(self) -> str:
        secret = ", client_secret=***" if self.client_secret is not None else ""
        return (
            f"{type(self).__name__}(token_url={self.token_url!r}, "
            f"client_id={self.client_id!r}{secret})"
        )


class OAuth2ClientCredentials(OAuth2Flow):
    """OAuth 2.0 client credentials (RFC 6749 section 4.4): the client's own token."""

    _kind = "OAuth2ClientCredentials"

    def __init__(
        self,
        token_url: str,
        client_id: str,
        client_secret: str,
        scopes: Sequence[str] = (),
        audience: str | None = None,
        **options: Any,
    ) -> None:
        self.audience = audience
        super().__init__(token_url, client_id, client_secret, scopes, **options)

    def check(self) -> None:
        """Refuse fields a request cannot carry (``OAuth2Flow.check``), the audience too."""
        super().check()
        if self.audience is not None:
            check_value(f"{self._kind} audience", self.audience, TEXT)

    async def obtain(self, post_form: FormPoster) -> TokenSet:
        """A token for the client itself (grant ``client_credentials``)."""
        form = {"grant_type": "client_credentials", **self._scope_form()}
        if self.audience:
            form["audience"] = self.audience
        return await self.token_request(post_form, form)

    async def _renewed(self, post_form: FormPoster) -> TokenSet:
        return await self.obtain(post_form)  # the client can always ask again


class OAuth2TokenExchange(OAuth2Flow):
    """OAuth 2.0 token exchange (RFC 8693): a token for this agent, got in exchange for the
    user's (``subject_token``, a str or a function returning one, called for each exchange),
    to act on the user's behalf; ``actor_token`` names the client acting."""

    _kind = "OAuth2TokenExchange"

    def __init__(
        self,
        token_url: str,
        client_id: str,
        client_secret: str | None,
        subject_token: Secret,
        *,
        subject_token_type: str = ACCESS_TOKEN_TYPE,
        actor_token: Secret | None = None,
        actor_token_type: str = ACCESS_TOKEN_TYPE,
        audience: str | None = None,
        resource: str | None = None,
        scopes: Sequence[str] = (),
        requested_token_type: str | None = None,
        **options: Any,
    ) -> None:
        if not isinstance(subject_token, str) and not callable(subject_token):
            raise TypeError("subject_token must be a str or a function returning one")
        self.subject_token = subject_token
        self.subject_token_type = subject_token_type
        self.actor_token = actor_token
        self.actor_token_type = actor_token_type
        self.audience = audience
        self.resource = resource
        self.requested_token_type = requested_token_type
        super().__init__(token_url, client_id, client_secret, scopes, **options)

    def check(self) -> None:
        """Refuse fields a request cannot carry (``OAuth2Flow.check``), the token types,
        audience and resource too."""
        super().check()
        for name in ("subject_token_type", "actor_token_type", "audience", "resource"):
            value = getattr(self, name)
            if value is not None:
                check_value(f"{self._kind} {name}", value, TEXT)

    async def obtain(self, post_form: FormPoster) -> TokenSet:
        """A token in exchange for the subject's (called again whenever one is needed)."""
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "subject_token": await resolved(self.subject_token),
            "subject_token_type": self.subject_token_type,
            **self._scope_form(),
        }
        if self.actor_token is not None:
            form["actor_token"] = await resolved(self.actor_token)
            form["actor_token_type"] = self.actor_token_type
        for name in ("audience", "resource", "requested_token_type"):
            if (value := getattr(self, name)) is not None:
                form[name] = value
        return await self.token_request(post_form, form)

    async def _renewed(self, post_form: FormPoster) -> TokenSet:
        return await self.obtain(post_form)  # the user's token may have changed


class OAuth2JWTBearer(OAuth2Flow):
    """OAuth 2.0 JWT bearer assertion grant (RFC 7523): a token for a signed JWT.

    Give the assertion (a str or a function returning a fresh one), or a private ``key``
    (PEM) with ``issuer`` (and ``subject``; ``audience`` defaults to the token URL): the
    client signs a JWT living ``lifetime`` seconds for each request (needs the ``signing``
    extra, PyJWT).
    """

    _kind = "OAuth2JWTBearer"

    def __init__(
        self,
        token_url: str,
        *,
        assertion: Secret | None = None,
        key: str | bytes | None = None,
        issuer: str | None = None,
        subject: str | None = None,
        audience: str | None = None,
        algorithm: str = "RS256",
        lifetime: float = 300.0,
        key_id: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        scopes: Sequence[str] = (),
        **options: Any,
    ) -> None:
        if (assertion is None) == (key is None):
            raise ValueError("OAuth2JWTBearer takes an assertion or a key (with issuer)")
        if key is not None and not issuer:
            raise ValueError("OAuth2JWTBearer with a key needs the issuer (the iss claim)")
        self.assertion = assertion
        self._key = key
        self.issuer = issuer
        self.subject = subject
        self.audience = audience
        self.algorithm = algorithm
        self.lifetime = lifetime
        self.key_id = key_id
        super().__init__(token_url, client_id, client_secret, scopes, **options)

    def _signed(self) -> str:
        try:
            import jwt
        except ImportError as exc:  # pragma: no cover - the signing extra is not installed
            raise RuntimeError(
                "OAuth2JWTBearer(key=...) signs with PyJWT: pip install 'a2a-anyio[signing]'"
            ) from exc
        import secrets

        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "sub": self.subject or self.issuer,
            "aud": self.audience or self.token_url,
            "iat": now,
            "exp": now + int(self.lifetime),
            "jti": secrets.token_urlsafe(16),
        }
        headers = {"kid": self.key_id} if self.key_id else None
        assert self._key is not None
        return jwt.encode(claims, self._key, algorithm=self.algorithm, headers=headers)

    async def obtain(self, post_form: FormPoster) -> TokenSet:
        """A token for a fresh assertion (signed here when a key was given)."""
        given = self.assertion
        assertion = await resolved(given) if given is not None else self._signed()
        form = {"grant_type": JWT_BEARER, "assertion": assertion, **self._scope_form()}
        return await self.token_request(post_form, form)

    async def _renewed(self, post_form: FormPoster) -> TokenSet:
        return await self.obtain(post_form)

    def __repr__(self) -> str:
        return f"OAuth2JWTBearer(token_url={self.token_url!r}, issuer={self.issuer!r})"
