"""Signed Agent Cards: RFC 8785 canonicalisation, JWS verification and signing.

A v0.3+ card may carry ``signatures``: JWS JSON-serialisation entries
``{protected, signature, header?}`` over a detached payload, the RFC 8785 (JCS) form of the
card with ``signatures`` removed (a2a-protocol §2.2). The JOSE work is PyJWT's; it is imported
inside the functions that need it, so the core client never depends on it
(the ``signing`` extra).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from a2a_anyio._errors import A2ADiscoveryError, shown
from a2a_anyio._jcs import canonical_json, canonicalize
from a2a_anyio._jwks import FetchJSON, KeySet
from a2a_anyio._signing_keys import (
    ASYMMETRIC,
    DEFAULT_ALGORITHMS,
    Key,
    b64url,
    b64url_decode,
    key_fits,
    key_object,
    load_jwt,
    normalise_keys,
)

if TYPE_CHECKING:
    pass

__all__ = [
    "DEFAULT_ALGORITHMS",
    "CardVerifier",
    "SignaturePolicy",
    "VerifiedCard",
    "canonical_json",
    "canonicalize",
    "sign_card",
]

SignaturePolicy = Literal["ignore", "verify-if-present", "require"]

#: A card with more signature entries than this is refused unchecked (each costs key trials).
MAX_SIGNATURES = 16

_UNDERSTOOD_CRIT = frozenset({"b64"})


def _payloads(card: Mapping[str, Any]) -> list[tuple[str, bytes]]:
    exact = canonicalize(card)
    pruned = canonicalize(card, omit_empty=True)
    forms = [("jcs", exact)]
    if pruned != exact:
        forms.append(("jcs-omit-empty", pruned))
    return forms


# -- verification --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class VerifiedCard:
    """What verified a card: its signature ``index`` with key ``kid`` (None when the signature
    names none) from ``key_source`` ("keys[0]", "keys['k1']", "JWKS"), algorithm ``alg``, over
    the payload form ``canonical_form`` ("jcs", or "jcs-omit-empty" for a signer that dropped
    empty values first); ``header`` is the JWS protected header."""

    card: Mapping[str, Any] = field(repr=False)
    index: int
    kid: str | None
    alg: str
    key_source: str
    canonical_form: str
    header: Mapping[str, Any] = field(repr=False)


@dataclass(slots=True)
class _Entry:
    index: int
    protected: str = ""
    signature: str = ""
    header: dict[str, Any] = field(default_factory=dict)  # the protected header
    kid: str | None = None  # protected kid, else an unprotected one (it only selects keys)
    problem: str | None = None  # why the entry is malformed

    @property
    def alg(self) -> str | None:
        alg = self.header.get("alg")
        return alg if isinstance(alg, str) else None


def _canonical_b64url(text: str) -> bytes:
    data = b64url_decode(text)
    if b64url(data) != text:  # padding or non-zero spare bits: not the JWS encoding
        raise ValueError("not base64url")
    return data


def _entry_problem(raw: Any) -> str | tuple[str, str, dict[str, Any], dict[str, Any]]:
    if not isinstance(raw, Mapping):
        return "not a JSON object"
    protected, signature, unprotected = (
        raw.get("protected"),
        raw.get("signature"),
        raw.get("header"),
    )
    if not isinstance(protected, str) or not protected:
        return "'protected' is missing or not a string"
    if not isinstance(signature, str) or not signature:
        return "'signature' is missing or not a string"
    if unprotected is not None and not isinstance(unprotected, Mapping):
        return "'header' is not a JSON object"
    try:
        _canonical_b64url(signature)
    except ValueError:
        return "'signature' is not base64url"
    try:
        header = json.loads(_canonical_b64url(protected))
    except (ValueError, RecursionError):
        header = None
    if not isinstance(header, dict):
        return "'protected' is not a base64url-encoded JSON object"
    extra = dict(unprotected or {})
    if set(extra) & set(header):
        return "protected and unprotected headers share parameters (RFC 7515 §7.2.1)"
    if "alg" not in header:
        return "the protected header has no 'alg'"
    if "kid" in header and not isinstance(header["kid"], str):
        return "'kid' is not a string"
    crit = header.get("crit")
    if "crit" in header and (
        not isinstance(crit, list)
        or not crit
        or any(not isinstance(c, str) or c not in _UNDERSTOOD_CRIT or c not in header for c in crit)
    ):
        return "unsupported or invalid 'crit' header parameter"
    b64 = header.get("b64", True)
    if not isinstance(b64, bool) or (b64 is False and "b64" not in (crit or [])):
        return "invalid 'b64' header parameter (RFC 7797)"
    return protected, signature, header, extra


def _parse_entry(index: int, raw: Any) -> _Entry:
    parsed = _entry_problem(raw)
    if isinstance(parsed, str):
        return _Entry(index, problem=parsed)
    protected, signature, header, extra = parsed
    kid = header.get("kid", extra.get("kid"))
    return _Entry(index, protected, signature, header, kid if isinstance(kid, str) else None)


def _describe(entry: _Entry) -> str:
    parts = [f"signature {entry.index}"]
    if entry.kid is not None:
        parts.append(f"kid {shown(entry.kid)}")
    if entry.alg is not None:
        parts.append(f"alg {shown(entry.alg, 24)}")
    return parts[0] + (f" ({', '.join(parts[1:])})" if len(parts) > 1 else "")


class CardVerifier:
    """Checks the JWS ``signatures`` of Agent Cards against trusted keys.

    ``keys``: PEM public keys or certificates (str/bytes), ``cryptography`` key objects, JWK
    dicts, ``jwt.PyJWK`` objects, as a sequence, a ``{kid: key}`` mapping, a single JWK or a JWK
    Set document. ``jwks_url``: a JWK Set fetched through the ``fetch_json`` callable given to
    ``verify`` and kept ``jwks_ttl`` seconds; a signature whose ``kid`` is in no known key
    refetches it (at most once per ``jwks_refetch_interval`` seconds) for key rotation. A ``jku``
    in a signature header is never fetched: keys come only from the caller.

    ``policy``: "ignore" never checks; "verify-if-present" lets unsigned cards pass but signed
    ones must verify; "require" refuses unsigned cards. A card passes when at least one of its
    signatures verifies with a known key; otherwise ``A2ADiscoveryError`` says why, per signature.
    """

    def __init__(
        self,
        *,
        keys: Mapping[str, Any] | Sequence[Any] | Any | None = None,
        jwks_url: str | None = None,
        policy: SignaturePolicy = "verify-if-present",
        algorithms: Iterable[str] = DEFAULT_ALGORITHMS,
        jwks_ttl: float = 300.0,
        jwks_refetch_interval: float = 10.0,
    ) -> None:
        if policy not in ("ignore", "verify-if-present", "require"):
            raise ValueError(f"unknown signature policy {policy!r}")
        self.algorithms = tuple(algorithms)
        bad = [a for a in self.algorithms if a not in ASYMMETRIC]
        if bad:
            raise ValueError(
                f"unsupported signature algorithms {bad}: only asymmetric JWS algorithms "
                f"({', '.join(sorted(ASYMMETRIC))}) verify Agent Cards"
            )
        if not self.algorithms:
            raise ValueError("algorithms is empty")
        self.policy: SignaturePolicy = policy
        self.jwks_url = jwks_url
        self.jwks_ttl = jwks_ttl
        self.jwks_refetch_interval = jwks_refetch_interval
        self._keys: list[Key] = []
        if policy != "ignore":
            load_jwt()
            self._keys = normalise_keys(keys)
            if not self._keys and not jwks_url:
                raise ValueError(f"policy {policy!r} needs keys= or jwks_url=")
        self._jwks = (
            KeySet(jwks_url, ttl=jwks_ttl, refetch_interval=jwks_refetch_interval)
            if jwks_url
            else None
        )

    @property
    def jwks_requests(self) -> int:
        """JWKS fetches made, for observability."""
        return 0 if self._jwks is None else self._jwks.requests

    def __repr__(self) -> str:
        return (
            f"CardVerifier(policy={self.policy!r}, keys={len(self._keys)}, "
            f"jwks_url={self.jwks_url!r})"
        )

    async def verify(
        self, card: Mapping[str, Any], fetch_json: FetchJSON | None = None
    ) -> VerifiedCard | None:
        """Check ``card`` (the raw JSON object as received) by the policy.

        Returns what verified, or None when nothing was checked (policy "ignore", or an
        unsigned card under "verify-if-present"). Raises ``A2ADiscoveryError`` when the card
        fails the policy. ``fetch_json(url)`` loads the JWKS when ``jwks_url`` is set.

        Raises:
            A2ADiscoveryError: the card fails the policy: unsigned under ``require``, or no signature verifies with
                a trusted key.
            ValueError: ``jwks_url`` is set and no ``fetch_json`` was given.
            ImportError: PyJWT is not installed (the ``signing`` extra).
        """
        if self.policy == "ignore":
            return None
        if self.jwks_url and fetch_json is None:
            raise ValueError("CardVerifier has a jwks_url: pass fetch_json to verify()")
        if not isinstance(card, Mapping):
            raise A2ADiscoveryError("agent card is not a JSON object")
        raw = card.get("signatures")
        if raw is None or raw == []:
            if self.policy == "require":
                raise A2ADiscoveryError(
                    "agent card is not signed and the signature policy is 'require'"
                )
            return None
        if not isinstance(raw, list):
            raise A2ADiscoveryError("agent card 'signatures' is not an array")
        if len(raw) > MAX_SIGNATURES:
            raise A2ADiscoveryError(
                f"agent card carries {len(raw)} signatures (at most {MAX_SIGNATURES} are checked)"
            )
        entries = [_parse_entry(i, s) for i, s in enumerate(raw)]
        try:
            payloads = _payloads(card)
        except ValueError as exc:
            raise A2ADiscoveryError(f"agent card has no canonical JSON form: {exc}") from None

        result, failures = self._check(card, entries, payloads, self._keys)
        if result is None and self.jwks_url and fetch_json is not None:
            jwks = await self._load_jwks(fetch_json, force=False)
            result, failures = self._check(card, entries, payloads, self._keys + jwks)
            if result is None and any(f.startswith("no key") for f in failures.values()):
                refetched = await self._load_jwks(fetch_json, force=True)
                if refetched is not jwks:
                    result, failures = self._check(card, entries, payloads, self._keys + refetched)
        if result is not None:
            return result
        detail = "; ".join(f"{_describe(entries[i])}: {why}" for i, why in failures.items())
        raise A2ADiscoveryError(f"agent card signature verification failed: {detail}")

    def _check(
        self,
        card: Mapping[str, Any],
        entries: list[_Entry],
        payloads: list[tuple[str, bytes]],
        keys: list[Key],
    ) -> tuple[VerifiedCard | None, dict[int, str]]:
        failures: dict[int, str] = {}
        for entry in entries:
            outcome = self._check_entry(entry, payloads, keys)
            if isinstance(outcome, str):
                failures[entry.index] = outcome
                continue
            key, form = outcome
            alg = entry.alg
            assert alg is not None
            return VerifiedCard(
                card, entry.index, entry.kid, alg, key.source, form, dict(entry.header)
            ), failures
        return None, failures

    def _check_entry(
        self, entry: _Entry, payloads: list[tuple[str, bytes]], keys: list[Key]
    ) -> str | tuple[Key, str]:
        """The key and payload form that verify ``entry``, or why none does."""
        from jwt.api_jws import PyJWS

        if entry.problem:
            return f"malformed signature: {entry.problem}"
        alg = entry.alg
        if alg is None or alg not in self.algorithms:
            return f"unsupported alg {shown(entry.header.get('alg'), 24)}"
        kid = entry.kid
        where = "in the configured keys" + (" or the JWKS" if self.jwks_url else "")
        candidates = [k for k in keys if kid is None or k.kid is None or k.kid == kid]
        if not candidates:
            return f"no key with kid {shown(kid)} {where}"
        usable = [k for k in candidates if (k.alg is None or k.alg == alg) and key_fits(k.key, alg)]
        if not usable:
            return f"no key {where} fits {alg}" + (f" and kid {shown(kid)}" if kid else "")
        unencoded = entry.header.get("b64") is False  # RFC 7797
        jws = PyJWS(algorithms=[alg])
        for form, payload in payloads:
            middle = "" if unencoded else b64url(payload)
            token = f"{entry.protected}.{middle}.{entry.signature}"
            for key in usable:
                try:
                    jws.decode_complete(
                        token,
                        key=key.key,
                        algorithms=[alg],
                        detached_payload=payload if unencoded else None,
                    )
                except Exception:  # PyJWTError, or a signature shape the key cannot take
                    continue
                return key, form
        return "bad signature (the card was changed after signing, or signed by another key)"

    async def _load_jwks(self, fetch_json: FetchJSON, *, force: bool) -> list[Key]:
        assert self._jwks is not None
        return await self._jwks.keys(fetch_json, force=force)


# -- signing ----------------------------------------------------------------------------------


def sign_card(
    card: Mapping[str, Any],
    private_key: Any,
    *,
    kid: str | None = None,
    alg: str = "ES256",
    jku: str | None = None,
    header: Mapping[str, Any] | None = None,
    omit_empty: bool = False,
) -> dict[str, Any]:
    """A copy of ``card`` with one more ``signatures`` entry: a JWS (``typ`` "JOSE") over
    ``canonicalize(card, omit_empty=omit_empty)`` by ``private_key`` (PEM, ``cryptography``
    private key object or private JWK dict). ``kid`` and ``jku`` go into the protected header,
    ``header`` becomes the unprotected one. Signatures already present are kept.

    ``omit_empty=True`` signs the form with empty values dropped, which verifiers that follow
    A2A v0.3 §8.4.1 literally (the a2a-sdk) compute; ``CardVerifier`` accepts both.

    Raises:
        ImportError: PyJWT is not installed (the ``signing`` extra).
        ValueError: the card has no canonical form, or the key does not fit ``alg``.
    """
    load_jwt()
    from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
    from jwt.api_jws import PyJWS

    if alg not in ASYMMETRIC:
        raise ValueError(f"unsupported alg {alg!r}: use one of {sorted(ASYMMETRIC)}")
    try:
        key, _, _ = key_object(private_key, kid)
    except Exception:
        raise ValueError("private_key is not a usable private key") from None
    private_types = (
        ec.EllipticCurvePrivateKey,
        rsa.RSAPrivateKey,
        ed25519.Ed25519PrivateKey,
        ed448.Ed448PrivateKey,
    )
    if not isinstance(key, private_types) or not key_fits(key.public_key(), alg):
        raise ValueError(f"private_key is not a private key for {alg}")
    protected: dict[str, Any] = {"alg": alg, "typ": "JOSE"}
    if kid is not None:
        protected["kid"] = kid
    if jku is not None:
        protected["jku"] = jku
    payload = canonicalize(card, omit_empty=omit_empty)
    token = PyJWS().encode(payload, key, algorithm=alg, headers=protected)
    head, _, signature = token.split(".")
    entry: dict[str, Any] = {"protected": head, "signature": signature}
    if header:
        entry["header"] = dict(header)
    existing = card.get("signatures")
    signed = dict(card)
    signed["signatures"] = [*(existing if isinstance(existing, list) else []), entry]
    return signed
