"""Keys for signed Agent Cards: PyJWT loaded on demand, keys from JWKs, PEM, PyJWK or
``cryptography`` objects, the algorithms each key fits, JWKS documents."""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from a2a_anyio._errors import A2ADiscoveryError, install_extra, shown

if TYPE_CHECKING:
    from types import ModuleType

    from jwt.algorithms import AllowedPublicKeys

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
ASYMMETRIC = frozenset((*DEFAULT_ALGORITHMS, "ES256K"))
_EC_CURVES = {
    "ES256": "secp256r1",
    "ES384": "secp384r1",
    "ES512": "secp521r1",
    "ES256K": "secp256k1",
}

_INSTALL_HINT = f"signed Agent Cards need PyJWT: {install_extra('signing')}"
_B64URL = re.compile(r"[A-Za-z0-9_-]*")


def load_jwt() -> ModuleType:
    """PyJWT (with ``cryptography``), or an ImportError that says what to install."""
    try:
        import cryptography  # noqa: F401  (PyJWT needs it for every asymmetric algorithm)
        import jwt
        import jwt.algorithms
        import jwt.api_jws
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    return jwt


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    if not _B64URL.fullmatch(text) or len(text) % 4 == 1:
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True, slots=True)
class Key:
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
    raise ValueError(f"unsupported JWK kty {shown(kty)} (EC, RSA and OKP keys only)")


def _load_pem(data: bytes) -> Any:
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    if b"CERTIFICATE-----" in data:
        return x509.load_pem_x509_certificate(data).public_key()
    if b"PRIVATE KEY-----" in data:
        return serialization.load_pem_private_key(data, password=None)
    return serialization.load_pem_public_key(data)


def key_object(value: Any, kid: str | None) -> tuple[Any, str | None, str | None]:
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
            raise ValueError(f"its JWK kid {shown(jwk_kid)} differs from {shown(kid)}")
        alg = jwk_alg if isinstance(jwk_alg, str) else None
        return obj, kid if kid is not None else jwk_kid, alg
    if isinstance(value, (str, bytes, bytearray)):
        try:
            return _load_pem(value.encode() if isinstance(value, str) else bytes(value)), kid, None
        except Exception:  # say nothing of the text: it may be (part of) a private key
            raise ValueError("not a PEM public key, private key or certificate") from None
    return value, kid, None


def make_key(value: Any, kid: str | None, source: str) -> Key:
    """A verification key from what the caller gave. Error messages name the position only,
    never the key material."""
    try:
        obj, kid, alg = key_object(value, kid)
        return Key(_public(obj), kid, alg, source)
    except ValueError as exc:
        raise ValueError(f"{source}: {exc}") from None
    except Exception as exc:  # cryptography parse errors; only the type is reported
        raise ValueError(f"{source}: not a usable key ({type(exc).__name__})") from None


def key_fits(key: Any, alg: str) -> bool:
    from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa

    if alg in _EC_CURVES:
        return isinstance(key, ec.EllipticCurvePublicKey) and key.curve.name == _EC_CURVES[alg]
    if alg[:2] in ("RS", "PS"):
        return isinstance(key, rsa.RSAPublicKey)
    if alg == "EdDSA":
        return isinstance(key, (ed25519.Ed25519PublicKey, ed448.Ed448PublicKey))
    return False


def normalise_keys(keys: Any) -> list[Key]:
    if keys is None:
        return []
    if isinstance(keys, Mapping):
        if isinstance(keys.get("kty"), str):  # one JWK
            return [make_key(keys, None, "keys")]
        if isinstance(keys.get("keys"), list):  # a JWK Set document
            return [make_key(k, None, f"keys['keys'][{i}]") for i, k in enumerate(keys["keys"])]
        out = []
        for kid, value in keys.items():
            if not isinstance(kid, str):
                raise ValueError("keys: a mapping of keys is keyed by kid strings")
            out.append(make_key(value, kid, f"keys[{kid!r}]"))
        return out
    if isinstance(keys, (str, bytes, bytearray)) or not isinstance(keys, Sequence):
        return [make_key(keys, None, "keys")]
    return [make_key(k, None, f"keys[{i}]") for i, k in enumerate(keys)]


def jwks_keys(doc: Any, url: str) -> list[Key]:
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
            out.append(make_key(jwk, None, "JWKS"))
        except ValueError:
            continue
    return out
