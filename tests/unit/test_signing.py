"""Signed Agent Cards: RFC 8785 canonicalisation, sign/verify, policies, JWKS, malformed input."""

from __future__ import annotations

import base64
import contextlib
import copy
import datetime
import functools
import json
import struct
import sys
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.x509.oid import NameOID
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm
from jwt.api_jwk import PyJWK
from jwt.api_jws import PyJWS

from a2a_anyio._errors import A2AConnectionError, A2ADiscoveryError
from a2a_anyio._signing import (
    MAX_SIGNATURES,
    CardVerifier,
    VerifiedCard,
    canonical_json,
    canonicalize,
    sign_card,
)

from ._support import jump, on_mock_clock

pytestmark = pytest.mark.anyio

JWKS_URL = "https://keys.example.com/.well-known/jwks.json"

CARD: dict[str, Any] = {
    "name": "Route Planner — Ünïcødé ✓ 🚀",
    "description": 'Plans routes; quotes " and \\ and\ttabs',
    "url": "https://agent.example.com/a2a",
    "version": "1.2.0",
    "protocolVersion": "0.3.0",
    "preferredTransport": "JSONRPC",
    "capabilities": {"streaming": True, "pushNotifications": False},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["application/json"],
    "skills": [
        {"id": "route", "name": "Route", "description": "d", "tags": ["maps", "€"]},
    ],
    "extra": {"ratio": 0.1, "big": 1e21, "small": 1e-7, "n": 42, "neg": -0.0, "ok": None},
}


# -- keys ------------------------------------------------------------------------------------


@functools.cache
def ec_key(n: int = 0) -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


@functools.cache
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@functools.cache
def ed_key() -> ed25519.Ed25519PrivateKey:
    return ed25519.Ed25519PrivateKey.generate()


def pem(key: Any) -> str:
    data: bytes = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return data.decode()


def public_jwk(key: Any, **extra: Any) -> dict[str, Any]:
    pub = key.public_key()
    if isinstance(pub, ec.EllipticCurvePublicKey):
        jwk = ECAlgorithm.to_jwk(pub, as_dict=True)
    elif isinstance(pub, rsa.RSAPublicKey):
        jwk = RSAAlgorithm.to_jwk(pub, as_dict=True)
    else:
        jwk = OKPAlgorithm.to_jwk(pub, as_dict=True)
    return {**jwk, **extra}


def certificate(key: ec.EllipticCurvePrivateKey) -> str:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "agent.example.com")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def protected(header: dict[str, Any]) -> str:
    return b64url(json.dumps(header).encode())


def with_signatures(card: dict[str, Any], signatures: Any) -> dict[str, Any]:
    return {**card, "signatures": signatures}


async def verified(verifier: CardVerifier, card: dict[str, Any]) -> VerifiedCard:
    result = await verifier.verify(card)
    assert result is not None
    return result


async def refused(verifier: CardVerifier, card: Any, fetch: Any = None) -> str:
    with pytest.raises(A2ADiscoveryError) as info:
        await verifier.verify(card, fetch)
    return str(info.value)


# -- RFC 8785 canonicalisation ---------------------------------------------------------------


def test_rfc8785_section_3_2_2_example() -> None:
    text = (
        '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",'
        ' "literals": [null, true, false]}'
    )
    expected = (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )
    assert canonical_json(json.loads(text)) == expected.encode()


def test_rfc8785_section_3_2_3_sorting_by_utf16_code_units() -> None:
    value = {
        "\u20ac": "Euro Sign",
        "\r": "Carriage Return",
        "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One",
        "\U0001f600": "Emoji: Grinning Face",
        "\u0080": "Control",
        "\u00f6": "Latin Small Letter O With Diaeresis",
    }
    order = list(json.loads(canonical_json(value)))
    # U+1F600 is the surrogate pair D83D DE00: before U+FB33 in UTF-16, after it by code point.
    assert order == ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]


@pytest.mark.parametrize(
    ("ieee", "expected"),
    [  # RFC 8785 Appendix B
        ("0000000000000000", "0"),
        ("8000000000000000", "0"),
        ("0000000000000001", "5e-324"),
        ("8000000000000001", "-5e-324"),
        ("7fefffffffffffff", "1.7976931348623157e+308"),
        ("ffefffffffffffff", "-1.7976931348623157e+308"),
        ("4340000000000000", "9007199254740992"),
        ("c340000000000000", "-9007199254740992"),
        ("4430000000000000", "295147905179352830000"),
        ("44b52d02c7e14af5", "9.999999999999997e+22"),
        ("44b52d02c7e14af6", "1e+23"),
        ("44b52d02c7e14af7", "1.0000000000000001e+23"),
        ("444b1ae4d6e2ef4e", "999999999999999700000"),
        ("444b1ae4d6e2ef4f", "999999999999999900000"),
        ("444b1ae4d6e2ef50", "1e+21"),
        ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
        ("3eb0c6f7a0b5ed8d", "0.000001"),
        ("41b3de4355555553", "333333333.3333332"),
        ("41b3de4355555554", "333333333.33333325"),
        ("41b3de4355555555", "333333333.3333333"),
        ("41b3de4355555556", "333333333.3333334"),
        ("41b3de4355555557", "333333333.33333343"),
        ("becbf647612f3696", "-0.0000033333333333333333"),
        ("43143ff3c1cb0959", "1424953923781206.2"),
    ],
)
def test_rfc8785_appendix_b_numbers(ieee: str, expected: str) -> None:
    (value,) = struct.unpack(">d", bytes.fromhex(ieee))
    assert canonical_json(value) == expected.encode()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, "1"),
        (-0.0, "0"),
        (0.1, "0.1"),
        (100.0, "100"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (123e-9, "1.23e-7"),
        (0.000001, "0.000001"),
        (12.5e300, "1.25e+301"),
        (42, "42"),
        (-7, "-7"),
        (0, "0"),
        (2**53, "9007199254740992"),
        (2**53 + 1, "9007199254740992"),  # beyond 2**53 a JSON number is the nearest double
        (10**21, "1e+21"),
        (True, "true"),
        (None, "null"),
    ],
)
def test_numbers_and_literals(value: Any, expected: str) -> None:
    assert canonical_json(value) == expected.encode()


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), 10**400])
def test_nan_infinity_and_huge_integers_have_no_canonical_form(bad: Any) -> None:
    with pytest.raises(ValueError, match="JSON"):
        canonical_json({"a": [bad]})


def test_nan_parsed_from_a_card_is_refused() -> None:
    with pytest.raises(ValueError, match="NaN"):
        canonicalize(json.loads('{"name": "x", "n": NaN}'))


def test_strings_escape_only_what_rfc8785_requires() -> None:
    value = '\u0000\u0001\u001f\b\f\n\r\t"\\/\u007f\u2028é€😀'
    expected = '"\\u0000\\u0001\\u001f\\b\\f\\n\\r\\t\\"\\\\/\u007f\u2028é€😀"'
    assert canonical_json(value) == expected.encode("utf-8")


@pytest.mark.parametrize(
    "bad",
    [
        "\ud800",  # lone surrogate
        {"\udc00": 1},
        {1: "x"},
        {b"k": "x"},
        b"bytes",
        {1, 2},
        object(),
    ],
)
def test_values_without_a_json_form_raise_value_error(bad: Any) -> None:
    with pytest.raises(ValueError):  # noqa: PT011
        canonical_json(bad)


def test_deep_nesting_is_refused_not_a_recursion_error() -> None:
    deep: Any = []
    for _ in range(10_000):
        deep = [deep]
    with pytest.raises(ValueError, match="deeper"):
        canonical_json(deep)


def test_canonicalize_removes_only_the_top_level_signatures() -> None:
    card = {"b": {"signatures": [1]}, "a": 1, "signatures": [{"protected": "x"}]}
    assert canonicalize(card) == b'{"a":1,"b":{"signatures":[1]}}'


def test_canonicalize_ignores_member_order_whitespace_and_number_spelling() -> None:
    reordered = json.loads(json.dumps(dict(reversed(list(CARD.items())))), parse_int=float)
    assert canonicalize(reordered) == canonicalize(CARD)
    assert canonicalize(json.loads(json.dumps(CARD, indent=4))) == canonicalize(CARD)


def test_canonicalize_omit_empty() -> None:
    card = {
        "name": "x",
        "description": "",
        "skills": [],
        "ok": False,
        "zero": 0,
        "none": None,
        "nested": {"a": [], "b": {"c": None}, "d": ["", None, 1]},
    }
    assert canonicalize(card) == canonical_json(card)
    assert (
        canonicalize(card, omit_empty=True)
        == b'{"name":"x","nested":{"d":[1]},"ok":false,"zero":0}'
    )
    assert canonicalize({"x": ""}, omit_empty=True) == b"{}"


def as_doubles(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: as_doubles(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_doubles(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return value


@settings(max_examples=150, deadline=None)
@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers(min_value=-(2**53), max_value=2**53)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(st.characters(exclude_categories=["Cs"])),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
        max_leaves=20,
    )
)
def test_canonical_json_round_trips_and_is_idempotent(value: Any) -> None:
    out = canonical_json(value)
    again = json.loads(out)
    assert as_doubles(again) == as_doubles(value)  # the same JSON value, numbers as doubles
    assert canonical_json(again) == out


# -- sign and verify -------------------------------------------------------------------------

ALGS: list[tuple[str, Callable[[], Any]]] = [
    ("ES256", ec_key),
    ("RS256", rsa_key),
    ("PS256", rsa_key),
    ("EdDSA", ed_key),
]


@pytest.mark.parametrize(("alg", "make_key"), ALGS, ids=[a for a, _ in ALGS])
async def test_round_trip(alg: str, make_key: Callable[[], Any]) -> None:
    key = make_key()
    signed = sign_card(CARD, key, kid="k1", alg=alg)
    verifier = CardVerifier(keys={"k1": key.public_key()}, policy="require")
    result = await verified(verifier, signed)
    assert (result.index, result.kid, result.alg, result.key_source) == (0, "k1", alg, "keys['k1']")
    assert result.canonical_form == "jcs"
    assert result.header == {"alg": alg, "kid": "k1", "typ": "JOSE"}
    assert result.card is signed


def test_sign_card_copies_and_appends() -> None:
    card = copy.deepcopy(CARD)
    once = sign_card(card, ec_key(), kid="a", jku=JWKS_URL, header={"note": "x"})
    twice = sign_card(once, ed_key(), kid="b", alg="EdDSA")
    assert card == CARD and "signatures" not in card
    assert len(once["signatures"]) == 1 and len(twice["signatures"]) == 2
    entry = once["signatures"][0]
    assert set(entry) == {"protected", "signature", "header"} and entry["header"] == {"note": "x"}
    header = json.loads(base64.urlsafe_b64decode(entry["protected"] + "=="))
    assert header == {"alg": "ES256", "kid": "a", "typ": "JOSE", "jku": JWKS_URL}


@pytest.mark.parametrize(
    "keys",
    [
        pytest.param(lambda: [pem(ec_key())], id="pem-str"),
        pytest.param(lambda: [pem(ec_key()).encode()], id="pem-bytes"),
        pytest.param(lambda: pem(ec_key()), id="single-pem"),
        pytest.param(lambda: [ec_key().public_key()], id="key-object"),
        pytest.param(lambda: [ec_key()], id="private-key-object"),
        pytest.param(lambda: [certificate(ec_key())], id="certificate"),
        pytest.param(lambda: [public_jwk(ec_key(), kid="k1")], id="jwk-list"),
        pytest.param(lambda: public_jwk(ec_key()), id="single-jwk"),
        pytest.param(lambda: {"keys": [public_jwk(ec_key(), kid="k1")]}, id="jwks-doc"),
        pytest.param(lambda: {"k1": public_jwk(ec_key())}, id="kid-mapping-jwk"),
        pytest.param(lambda: {"k1": pem(ec_key())}, id="kid-mapping-pem"),
        pytest.param(lambda: [PyJWK(public_jwk(ec_key(), kid="k1"))], id="pyjwk"),
        pytest.param(lambda: [pem(rsa_key()), ed_key().public_key(), pem(ec_key())], id="mixed"),
    ],
)
async def test_key_forms(keys: Callable[[], Any]) -> None:
    verifier = CardVerifier(keys=keys())
    result = await verified(verifier, sign_card(CARD, ec_key(), kid="k1"))
    assert result.kid == "k1"


async def test_kidless_signature_tries_every_key() -> None:
    verifier = CardVerifier(keys={"other": ec_key(1).public_key(), "mine": ec_key().public_key()})
    result = await verified(verifier, sign_card(CARD, ec_key()))
    assert (result.kid, result.key_source) == (None, "keys['mine']")


async def test_reordered_but_equal_card_still_verifies() -> None:
    signed = sign_card(CARD, ec_key(), kid="k1")
    received = json.loads(json.dumps(dict(reversed(list(signed.items()))), indent=2))
    received["extra"]["n"] = 42.0  # the same JSON number, spelled differently
    received["extra"] = dict(reversed(list(received["extra"].items())))
    await verified(CardVerifier(keys=[ec_key().public_key()]), received)


@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param(lambda c: c.update(url="https://evil.example.com/a2a"), id="changed-url"),
        pytest.param(lambda c: c["capabilities"].update(streaming=False), id="nested-field"),
        pytest.param(lambda c: c.update(added="x"), id="added-field"),
        pytest.param(lambda c: c.pop("version"), id="removed-field"),
        pytest.param(lambda c: c["skills"][0]["tags"].reverse(), id="array-order"),
        pytest.param(lambda c: c["extra"].update(ratio=0.1000000001), id="number"),
        pytest.param(lambda c: c.update(name=c["name"].upper()), id="unicode"),
    ],
)
async def test_tampered_card_fails(tamper: Callable[[dict[str, Any]], Any]) -> None:
    signed = copy.deepcopy(sign_card(CARD, ec_key(), kid="k1"))
    tamper(signed)
    message = await refused(CardVerifier(keys={"k1": ec_key().public_key()}), signed)
    assert "signature 0 (kid 'k1', alg 'ES256'): bad signature" in message


async def test_wrong_key_fails_without_leaking_key_material() -> None:
    jwk = public_jwk(ec_key(1))
    verifier = CardVerifier(keys={"k1": jwk})
    message = await refused(verifier, sign_card(CARD, ec_key(), kid="k1"))
    assert "bad signature" in message
    for secret in (jwk["x"], jwk["y"], pem(ec_key(1)).splitlines()[1]):
        assert secret not in message
    assert "BEGIN" not in repr(verifier)


async def test_unknown_kid() -> None:
    verifier = CardVerifier(keys={"k1": ec_key().public_key()})
    message = await refused(verifier, sign_card(CARD, ec_key(), kid="k2"))
    assert "no key with kid 'k2' in the configured keys" in message


async def test_key_of_the_wrong_type_for_the_alg() -> None:
    verifier = CardVerifier(keys={"k1": rsa_key().public_key()})
    message = await refused(verifier, sign_card(CARD, ec_key(), kid="k1"))
    assert "fits ES256" in message


async def test_jwk_alg_restricts_the_key() -> None:
    verifier = CardVerifier(keys=[public_jwk(rsa_key(), kid="k1", alg="RS256")])
    await verified(verifier, sign_card(CARD, rsa_key(), kid="k1", alg="RS256"))
    message = await refused(verifier, sign_card(CARD, rsa_key(), kid="k1", alg="PS256"))
    assert "fits PS256" in message


async def test_alg_outside_the_allowed_list() -> None:
    verifier = CardVerifier(keys=[rsa_key().public_key()], algorithms=["RS256"])
    message = await refused(verifier, sign_card(CARD, rsa_key(), kid="k1", alg="PS256"))
    assert "unsupported alg 'PS256'" in message


@pytest.mark.parametrize("alg", ["none", "HS256"])
async def test_symmetric_and_none_algorithms_are_refused(alg: str) -> None:
    """The classic confusion: an HMAC over the card keyed with the verifier's public PEM."""
    public_pem = pem(rsa_key())
    head = protected({"alg": alg, "kid": "k1"})
    payload = b64url(canonicalize(CARD))
    if alg == "none":
        signature = b64url(b"x")
    else:
        import hmac

        mac = hmac.new(public_pem.encode(), f"{head}.{payload}".encode(), "sha256").digest()
        signature = b64url(mac)
    card = with_signatures(CARD, [{"protected": head, "signature": signature}])
    message = await refused(CardVerifier(keys={"k1": public_pem}), card)
    assert f"unsupported alg '{alg}'" in message


async def test_one_good_signature_among_bad_ones_is_enough() -> None:
    good = sign_card(CARD, ec_key(), kid="new")
    bad_entry = sign_card({**CARD, "name": "other"}, ec_key(1), kid="old")["signatures"][0]
    card = with_signatures(
        CARD, [{"protected": "%%%", "signature": "x"}, bad_entry, *good["signatures"]]
    )
    verifier = CardVerifier(keys={"old": ec_key(1).public_key(), "new": ec_key().public_key()})
    result = await verified(verifier, card)
    assert (result.index, result.kid) == (2, "new")


async def test_every_failure_is_reported() -> None:
    card = with_signatures(CARD, [{"protected": "%%%", "signature": "x"}])
    card = sign_card(card, ec_key(1), kid="k1")
    card = sign_card(card, ec_key(), kid="zz")
    message = await refused(CardVerifier(keys={"k1": ec_key().public_key()}), card)
    assert "signature 0: malformed signature" in message
    assert "signature 1 (kid 'k1', alg 'ES256'): bad signature" in message
    assert "signature 2 (kid 'zz', alg 'ES256'): no key with kid 'zz'" in message


async def test_unencoded_payload_rfc7797() -> None:
    payload = canonicalize(CARD)
    token = PyJWS().encode(
        payload, ec_key(), algorithm="ES256", headers={"kid": "k1"}, is_payload_detached=True
    )
    head, middle, signature = token.split(".")
    assert middle == ""
    card = with_signatures(CARD, [{"protected": head, "signature": signature}])
    verifier = CardVerifier(keys={"k1": ec_key().public_key()})
    assert (await verified(verifier, card)).header["b64"] is False
    await refused(verifier, {**card, "name": "changed"})


async def test_omit_empty_signers_are_accepted() -> None:
    card = {**CARD, "description": "", "security": [], "iconUrl": None}
    verifier = CardVerifier(keys=[ec_key().public_key()])
    plain = await verified(verifier, sign_card(card, ec_key()))
    pruned = await verified(verifier, sign_card(card, ec_key(), omit_empty=True))
    assert (plain.canonical_form, pruned.canonical_form) == ("jcs", "jcs-omit-empty")
    # Only empty values are outside the pruned form: anything else still breaks the signature.
    changed = {**sign_card(card, ec_key(), omit_empty=True), "version": "9"}
    await refused(verifier, changed)


# -- policies --------------------------------------------------------------------------------


async def test_policy_ignore_never_checks() -> None:
    verifier = CardVerifier(policy="ignore")
    forged = with_signatures(CARD, [{"protected": "garbage", "signature": "!"}])
    assert await verifier.verify(forged) is None
    assert await verifier.verify(CARD) is None
    assert await verifier.verify("not even a card") is None  # type: ignore[arg-type]


@pytest.mark.parametrize("signatures", [None, [], "absent"])
async def test_policy_verify_if_present_lets_unsigned_cards_pass(signatures: Any) -> None:
    card = dict(CARD) if signatures == "absent" else with_signatures(CARD, signatures)
    verifier = CardVerifier(keys=[ec_key().public_key()])
    assert verifier.policy == "verify-if-present"
    assert await verifier.verify(card) is None
    await verified(verifier, sign_card(CARD, ec_key()))
    await refused(verifier, sign_card(CARD, ec_key(1)))


@pytest.mark.parametrize("signatures", [None, [], "absent"])
async def test_policy_require_refuses_unsigned_cards(signatures: Any) -> None:
    card = dict(CARD) if signatures == "absent" else with_signatures(CARD, signatures)
    verifier = CardVerifier(keys=[ec_key().public_key()], policy="require")
    assert "not signed" in await refused(verifier, card)
    await verified(verifier, sign_card(CARD, ec_key()))
    await refused(verifier, sign_card(CARD, ec_key(1)))


# -- malformed input -------------------------------------------------------------------------

GOOD = sign_card(CARD, ec_key(), kid="k1")["signatures"][0]
HEAD = json.loads(base64.urlsafe_b64decode(GOOD["protected"] + "=="))

MALFORMED: list[tuple[str, Any]] = [
    ("entry-not-object", ["x"]),
    ("entry-null", [None]),
    ("no-protected", [{"signature": GOOD["signature"]}]),
    ("no-signature", [{"protected": GOOD["protected"]}]),
    ("protected-not-str", [{**GOOD, "protected": 5}]),
    ("protected-empty", [{**GOOD, "protected": ""}]),
    ("protected-not-b64", [{**GOOD, "protected": "!!!!"}]),
    ("protected-bad-length", [{**GOOD, "protected": "abcde"}]),
    ("protected-padded", [{**GOOD, "protected": GOOD["protected"] + "="}]),
    ("protected-not-json", [{**GOOD, "protected": b64url(b"\xff\xfe{")}]),
    ("protected-array", [{**GOOD, "protected": protected([1])}]),  # type: ignore[arg-type]
    ("no-alg", [{**GOOD, "protected": protected({"kid": "k1"})}]),
    ("alg-not-str", [{**GOOD, "protected": protected({"alg": 7})}]),
    ("kid-not-str", [{**GOOD, "protected": protected({**HEAD, "kid": ["k1"]})}]),
    ("unknown-crit", [{**GOOD, "protected": protected({**HEAD, "crit": ["exp"], "exp": 1})}]),
    ("crit-unhashable", [{**GOOD, "protected": protected({**HEAD, "crit": [["b64"]]})}]),
    ("crit-empty", [{**GOOD, "protected": protected({**HEAD, "crit": []})}]),
    ("crit-not-list", [{**GOOD, "protected": protected({**HEAD, "crit": "b64"})}]),
    ("b64-false-no-crit", [{**GOOD, "protected": protected({**HEAD, "b64": False})}]),
    ("b64-not-bool", [{**GOOD, "protected": protected({**HEAD, "b64": "no"})}]),
    ("header-not-object", [{**GOOD, "header": "kid"}]),
    ("header-dup-param", [{**GOOD, "header": {"alg": "ES256"}}]),
    ("signature-with-dot", [{**GOOD, "signature": "a.b"}]),
    ("signature-not-b64", [{**GOOD, "signature": "+/+/"}]),
    ("signature-padded", [{**GOOD, "signature": GOOD["signature"] + "=="}]),
    ("signature-short", [{**GOOD, "signature": b64url(b"short")}]),
    ("signature-empty", [{**GOOD, "signature": ""}]),
    ("signature-huge", [{**GOOD, "signature": "A" * 4096}]),
    ("signatures-object", {"protected": GOOD["protected"], "signature": GOOD["signature"]}),
    ("signatures-string", "signed"),
    ("signatures-number", 1),
    ("too-many", [GOOD] * (MAX_SIGNATURES + 1)),
]


@pytest.mark.parametrize(("name", "signatures"), MALFORMED, ids=[n for n, _ in MALFORMED])
async def test_malformed_signatures_raise_discovery_error(name: str, signatures: Any) -> None:
    verifier = CardVerifier(keys={"k1": ec_key().public_key()}, policy="require")
    message = await refused(verifier, with_signatures(CARD, signatures))
    assert message.startswith("agent card")


@pytest.mark.parametrize(
    "card",
    [
        pytest.param("a string", id="not-object"),
        pytest.param([GOOD], id="array"),
        pytest.param(json.loads('{"n": NaN, "signatures": []}') | {"signatures": [GOOD]}, id="nan"),
        pytest.param({"x": "\ud800", "signatures": [GOOD]}, id="lone-surrogate"),
    ],
)
async def test_cards_without_a_canonical_form_raise_discovery_error(card: Any) -> None:
    await refused(CardVerifier(keys=[ec_key().public_key()], policy="require"), card)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)
ENTRY_VALUES = st.one_of(
    JSON_VALUES,
    st.fixed_dictionaries(
        {},
        optional={
            "protected": st.one_of(
                JSON_VALUES,
                st.just(GOOD["protected"]),
                st.builds(lambda v: b64url(json.dumps(v).encode()), JSON_VALUES),
                st.builds(
                    lambda extra: protected({**HEAD, **extra}),
                    st.dictionaries(
                        st.sampled_from(["alg", "kid", "crit", "b64", "typ"]), JSON_VALUES
                    ),
                ),
            ),
            "signature": st.one_of(JSON_VALUES, st.just(GOOD["signature"]), st.text(max_size=90)),
            "header": JSON_VALUES,
        },
    ),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(signatures=st.one_of(JSON_VALUES, st.lists(ENTRY_VALUES, max_size=4)))
def test_fuzzed_signatures_never_raise_anything_else(signatures: Any) -> None:
    verifier = CardVerifier(keys={"k1": ec_key().public_key()})
    card = with_signatures(CARD, signatures)
    with contextlib.suppress(A2ADiscoveryError):
        anyio.run(verifier.verify, card)


# -- JWKS ------------------------------------------------------------------------------------


class JWKSServer:
    """An async ``fetch_json`` serving a JWK Set; records every URL it is asked for."""

    def __init__(self, *keys: dict[str, Any]) -> None:
        self.keys = list(keys)
        self.urls: list[str] = []
        self.fail: Exception | None = None

    async def __call__(self, url: str) -> Any:
        self.urls.append(url)
        await anyio.lowlevel.checkpoint()
        if self.fail is not None:
            raise self.fail
        return {"keys": list(self.keys)}


async def test_jwks_fetched_through_the_callable_and_cached() -> None:
    server = JWKSServer(public_jwk(ec_key(), kid="k1", use="sig"))
    verifier = CardVerifier(jwks_url=JWKS_URL, policy="require")
    signed = sign_card(CARD, ec_key(), kid="k1", jku="https://evil.example.com/jwks.json")
    for _ in range(3):
        result = await verifier.verify(signed, server)
        assert result is not None and result.key_source == "JWKS"
    assert server.urls == [JWKS_URL]  # cached, and the card's jku is never fetched
    assert verifier.jwks_requests == 1


async def test_jwks_ttl_zero_refetches() -> None:
    server = JWKSServer(public_jwk(ec_key(), kid="k1"))
    verifier = CardVerifier(jwks_url=JWKS_URL, jwks_ttl=0)
    signed = sign_card(CARD, ec_key(), kid="k1")
    await verifier.verify(signed, server)
    await verifier.verify(signed, server)
    assert len(server.urls) == 2


@on_mock_clock()
async def test_jwks_expires_after_its_ttl() -> None:
    server = JWKSServer(public_jwk(ec_key(), kid="k1"))
    verifier = CardVerifier(jwks_url=JWKS_URL, jwks_ttl=60)
    signed = sign_card(CARD, ec_key(), kid="k1")
    await verifier.verify(signed, server)
    jump(59)
    await verifier.verify(signed, server)
    assert len(server.urls) == 1
    jump(2)
    await verifier.verify(signed, server)
    assert len(server.urls) == 2


async def test_unknown_kid_refetches_the_jwks_for_key_rotation() -> None:
    server = JWKSServer(public_jwk(ec_key(1), kid="old"))
    verifier = CardVerifier(jwks_url=JWKS_URL, jwks_refetch_interval=0)
    await verifier.verify(sign_card(CARD, ec_key(1), kid="old"), server)
    server.keys.append(public_jwk(ec_key(), kid="new"))
    result = await verifier.verify(sign_card(CARD, ec_key(), kid="new"), server)
    assert result is not None and result.kid == "new"
    assert len(server.urls) == 2


async def test_unknown_kid_refetch_is_rate_limited() -> None:
    server = JWKSServer(public_jwk(ec_key(1), kid="old"))
    verifier = CardVerifier(jwks_url=JWKS_URL)
    signed = sign_card(CARD, ec_key(), kid="new")
    for _ in range(3):
        message = await refused(verifier, signed, server)
        assert "no key with kid 'new' in the configured keys or the JWKS" in message
    assert len(server.urls) == 1


async def test_static_keys_are_tried_before_the_jwks() -> None:
    server = JWKSServer()
    verifier = CardVerifier(keys={"k1": ec_key().public_key()}, jwks_url=JWKS_URL)
    await verified_with(verifier, sign_card(CARD, ec_key(), kid="k1"), server)
    assert server.urls == []


async def verified_with(verifier: CardVerifier, card: dict[str, Any], fetch: Any) -> VerifiedCard:
    result = await verifier.verify(card, fetch)
    assert result is not None
    return result


async def test_jwks_skips_unusable_keys() -> None:
    server = JWKSServer(
        {"kty": "oct", "k": "c2VjcmV0", "kid": "k1"},
        public_jwk(ec_key(), kid="k1", use="enc"),
        public_jwk(ec_key(), kid="k1", key_ops=["encrypt"]),
        {"kty": "EC", "crv": "P-256", "x": "AAAA", "y": "AAAA", "kid": "k1"},
        "not a key",  # type: ignore[arg-type]
        public_jwk(ec_key(), kid="k1"),
    )
    verifier = CardVerifier(jwks_url=JWKS_URL)
    await verified_with(verifier, sign_card(CARD, ec_key(), kid="k1"), server)


@pytest.mark.parametrize("doc", [[], {"keys": "x"}, "jwks", None, {"no": "keys"}])
async def test_a_document_that_is_not_a_jwk_set(doc: Any) -> None:
    async def fetch(url: str) -> Any:
        return doc

    verifier = CardVerifier(jwks_url=JWKS_URL)
    assert "not a JWK Set" in await refused(verifier, sign_card(CARD, ec_key(), kid="k"), fetch)


async def test_jwks_fetch_failure_becomes_a_discovery_error() -> None:
    server = JWKSServer()
    server.fail = A2AConnectionError("connection refused")
    verifier = CardVerifier(jwks_url=JWKS_URL)
    with pytest.raises(A2ADiscoveryError, match="could not fetch the JWKS") as info:
        await verifier.verify(sign_card(CARD, ec_key(), kid="k1"), server)
    assert info.value.retryable and info.value.__cause__ is server.fail
    server.fail = RuntimeError("boom")
    with pytest.raises(A2ADiscoveryError, match="boom") as info:
        await verifier.verify(sign_card(CARD, ec_key(), kid="k1"), server)
    assert not info.value.retryable


async def test_concurrent_verifications_share_one_jwks_fetch() -> None:
    server = JWKSServer(public_jwk(ec_key(), kid="k1"))
    verifier = CardVerifier(jwks_url=JWKS_URL)
    signed = sign_card(CARD, ec_key(), kid="k1")
    results: list[VerifiedCard | None] = []

    async def one() -> None:
        results.append(await verifier.verify(signed, server))

    async with anyio.create_task_group() as tg:
        for _ in range(5):
            tg.start_soon(one)
    assert len(results) == 5 and all(r is not None for r in results)
    assert len(server.urls) == 1


async def test_jwks_url_needs_fetch_json() -> None:
    verifier = CardVerifier(jwks_url=JWKS_URL)
    with pytest.raises(ValueError, match="fetch_json"):
        await verifier.verify(sign_card(CARD, ec_key()))


# -- misuse ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "needs keys= or jwks_url="),
        ({"keys": []}, "needs keys= or jwks_url="),
        ({"keys": ["not a pem"]}, r"keys\[0\]: not a PEM public key"),
        ({"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}, r"keys\[0\]: unsupported JWK kty 'oct'"),
        ({"keys": {"k1": {"kty": "EC", "crv": "P-256", "x": "A", "y": "B"}}}, "unusable EC JWK"),
        ({"keys": [public_jwk(ec_key(), kid="a")], "policy": "require"}, None),
        ({"keys": {"b": public_jwk(ec_key(), kid="a")}}, "differs"),
        ({"keys": [42]}, "unsupported key type int"),
        ({"keys": [pem(ec_key())], "algorithms": ["HS256"]}, "only asymmetric"),
        ({"keys": [pem(ec_key())], "algorithms": ["none"]}, "only asymmetric"),
        ({"keys": [pem(ec_key())], "algorithms": []}, "empty"),
        ({"keys": [pem(ec_key())], "policy": "strict"}, "unknown signature policy"),
    ],
)
def test_constructor_misuse(kwargs: dict[str, Any], match: str | None) -> None:
    if match is None:
        CardVerifier(**kwargs)
        return
    with pytest.raises(ValueError, match=match) as info:
        CardVerifier(**kwargs)
    assert "BEGIN" not in str(info.value) and "c2VjcmV0" not in str(info.value)


@pytest.mark.parametrize(
    ("key", "alg", "match"),
    [
        (lambda: ec_key().public_key(), "ES256", "not a private key for ES256"),
        (lambda: rsa_key(), "ES256", "not a private key for ES256"),
        (lambda: ec_key(), "HS256", "unsupported alg"),
        (lambda: "garbage", "ES256", "not a usable private key"),
    ],
)
def test_sign_card_misuse(key: Callable[[], Any], alg: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        sign_card(CARD, key(), alg=alg)


def test_sign_card_accepts_pem_and_private_jwk() -> None:
    private_pem = ec_key().private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    jwk = ECAlgorithm.to_jwk(ec_key(), as_dict=True)
    a = sign_card(CARD, private_pem.decode(), kid="k1")
    b = sign_card(CARD, jwk, kid="k1")
    verifier = CardVerifier(keys={"k1": ec_key().public_key()})
    for card in (a, b):
        assert anyio.run(verifier.verify, card) is not None


def test_missing_pyjwt_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jwt", None)
    assert CardVerifier(policy="ignore").policy == "ignore"  # the core never needs PyJWT
    assert canonicalize({"a": 1}) == b'{"a":1}'
    with pytest.raises(ImportError, match=r"pip install '\.\[signing\]' in a2a-anyio's checkout"):
        CardVerifier(keys=[pem(ec_key())])
    with pytest.raises(ImportError, match=r"pip install '\.\[signing\]' in a2a-anyio's checkout"):
        sign_card(CARD, ec_key())


# -- interop with the a2a-sdk reference implementation --------------------------------------


def _sdk() -> Any:
    return pytest.importorskip("a2a.utils.signing")


SDK_CARD: dict[str, Any] = {
    "name": "Interop Agent",
    "description": "Signs its card — ünïcödé ✓",
    "version": "1.0.0",
    "supportedInterfaces": [
        {"url": "https://a.example/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ],
    "capabilities": {
        "streaming": True,
        "extensions": [{"uri": "urn:x", "params": {"ratio": 0.1, "n": 3, "tags": ["a"]}}],
    },
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}],
}


async def test_verifies_a_card_signed_by_the_a2a_sdk() -> None:
    signing = _sdk()
    from a2a.types import AgentCard
    from google.protobuf.json_format import MessageToDict, ParseDict

    signer = signing.create_agent_card_signer(
        ec_key(), {"alg": "ES256", "kid": "k1", "typ": "JOSE", "jku": None}
    )
    wire = json.loads(json.dumps(MessageToDict(signer(ParseDict(SDK_CARD, AgentCard())))))
    result = await verified(CardVerifier(keys={"k1": ec_key().public_key()}), wire)
    assert result.kid == "k1"


def test_a2a_sdk_verifies_a_card_signed_here() -> None:
    signing = _sdk()
    from a2a.types import AgentCard
    from google.protobuf.json_format import ParseDict

    signed = sign_card(SDK_CARD, ec_key(), kid="k1")
    verify = signing.create_signature_verifier(lambda kid, jku: ec_key().public_key(), ["ES256"])
    verify(ParseDict(signed, AgentCard()))
    with pytest.raises(signing.InvalidSignaturesError):
        verify(ParseDict({**signed, "version": "2"}, AgentCard()))
