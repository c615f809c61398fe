"""An AI Catalog document read into registry agents (``a2a-anyio agents import``).

The AI Catalog (media type ``application/ai-catalog+json``) is specified by the AI Catalog
working group (github.com/Agent-Card/ai-catalog, ``specification/ai-catalog.md``) and
proposed for A2A as the way to discover many agents at once, at
``/.well-known/ai-catalog.json`` (github.com/a2aproject/A2A pull request 2240). The fields
read here, by those documents' names:

- the document: ``specVersion`` ("Major.Minor"; a major version above 1 is refused, as the
  specification asks) and ``entries`` (an array); ``host.displayName`` is reported;
- an entry: ``identifier`` and ``type`` (``application/a2a-agent-card+json`` for an A2A
  Agent Card; other types are skipped, nested catalogs are not followed), and exactly one
  of ``url`` (where the card is) or ``data`` (the card inline); ``displayName``,
  ``description`` and ``tags`` are optional.

Everything in a catalog is untrusted: the document is bounded (``MAX_CATALOG_BYTES``,
``MAX_CATALOG_ENTRIES``), an entry that cannot be used is refused with the reason (its
index and identifier named), and only http(s) URLs are kept. The name of an agent is the
entry's ``displayName``, else the inline card's ``name``, else the last segment of its
``identifier`` (the specification's order), made into a registry name.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from a2a_anyio._dialects.card import parse_card
from a2a_anyio._errors import A2AClientError, A2ADiscoveryError, ErrorContext, shown
from a2a_anyio._http import url_problem

CATALOG_PATH = "/.well-known/ai-catalog.json"
A2A_CARD_TYPE = "application/a2a-agent-card+json"
NESTED_CATALOG_TYPE = "application/ai-catalog+json"
#: A catalog document larger than this is refused.
MAX_CATALOG_BYTES = 1024 * 1024
#: A catalog that lists more entries than this is refused.
MAX_CATALOG_ENTRIES = 1000
_MAX_NAME = 64
_MAX_TEXT = 500
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_SPEC_VERSION = re.compile(r"^(\d+)\.(\d+)$")


@dataclass(frozen=True, slots=True)
class CatalogAgent:
    """An A2A agent of a catalog, as a registry entry: its name, the URL of its card (or,
    for a card given inline, of its first interface), description and tags."""

    name: str
    url: str
    identifier: str
    description: str | None = None
    tags: tuple[str, ...] = ()

    def entry(self) -> dict[str, Any]:
        """The agent as a registry file writes it."""
        out: dict[str, Any] = {"name": self.name, "url": self.url}
        if self.description:
            out["description"] = self.description
        if self.tags:
            out["tags"] = list(self.tags)
        return out


@dataclass(frozen=True, slots=True)
class Passed:
    """An entry not imported: where it is (``entries[3]``, its identifier) and why."""

    where: str
    why: str

    def __str__(self) -> str:
        return f"{self.where}: {self.why}"


@dataclass(slots=True)
class Catalog:
    """What a catalog gave: its host's name, the agents, the entries refused (unusable) and
    skipped (not A2A agents, or agents the registry has already)."""

    host: str | None = None
    agents: list[CatalogAgent] = field(default_factory=list)
    refused: list[Passed] = field(default_factory=list)
    skipped: list[Passed] = field(default_factory=list)


def catalog_url(url: str) -> str:
    """The catalog of ``url``: itself when it has a path, else the well-known one of its
    origin."""
    head, sep, _ = url.partition("://")
    rest = url[len(head) + len(sep) :]
    if "/" not in rest.rstrip("/"):
        return url.rstrip("/") + CATALOG_PATH
    return url


def read_catalog(
    data: Any,
    *,
    source: str,
    names: Collection[str] = (),
    urls: Mapping[str, str] | None = None,
) -> Catalog:
    """The A2A agents of the catalog document ``data`` (parsed JSON) from ``source``.
    ``names`` are taken already (an agent gets ``name-2``...); ``urls`` maps the URLs the
    registry has to their agents' names (such an entry is skipped).

    Raises:
        A2ADiscoveryError: ``data`` is not an AI Catalog, of a major version above 1, or
            lists more than ``MAX_CATALOG_ENTRIES`` entries.
    """
    context: ErrorContext = {"agent": source, "operation": "catalog"}
    if not isinstance(data, Mapping) or "entries" not in data or "specVersion" not in data:
        raise A2ADiscoveryError(
            f"{source} is not an AI Catalog (an object with specVersion and entries)", **context
        )
    version = data["specVersion"]
    match = _SPEC_VERSION.match(version) if isinstance(version, str) else None
    if match is None or int(match.group(1)) > 1:
        raise A2ADiscoveryError(
            f"{source}: specVersion {shown(version)} is not one this reader knows (1.x or 0.x)",
            **context,
        )
    entries = data["entries"]
    if not isinstance(entries, list):
        raise A2ADiscoveryError(f"{source}: entries is not an array", **context)
    if len(entries) > MAX_CATALOG_ENTRIES:
        raise A2ADiscoveryError(
            f"{source} lists {len(entries)} entries, more than {MAX_CATALOG_ENTRIES}", **context
        )
    out = Catalog()
    host = data.get("host")
    if isinstance(host, Mapping) and isinstance(host.get("displayName"), str):
        out.host = _text(host["displayName"])
    taken = set(names)
    known = dict(urls or {})
    seen: set[str] = set()
    for index, raw in enumerate(entries):
        where = f"entries[{index}]"
        if isinstance(raw, Mapping) and isinstance(raw.get("identifier"), str):
            where += f" ({shown(raw['identifier'], 80)})"
        try:
            agent = _agent(raw, where, out, seen)
        except ValueError as exc:
            out.refused.append(Passed(where, str(exc)))
            continue
        if agent is None:
            continue
        if agent.url in known:
            out.skipped.append(Passed(where, f"already in the registry as {known[agent.url]}"))
            continue
        name = _free(agent.name, taken)
        taken.add(name)
        known[agent.url] = name
        out.agents.append(
            CatalogAgent(name, agent.url, agent.identifier, agent.description, agent.tags)
        )
    return out


def _agent(raw: Any, where: str, out: Catalog, seen: set[str]) -> CatalogAgent | None:
    """The agent of one entry; None for an entry skipped (recorded in ``out``); ValueError
    saying why for one refused."""
    if not isinstance(raw, Mapping):
        raise ValueError(f"an entry is an object, not {shown(raw, 40)}")
    identifier = raw.get("identifier")
    if not isinstance(identifier, str) or not identifier.strip() or len(identifier) > 2048:
        raise ValueError("no identifier (a non-empty string)")
    kind = raw.get("type")
    if not isinstance(kind, str):
        raise ValueError("no type (a media type)")
    if kind.strip().lower() != A2A_CARD_TYPE:
        why = "nested catalogs are not followed" if kind == NESTED_CATALOG_TYPE else "not A2A"
        out.skipped.append(Passed(where, f"type {shown(kind, 60)}: {why}"))
        return None
    key = f"{identifier}\n{raw.get('version')}"
    if key in seen:
        raise ValueError("the identifier (and version) of an entry before it")
    seen.add(key)
    if ("url" in raw) == ("data" in raw):
        raise ValueError("an entry has exactly one of url and data")
    card_name = None
    description = raw.get("description")
    if "url" in raw:
        url = raw["url"]
        if not isinstance(url, str) or (problem := url_problem(url)) is not None:
            raise ValueError(f"url {shown(url, 80)} {problem or 'is not a string'}")
    else:
        try:
            card = parse_card(raw["data"])
        except A2AClientError as exc:
            raise ValueError(f"the inline card cannot be read: {exc.message}") from None
        url = card.interfaces[0].url
        if (problem := url_problem(url)) is not None:
            raise ValueError(f"the inline card's interface {shown(url, 80)} {problem}")
        card_name, description = card.name, description or card.description
    name = raw.get("displayName")
    if not isinstance(name, str) or not _registry_name(name):
        name = card_name if card_name and _registry_name(card_name) else None
    if name is None:
        name = re.split(r"[:/]", identifier.rstrip(":/"))[-1]
    tags = raw.get("tags")
    kept = tuple(
        dict.fromkeys(t for t in tags if isinstance(t, str) and _NAME.match(t) and len(t) <= 64)
        if isinstance(tags, list)
        else ()
    )
    return CatalogAgent(
        _registry_name(name) or "agent",
        url,
        identifier,
        _text(description) if isinstance(description, str) else None,
        kept,
    )


def _registry_name(text: str) -> str:
    """``text`` as a registry name: letters, digits, ``_``, ``.``, ``-``, a letter or digit
    first; lower case, at most 64 characters; empty when nothing is left."""
    name = _NAME_CHARS.sub("-", text.strip().lower())
    return name.lstrip("_.-")[:_MAX_NAME].rstrip("_.-")


def _free(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    number = 2
    while f"{name}-{number}" in taken:
        number += 1
    return f"{name}-{number}"


def _text(value: str) -> str:
    """A catalog's text on one line, bounded."""
    one = " ".join(value.split())
    return one if len(one) <= _MAX_TEXT else one[: _MAX_TEXT - 1] + "…"
