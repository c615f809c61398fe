"""Signed Agent Cards: RFC 8785 canonicalisation, JWS verification and signing.

A v0.3+ card may carry ``signatures``: JWS JSON-serialisation entries
``{protected, signature, header?}`` over a detached payload, the RFC 8785 (JCS) form of the
card with ``signatures`` removed (a2a-protocol §2.2). The JOSE work is PyJWT's; it is imported
inside the functions that need it, so the core client never depends on it
(``pip install 'a2a-anyio[signing]'``).
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import anyio

from a2a_anyio._errors import A2AClientError, A2ADiscoveryError, context_of

if TYPE_CHECKING:
    from types import ModuleType

    from jwt.algorithms import AllowedPublicKeys

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
FetchJSON = Callable[[str], Awaitable[Any]]

#: Asymmetric JWS algorithms accepted unless the caller narrows them.
DEFAULT_ALGORITHMS: tuple[str, ...] = (
    "ES256",
    "ES384",
    "ES512",
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "EdDSA",
)
_ASYMMETRIC = frozenset((*DEFAULT_ALGORITHMS, "ES256K"))
_EC_CURVES = {
    "ES256": "secp256r1",
    "ES384": "secp384r1",
    "ES512": "secp521r1",
    "ES256K": "secp256k1",
}

#: A card with more signature entries than this is refused unchecked (each costs key trials).
MAX_SIGNATURES = 16
#: Containers nested deeper than this have no canonical form here (bounded recursion).
MAX_DEPTH = 256

_INSTALL_HINT = "signed Agent Cards need PyJWT: pip install 'a2a-anyio[signing]'"
_B64URL = re.compile(r"[A-Za-z0-9_-]*")
_UNDERSTOOD_CRIT = frozenset({"b64"})
_MAX_SAFE_INT = 2**53


# -- RFC 8785 -----------------------------------------------------------------------------------

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}
_NEEDS_ESCAPE = re.compile(r'[\x00-\x1f"\\]')


def _escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    return _ESCAPES.get(ch) or f"\\u{ord(ch):04x}"


def _string(value: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_escape, value) + '"'


def _number(value: float) -> str:
    """ECMAScript ``Number::toString`` (ECMA-262 §7.1.12.1) of a finite double, as RFC 8785
    §3.2.2.3 requires. ``repr`` gives the shortest digits that round-trip, which is the ``s``
    (and ``k``) ECMAScript asks for; only the layout differs."""
    if not math.isfinite(value):
        raise ValueError(f"{value!r} has no JSON representation (RFC 8785 forbids NaN/Infinity)")
    if value == 0:
        return "0"  # also -0
    if value < 0:
        return "-" + _number(-value)
    mantissa, _, exp = repr(value).partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    raw = (int_part + frac_part).lstrip("0")
    digits = raw.rstrip("0")
    k = len(digits)
    # value == int(digits) * 10 ** (n - k)
    n = k + (int(exp) if exp else 0) - len(frac_part) + (len(raw) - k)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    e = n - 1
    head = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{head}e{'+' if e >= 0 else '-'}{abs(e)}"


def _integer(value: int) -> str:
    if -_MAX_SAFE_INT <= value <= _MAX_SAFE_INT:
        return str(int(value))
    try:  # beyond 2**53 a JSON number is the nearest double (I-JSON), as JSON.parse reads it
        return _number(float(value))
    except OverflowError:
        raise ValueError("integer too large for a JSON number") from None


def _write(value: Any, out: list[str], depth: int) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, int):
        out.append(_integer(value))
    elif isinstance(value, float):
        out.append(_number(float(value)))
    elif isinstance(value, (Mapping, list, tuple)):
        if depth >= MAX_DEPTH:
            raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, Mapping):
            if not all(isinstance(k, str) for k in value):
                raise ValueError("JSON object keys must be strings")
            # RFC 8785 §3.2.3: sort by UTF-16 code units; big-endian UTF-16 bytes compare alike.
            items = sorted(value.items(), key=lambda kv: kv[0].encode("utf-16-be", "surrogatepass"))
            out.append("{")
            for i, (key, item) in enumerate(items):
                out.append("," if i else "")
                out.append(_string(key) + ":")
                _write(item, out, depth + 1)
            out.append("}")
        else:
            out.append("[")
            for i, item in enumerate(value):
                out.append("," if i else "")
                _write(item, out, depth + 1)
            out.append("]")
    else:
        raise ValueError(f"{type(value).__name__} has no JSON representation")


def canonical_json(value: Any) -> bytes:
    """The RFC 8785 (JCS) canonical UTF-8 bytes of a JSON value (dicts/Mappings, lists/tuples,
    str, int, float, bool, None). Raises ``ValueError`` for NaN/Infinity, non-string keys,
    invalid Unicode (lone surrogates), other types, or nesting deeper than ``MAX_DEPTH``."""
    out: list[str] = []
    _write(value, out, 0)
    try:
        return "".join(out).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("JSON text is not valid Unicode (lone surrogate)") from None


_DROP = object()


def _omit_empty(value: Any) -> Any:
    """``value`` without null, "", [] and {} members/elements, recursively (an object or array
    emptied that way goes too): the "default values omitted" form of A2A v0.3 §8.4.1, the one
    the a2a-sdk signs."""
    if isinstance(value, Mapping):
        kept = {k: v for k, v in ((k, _omit_empty(v)) for k, v in value.items()) if v is not _DROP}
        return kept or _DROP
    if isinstance(value, (list, tuple)):
        items = [v for v in (_omit_empty(v) for v in value) if v is not _DROP]
        return items or _DROP
    if value is None or value == "":
        return _DROP
    return value


def canonicalize(card: Mapping[str, Any], *, omit_empty: bool = False) -> bytes:
    """The bytes an Agent Card signature covers: RFC 8785 JCS of ``card`` without its
    top-level ``signatures`` member.

    ``omit_empty=True`` first drops null, "", [] and {} values recursively (A2A v0.3 §8.4.1
    "default value omission", as the a2a-sdk does). Raises ``ValueError`` when the card has no
    canonical form (NaN/Infinity, lone surrogates, ...).
    """
    if not isinstance(card, Mapping):
        raise ValueError("an Agent Card is a JSON object")
    body: Any = {k: v for k, v in card.items() if k != "signatures"}
    if omit_empty:
        body = _omit_empty(body)
        if body is _DROP:
            body = {}
    return canonical_json(body)


def _payloads(card: Mapping[str, Any]) -> list[tuple[str, bytes]]:
    exact = canonicalize(card)
    pruned = canonicalize(card, omit_empty=True)
    forms = [("jcs", exact)]
    if pruned != exact:
        forms.append(("jcs-omit-empty", pruned))
    return forms


# -- PyJWT / cryptography -----------------------------------------------------------------------


def _jwt() -> ModuleType:
    """PyJWT (with ``cryptography``), or an ImportError that says what to install."""
    try:
        import cryptography  # noqa: F401  (PyJWT needs it for every asymmetric algorithm)
        import jwt
        import jwt.algorithms
        import jwt.api_jws
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    return jwt


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64url_decode(text: str) -> bytes:
    if not _B64URL.fullmatch(text) or len(text) % 4 == 1:
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _safe(text: object, limit: int = 64) -> str:
    """A repr of an untrusted value short enough for an error message."""
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


@dataclass(frozen=True, slots=True)
class _Key:
    key: AllowedPublicKeys
    kid: str | None
    alg: str | None  # the algorithm the key is restricted to (JWK "alg"), if any
    source: str  # "keys[0]", "keys['k1']", "JWKS"


def _public(key: Any) -> AllowedPublicKeys:
    from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa

    public_types = (
        ec.EllipticCurvePublicKey,
        rsa.RSAPublicKey,
        ed25519.Ed25519PublicKey,
        ed448.Ed448PublicKey,
    )
    private_types = (
        ec.EllipticCurvePrivateKey,
        rsa.RSAPrivateKey,
        ed25519.Ed25519PrivateKey,
        ed448.Ed448PrivateKey,
    )
    if isinstance(key, public_types):
        return key
    if isinstance(key, private_types):
        return key.public_key()
    raise ValueError(f"unsupported key type {type(key).__name__}")


def _from_jwk(jwk: Mapping[str, Any]) -> Any:
    """A cryptography key object from a JWK (public, or private when it carries ``d``)."""
    from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

    kty = jwk.get("kty")
    data = dict(jwk)
    try:
        if kty == "EC":
            return ECAlgorithm.from_jwk(data)
        if kty == "RSA":
            return RSAAlgorithm.from_jwk(data)
        if kty == "OKP":
            return OKPAlgorithm.from_jwk(data)
    except Exception:  # PyJWT's messages may echo the JWK: say nothing of its content
        raise ValueError(f"unusable {kty} JWK") from None
    raise ValueError(f"unsupported JWK kty {_safe(kty)} (EC, RSA and OKP keys only)")


def _load_pem(data: bytes) -> Any:
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    if b"CERTIFICATE-----" in data:
        return x509.load_pem_x509_certificate(data).public_key()
    if b"PRIVATE KEY-----" in data:
        return serialization.load_pem_private_key(data, password=None)
    return serialization.load_pem_public_key(data)


def _key_object(value: Any, kid: str | None) -> tuple[Any, str | None, str | None]:
    """(cryptography key object, kid, alg restriction) of a PEM / key object / JWK / PyJWK."""
    import jwt

    if isinstance(value, jwt.PyJWK):
        return value.key, kid if kid is not None else value.key_id, value.algorithm_name
    if isinstance(value, Mapping):
        obj = _from_jwk(value)
        jwk_kid, jwk_alg = value.get("kid"), value.get("alg")
        if jwk_kid is not None and not isinstance(jwk_kid, str):
            raise ValueError("JWK kid is not a string")
        if kid is not None and jwk_kid is not None and jwk_kid != kid:
            raise ValueError(f"its JWK kid {_safe(jwk_kid)} differs from {_safe(kid)}")
        alg = jwk_alg if isinstance(jwk_alg, str) else None
        return obj, kid if kid is not None else jwk_kid, alg
    if isinstance(value, (str, bytes, bytearray)):
        try:
            return _load_pem(value.encode() if isinstance(value, str) else bytes(value)), kid, None
        except Exception:  # say nothing of the text: it may be (part of) a private key
            raise ValueError("not a PEM public key, private key or certificate") from None
    return value, kid, None


def _make_key(value: Any, kid: str | None, source: str) -> _Key:
    """A verification key from what the caller gave. Error messages name the position only,
    never the key material."""
    try:
        obj, kid, alg = _key_object(value, kid)
        return _Key(_public(obj), kid, alg, source)
    except ValueError as exc:
        raise ValueError(f"{source}: {exc}") from None
    except Exception as exc:  # cryptography parse errors; only the type is reported
        raise ValueError(f"{source}: not a usable key ({type(exc).__name__})") from None


def _key_fits(key: Any, alg: str) -> bool:
    from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa

    if alg in _EC_CURVES:
        return isinstance(key, ec.EllipticCurvePublicKey) and key.curve.name == _EC_CURVES[alg]
    if alg[:2] in ("RS", "PS"):
        return isinstance(key, rsa.RSAPublicKey)
    if alg == "EdDSA":
        return isinstance(key, (ed25519.Ed25519PublicKey, ed448.Ed448PublicKey))
    return False


def _normalise_keys(keys: Any) -> list[_Key]:
    if keys is None:
        return []
    if isinstance(keys, Mapping):
        if isinstance(keys.get("kty"), str):  # one JWK
            return [_make_key(keys, None, "keys")]
        if isinstance(keys.get("keys"), list):  # a JWK Set document
            return [_make_key(k, None, f"keys['keys'][{i}]") for i, k in enumerate(keys["keys"])]
        out = []
        for kid, value in keys.items():
            if not isinstance(kid, str):
                raise ValueError("keys: a mapping of keys is keyed by kid strings")
            out.append(_make_key(value, kid, f"keys[{kid!r}]"))
        return out
    if isinstance(keys, (str, bytes, bytearray)) or not isinstance(keys, Sequence):
        return [_make_key(keys, None, "keys")]
    return [_make_key(k, None, f"keys[{i}]") for i, k in enumerate(keys)]


def _jwks_keys(doc: Any, url: str) -> list[_Key]:
    """The usable signature keys of a JWK Set; unusable members are skipped (RFC 7517 §5)."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("keys"), list):
        raise A2ADiscoveryError(f"the JWKS at {url} is not a JWK Set (no 'keys' array)")
    out = []
    for jwk in doc["keys"]:
        if not isinstance(jwk, Mapping) or jwk.get("use", "sig") != "sig":
            continue
        ops = jwk.get("key_ops")
        if isinstance(ops, list) and "verify" not in ops:
            continue
        try:
            out.append(_make_key(jwk, None, "JWKS"))
        except ValueError:
            continue
    return out


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
    data = _b64url_decode(text)
    if _b64url(data) != text:  # padding or non-zero spare bits: not the JWS encoding
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
        parts.append(f"kid {_safe(entry.kid)}")
    if entry.alg is not None:
        parts.append(f"alg {_safe(entry.alg, 24)}")
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
        bad = [a for a in self.algorithms if a not in _ASYMMETRIC]
        if bad:
            raise ValueError(
                f"unsupported signature algorithms {bad}: only asymmetric JWS algorithms "
                f"({', '.join(sorted(_ASYMMETRIC))}) verify Agent Cards"
            )
        if not self.algorithms:
            raise ValueError("algorithms is empty")
        self.policy: SignaturePolicy = policy
        self.jwks_url = jwks_url
        self.jwks_ttl = jwks_ttl
        self.jwks_refetch_interval = jwks_refetch_interval
        self._keys: list[_Key] = []
        if policy != "ignore":
            _jwt()
            self._keys = _normalise_keys(keys)
            if not self._keys and not jwks_url:
                raise ValueError(f"policy {policy!r} needs keys= or jwks_url=")
        self._jwks: list[_Key] | None = None
        self._jwks_fetched = -math.inf
        self._jwks_expires = -math.inf
        self._lock = anyio.Lock()
        self.jwks_requests = 0  # JWKS fetches made, for observability

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
        keys: list[_Key],
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
        self, entry: _Entry, payloads: list[tuple[str, bytes]], keys: list[_Key]
    ) -> str | tuple[_Key, str]:
        """The key and payload form that verify ``entry``, or why none does."""
        from jwt.api_jws import PyJWS

        if entry.problem:
            return f"malformed signature: {entry.problem}"
        alg = entry.alg
        if alg is None or alg not in self.algorithms:
            return f"unsupported alg {_safe(entry.header.get('alg'), 24)}"
        kid = entry.kid
        where = "in the configured keys" + (" or the JWKS" if self.jwks_url else "")
        candidates = [k for k in keys if kid is None or k.kid is None or k.kid == kid]
        if not candidates:
            return f"no key with kid {_safe(kid)} {where}"
        usable = [
            k for k in candidates if (k.alg is None or k.alg == alg) and _key_fits(k.key, alg)
        ]
        if not usable:
            return f"no key {where} fits {alg}" + (f" and kid {_safe(kid)}" if kid else "")
        unencoded = entry.header.get("b64") is False  # RFC 7797
        jws = PyJWS(algorithms=[alg])
        for form, payload in payloads:
            middle = "" if unencoded else _b64url(payload)
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

    async def _load_jwks(self, fetch_json: FetchJSON, *, force: bool) -> list[_Key]:
        assert self.jwks_url is not None
        now = anyio.current_time()
        if self._jwks is not None and not force and now < self._jwks_expires:
            return self._jwks
        async with self._lock:
            now = anyio.current_time()
            if self._jwks is not None:
                fresh = now < self._jwks_expires
                if (not force and fresh) or (
                    force and now - self._jwks_fetched < self.jwks_refetch_interval
                ):
                    return self._jwks
            url = self.jwks_url
            self.jwks_requests += 1
            try:
                doc = await fetch_json(url)
            except Exception as exc:
                status = getattr(exc, "status_code", None)
                ours = exc if isinstance(exc, A2AClientError) else None
                why = str(exc) if ours is None else ours.message
                raise A2ADiscoveryError(
                    f"could not fetch the JWKS at {url}: {_safe(why, 200)}",
                    status_code=status if isinstance(status, int) else None,
                    retry_after=getattr(exc, "retry_after", None),
                    retryable=None if ours is None else ours.retryable,
                    **({} if ours is None else context_of(ours)),
                ) from exc
            keys = _jwks_keys(doc, url)
            self._jwks = keys
            self._jwks_fetched = anyio.current_time()
            self._jwks_expires = self._jwks_fetched + self.jwks_ttl
            return keys


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
    """
    _jwt()
    from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
    from jwt.api_jws import PyJWS

    if alg not in _ASYMMETRIC:
        raise ValueError(f"unsupported alg {alg!r}: use one of {sorted(_ASYMMETRIC)}")
    try:
        key, _, _ = _key_object(private_key, kid)
    except Exception:
        raise ValueError("private_key is not a usable private key") from None
    private_types = (
        ec.EllipticCurvePrivateKey,
        rsa.RSAPrivateKey,
        ed25519.Ed25519PrivateKey,
        ed448.Ed448PrivateKey,
    )
    if not isinstance(key, private_types) or not _key_fits(key.public_key(), alg):
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
