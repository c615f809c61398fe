"""Auth chosen from the agent's card: ``CardAuth`` holds the credentials a user has, and
sends those of the first alternative of the card's security requirements it can meet. An
OAuth 2.0 or OpenID Connect scheme's own metadata (its flow URLs, or a discovery document)
fills the flow.

URLs learned from a card send secrets (a client secret, a refresh token) or send the user
to sign in: they are used only on the agent's own origin or on an origin the user trusts
(``trusted_issuers``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import anyio

from a2a_anyio._auth import Auth, CallableAuth, FormPoster, Origin, origin_of
from a2a_anyio._auth_schemes import ApiKey, Basic, Bearer
from a2a_anyio._errors import A2AAuthError, A2AProtocolError, shown
from a2a_anyio._network import is_loopback
from a2a_anyio._oauth import OAuth2ClientCredentials, Secret, TokenSet
from a2a_anyio._oauth_user import DeviceCode, OAuth2AuthorizationCode, OAuth2DeviceCode, OAuth2Login

if TYPE_CHECKING:
    from a2a_anyio._model import AgentCard, SecurityScheme

#: The members of a flow, as v1.0 (ProtoJSON) and earlier cards spell them.
_FLOW_KEYS = {
    "clientCredentials": "client_credentials",
    "authorizationCode": "authorization_code",
    "deviceCode": "device_code",
}
_URL_KEYS = ("tokenUrl", "authorizationUrl", "deviceAuthorizationUrl", "refreshUrl")
#: Discovery metadata member (RFC 8414, OpenID Connect Discovery) -> flow URL key.
_METADATA = {
    "token_endpoint": "tokenUrl",
    "authorization_endpoint": "authorizationUrl",
    "device_authorization_endpoint": "deviceAuthorizationUrl",
}


def _snake(key: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in key)


def _member(d: Mapping[str, Any], key: str) -> Any:
    return d.get(key, d.get(_snake(key)))


class CardAuth(Auth):
    """The credentials a user holds; the agent's card says which to send.

    Give what you have: ``bearer`` (a token, or a function returning one), ``basic``
    (user, password), ``api_key`` (its name and place come from the card), ``client_id``
    with ``client_secret`` (OAuth 2.0 client credentials), ``client_id`` with
    ``on_device_code`` (device code: called with the code to show) or ``open_url``
    (authorization code with PKCE: called with the URL to open in a browser, which comes
    back to ``redirect_port`` of 127.0.0.1, 0: any free one), ``tokens``
    from an earlier sign-in (refreshed, and handed to ``on_tokens`` when renewed), or
    ``schemes`` mapping a card's scheme name to an auth scheme of your own.

    The client sends the credentials of the first alternative of the card's requirements
    (``securityRequirements`` / ``security`` / ``authentication``) it can meet. Token,
    authorization and device URLs come from the card's OAuth 2.0 flow, its
    ``oauth2MetadataUrl`` or its OpenID Connect discovery URL; they may be on the agent's
    origin or on one of ``trusted_issuers``, no other.
    """

    def __init__(
        self,
        *,
        bearer: Secret | None = None,
        basic: tuple[str, str] | None = None,
        api_key: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        on_device_code: Callable[[DeviceCode], object] | None = None,
        open_url: Callable[[str], object] | None = None,
        tokens: TokenSet | None = None,
        on_tokens: Callable[[TokenSet], object] | None = None,
        schemes: Mapping[str, Auth] | None = None,
        trusted_issuers: Sequence[str] = (),
        redirect_port: int = 0,
    ) -> None:
        self.bearer = Bearer(bearer) if isinstance(bearer, str) else bearer
        self.basic = Basic(*basic) if basic is not None else None
        self.api_key = api_key
        if api_key is not None:
            ApiKey(api_key)  # checks the value
        self.client_id = client_id
        self.client_secret = client_secret
        self.on_device_code = on_device_code
        self.open_url = open_url
        self.tokens = tokens
        self.on_tokens = on_tokens
        self.schemes = dict(schemes or {})
        for name, given in self.schemes.items():
            if not isinstance(given, Auth):
                raise TypeError(f"schemes[{name!r}] must be an auth scheme, not {given!r}")
        for url in trusted_issuers:
            if origin_of(url)[0] not in ("http", "https"):
                raise ValueError(f"a trusted issuer must be an http(s) URL, not {url!r}")
        self.trusted = frozenset(origin_of(u) for u in trusted_issuers)
        self.redirect_port = redirect_port
        # Per agent (an origin of its card's interfaces): one CardAuth may serve a pool.
        self._cards: dict[Origin, AgentCard] = {}
        self._chosen: dict[Origin, list[Auth]] = {}
        self._last: AgentCard | None = None
        self._sent: ContextVar[Origin | None] = ContextVar("sent", default=None)
        self._lock: anyio.Lock | None = None

    def use_card(self, card: AgentCard) -> None:
        """Choose again, by ``card``, at the next request to its agent (a card the client
        learned)."""
        self._last = card
        for iface in card.interfaces:
            origin = origin_of(iface.url)
            before = self._cards.get(origin)
            self._cards[origin] = card
            # The card fetched again asks for the same: the schemes, and their tokens, stay.
            if before is None or _security(before) != _security(card):
                self._chosen.pop(origin, None)

    def _card_for(self, origin: Origin) -> AgentCard | None:
        card = self._cards.get(origin)
        if card is None and len({id(c) for c in self._cards.values()}) == 1:
            card = self._last  # one agent, reached at a URL its card does not spell so
        return card

    async def apply(self, url: str, headers: dict[str, str], post_form: FormPoster) -> str:
        """Send the credentials the agent's card asks for (none before the card is known:
        the card request itself).

        Raises:
            A2AAuthError: the card asks for credentials this ``CardAuth`` does not hold, or
                its OAuth 2.0 URLs are on an origin the user does not trust.
        """
        origin = origin_of(url)
        card = self._card_for(origin)
        if card is None:
            return url
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            chosen = self._chosen.get(origin)
            if chosen is None:
                chosen = self._chosen[origin] = await self._choose(card, url, post_form)
        self._sent.set(origin)
        for auth in chosen:
            url = await auth.apply(url, headers, post_form)
        return url

    async def refresh(self) -> bool:
        """After a 401: renew what the schemes sent to that agent can; True when one did."""
        renewed = False
        for auth in self._chosen.get(self._sent.get() or ("", "", None), ()):
            renewed = await auth.refresh() or renewed
        return renewed

    def secrets(self) -> tuple[str, ...]:
        """The secrets of every scheme given and chosen."""
        given = [*(self.chosen or ()), *self.schemes.values(), self.bearer, self.basic]
        held = [s for auth in given if isinstance(auth, Auth) for s in auth.secrets()]
        return (*held, *(v for v in (self.api_key, self.client_secret) if v))

    @property
    def chosen(self) -> list[Auth] | None:
        """The schemes sent, to every agent (None until a card is known and a request made)."""
        if not self._chosen:
            return None
        return [auth for schemes in self._chosen.values() for auth in schemes]

    async def _choose(self, card: AgentCard, url: str, post_form: FormPoster) -> list[Auth]:
        requirements = card.security_requirements or [{n: []} for n in card.security_schemes]
        if not requirements:
            return []
        agent = origin_of(url)
        missing: dict[str, str] = {}
        for requirement in requirements:
            chosen: list[Auth] = []
            for name, scopes in requirement.items():
                scheme = card.security_schemes.get(name)
                auth = await self._for_scheme(name, scheme, scopes, agent, post_form, missing)
                if auth is None:
                    break
                chosen.append(auth)
            else:
                return chosen
        from a2a_anyio._dialects.card import describe_security

        asks = describe_security(card)
        hints = "; ".join(f"{name!r}: {hint}" for name, hint in missing.items())
        raise A2AAuthError(
            f"the agent's card asks for {' or '.join(asks)}; the credentials given meet none "
            f"of these: {hints}",
            status_code=401,
            schemes=asks,
        )

    async def _for_scheme(
        self,
        name: str,
        scheme: SecurityScheme | None,
        scopes: list[str],
        agent: Origin,
        post_form: FormPoster,
        missing: dict[str, str],
    ) -> Auth | None:
        if name in self.schemes:
            return self.schemes[name]
        kind = scheme.type if scheme is not None else "http"
        http = (scheme.scheme if scheme is not None else name) or ""
        if kind == "http" and http.lower() == "bearer":
            if self.bearer is not None:
                return self.bearer if isinstance(self.bearer, Auth) else _bearer(self.bearer)
            missing[name] = "give bearer= (a token)"
        elif kind == "http" and http.lower() == "basic":
            if self.basic is not None:
                return self.basic
            missing[name] = "give basic=(user, password)"
        elif kind == "apiKey":
            assert scheme is not None
            location = scheme.location or "header"
            if self.api_key is not None and location in ("header", "query", "cookie"):
                return ApiKey(self.api_key, scheme.name or "X-API-Key", location)
            missing[name] = f"give api_key= (sent in {location} {scheme.name or 'X-API-Key'})"
        elif kind in ("oauth2", "openIdConnect"):
            assert scheme is not None
            if self.bearer is not None:  # an access token got elsewhere
                return self.bearer if isinstance(self.bearer, Auth) else _bearer(self.bearer)
            return await self._oauth(name, scheme, scopes, agent, post_form, missing)
        elif kind == "mutualTLS":
            missing[name] = "give the client certificate as auth=MutualTLS(...) instead"
        else:
            missing[name] = f"give schemes={{{name!r}: ...}} (a scheme of type {kind!r})"
        return None

    async def _oauth(
        self,
        name: str,
        scheme: SecurityScheme,
        scopes: list[str],
        agent: Origin,
        post_form: FormPoster,
        missing: dict[str, str],
    ) -> Auth | None:
        if self.client_id is None and self.tokens is None:
            missing[name] = (
                "give client_id= with client_secret= (client credentials), on_device_code= "
                "(device code) or open_url= (sign in with a browser), or bearer= (a token)"
            )
            return None
        flows = await self._flows(scheme, agent, post_form)
        cc, code, device = (flows.get(k) for k in _FLOW_KEYS.values())
        if self.tokens is not None:
            flow = next((f for f in (device, code, cc) if f), None)
            if flow is not None:
                return OAuth2Login(
                    flow["tokenUrl"], self.client_id, self.tokens,
                    on_tokens=self.on_tokens, refresh_url=flow.get("refreshUrl"),
                )  # fmt: skip
        client_id = self.client_id or ""
        common: dict[str, Any] = {"scopes": scopes, "on_tokens": self.on_tokens}
        if self.client_secret is not None and cc:
            return OAuth2ClientCredentials(cc["tokenUrl"], client_id, self.client_secret, **common)
        if self.on_device_code is not None and device:
            return OAuth2DeviceCode(
                device["deviceAuthorizationUrl"], device["tokenUrl"], client_id,
                on_code=self.on_device_code, client_secret=self.client_secret,
                refresh_url=device.get("refreshUrl"), **common,
            )  # fmt: skip
        if self.open_url is not None and code:
            return OAuth2AuthorizationCode(
                code["authorizationUrl"], code["tokenUrl"], client_id,
                open_url=self.open_url, client_secret=self.client_secret,
                redirect_port=self.redirect_port, refresh_url=code.get("refreshUrl"), **common,
            )  # fmt: skip
        offered = ", ".join(sorted(k for k, f in flows.items() if f)) or "no usable flow"
        missing[name] = (
            f"its OAuth 2.0 flows ({offered}) need client_secret= (client_credentials), "
            "on_device_code= (device_code) or open_url= (authorization_code)"
        )
        return None

    async def _flows(
        self, scheme: SecurityScheme, agent: Origin, post_form: FormPoster
    ) -> dict[str, dict[str, str]]:
        """The scheme's flows with their URLs: from the card, filled from the discovery
        document (``oauth2MetadataUrl``, ``openIdConnectUrl``) where the card left them out."""
        out: dict[str, dict[str, str]] = {}
        for key, flow in (scheme.flows or {}).items():
            grant = _FLOW_KEYS.get(key) or _FLOW_KEYS.get(_camel(key))
            if grant is not None and isinstance(flow, Mapping):
                out[grant] = {
                    u: value for u in _URL_KEYS if isinstance(value := _member(flow, u), str)
                }
        metadata_url = scheme.oauth2_metadata_url or scheme.open_id_connect_url
        if metadata_url and (not out or any("tokenUrl" not in f for f in out.values())):
            found = await self._discover(metadata_url, agent, post_form)
            grants = found.pop("grant_types_supported", None)
            if not out:  # an OpenID Connect scheme names no flow: those the server offers
                offered = grants if isinstance(grants, list) else list(_FLOW_KEYS.values())
                wanted = {_DEVICE if g == _DEVICE_URN else g for g in offered}
                out = {g: {} for g in _FLOW_KEYS.values() if g in wanted}
            for flow in out.values():
                for k, u in found.items():
                    flow.setdefault(k, u)
        for grant, flow in list(out.items()):
            needs = ("tokenUrl", *_NEEDS.get(grant, ()))
            if any(k not in flow for k in needs):
                del out[grant]
                continue
            for k in (*needs, "refreshUrl"):
                if k in flow:
                    self._check_origin(flow[k], agent, "the card's OAuth 2.0 flow")
        return out

    async def _discover(self, url: str, agent: Origin, post_form: FormPoster) -> dict[str, Any]:
        self._check_origin(url, agent, "the card's OAuth 2.0 discovery URL")
        status, body = await post_form(url, None)
        where = shown(url, 200)
        if status != 200:
            raise A2AAuthError(
                f"the OAuth 2.0 discovery document at {where} is not there (HTTP {status})",
                status_code=status,
            )
        try:
            value = json.loads(body)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            raise A2AProtocolError(f"the OAuth 2.0 discovery document at {where} is not JSON")
        issuer = value.get("issuer")
        if not isinstance(issuer, str) or origin_of(issuer) != origin_of(url):
            raise A2AAuthError(
                f"the OAuth 2.0 discovery document at {where} names another issuer "
                f"({shown(issuer, 200)})",
                status_code=401,
            )
        found: dict[str, Any] = {}
        for member, key in _METADATA.items():
            endpoint = value.get(member)
            if isinstance(endpoint, str):
                found[key] = endpoint
        grants = value.get("grant_types_supported")
        if isinstance(grants, list):
            found["grant_types_supported"] = [g for g in grants if isinstance(g, str)]
        return found

    def _check_origin(self, url: str, agent: Origin, what: str) -> None:
        origin = origin_of(url)
        if origin[0] not in ("http", "https"):
            raise A2AAuthError(f"{what} is not an http(s) URL: {shown(url, 200)}", status_code=401)
        if origin == agent or origin in self.trusted:
            if origin[0] == "http" and agent[0] == "https" and not is_loopback(origin[1]):
                raise A2AAuthError(
                    f"{what} is plain http while the agent is https: {shown(url, 200)}",
                    status_code=401,
                )
            return
        raise A2AAuthError(
            f"{what} is on another origin than the agent's: {shown(url, 200)}; if you trust "
            f"it, give CardAuth(trusted_issuers=[{_origin_text(origin)!r}])",
            status_code=401,
        )

    def __repr__(self) -> str:
        held = [
            n for n in ("bearer", "basic", "api_key", "client_id", "client_secret", "tokens")
            if getattr(self, n) is not None
        ]  # fmt: skip
        return f"CardAuth(holds={held}, schemes={sorted(self.schemes)})"


_DEVICE = "device_code"
_DEVICE_URN = "urn:ietf:params:oauth:grant-type:device_code"
_NEEDS = {"authorization_code": ("authorizationUrl",), "device_code": ("deviceAuthorizationUrl",)}


def _security(card: AgentCard) -> Any:
    """What a card asks for, comparable with ``==``."""
    schemes = sorted((k, dataclasses.astuple(v)) for k, v in card.security_schemes.items())
    return schemes, card.security_requirements


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(r.title() for r in rest)


def _bearer(provider: Callable[[], str | Awaitable[str]]) -> Auth:
    async def value() -> str:
        got = provider()
        if not isinstance(got, str):
            got = await got
        return f"Bearer {got}"

    return CallableAuth(value)


def _origin_text(origin: Origin) -> str:
    scheme, host, port = origin
    default = {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{host}" + (f":{port}" if port != default else "")
