"""Agent cards of every version normalised into one ``AgentCard``, and endpoint choice."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from a2a_anyio._dialects import _values as v
from a2a_anyio._dialects._shapes import put
from a2a_anyio._errors import A2ADiscoveryError, A2AProtocolError, shown
from a2a_anyio._model import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    JSONDict,
    SecurityScheme,
)

# v1.0 one-of wrapper -> the OpenAPI-style ``type`` of pre-1.0 cards.
SCHEME_WRAPPERS = {
    "apiKeySecurityScheme": "apiKey",
    "httpAuthSecurityScheme": "http",
    "oauth2SecurityScheme": "oauth2",
    "openIdConnectSecurityScheme": "openIdConnect",
    "mtlsSecurityScheme": "mutualTLS",
}
_WRAPPER_OF = {kind: wrapper for wrapper, kind in SCHEME_WRAPPERS.items()}
#: The protocol's binding names (the values), and the spellings cards use for them (the keys).
BINDINGS = {"JSONRPC": "JSONRPC", "HTTP+JSON": "HTTP+JSON", "REST": "HTTP+JSON", "GRPC": "GRPC"}


def parse_card(value: Any) -> AgentCard:
    """Normalise a legacy, v0.2, v0.3, v1.0 or hybrid card; ``A2ADiscoveryError`` if it is none."""
    if not isinstance(value, dict):
        raise A2ADiscoveryError("agent card is not a JSON object")
    name = value.get("name")
    if not isinstance(name, str) or not name:
        raise A2ADiscoveryError("agent card has no name")
    provider = value.get("provider")
    try:
        interfaces = _interfaces(value)
        if not interfaces:
            raise A2ADiscoveryError(
                f"agent card {shown(name)} lists no endpoint (no url, no interfaces)"
            )
        return AgentCard(
            name=name,
            description=v.text(value, "description") or "",
            version=v.text(value, "version"),
            interfaces=interfaces,
            capabilities=read_capabilities(v.optional_dict(value, "capabilities") or {}, value),
            skills=[read_skill(s) for s in v.items(value, "skills")],
            security_schemes={
                k: read_scheme(s)
                for k, s in (v.optional_dict(value, "securitySchemes") or {}).items()
            },
            security_requirements=_requirements(value),
            provider=read_provider(provider) if isinstance(provider, dict) else None,
            default_input_modes=v.str_list(value, "defaultInputModes") or [],
            default_output_modes=v.str_list(value, "defaultOutputModes") or [],
            documentation_url=v.text(value, "documentationUrl"),
            icon_url=v.text(value, "iconUrl"),
            raw=value,
        )
    except A2AProtocolError as exc:
        raise A2ADiscoveryError(f"agent card {shown(name)} is malformed: {exc.message}") from exc


def major_minor(raw: Any) -> str | None:
    """Major.Minor of a version string ("0.3.0" -> "0.3", "1.0.1" -> "1.0")."""
    if not isinstance(raw, str) or not raw.strip():
        return None
    parts = raw.strip().lstrip("v").split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else parts[0]


def _interfaces(card: JSONDict) -> list[AgentInterface]:
    supported = v.items(card, "supportedInterfaces")
    if supported:  # v1.0 (and hybrid) cards: legacy top-level fields are ignored
        return [i for i in map(read_interface, supported) if i is not None]
    url = v.text(card, "url")
    if not url:
        return []
    version = major_minor(card.get("protocolVersion"))
    if _is_python_a2a(card):
        version = "python-a2a"  # whatever version it claims: its server routes by path
    elif version is None:
        version = versionless(card)[0]
    out = [AgentInterface(url, _binding(v.text(card, "preferredTransport")), version)]
    for item in v.items(card, "additionalInterfaces"):
        d = v.obj(item, "additionalInterfaces entry")
        iface = AgentInterface(v.text(d, "url") or url, _binding(v.text(d, "transport")), version)
        if iface not in out:
            out.append(iface)
    return out


def _binding(name: str | None) -> str:
    name = name or "JSONRPC"
    return BINDINGS.get(name.upper(), name)


def read_interface(value: Any) -> AgentInterface | None:
    """A ``supportedInterfaces`` entry (v1.0), or an ``additionalInterfaces`` entry (v0.3:
    ``transport``, no version of its own); None when it names no URL."""
    d = v.obj(value, "interface")
    url = v.text(d, "url")
    if not url:
        return None
    binding = v.text(d, "protocolBinding", "protocol_binding") or v.text(d, "transport")
    return AgentInterface(
        url=url,
        binding=_binding(binding),
        protocol_version=major_minor(v.field(d, "protocolVersion", "protocol_version")),
        tenant=v.text(d, "tenant") or None,
    )


def encode_interface(iface: AgentInterface, version: str = "1.0") -> JSONDict:
    """What ``read_interface`` reads: a v1.0 entry, or a v0.3 one (``url`` and ``transport``
    only: a v0.3 card states one version for all its interfaces, and no tenant)."""
    if version != "1.0":
        return {"url": iface.url, "transport": iface.binding}
    out: JSONDict = {"url": iface.url, "protocolBinding": iface.binding}
    return put(out, protocolVersion=iface.protocol_version, tenant=iface.tenant)


# Members a card gained in v0.2 (a2a-protocol §2.2): one of them rules the tasks/send dialect out.
_SINCE_V02 = (
    "preferredTransport",
    "additionalInterfaces",
    "securitySchemes",
    "security",
    "supportsAuthenticatedExtendedCard",
    "iconUrl",
    "signatures",
)


def versionless(card: JSONDict, card_url: str | None = None) -> tuple[str, str]:
    """The dialects a card that states no version may speak: the likeliest, then the other
    guess as a last resort (a2a-protocol §7.3). A member v0.2 added (``preferredTransport``,
    ``securitySchemes``...) says v0.2, whatever else the card holds; else an ``authentication``
    object or modes that are no media types say the tasks/send dialect; else a card fetched as
    ``agent-card.json`` (v0.3's name for it, given as the client's URL) says v0.3; else v0.2."""
    caps = card.get("capabilities")
    if any(k in card for k in _SINCE_V02) or (isinstance(caps, dict) and "extensions" in caps):
        return ("0.2", "legacy")
    modes = card.get("defaultInputModes")
    old_modes = isinstance(modes, list) and any(isinstance(m, str) and "/" not in m for m in modes)
    if isinstance(card.get("authentication"), dict) or old_modes:
        return ("legacy", "0.2")
    if card_url is not None and urlsplit(card_url).path.endswith("/agent-card.json"):
        return ("0.3", "legacy")
    return ("0.2", "legacy")


def _is_python_a2a(card: JSONDict) -> bool:
    """python-a2a's ``A2AServer`` writes ``google_a2a_compatible`` into every card's
    capabilities (true or false); no other implementation has the name."""
    caps = card.get("capabilities")
    return isinstance(caps, dict) and "google_a2a_compatible" in caps


def read_capabilities(caps: JSONDict, card: JSONDict | None = None) -> AgentCapabilities:
    """A card's ``capabilities``; ``card``, the card around them, may hold the pre-1.0
    extended-card flag."""
    card = card or {}
    return AgentCapabilities(
        streaming=v.boolean(caps, "streaming"),
        push_notifications=v.boolean(caps, "pushNotifications"),
        extended_agent_card=v.boolean(caps, "extendedAgentCard")
        or v.boolean(card, "supportsAuthenticatedExtendedCard")
        or v.boolean(card, "supportsExtendedAgentCard"),
        state_transition_history=v.boolean(caps, "stateTransitionHistory"),
        extensions=[read_extension(e) for e in v.items(caps, "extensions")],
    )


def encode_capabilities(caps: AgentCapabilities, version: str = "1.0") -> JSONDict:
    """What ``read_capabilities`` reads. Before v1.0 the extended-card flag is the card's
    (``supportsAuthenticatedExtendedCard``); v1.0 has no ``stateTransitionHistory``."""
    out: JSONDict = {"streaming": caps.streaming, "pushNotifications": caps.push_notifications}
    if version == "1.0":
        put(out, extendedAgentCard=caps.extended_agent_card)
    elif version == "legacy":
        out["stateTransitionHistory"] = caps.state_transition_history
    else:
        put(out, stateTransitionHistory=caps.state_transition_history)
    return put(out, extensions=[encode_extension(e) for e in caps.extensions])


def read_extension(value: Any) -> AgentExtension:
    d = v.obj(value, "extension")
    return AgentExtension(
        uri=v.text(d, "uri") or "",
        description=v.text(d, "description"),
        required=v.boolean(d, "required"),
        params=v.optional_dict(d, "params"),
    )


def encode_extension(ext: AgentExtension) -> JSONDict:
    out: JSONDict = {"uri": ext.uri}
    return put(out, description=ext.description, required=ext.required, params=ext.params)


def read_skill(value: Any) -> AgentSkill:
    d = v.obj(value, "skill")
    return AgentSkill(
        id=v.text(d, "id") or "",
        name=v.text(d, "name") or "",
        description=v.text(d, "description"),
        tags=v.str_list(d, "tags") or [],
        examples=v.str_list(d, "examples") or [],
        input_modes=v.str_list(d, "inputModes"),
        output_modes=v.str_list(d, "outputModes"),
    )


def encode_skill(skill: AgentSkill, version: str = "1.0") -> JSONDict:
    out: JSONDict = {"id": skill.id, "name": skill.name}
    put(out, description=skill.description)
    if skill.tags or version != "legacy":  # required from v0.2 on
        out["tags"] = skill.tags
    put(out, examples=skill.examples)
    if skill.input_modes is not None:
        out["inputModes"] = skill.input_modes
    if skill.output_modes is not None:
        out["outputModes"] = skill.output_modes
    return out


def read_provider(value: Any) -> AgentProvider:
    d = v.obj(value, "provider")
    return AgentProvider(organization=v.text(d, "organization") or "", url=v.text(d, "url"))


def encode_provider(provider: AgentProvider) -> JSONDict:
    return put({"organization": provider.organization}, url=provider.url)


def read_scheme(value: Any) -> SecurityScheme:
    """A security scheme: v1.0's one-of wrapper, or the OpenAPI-style ``type`` of pre-1.0."""
    d = v.obj(value, "security scheme")
    kind = v.text(d, "type")
    body = d
    oneof = d.get("scheme")
    if kind is None and isinstance(oneof, dict) and isinstance(oneof.get("value"), dict):
        # A protobuf-ts oneof written out as is (the JS SDK): {"$case": wrapper, "value": {...}}
        kind, body = SCHEME_WRAPPERS.get(str(oneof.get("$case")), "unknown"), oneof["value"]
    if kind is None:
        for wrapper, name in SCHEME_WRAPPERS.items():
            if isinstance(d.get(wrapper), dict):
                kind, body = name, d[wrapper]
                break
    return SecurityScheme(
        type=kind or "unknown",
        scheme=v.text(body, "scheme"),
        bearer_format=v.text(body, "bearerFormat"),
        location=v.text(body, "location") or v.text(body, "in"),
        name=v.text(body, "name"),
        flows=v.optional_dict(body, "flows"),
        open_id_connect_url=v.text(body, "openIdConnectUrl"),
        description=v.text(body, "description"),
        oauth2_metadata_url=v.text(body, "oauth2MetadataUrl"),
    )


def encode_scheme(scheme: SecurityScheme, version: str = "1.0") -> JSONDict:
    """What ``read_scheme`` reads: v1.0's wrapper, or ``type`` with the OpenAPI names (an
    unknown type is written so in both). Members that are not of the scheme's type are left out."""
    wrapper = _WRAPPER_OF.get(scheme.type) if version == "1.0" else None
    body: JSONDict = {} if wrapper else {"type": scheme.type}
    if scheme.type == "apiKey":
        put(body, **{"location" if wrapper else "in": scheme.location}, name=scheme.name)
    elif scheme.type == "http":
        put(body, scheme=scheme.scheme, bearerFormat=scheme.bearer_format)
    elif scheme.type == "oauth2":
        put(body, flows=scheme.flows, oauth2MetadataUrl=scheme.oauth2_metadata_url)
    elif scheme.type == "openIdConnect":
        put(body, openIdConnectUrl=scheme.open_id_connect_url)
    put(body, description=scheme.description)
    return {wrapper: body} if wrapper else body


def _requirements(card: JSONDict) -> list[dict[str, list[str]]]:
    out: list[dict[str, list[str]]] = []
    # v1.0; some servers put the v1.0 shape under the v0.3 name, with empty lists left out.
    v1_items = v.items(card, "securityRequirements") or [
        item for item in v.items(card, "security") if isinstance(item, dict) and "schemes" in item
    ]
    for item in v1_items:
        schemes = v.optional_dict(v.obj(item, "security requirement"), "schemes") or {}
        out.append(
            {k: v.str_list(v.obj(s or {}, "scopes"), "list") or [] for k, s in schemes.items()}
        )
    if out:
        return out
    for item in v.items(card, "security"):  # v0.2 / v0.3
        d = v.obj(item, "security requirement")
        out.append({k: v.str_list({"scopes": s}, "scopes") or [] for k, s in d.items()})
    if not out and isinstance(card.get("authentication"), dict):  # legacy
        out = [{s: [] for s in v.str_list(card["authentication"], "schemes") or []}]
    return out


def encode_requirements(card: AgentCard, version: str = "1.0") -> JSONDict:
    """The card members that hold ``card.security_requirements``, as ``_requirements`` reads
    them: v1.0 ``securityRequirements``, v0.3 ``security``, the legacy ``authentication``."""
    reqs = card.security_requirements
    if version == "1.0":
        wrapped = [{"schemes": {k: {"list": s} for k, s in r.items()}} for r in reqs]
        return put({}, securityRequirements=wrapped)
    if version == "legacy":  # one list of schemes, always there: it marks the dialect
        return {"authentication": {"schemes": list({k: None for r in reqs for k in r})}}
    return put({}, security=[dict(r) for r in reqs])


#: The card versions ``encode_card`` writes (v0.2 cards are v0.3's, with their own version).
CARD_VERSIONS = ("1.0", "0.3", "legacy")


def encode_card(card: AgentCard, version: str = "1.0") -> JSONDict:
    """``card`` as a card of ``version`` (one of ``CARD_VERSIONS``), what ``parse_card`` reads.

    Before v1.0 a card has one endpoint (``url``, ``preferredTransport``: the first
    interface) and one ``protocolVersion`` (the first interface's, "0.3" when it has none);
    the others are ``additionalInterfaces``, without versions or tenants. A legacy card has
    no security schemes, only the names in ``authentication``.
    """
    if version not in CARD_VERSIONS:
        raise ValueError(f"no agent card of A2A version {version!r}")
    out: JSONDict = {}
    first = card.interfaces[0] if card.interfaces else None
    if version == "0.3":
        out["protocolVersion"] = (
            first.protocol_version if first and first.protocol_version else "0.3"
        )
    out["name"] = card.name
    out["description"] = card.description
    if version == "1.0":
        put(out, version=card.version)
        out["supportedInterfaces"] = [encode_interface(i) for i in card.interfaces]
    else:
        if first is not None:
            out["url"] = first.url
        if first is not None and version == "0.3":
            out["preferredTransport"] = first.binding
            if len(card.interfaces) > 1:
                others = [encode_interface(i, version) for i in card.interfaces]
                out["additionalInterfaces"] = others
        put(out, version=card.version)
    out["capabilities"] = encode_capabilities(card.capabilities, version)
    if version == "legacy":
        out.update(encode_requirements(card, version))
    out["defaultInputModes"] = card.default_input_modes
    out["defaultOutputModes"] = card.default_output_modes
    out["skills"] = [encode_skill(s, version) for s in card.skills]
    if version == "0.3":
        put(out, supportsAuthenticatedExtendedCard=card.capabilities.extended_agent_card)
    if version != "legacy":
        schemes = {k: encode_scheme(s, version) for k, s in card.security_schemes.items()}
        put(out, securitySchemes=schemes)
        out.update(encode_requirements(card, version))
    provider = encode_provider(card.provider) if card.provider is not None else None
    return put(
        out, provider=provider, documentationUrl=card.documentation_url, iconUrl=card.icon_url
    )


# What this client speaks, per binding, in the order "auto" prefers the versions.
SUPPORTED = {
    "JSONRPC": ("1.0", "0.3", "0.2", "legacy", "python-a2a"),
    "HTTP+JSON": ("1.0", "0.3", "0.2"),
    "GRPC": ("1.0", "0.3", "0.2"),
}
_BINDING_NAMES = {
    "jsonrpc": "JSONRPC", "rest": "HTTP+JSON", "http+json": "HTTP+JSON", "grpc": "GRPC"
}  # fmt: skip
PROTOCOLS = ("auto", "1.0", "0.3", "0.2", "legacy")
#: The bindings a client uses, in the order it prefers them by default.
BINDING_NAMES = ("jsonrpc", "rest", "grpc")


def preferring(binding: str) -> tuple[str, ...]:
    """Every binding, ``binding`` first and the others in the default order after it."""
    return (binding, *(b for b in BINDING_NAMES if b != binding))


def candidates(
    card: AgentCard,
    protocol: str = "auto",
    bindings: tuple[str, ...] = BINDING_NAMES,
    card_url: str | None = None,
) -> list[AgentInterface]:
    """The interfaces this client can use, best first: by the caller's binding preference,
    then in the card's order. A card that states no version at all speaks what ``versionless``
    reads from it (and from ``card_url``, where it was fetched); when that is only a guess, the
    other guess comes last, as a last resort."""
    wanted = _family(protocol)
    raw = card.raw
    guesses: tuple[str, ...] = ()
    if "supportedInterfaces" not in raw and major_minor(raw.get("protocolVersion")) is None:
        guesses = () if _is_python_a2a(raw) else versionless(raw, card_url)
    out: list[AgentInterface] = []
    for name in bindings:
        binding = _BINDING_NAMES.get(name.lower())
        if binding is None:
            raise ValueError(f"bindings are 'jsonrpc', 'rest' and 'grpc', not {name!r}")
        for iface in card.interfaces:
            if guesses:
                iface = AgentInterface(iface.url, iface.binding, guesses[0], iface.tenant)
            version = _family_of(iface.protocol_version)
            if iface.binding == binding and version in wanted and version in SUPPORTED[binding]:
                out.append(iface)
    for other in guesses[1:]:
        for iface in list(out):
            if other in wanted and other in SUPPORTED[iface.binding]:
                out.append(AgentInterface(iface.url, iface.binding, other, iface.tenant))
    if not out:
        offered = ", ".join(f"{i.binding} {i.protocol_version or '?'}" for i in card.interfaces)
        raise A2ADiscoveryError(
            f"agent {shown(card.name)} offers no interface for protocol {protocol!r} over "
            f"{'/'.join(bindings)} (it offers: {offered or 'nothing'})"
        )
    return out


def _family(protocol: str) -> tuple[str, ...]:
    if protocol == "auto":
        return SUPPORTED["JSONRPC"]
    if protocol == "1.0":
        return ("1.0",)
    if protocol == "0.3":
        return ("0.3", "0.2")
    if protocol == "legacy":
        return ("legacy", "python-a2a")  # python-a2a speaks tasks/send too
    if protocol == "0.2":
        return (protocol,)
    raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, not {protocol!r}")


def _family_of(version: str | None) -> str | None:
    if version is None:
        return "0.3"  # an interface without a version: the SDKs assume 0.3
    if version.startswith("1."):
        return "1.0"
    return version if version in ("0.3", "0.2", "legacy", "python-a2a") else None


def describe_security(card: AgentCard) -> list[str]:
    """The card's security requirements in words, one string per alternative."""
    out = []
    for requirement in card.security_requirements or [{n: []} for n in card.security_schemes]:
        words = []
        for name, scopes in requirement.items():
            scheme = card.security_schemes.get(name)
            if scheme is None:
                words.append(name)
                continue
            kind = {
                "http": f"HTTP {scheme.scheme or 'auth'}",
                "apiKey": f"an API key in {scheme.location or 'header'} {scheme.name or ''}".strip(),
                "oauth2": "OAuth 2.0",
                "openIdConnect": "OpenID Connect",
                "mutualTLS": "a client certificate (mutual TLS)",
            }.get(scheme.type, scheme.type)
            scope_text = f" with scopes {', '.join(scopes)}" if scopes else ""
            words.append(f"{name} ({kind}{scope_text})")
        if words:
            out.append(" and ".join(words))
    return out
