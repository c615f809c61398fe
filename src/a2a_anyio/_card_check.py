"""What an agent card gets wrong for the A2A version it claims: ``check_card``.

``parse_card`` reads any card it can make sense of; this module says where a card departs
from its version's shape (a2a-protocol §2.2, §4.7): required members, the types of members,
binding and scheme names, URLs, security requirements, skill ids. The version's facts it
shares with the parser (binding names, scheme wrappers, how a card without a version is read)
come from ``_dialects.card``.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from a2a_anyio._card import MAX_CARD_BYTES
from a2a_anyio._dialects.card import BINDINGS, SCHEME_WRAPPERS, major_minor, versionless
from a2a_anyio._http import url_problem
from a2a_anyio._model import AgentCard

_TYPES: dict[type, str] = {str: "a string", dict: "an object", list: "an array", bool: "a boolean"}
_JSON_TYPES = {**_TYPES, type(None): "null"}
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_+-]*")
_VERSION = re.compile(r"\d+\.\d+(\.\d+)?")
#: The versions a card without ``supportedInterfaces`` may state (0.1: the tasks/send days).
_PRE_V1 = {"0.3": "0.3", "0.2": "0.2", "0.1": "legacy", "0.0": "legacy"}
#: What each kind of security scheme must hold; the API key's place is ``in`` before v1.0.
_SCHEME_MEMBERS = {
    "apiKey": ("location", "name"),
    "http": ("scheme",),
    "oauth2": ("flows",),
    "openIdConnect": ("openIdConnectUrl",),
    "mutualTLS": (),
}
_KEY_PLACES = ("header", "query", "cookie")


@dataclass(frozen=True, slots=True)
class CardProblem:
    """One thing an agent card gets wrong.

    ``path`` says where, JSON-path style (``supportedInterfaces[1].protocolBinding``; empty
    for the card itself); ``message`` what; ``kind`` which sort of problem it is:
    ``missing`` (a required member), ``type`` (a member of the wrong JSON type), ``value``
    (a value the protocol does not allow), ``version``, ``binding``, ``url`` (not a usable
    URL), ``local-url`` (an interface on a local address in a card served from elsewhere;
    as a warning, one on an address no other host can reach),
    ``security`` (a requirement naming no declared scheme, a scheme of no known kind),
    ``duplicate`` (a skill id used twice), ``size`` (larger than the client reads) or
    ``empty`` (an optional string that is empty).

    ``severity`` is ``"error"`` (the card is wrong) or ``"warning"`` (it is valid, but what
    it says likely is not meant: an empty optional string, which the client reads as absent;
    an interface on ``0.0.0.0`` or ``::``, which no other host can reach). ``str(problem)`` is
    ``path: message``, with ``warning:`` before the message of a warning.
    """

    path: str
    message: str
    kind: str
    severity: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        message = f"warning: {self.message}" if self.severity == "warning" else self.message
        return f"{self.path}: {message}" if self.path else message


def card_version(card: Mapping[str, Any], card_url: str | None = None) -> str:
    """The A2A version a card claims: "1.0", "0.3", "0.2" or "legacy" (tasks/send).

    A card that lists ``supportedInterfaces``, or states a ``protocolVersion`` 1.x, is a
    v1.0 card; an earlier one states its ``protocolVersion``, or is read as the client reads
    a card without one (``versionless``; ``card_url`` is where it was fetched).
    """
    stated = major_minor(card.get("protocolVersion"))
    if "supportedInterfaces" in card or (stated or "").startswith("1."):
        return "1.0"
    return _PRE_V1.get(stated or "") or versionless(dict(card), card_url)[0]


def check_card(
    card: Mapping[str, Any] | AgentCard | object,
    *,
    card_url: str | None = None,
    size: int | None = None,
) -> list[CardProblem]:
    """What ``card`` gets wrong for the A2A version it claims (``card_version``), errors and
    warnings (``CardProblem.severity``), in the card's order; an empty list when nothing.

    ``card`` is the card's JSON (or an ``AgentCard``, whose ``raw`` JSON is checked); JSON
    that is no object is a problem. Members the version does not know are not problems: cards
    may carry more (a v1.0 card may also hold the v0.3 view of itself). ``card_url`` is where
    the card was fetched: when its host is not a local one, an interface URL on
    ``localhost``, ``127.x``, ``::1``, ``0.0.0.0`` or ``::`` is a problem (an agent that
    advertises the address it listens on); else one on ``0.0.0.0`` or ``::`` is a warning.
    ``size`` is the card's length in bytes as it was served, when known: a card larger than
    the client reads is a problem.

    Raises:
        ValueError: ``card_url`` cannot be read as a URL.
    """
    raw: Any = card.raw if isinstance(card, AgentCard) else card
    problems = []
    if size is not None and size > MAX_CARD_BYTES:
        message = f"the card is {size} bytes: the client reads no card larger than {MAX_CARD_BYTES}"
        problems.append(CardProblem("", message, "size"))
    if not isinstance(raw, Mapping):
        what = _JSON_TYPES.get(type(raw)) or (
            "a number" if isinstance(raw, (int, float)) else f"a {type(raw).__name__}"
        )
        return [*problems, CardProblem("", f"the card is {what}, not a JSON object", "type")]
    checker = _Checker(card_version(raw, card_url), card_url)
    checker.problems = problems
    checker.card(dict(raw))
    return checker.problems


def _at(path: str, key: object) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    key = str(key)
    step = key if _KEY.fullmatch(key) else f"[{json.dumps(key, ensure_ascii=False)}]"
    return f"{path}.{step}" if path and not step.startswith("[") else f"{path}{step}"


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= 80 else text[:79] + "…"


def _address(host: str | None) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The IP address ``host`` is, an IPv4-mapped IPv6 one as its IPv4 address; else None."""
    try:
        address = ipaddress.ip_address(host or "")
    except ValueError:
        return None
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped or address


def _is_local(host: str | None) -> bool:
    if not host:
        return False
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    address = _address(host)
    return address is not None and (address.is_loopback or address.is_unspecified)


def _is_unspecified(host: str | None) -> bool:
    """``0.0.0.0`` or ``::``: where a server listens on every interface, never an address
    another host can reach it at."""
    address = _address(host)
    return address is not None and address.is_unspecified


class _Checker:
    """The problems of one card of ``version``, found member by member."""

    def __init__(self, version: str, card_url: str | None) -> None:
        self.version = version
        self.v1 = version == "1.0"
        self.legacy = version == "legacy"
        self.label = "the tasks/send dialect" if self.legacy else f"A2A {version}"
        host = urlsplit(card_url).hostname if card_url else None
        #: The host the card came from, when it is not a local one.
        self.remote_host = None if _is_local(host) else host
        self.problems: list[CardProblem] = []

    def add(self, path: str, message: str, kind: str) -> None:
        self.problems.append(CardProblem(path, message, kind))

    def warn(self, path: str, message: str, kind: str) -> None:
        self.problems.append(CardProblem(path, message, kind, "warning"))

    def member(
        self, obj: dict[str, Any], key: str, path: str, kind: type, required: bool = False
    ) -> Any:
        """``obj[key]`` when it is of ``kind``; else None, and a problem when it is there
        (or missing, but ``required``; an empty string counts as missing). An optional
        string that is empty is read as absent (as the client reads it), with a warning."""
        at = _at(path, key)
        value = obj.get(key)
        empty = kind is str and value == ""
        if value is None or empty:
            if required:
                self.add(at, f"missing: {self.label} requires it", "missing")
            elif empty:
                self.warn(at, "is empty: the client reads it as absent (leave it out)", "empty")
            return None
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            self.add(
                at, f"must be {_TYPES[kind]}, not {_TYPES.get(type(value), 'a number')}", "type"
            )
            return None
        return value

    def objects(
        self, obj: dict[str, Any], key: str, path: str, required: bool = False
    ) -> Iterator[tuple[dict[str, Any], str]]:
        """The objects of the array ``obj[key]``, each with its path (a problem for an item
        that is no object)."""
        for i, item in enumerate(self.member(obj, key, path, list, required) or []):
            at = _at(_at(path, key), i)
            if isinstance(item, dict):
                yield item, at
            else:
                self.add(at, f"must be an object, not {_shown(item)}", "type")

    # -- the card ---------------------------------------------------------------------------

    def card(self, card: dict[str, Any]) -> None:
        later = not self.legacy  # what v0.2 made required
        self.member(card, "name", "", str, required=True)
        self.member(card, "description", "", str, required=later)
        self.member(card, "version", "", str, required=True)
        if self.v1:
            if card.get("supportedInterfaces") == []:
                self.add("supportedInterfaces", "is empty: an agent needs one", "missing")
            for iface, at in self.objects(card, "supportedInterfaces", "", required=True):
                self.interface(iface, at)
        else:
            self.pre_v1_endpoints(card)
        caps = self.member(card, "capabilities", "", dict, required=True)
        if caps is not None:
            self.capabilities(caps)
        for key in ("defaultInputModes", "defaultOutputModes"):
            self.modes(card, key, "", required=later)
        schemes = self.member(card, "securitySchemes", "", dict) or {}
        for name, scheme in schemes.items():
            self.scheme(scheme, _at("securitySchemes", name))
        self.requirements(card, "", schemes)
        if self.legacy and (auth := self.member(card, "authentication", "", dict)) is not None:
            self.strings(auth, "schemes", "authentication")
        provider = self.member(card, "provider", "", dict)
        if provider is not None:
            self.member(provider, "organization", "provider", str, required=True)
            self.url(provider, "url", "provider", required=later)
        for key in ("documentationUrl", "iconUrl"):
            self.url(card, key, "")
        self.skills(card, schemes)

    def pre_v1_endpoints(self, card: dict[str, Any]) -> None:
        if self.version == "0.3" or "protocolVersion" in card:
            required = self.version == "0.3"  # v0.2 cards may lack one
            version = self.member(card, "protocolVersion", "", str, required=required)
            if version is not None and not _VERSION.fullmatch(version):
                self.add("protocolVersion", f"not a version: {_shown(version)}", "version")
            elif version is not None and major_minor(version) not in _PRE_V1:
                self.add("protocolVersion", f"no A2A version is {_shown(version)}", "version")
        binding = None
        if not self.legacy and (binding := self.member(card, "preferredTransport", "", str)):
            self.binding(binding, "preferredTransport")
        self.url(card, "url", "", required=True, interface=True, binding=binding)
        if self.legacy:
            return
        for iface, at in self.objects(card, "additionalInterfaces", ""):
            name = self.member(iface, "transport", at, str, required=True)
            if name is not None:
                self.binding(name, _at(at, "transport"))
            self.url(iface, "url", at, required=True, interface=True, binding=name)

    def interface(self, iface: dict[str, Any], at: str) -> None:
        binding = self.member(iface, "protocolBinding", at, str, required=True)
        if binding is not None:
            self.binding(binding, _at(at, "protocolBinding"))
        version = self.member(iface, "protocolVersion", at, str, required=True)
        if version is not None and not _VERSION.fullmatch(version):
            self.add(_at(at, "protocolVersion"), f"not a version: {_shown(version)}", "version")
        if iface.get("tenant") != "":  # what ProtoJSON writers (the JS SDK's) say for none
            self.member(iface, "tenant", at, str)
        self.url(iface, "url", at, required=True, interface=True, binding=binding)

    def binding(self, name: str, at: str) -> None:
        if name in BINDINGS.values() or (self.v1 and ":" in name):  # v1.0: a custom one's URI
            return
        known = BINDINGS.get(name.upper())
        if known is not None:
            self.add(at, f"binding {_shown(name)} is written {_shown(known)}", "binding")
        else:
            self.add(at, f"unknown binding {_shown(name)}", "binding")

    def url(
        self,
        obj: dict[str, Any],
        key: str,
        path: str,
        *,
        required: bool = False,
        interface: bool = False,
        binding: str | None = None,
    ) -> None:
        url = self.member(obj, key, path, str, required)
        if url is None:
            return
        at = _at(path, key)
        if binding == "GRPC" and "://" not in url:  # gRPC's may be host:port
            host = urlsplit(f"//{url}").hostname
        else:
            problem = url_problem(url)
            if problem is not None:
                self.add(at, f"{_shown(url)} {problem}", "url")
                return
            host = urlsplit(url).hostname
        if interface and self.remote_host and _is_local(host):
            self.add(
                at,
                f"{_shown(url)} points at a local address, but the card came from {self.remote_host}",
                "local-url",
            )
        elif interface and _is_unspecified(host):
            where = "an address to listen on, not to connect to"
            self.warn(at, f"{_shown(url)}: no other host can reach {host} ({where})", "local-url")

    def capabilities(self, caps: dict[str, Any]) -> None:
        flags = ["streaming", "pushNotifications"]
        flags.append("extendedAgentCard" if self.v1 else "stateTransitionHistory")
        for key in flags:
            self.member(caps, key, "capabilities", bool)
        for ext, at in self.objects(caps, "extensions", "capabilities"):
            self.member(ext, "uri", at, str, required=True)
            self.member(ext, "required", at, bool)
            self.member(ext, "params", at, dict)

    def strings(
        self, obj: dict[str, Any], key: str, path: str, required: bool = False
    ) -> list[str]:
        out = []
        for i, item in enumerate(self.member(obj, key, path, list, required) or []):
            if isinstance(item, str):
                out.append(item)
            else:
                self.add(_at(_at(path, key), i), f"must be a string, not {_shown(item)}", "type")
        return out

    def modes(self, obj: dict[str, Any], key: str, path: str, required: bool = False) -> None:
        for i, mode in enumerate(self.strings(obj, key, path, required)):
            if not self.legacy and "/" not in mode:  # media types from v0.2 on
                self.add(_at(_at(path, key), i), f"{_shown(mode)} is not a media type", "value")

    # -- security ---------------------------------------------------------------------------

    def scheme(self, scheme: Any, at: str) -> None:
        if not isinstance(scheme, dict):
            self.add(at, f"must be an object, not {_shown(scheme)}", "type")
            return
        if self.v1:
            wrappers = [w for w in SCHEME_WRAPPERS if w in scheme]
            if len(wrappers) != 1:
                names = ", ".join(SCHEME_WRAPPERS)
                if wrappers:
                    why = f"{len(wrappers)} of them here"
                else:
                    why = (
                        'the "type" of earlier versions is not one'
                        if "type" in scheme
                        else "none here"
                    )
                self.add(at, f"must hold exactly one of {names} ({why})", "security")
                return
            body = self.member(scheme, wrappers[0], at, dict)
            kind, at = SCHEME_WRAPPERS[wrappers[0]], _at(at, wrappers[0])
        else:
            body, kind = scheme, self.member(scheme, "type", at, str, required=True)
            if kind is None:
                return
            if kind not in _SCHEME_MEMBERS:
                self.add(
                    _at(at, "type"), f"unknown security scheme type {_shown(kind)}", "security"
                )
                return
        if body is None:
            return
        for key in _SCHEME_MEMBERS[kind]:
            if key == "flows":
                self.member(body, key, at, dict, required=True)
            elif key == "openIdConnectUrl":
                self.url(body, key, at, required=True)
            else:
                name = "in" if key == "location" and not self.v1 else key
                value = self.member(body, name, at, str, required=True)
                if key == "location" and value is not None and value not in _KEY_PLACES:
                    place = " or ".join(_KEY_PLACES)
                    self.add(_at(at, name), f"{_shown(value)} is not {place}", "value")

    def requirements(self, obj: dict[str, Any], path: str, schemes: dict[str, Any]) -> None:
        """``securityRequirements`` (v1.0) and ``security`` (before, and in v1.0 cards that
        carry their v0.3 view): each scheme they name must be declared."""
        for item, at in self.objects(obj, "securityRequirements", path):
            for name in self.member(item, "schemes", at, dict, required=True) or {}:
                self.declared(name, _at(_at(at, "schemes"), name), schemes)
        for item, at in self.objects(obj, "security", path):
            named = self.member(item, "schemes", at, dict) if "schemes" in item else item
            for name in named or {}:
                self.declared(name, _at(at, name), schemes)

    def declared(self, name: str, at: str, schemes: dict[str, Any]) -> None:
        if name not in schemes:
            self.add(at, f"no scheme {_shown(name)} in securitySchemes", "security")

    # -- skills -----------------------------------------------------------------------------

    def skills(self, card: dict[str, Any], schemes: dict[str, Any]) -> None:
        later = not self.legacy
        first: dict[str, str] = {}
        for skill, at in self.objects(card, "skills", "", required=True):
            skill_id = self.member(skill, "id", at, str, required=True)
            self.member(skill, "name", at, str, required=True)
            self.member(skill, "description", at, str, required=later)
            self.strings(skill, "tags", at, required=later)
            self.strings(skill, "examples", at)
            for key in ("inputModes", "outputModes"):
                self.modes(skill, key, at)
            self.requirements(skill, at, schemes)
            if skill_id is None:
                continue
            if skill_id in first:
                message = f"duplicate skill id {_shown(skill_id)} ({first[skill_id]} has it too)"
                self.add(_at(at, "id"), message, "duplicate")
            else:
                first[skill_id] = at
