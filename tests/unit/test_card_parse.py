"""Card normalisation of every card version, and the choice of interface."""

from __future__ import annotations

from typing import Any

import pytest

from a2a_anyio import A2ADiscoveryError, AgentCard
from a2a_anyio._dialects.card import candidates, parse_card

V1_CARD: dict[str, Any] = {
    "name": "Joke Agent",
    "description": "Tells jokes",
    "version": "1.0.0",
    "supportedInterfaces": [
        {
            "url": "https://jokes.example.com/a2a",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        },
        {
            "url": "https://jokes.example.com/rest",
            "protocolBinding": "HTTP+JSON",
            "protocolVersion": "1.0",
        },
        {
            "url": "https://jokes.example.com/a2a03",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "0.3",
        },
    ],
    "capabilities": {
        "streaming": True,
        "pushNotifications": True,
        "extendedAgentCard": True,
        "extensions": [
            {"uri": "https://ext.example/cite/v1", "required": True, "params": {"a": 1}}
        ],
    },
    "securitySchemes": {
        "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
        "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}},
        "oauth": {
            "oauth2SecurityScheme": {
                "flows": {"clientCredentials": {"tokenUrl": "https://t.example"}}
            }
        },
        "oidc": {
            "openIdConnectSecurityScheme": {"openIdConnectUrl": "https://id.example/.well-known"}
        },
        "mtls": {"mtlsSecurityScheme": {"description": "client certs"}},
    },
    "securityRequirements": [{"schemes": {"bearer": {"list": []}, "oauth": {"list": ["read"]}}}],
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [
        {
            "id": "jokes",
            "name": "Jokes",
            "description": "Tells jokes",
            "tags": ["fun"],
            "examples": ["pun"],
        }
    ],
    "provider": {"organization": "Jokes Inc", "url": "https://jokes.example.com"},
    "iconUrl": "https://jokes.example.com/icon.png",
}

V03_CARD: dict[str, Any] = {
    "protocolVersion": "0.3.0",
    "name": "Joke Agent",
    "description": "Tells jokes",
    "url": "https://jokes.example.com/a2a",
    "preferredTransport": "JSONRPC",
    "additionalInterfaces": [
        {"url": "https://jokes.example.com/a2a", "transport": "JSONRPC"},
        {"url": "https://jokes.example.com/rest", "transport": "HTTP+JSON"},
    ],
    "version": "1.0.0",
    "capabilities": {"streaming": True, "pushNotifications": False, "stateTransitionHistory": True},
    "securitySchemes": {
        "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
        "key": {"type": "apiKey", "in": "query", "name": "key"},
        "oauth": {
            "type": "oauth2",
            "flows": {"implicit": {"authorizationUrl": "https://a.example"}},
        },
        "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://id.example/.well-known"},
        "mtls": {"type": "mutualTLS"},
    },
    "security": [{"bearer": []}, {"oauth": ["read", "write"]}],
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain", "application/json"],
    "skills": [{"id": "jokes", "name": "Jokes", "description": "Tells jokes", "tags": ["fun"]}],
    "supportsAuthenticatedExtendedCard": True,
}

LEGACY_CARD: dict[str, Any] = {
    "name": "Joke Agent",
    "description": "Tells jokes",
    "url": "https://jokes.example.com/",
    "version": "1.0.0",
    "capabilities": {
        "streaming": True,
        "pushNotifications": False,
        "stateTransitionHistory": False,
    },
    "authentication": {"schemes": ["Bearer"]},
    "defaultInputModes": ["text"],
    "defaultOutputModes": ["text"],
    "skills": [{"id": "jokes", "name": "Jokes"}],
}


def _ifaces(card: AgentCard) -> list[tuple[str, str, str | None]]:
    return [(i.url, i.binding, i.protocol_version) for i in card.interfaces]


def test_v1_card() -> None:
    card = parse_card(V1_CARD)
    assert (card.name, card.description, card.version) == ("Joke Agent", "Tells jokes", "1.0.0")
    assert _ifaces(card) == [
        ("https://jokes.example.com/a2a", "JSONRPC", "1.0"),
        ("https://jokes.example.com/rest", "HTTP+JSON", "1.0"),
        ("https://jokes.example.com/a2a03", "JSONRPC", "0.3"),
    ]
    caps = card.capabilities
    assert (caps.streaming, caps.push_notifications, caps.extended_agent_card) == (True, True, True)
    [ext] = caps.extensions
    assert (ext.uri, ext.required, ext.params) == ("https://ext.example/cite/v1", True, {"a": 1})
    assert card.security_requirements == [{"bearer": [], "oauth": ["read"]}]
    assert card.provider is not None
    assert card.provider.organization == "Jokes Inc"
    assert card.icon_url == "https://jokes.example.com/icon.png"
    assert card.skills[0].examples == ["pun"]
    assert card.raw is V1_CARD


def test_v03_card() -> None:
    card = parse_card(V03_CARD)
    assert _ifaces(card) == [
        ("https://jokes.example.com/a2a", "JSONRPC", "0.3"),
        ("https://jokes.example.com/rest", "HTTP+JSON", "0.3"),
    ]
    assert card.capabilities.extended_agent_card
    assert card.capabilities.state_transition_history
    assert not card.capabilities.push_notifications
    assert card.security_requirements == [{"bearer": []}, {"oauth": ["read", "write"]}]
    assert card.default_output_modes == ["text/plain", "application/json"]


@pytest.mark.parametrize("card", [V1_CARD, V03_CARD], ids=["v1-wrappers", "v03-openapi"])
def test_security_schemes_normalised(card: dict[str, Any]) -> None:
    schemes = parse_card(card).security_schemes
    assert {k: s.type for k, s in schemes.items()} == {
        "bearer": "http",
        "key": "apiKey",
        "oauth": "oauth2",
        "oidc": "openIdConnect",
        "mtls": "mutualTLS",
    }
    assert schemes["bearer"].scheme is not None
    assert schemes["bearer"].scheme.lower() == "bearer"
    assert schemes["bearer"].bearer_format == "JWT"
    assert schemes["key"].location in ("header", "query")
    assert schemes["key"].name in ("X-Key", "key")
    assert schemes["oauth"].flows is not None
    assert schemes["oidc"].open_id_connect_url == "https://id.example/.well-known"


def test_hybrid_card_supported_interfaces_win() -> None:
    hybrid = {
        **V03_CARD,
        "url": "https://jokes.example.com/legacy-endpoint",
        "supportedInterfaces": [
            {
                "url": "https://jokes.example.com/v1",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "1.0",
            },
            {
                "url": "https://jokes.example.com/v03",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "0.3",
            },
        ],
        "securitySchemes": {
            "bearer": {
                "type": "http",
                "scheme": "Bearer",
                "httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"},
            }
        },
        "securityRequirements": [{"schemes": {"bearer": {}}}],
    }
    card = parse_card(hybrid)
    assert _ifaces(card) == [
        ("https://jokes.example.com/v1", "JSONRPC", "1.0"),
        ("https://jokes.example.com/v03", "JSONRPC", "0.3"),
    ]
    assert card.security_schemes["bearer"].type == "http"
    assert card.security_requirements == [{"bearer": []}]
    assert candidates(card, "auto", ("jsonrpc",))[0].url == "https://jokes.example.com/v1"
    assert candidates(card, "0.3", ("jsonrpc",))[0].url == "https://jokes.example.com/v03"


def test_v02_card_without_protocol_version() -> None:
    card = parse_card(
        {k: x for k, x in V03_CARD.items() if k not in ("protocolVersion", "additionalInterfaces")}
    )
    assert _ifaces(card) == [("https://jokes.example.com/a2a", "JSONRPC", "0.2")]
    assert candidates(card, "auto", ("jsonrpc",))[0].protocol_version == "0.2"
    assert candidates(card, "0.3", ("jsonrpc",))[0].protocol_version == "0.2"
    with pytest.raises(A2ADiscoveryError):
        candidates(card, "1.0", ("jsonrpc",))[0]


def test_legacy_card() -> None:
    card = parse_card(LEGACY_CARD)
    assert _ifaces(card) == [("https://jokes.example.com/", "JSONRPC", "legacy")]
    assert card.security_requirements == [{"Bearer": []}]
    assert card.security_schemes == {}
    assert card.default_input_modes == ["text"]
    assert candidates(card, "auto", ("jsonrpc",))[0].protocol_version == "legacy"
    # a card without any version is a guess: the other guess (v0.2) comes last
    assert [(i.binding, i.protocol_version) for i in candidates(card)] == [
        ("JSONRPC", "legacy"),
        ("JSONRPC", "0.2"),
    ]
    with pytest.raises(A2ADiscoveryError, match="offers no interface"):
        candidates(card, "1.0", ("jsonrpc",))[0]


@pytest.mark.parametrize(
    "flag",
    [
        {"capabilities": {"extendedAgentCard": True}},
        {"supportsAuthenticatedExtendedCard": True},
        {"supportsExtendedAgentCard": True},
    ],
    ids=["capabilities", "v03-top-level", "v1-rc-top-level"],
)
def test_extended_card_flag_spellings(flag: dict[str, Any]) -> None:
    base = {k: x for k, x in V03_CARD.items() if k != "supportsAuthenticatedExtendedCard"}
    assert not parse_card(base).capabilities.extended_agent_card
    assert parse_card({**base, **flag}).capabilities.extended_agent_card


def test_version_strings_are_major_minor() -> None:
    card = parse_card({**V03_CARD, "protocolVersion": "0.2.9"})
    assert card.interfaces[0].protocol_version == "0.2"
    card = parse_card(
        {
            **V1_CARD,
            "supportedInterfaces": [{"url": "https://x.example/", "protocolVersion": "1.0.1"}],
        }
    )
    assert (card.interfaces[0].binding, card.interfaces[0].protocol_version) == ("JSONRPC", "1.0")


def test_the_first_jsonrpc_candidate_auto_takes_the_first_usable_in_card_order() -> None:
    card = parse_card(
        {
            **V1_CARD,
            "supportedInterfaces": [
                {
                    "url": "https://x.example/grpc",
                    "protocolBinding": "GRPC",
                    "protocolVersion": "1.0",
                },
                {
                    "url": "https://x.example/old",
                    "protocolBinding": "JSONRPC",
                    "protocolVersion": "0.3",
                },
                {
                    "url": "https://x.example/new",
                    "protocolBinding": "JSONRPC",
                    "protocolVersion": "1.0",
                },
            ],
        }
    )
    assert candidates(card, "auto", ("jsonrpc",))[0].url == "https://x.example/old"
    assert candidates(card, "1.0", ("jsonrpc",))[0].url == "https://x.example/new"
    assert candidates(card, "0.3", ("jsonrpc",))[0].url == "https://x.example/old"


def test_the_first_jsonrpc_candidate_tenant_and_versionless() -> None:
    card = parse_card(
        {
            **V1_CARD,
            "supportedInterfaces": [
                {
                    "url": "https://x.example/t",
                    "protocolBinding": "JSONRPC",
                    "protocolVersion": "1.0",
                    "tenant": "acme",
                },
                {"url": "https://x.example/n", "protocolBinding": "JSONRPC"},
            ],
        }
    )
    assert candidates(card, "1.0", ("jsonrpc",))[0].tenant == "acme"
    versionless = candidates(card, "0.3", ("jsonrpc",))[0]
    assert (versionless.url, versionless.protocol_version) == ("https://x.example/n", None)


def test_the_first_jsonrpc_candidate_nothing_fits() -> None:
    card = parse_card(
        {
            **V1_CARD,
            "supportedInterfaces": [
                {
                    "url": "https://x.example/rest",
                    "protocolBinding": "HTTP+JSON",
                    "protocolVersion": "1.0",
                },
                {
                    "url": "https://x.example/rpc",
                    "protocolBinding": "JSONRPC",
                    "protocolVersion": "2.0",
                },
            ],
        }
    )
    with pytest.raises(A2ADiscoveryError, match=r"HTTP\+JSON 1\.0, JSONRPC 2\.0"):
        candidates(card, "auto", ("jsonrpc",))[0]
    with pytest.raises(ValueError, match="protocol must be"):
        candidates(card, "0.9", ("jsonrpc",))[0]


@pytest.mark.parametrize(
    "value",
    [
        [V1_CARD],
        "card",
        None,
        {"hello": "world"},
        {"name": ""},
        {"name": "No endpoint", "description": "x"},
        {"name": "Bad interfaces", "supportedInterfaces": "https://x.example"},
        {"name": "Bad interface", "supportedInterfaces": ["https://x.example"]},
        {"name": "Bad caps", "url": "https://x.example", "capabilities": {"streaming": "yes"}},
        {"name": "Bad skills", "url": "https://x.example", "skills": [1]},
        {"name": "Bad scheme", "url": "https://x.example", "securitySchemes": {"b": "bearer"}},
        {"name": "Bad modes", "url": "https://x.example", "defaultInputModes": "text"},
        {"name": "Bad reqs", "url": "https://x.example", "security": ["bearer"]},
        {"name": "Bad reqs", "url": "https://x.example", "security": [{"bearer": 5}]},
        {
            "name": "Bad reqs",
            "url": "https://x.example",
            "securityRequirements": [{"schemes": {"b": ["x"]}}],
        },
        {
            "name": "Bad reqs",
            "url": "https://x.example",
            "securityRequirements": [{"schemes": {"b": {"list": 5}}}],
        },
        {"name": "Bad auth", "url": "https://x.example", "authentication": {"schemes": "Bearer"}},
    ],
)
def test_not_a_card(value: Any) -> None:
    with pytest.raises(A2ADiscoveryError):
        parse_card(value)
