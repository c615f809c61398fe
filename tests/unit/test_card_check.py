"""``check_card``: good cards of every version have no problem; each kind of problem is found,
at its JSON path."""

from __future__ import annotations

import asyncio
import copy
from dataclasses import replace
from typing import Any
from urllib.parse import urljoin

import pytest

from a2a_anyio import AgentCard, CardProblem, check_card
from a2a_anyio._card import MAX_CARD_BYTES
from a2a_anyio._card_check import card_version
from a2a_anyio._dialects.card import CARD_VERSIONS, encode_card, parse_card
from a2a_anyio.testing import FakeAgent
from tests.interop.legacy_servers import LegacyDialect, V02Dialect

from ._support import load_frame
from .test_card_parse import V03_CARD, V1_CARD

REMOTE = "https://agent.example.com/.well-known/agent-card.json"


def frame_card(version: str, name: str) -> dict[str, Any]:
    body: dict[str, Any] = load_frame(version, name)["response"]["body"]
    card: dict[str, Any] = body.get("result", body)
    return card


def good_cards() -> list[tuple[str, dict[str, Any]]]:
    cards = [
        (f"frame {v}/{n}", frame_card(v, n))
        for v, n in (
            ("v1_0", "card"),
            ("v0_3", "card"),  # the a2a-sdk's hybrid: a v1.0 card holding its v0.3 view
            ("v1_0", "extended_card"),
            ("v0_3", "extended_card"),
            ("v1_0_rest", "extended_card"),
        )
    ]
    cards += [("spec v1.0", V1_CARD), ("spec v0.3", V03_CARD)]
    for dialect in ("1.0", "0.3", "0.2", "legacy"):
        agent = FakeAgent(dialect=dialect, auth="Bearer t")
        cards.append((f"FakeAgent {dialect}", agent.card("https://agent.example.com")))
    closing = asyncio.Event()
    cards.append(("legacy server", LegacyDialect("https://agent.example.com", closing).card()))
    cards.append(("v0.2 server", V02Dialect("https://agent.example.com", closing).card()))
    model = parse_card(V1_CARD)  # with what a card of each version can say
    interfaces = [replace(i, protocol_version="0.3") for i in model.interfaces]
    caps = replace(model.capabilities, extensions=[])  # a v0.2 member, as iconUrl is
    model = replace(model, interfaces=interfaces, capabilities=caps, icon_url=None)
    cards += [(f"encode_card {v}", encode_card(model, v)) for v in CARD_VERSIONS]
    return cards


@pytest.mark.parametrize(("name", "card"), good_cards(), ids=[n for n, _ in good_cards()])
def test_good_cards_of_every_version_have_no_problem(name: str, card: dict[str, Any]) -> None:
    served_at = urljoin(parse_card(card).interfaces[0].url, "/.well-known/agent-card.json")
    assert check_card(card, card_url=served_at) == []
    assert check_card(parse_card(card)) == []  # an AgentCard: its raw JSON


def test_the_version_a_card_claims() -> None:
    versions = {name: card_version(card) for name, card in good_cards()}
    assert versions["frame v0_3/card"] == "1.0"  # the hybrid lists supportedInterfaces
    assert versions["spec v0.3"] == versions["FakeAgent 0.3"] == "0.3"
    assert versions["v0.2 server"] == versions["FakeAgent 0.2"] == "0.2"
    assert versions["legacy server"] == versions["encode_card legacy"] == "legacy"
    assert card_version({"protocolVersion": "1.0"}) == "1.0"
    assert card_version({"name": "a", "url": "u", "security": []}) == "0.2"  # a v0.2 member
    # A card without a version fetched as agent-card.json: v0.3's name for it.
    assert card_version({"name": "a", "url": "u"}, REMOTE) == "0.3"


def problems(card: dict[str, Any], card_url: str | None = REMOTE) -> list[tuple[str, str, str]]:
    return [(p.path, p.kind, p.message) for p in check_card(card, card_url=card_url)]


def v1(**changes: Any) -> dict[str, Any]:
    card = copy.deepcopy(V1_CARD)
    card.update(changes)
    return {k: v for k, v in card.items() if v is not None}


def v03(**changes: Any) -> dict[str, Any]:
    card = copy.deepcopy(V03_CARD)
    card.update(changes)
    return {k: v for k, v in card.items() if v is not None}


def test_missing_members_are_named_with_the_version_that_requires_them() -> None:
    card = v1(description=None, skills=None, defaultOutputModes=None, name="")
    assert problems(card) == [
        ("name", "missing", "missing: A2A 1.0 requires it"),
        ("description", "missing", "missing: A2A 1.0 requires it"),
        ("defaultOutputModes", "missing", "missing: A2A 1.0 requires it"),
        ("skills", "missing", "missing: A2A 1.0 requires it"),
    ]
    iface = {"url": "https://a.example/a2a"}
    skill = {"name": "No id"}
    assert problems(v1(supportedInterfaces=[iface], skills=[skill])) == [
        ("supportedInterfaces[0].protocolBinding", "missing", "missing: A2A 1.0 requires it"),
        ("supportedInterfaces[0].protocolVersion", "missing", "missing: A2A 1.0 requires it"),
        ("skills[0].id", "missing", "missing: A2A 1.0 requires it"),
        ("skills[0].description", "missing", "missing: A2A 1.0 requires it"),
        ("skills[0].tags", "missing", "missing: A2A 1.0 requires it"),
    ]
    assert problems(v1(supportedInterfaces=[]))[0][:2] == ("supportedInterfaces", "missing")
    assert problems(v03(url=None)) == [("url", "missing", "missing: A2A 0.3 requires it")]
    # Without its protocolVersion, the card is read as a v0.2 card (versionless()), which
    # may lack one.
    assert problems(v03(protocolVersion=None, url=None)) == [
        ("url", "missing", "missing: A2A 0.2 requires it")
    ]
    # A legacy card needs less: no description, no modes, no tags.
    legacy = {"name": "L", "version": "1", "capabilities": {}, "skills": [{"id": "s"}]}
    assert problems({**legacy, "authentication": {"schemes": ["Bearer"]}}) == [
        ("url", "missing", "missing: the tasks/send dialect requires it"),
        ("skills[0].name", "missing", "missing: the tasks/send dialect requires it"),
    ]


def test_members_of_the_wrong_type() -> None:
    card = v1(capabilities={"streaming": "yes", "extensions": ["uri"]}, skills={"id": "x"})
    card["supportedInterfaces"][0]["url"] = 8000
    assert problems(card) == [
        ("supportedInterfaces[0].url", "type", "must be a string, not a number"),
        ("capabilities.streaming", "type", "must be a boolean, not a string"),
        ("capabilities.extensions[0]", "type", 'must be an object, not "uri"'),
        ("skills", "type", "must be an array, not an object"),
    ]
    assert str(CardProblem("a.b", "wrong", "value")) == "a.b: wrong"
    assert str(CardProblem("a", "odd", "empty", "warning")) == "a: warning: odd"


@pytest.mark.parametrize(
    ("value", "what"),
    [(["a"], "an array"), ("card", "a string"), (3, "a number"), (2.5, "a number"),
     (True, "a boolean"), (None, "null")],
)  # fmt: skip
def test_json_that_is_no_object_is_one_problem(value: object, what: str) -> None:
    assert check_card(value) == [CardProblem("", f"the card is {what}, not a JSON object", "type")]
    assert check_card(("a",))[0].message == "the card is a tuple, not a JSON object"


def test_a_card_larger_than_the_client_reads_is_a_problem() -> None:
    limit = MAX_CARD_BYTES  # the client's own limit
    assert check_card(v1(), card_url=REMOTE, size=limit) == []
    assert check_card(v1(), card_url=REMOTE, size=limit + 1) == [
        CardProblem("", f"the card is {limit + 1} bytes: the client reads no card larger than "
                    f"{limit}", "size")
    ]  # fmt: skip
    assert [p.kind for p in check_card([], size=3 << 20)] == ["size", "type"]


def test_empty_optional_strings_are_warnings_and_empty_required_ones_are_missing() -> None:
    def found(card: dict[str, Any]) -> list[tuple[str, str, str]]:
        return [(p.path, p.kind, p.severity) for p in check_card(card, card_url=REMOTE)]

    card = v1(documentationUrl="", iconUrl="")
    card["supportedInterfaces"][0]["tenant"] = ""  # a protobuf writer's "none": no warning
    assert found(card) == [
        ("documentationUrl", "empty", "warning"),
        ("iconUrl", "empty", "warning"),
    ]
    assert str(check_card(card)[0]) == (
        "documentationUrl: warning: is empty: the client reads it as absent (leave it out)"
    )
    assert found(v03(preferredTransport="", documentationUrl="")) == [
        ("preferredTransport", "empty", "warning"),
        ("documentationUrl", "empty", "warning"),
    ]
    assert found(v03(protocolVersion="0.3.0", description="", version="")) == [
        ("description", "missing", "error"),
        ("version", "missing", "error"),
    ]
    # What a version requires, it requires; what it leaves optional may be empty.
    base = {"name": "L", "version": "1", "url": "https://l.example/", "capabilities": {}}
    legacy = {
        **base,
        "protocolVersion": "0.1",
        "skills": [{"id": "s", "name": "S", "description": ""}],
    }
    provider = {"organization": "O", "url": ""}
    assert found({**legacy, "description": "", "provider": provider}) == [
        ("description", "empty", "warning"),
        ("provider.url", "empty", "warning"),
        ("skills[0].description", "empty", "warning"),
    ]
    v02 = {**base, "description": "d", "defaultInputModes": [], "defaultOutputModes": [],
           "skills": [{"id": "s", "name": "S", "description": "d", "tags": []}], "security": []}  # fmt: skip
    assert card_version(v02) == "0.2"
    assert found({**v02, "protocolVersion": ""}) == [("protocolVersion", "empty", "warning")]
    assert found({**v02, "provider": provider}) == [("provider.url", "missing", "error")]


def test_bindings_and_versions_the_protocol_does_not_have() -> None:
    card = v1()
    card["supportedInterfaces"][0]["protocolBinding"] = "GRCP"
    card["supportedInterfaces"][1]["protocolBinding"] = "REST"
    card["supportedInterfaces"][2]["protocolVersion"] = "v1"
    card["supportedInterfaces"].append(
        {"url": "https://a.example/x", "protocolBinding": "urn:acme:ws", "protocolVersion": "1.0"}
    )  # a custom binding: a URI
    assert problems(card) == [
        ("supportedInterfaces[0].protocolBinding", "binding", 'unknown binding "GRCP"'),
        (
            "supportedInterfaces[1].protocolBinding",
            "binding",
            'binding "REST" is written "HTTP+JSON"',
        ),
        ("supportedInterfaces[2].protocolVersion", "version", 'not a version: "v1"'),
    ]
    card = v03(preferredTransport="SOAP", protocolVersion="7.1")
    card["additionalInterfaces"][1]["transport"] = "jsonrpc"
    assert problems(card) == [
        ("protocolVersion", "version", 'no A2A version is "7.1"'),
        ("preferredTransport", "binding", 'unknown binding "SOAP"'),
        ("additionalInterfaces[1].transport", "binding", 'binding "jsonrpc" is written "JSONRPC"'),
    ]


def test_urls_that_are_none_and_interfaces_on_local_addresses() -> None:
    card = v1(documentationUrl="docs", provider={"organization": "O", "url": "ftp://o.example"})
    local = (
        "http://localhost:8000/a2a",
        "http://127.0.0.2/rest",
        "http://[::1]:9/a",
        "http://0.0.0.0:1/",
    )
    for iface, url in zip(card["supportedInterfaces"], local[:3], strict=True):
        iface["url"] = url
    card["supportedInterfaces"].append(
        {"url": local[3], "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    )
    found = problems(card)
    for i, url in enumerate(local):
        assert (f"supportedInterfaces[{i}].url", "local-url", f'"{url}" points at a local '
                "address, but the card came from agent.example.com") in found  # fmt: skip
    assert ("provider.url", "url", '"ftp://o.example" is not an absolute http(s) URL') in found
    assert ("documentationUrl", "url", '"docs" is not an absolute http(s) URL') in found
    # Served from a local address, or read from a file: a local interface is no problem,
    # but one on an address to listen on is worth a warning, as no other host can reach it.
    unreachable = [
        CardProblem(
            "supportedInterfaces[3].url",
            '"http://0.0.0.0:1/": no other host can reach 0.0.0.0 (an address to listen on, '
            "not to connect to)",
            "local-url",
            "warning",
        )
    ]
    for served_at in ("http://127.0.0.1:8000/", "http://localhost/", "http://[::1]/", None):
        local_urls = [p for p in check_card(card, card_url=served_at) if p.kind == "local-url"]
        assert local_urls == unreachable
    for host in ("[::]", "[::ffff:0.0.0.0]", "0.0.0.0"):
        grpc_any = {"url": f"{host}:50051", "protocolBinding": "GRPC", "protocolVersion": "1.0"}
        checked = check_card(v1(supportedInterfaces=[grpc_any]), card_url="http://[::1]:1/")
        assert [(p.kind, p.severity) for p in checked] == [("local-url", "warning")]
    assert [(p.kind, p.severity) for p in check_card(v03(url="http://0.0.0.0/"))] == [
        ("local-url", "warning")
    ]
    # gRPC's may be host:port; before v1.0 the card's own url is its interface.
    grpc = {"url": "127.0.0.1:50051", "protocolBinding": "GRPC", "protocolVersion": "1.0"}
    assert [p[:2] for p in problems(v1(supportedInterfaces=[grpc]))] == [
        ("supportedInterfaces[0].url", "local-url")
    ]
    assert [p[:2] for p in problems(v03(url="http://localhost/a2a"))] == [("url", "local-url")]


def test_security_requirements_name_declared_schemes_of_known_kinds() -> None:
    card = v1()
    card["securityRequirements"].append({"schemes": {"oauth": {}, "missing": {}}})
    card["skills"][0]["securityRequirements"] = [{"schemes": {"nope": {"list": []}}}]
    card["securitySchemes"]["old"] = {"type": "http", "scheme": "bearer"}
    card["securitySchemes"]["key"]["apiKeySecurityScheme"]["location"] = "body"
    del card["securitySchemes"]["oidc"]["openIdConnectSecurityScheme"]["openIdConnectUrl"]
    assert problems(card) == [
        (
            "securitySchemes.key.apiKeySecurityScheme.location",
            "value",
            '"body" is not header or query or cookie',
        ),
        (
            "securitySchemes.oidc.openIdConnectSecurityScheme.openIdConnectUrl",
            "missing",
            "missing: A2A 1.0 requires it",
        ),
        (
            "securitySchemes.old",
            "security",
            "must hold exactly one of apiKeySecurityScheme, httpAuthSecurityScheme, "
            "oauth2SecurityScheme, openIdConnectSecurityScheme, mtlsSecurityScheme "
            '(the "type" of earlier versions is not one)',
        ),
        (
            "securityRequirements[1].schemes.missing",
            "security",
            'no scheme "missing" in securitySchemes',
        ),
        (
            "skills[0].securityRequirements[0].schemes.nope",
            "security",
            'no scheme "nope" in securitySchemes',
        ),
    ]
    card = v03(
        securitySchemes={"basic": {"type": "basic"}, "key": {"type": "apiKey", "name": "K"}},
        security=[{"key": [], "bearer": []}],
    )
    assert problems(card) == [
        ("securitySchemes.basic.type", "security", 'unknown security scheme type "basic"'),
        ("securitySchemes.key.in", "missing", "missing: A2A 0.3 requires it"),
        ("security[0].bearer", "security", 'no scheme "bearer" in securitySchemes'),
    ]
    odd = {"my.scheme": {"type": "mutualTLS"}}
    assert problems(v03(securitySchemes=odd, security=[{"my.scheme": []}])) == []


def test_skill_ids_used_twice_and_modes_that_are_no_media_types() -> None:
    skill = {"id": "s", "name": "S", "description": "d", "tags": [], "inputModes": ["text"]}
    card = v1(skills=[skill, {**skill, "inputModes": None}, {**skill, "inputModes": None}])
    assert problems(card) == [
        ("skills[0].inputModes[0]", "value", '"text" is not a media type'),
        ("skills[1].id", "duplicate", 'duplicate skill id "s" (skills[0] has it too)'),
        ("skills[2].id", "duplicate", 'duplicate skill id "s" (skills[0] has it too)'),
    ]


def test_an_agent_card_object_is_checked_by_its_json() -> None:
    card = v1(skills=[{"id": "s", "name": "S", "description": "d", "tags": []}] * 2)
    parsed = parse_card(card)
    assert isinstance(parsed, AgentCard)
    assert [p.kind for p in check_card(parsed)] == ["duplicate"]
