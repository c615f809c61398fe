"""Push notifications that prove their sender: a JWT in ``Authorization: Bearer``, signed by
the agent's key (found in its JWK Set by the token's ``jku`` and ``kid``) or with a shared
HMAC secret, checked from the headers alone, before the body is read.

The keys come through the one JWKS mechanism (``_jwks``): ``fetch_jwks`` fetches, ``KeySet``
caches; ``PushVerifier._fetch_json`` is the one place where this module fetches a URL.
"""

from __future__ import annotations

import heapq
import math
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from a2a_anyio._auth import origin_of
from a2a_anyio._errors import A2AAuthError, A2AClientError, A2ATimeoutError, shown
from a2a_anyio._http import HttpTransport, check_url, url_problem
from a2a_anyio._jwks import KeySet, fetch_jwks
from a2a_anyio._signing_keys import (
    ASYMMETRIC,
    DEFAULT_ALGORITHMS,
    Key,
    key_fits,
    load_jwt,
    normalise_keys,
)

if TYPE_CHECKING:
    from a2a_anyio._http import AsyncClient

__all__ = ["PushAuthError", "PushVerifier", "VerifiedPush"]

HMAC_ALGORITHMS = ("HS256", "HS384", "HS512")
#: A bearer token longer than this is refused unparsed.
MAX_TOKEN_BYTES = 16 * 1024
MAX_JKU_CHARS = 2048


class PushAuthError(A2AAuthError):
    """A push notification refused because it does not prove its sender; it was answered with
    ``status_code`` (401: not proven; 403: proven, but not for this receiver; 429: too many
    live token ids to remember) before its body was read. ``reason`` says which check failed:
    "missing", "malformed", "algorithm", "jku", "jwks", "kid", "signature", "expired",
    "not-yet-valid", "iat", "claims", "issuer", "audience", "replayed", "task" or
    "replay-memory-full"."""

    def __init__(self, message: str, *, reason: str, status_code: int = 401, **kwargs: Any):
        super().__init__(message, status_code=status_code, **kwargs)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class VerifiedPush:
    """What proved a notification: the token's ``claims``, its ``alg``, the ``kid`` and the
    JWKS URL (``jwks_url``) of the key, or ``hmac`` for the shared secret."""

    claims: Mapping[str, Any] = field(repr=False)
    alg: str
    kid: str | None
    jwks_url: str | None
    hmac: bool = False

    @property
    def task_id(self) -> str | None:
        """The ``taskId`` claim: when present, the notification must be about that task."""
        value = self.claims.get("taskId")
        return value if isinstance(value, str) else None


class _Seen:
    """Token ids (with their issuer) seen while their tokens are live, at most ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._until: dict[tuple[str, str], float] = {}
        self._expiry: list[tuple[float, tuple[str, str]]] = []

    def __len__(self) -> int:
        return len(self._until)

    def add(self, key: tuple[str, str], until: float, now: float) -> None:
        while self._expiry and self._expiry[0][0] <= now:
            _, old = heapq.heappop(self._expiry)
            if self._until.get(old, math.inf) <= now:
                del self._until[old]
        if key in self._until:
            raise PushAuthError("the token was used before (replayed jti)", reason="replayed")
        if len(self._until) >= self.limit:
            raise PushAuthError(
                f"{self.limit} live token ids are remembered already: try again later",
                reason="replay-memory-full",
                status_code=429,
            )
        self._until[key] = until
        heapq.heappush(self._expiry, (until, key))


def _refuse(message: str, reason: str, status: int = 401) -> PushAuthError:
    return PushAuthError(message, reason=reason, status_code=status)


class PushVerifier:
    """Checks that a push notification was sent by the agent, from its headers alone.

    The notification carries a JWT in ``Authorization: Bearer <jwt>`` (the A2A specification's
    asymmetric key flow). It is accepted when:

    * it is signed by a key of the agent: ``keys=`` (as ``CardVerifier`` takes them), or the JWK
      Set named by the token's ``jku`` header when that URL is on the origin of ``agent`` (the
      agent's URL), is ``jwks_url`` or is listed in ``allowed_jwks``; without a ``jku``,
      ``jwks_url``. The key is the one with the token's ``kid``; an unknown ``kid`` makes the
      set be fetched again, at most once per ``jwks_refetch_interval`` seconds. Only
      asymmetric ``algorithms`` are accepted for those keys, and the key must fit the algorithm;
    * or, with ``hmac_secret`` (32 bytes at least), it is signed with that shared secret
      (HS256, HS384 or HS512), which is never tried with any other key;
    * its ``iss`` is ``issuer`` (one of them, for a sequence), its ``aud`` holds ``audience``
      (by default the receiver's URL), it is not expired (``exp``) nor early (``nbf``), its
      ``iat`` is at most ``max_age`` seconds old (``leeway`` seconds of clock skew either way);
    * its ``jti`` (required unless ``require_jti=False``) was not seen before while the token
      could be live: at most ``max_jtis`` of them are remembered.

    Key sets are fetched without credentials, redirects not followed, at most
    ``max_jwks_bytes`` in ``jwks_timeout`` seconds, kept ``jwks_ttl`` seconds; at most
    ``max_jwks_urls`` sets are kept (the least recently used goes). A fetch that fails is not
    tried again within ``jwks_refetch_interval``. ``http_client`` is an httpx client to fetch
    them with (proxies, certificates); by default one is made for each fetch.

    Raises:
        ValueError: no key source, an empty ``issuer``, a short ``hmac_secret``, or an
            algorithm that is not asymmetric.
        ImportError: PyJWT is not installed (the ``signing`` extra).
    """

    def __init__(
        self,
        *,
        issuer: str | Sequence[str],
        agent: str | None = None,
        audience: str | Sequence[str] | None = None,
        jwks_url: str | None = None,
        allowed_jwks: Iterable[str] = (),
        keys: Mapping[str, Any] | Sequence[Any] | Any | None = None,
        hmac_secret: str | bytes | None = None,
        algorithms: Iterable[str] = DEFAULT_ALGORITHMS,
        max_age: float = 300.0,
        leeway: float = 60.0,
        require_jti: bool = True,
        max_jtis: int = 100_000,
        jwks_ttl: float = 300.0,
        jwks_refetch_interval: float = 10.0,
        jwks_timeout: float = 10.0,
        max_jwks_bytes: int = 256 * 1024,
        max_jwks_urls: int = 16,
        http_client: AsyncClient | None = None,
    ) -> None:
        load_jwt()
        self.issuers = (issuer,) if isinstance(issuer, str) else tuple(issuer)
        if not self.issuers or not all(isinstance(i, str) and i for i in self.issuers):
            raise ValueError("issuer is the iss the agent's tokens carry: a non-empty string")
        self.audiences = (audience,) if isinstance(audience, str) else audience
        if self.audiences is not None and not (
            self.audiences and all(isinstance(a, str) and a for a in self.audiences)
        ):
            raise ValueError("audience is the aud the agent's tokens carry: non-empty strings")
        self.agent = check_url(agent, "agent") if agent is not None else None
        self.jwks_url = check_url(jwks_url, "jwks_url") if jwks_url is not None else None
        self.allowed_jwks = frozenset(check_url(u, "allowed_jwks") for u in allowed_jwks)
        self.algorithms = tuple(algorithms)
        bad = [a for a in self.algorithms if a not in ASYMMETRIC]
        if bad:
            raise ValueError(
                f"unsupported algorithms {bad}: asymmetric JWS algorithms only "
                f"({', '.join(sorted(ASYMMETRIC))}); a shared secret is hmac_secret="
            )
        secret = hmac_secret.encode() if isinstance(hmac_secret, str) else hmac_secret
        if secret is not None and len(secret) < 32:
            raise ValueError("hmac_secret has 32 bytes at least")
        self._secret = secret
        self._keys: list[Key] = normalise_keys(keys)
        self._has_public_keys = bool(self._keys or self.agent or self.jwks_url or self.allowed_jwks)
        if not (self._has_public_keys or secret):
            raise ValueError(
                "PushVerifier needs a key source: keys=, jwks_url=, agent= (a jku on the "
                "agent's origin), allowed_jwks= or hmac_secret="
            )
        self.max_age = max_age
        self.leeway = leeway
        self.require_jti = require_jti
        self.jwks_ttl = jwks_ttl
        self.jwks_refetch_interval = jwks_refetch_interval
        self.jwks_timeout = jwks_timeout
        self.max_jwks_bytes = max_jwks_bytes
        self.max_jwks_urls = max_jwks_urls
        self._http_client = http_client
        self._sets: OrderedDict[str, KeySet] = OrderedDict()
        self._seen = _Seen(max_jtis)

    def __repr__(self) -> str:
        return (
            f"PushVerifier(issuer={self.issuers!r}, agent={self.agent!r}, "
            f"jwks_url={self.jwks_url!r}, keys={len(self._keys)}, hmac={self._secret is not None})"
        )

    @property
    def jwks_requests(self) -> int:
        """JWKS fetches made (of the sets still kept), for observability."""
        return sum(s.requests for s in self._sets.values())

    async def verify(
        self, authorization: str | None, *, audience: str | None = None
    ) -> VerifiedPush:
        """Check the ``Authorization`` header of a notification; ``audience`` is the expected
        ``aud`` when the verifier was given none (the receiver passes its URL).

        Raises:
            PushAuthError: the header does not prove the sender (``reason`` says why).
        """
        import jwt

        token = self._bearer(authorization)
        audiences: Sequence[str] = self.audiences or ([audience] if audience else [])
        if not audiences:
            raise _refuse("the receiver has no URL to check the token's audience with", "audience")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise _refuse("the bearer token is not a JWT", "malformed") from None
        alg = header.get("alg")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise _refuse("the token's kid is not a string", "malformed")
        if alg in HMAC_ALGORITHMS and self._secret is not None:
            claims = self._decode(token, self._secret, alg, audiences)
            verified = VerifiedPush(claims, alg, kid, None, hmac=True)
        elif isinstance(alg, str) and alg in self.algorithms and self._has_public_keys:
            verified = await self._asymmetric(token, header, alg, kid, audiences)
        else:
            raise _refuse(f"the token's alg {shown(alg, 24)} is not accepted", "algorithm")
        self._check_time_and_replay(verified.claims)
        return verified

    def _bearer(self, authorization: str | None) -> str:
        if not authorization:
            raise _refuse("no Authorization header: the notification is not signed", "missing")
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise _refuse("the Authorization header is not a Bearer token", "missing")
        if len(token) > MAX_TOKEN_BYTES or "," in token or " " in token:
            raise _refuse("the bearer token is not one JWT", "malformed")
        return token

    async def _asymmetric(
        self,
        token: str,
        header: Mapping[str, Any],
        alg: str,
        kid: str | None,
        audiences: Sequence[str],
    ) -> VerifiedPush:
        url = self._jwks_url_for(header.get("jku"))
        check = (token, alg, kid, audiences)
        outcome = self._try(self._keys, None, *check)  # the keys given, first
        fitted = outcome is True
        if url is not None and not isinstance(outcome, VerifiedPush):
            outcome = self._try(await self._jwks(url, force=False), url, *check)
            if outcome is False:  # no key with that kid: the agent may have rotated its keys
                outcome = self._try(await self._jwks(url, force=True), url, *check)
            fitted = fitted or outcome is True
        if isinstance(outcome, VerifiedPush):
            return outcome
        if fitted:
            raise _refuse("bad signature", "signature")
        where = f"the JWKS at {url}" if url else "the configured keys"
        raise _refuse(f"no {alg} key with kid {shown(kid)} in {where}", "kid")

    def _try(
        self,
        keys: list[Key],
        source: str | None,
        token: str,
        alg: str,
        kid: str | None,
        audiences: Sequence[str],
    ) -> VerifiedPush | bool:
        """What a key of ``keys`` that fits verifies; else whether any key fitted."""
        fitting = [
            k
            for k in keys
            if (kid is None or k.kid is None or k.kid == kid)
            and (k.alg is None or k.alg == alg)
            and key_fits(k.key, alg)
        ]
        for key in fitting:
            try:
                claims = self._decode(token, key.key, alg, audiences)
            except PushAuthError as exc:
                if exc.reason != "signature":
                    raise
                continue
            return VerifiedPush(claims, alg, key.kid, source)
        return bool(fitting)

    def _jwks_url_for(self, jku: Any) -> str | None:
        if jku is None:
            return self.jwks_url
        if not isinstance(jku, str) or len(jku) > MAX_JKU_CHARS or url_problem(jku):
            raise _refuse("the token's jku is not a URL", "jku")
        if jku == self.jwks_url or jku in self.allowed_jwks:
            return jku
        if self.agent is not None and origin_of(jku) == origin_of(self.agent):
            return jku
        raise _refuse(
            f"the token's jku {shown(jku, 200)} is neither on the agent's origin nor allowed",
            "jku",
        )

    async def _jwks(self, url: str, *, force: bool) -> list[Key]:
        keys = self._sets.get(url)
        if keys is None:
            keys = KeySet(
                url,
                ttl=self.jwks_ttl,
                refetch_interval=self.jwks_refetch_interval,
                hold_failures=True,
            )
            self._sets[url] = keys
            while len(self._sets) > self.max_jwks_urls:
                self._sets.popitem(last=False)
        self._sets.move_to_end(url)
        try:
            return await keys.keys(self._fetch_json, force=force)
        except A2AClientError as exc:
            raise _refuse(f"no usable key set: {exc.message}", "jwks") from exc

    async def _fetch_json(self, url: str) -> Any:
        """The one fetch of a key set (``fetch_jwks``), bounded in size and time."""
        http = HttpTransport(self._http_client, connect_timeout=self.jwks_timeout)
        try:
            with anyio.fail_after(self.jwks_timeout):
                return await fetch_jwks(http, url, max_bytes=self.max_jwks_bytes)
        except TimeoutError:
            raise A2ATimeoutError(
                f"no answer within {self.jwks_timeout:g} s", timeout="deadline"
            ) from None
        finally:
            await http.aclose()

    def _decode(self, token: str, key: Any, alg: str, audiences: Sequence[str]) -> dict[str, Any]:
        import jwt

        required = ["iat", "iss", "aud", *(["jti"] if self.require_jti else [])]
        options: Any = {"require": required, "verify_iat": False, "verify_iss": False}
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=[alg],
                audience=audiences,
                leeway=self.leeway,
                options=options,
            )
        except jwt.InvalidSignatureError:
            raise _refuse("bad signature", "signature") from None
        except jwt.ExpiredSignatureError:
            raise _refuse("the token has expired (exp)", "expired") from None
        except jwt.ImmatureSignatureError:
            raise _refuse("the token is not valid yet (nbf)", "not-yet-valid") from None
        except jwt.InvalidAudienceError:
            why = f"the token is not for {shown(audiences[0], 200)} (aud)"
            raise _refuse(why, "audience", 403) from None
        except jwt.MissingRequiredClaimError as exc:
            raise _refuse(f"the token has no {exc.claim!r} claim", "claims") from None
        except jwt.InvalidKeyError:
            raise _refuse("the key does not fit the token", "signature") from None
        except jwt.PyJWTError as exc:
            raise _refuse(f"unusable token: {shown(str(exc), 120)}", "malformed") from None
        issuer = claims.get("iss")
        if issuer not in self.issuers:
            why = f"the token's issuer {shown(issuer, 200)} is not expected"
            raise _refuse(why, "issuer", 403)
        return claims

    def _check_time_and_replay(self, claims: Mapping[str, Any]) -> None:
        now = time.time()
        iat = claims.get("iat")
        if isinstance(iat, bool) or not isinstance(iat, (int, float)) or not math.isfinite(iat):
            raise _refuse("the token's iat is not a time", "iat")
        if iat > now + self.leeway or iat < now - self.max_age - self.leeway:
            raise _refuse(
                f"the token was issued outside the {self.max_age:g} s window (iat)", "iat"
            )
        jti = claims.get("jti")
        if jti is None and not self.require_jti:
            return
        if not isinstance(jti, str) or not jti or len(jti) > 256:
            raise _refuse("the token's jti is not a short string", "claims")
        self._seen.add((str(claims.get("iss")), jti), iat + self.max_age + self.leeway, now)
