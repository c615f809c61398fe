"""``agents import URL``: the A2A agents of an AI Catalog, into the registry file.

Without ``--write`` the agents are printed as a registry file would hold them (YAML); with
it they are added to the registry file (made if there is none), which keeps its agents and
groups. The catalog is fetched as the client fetches everything (``A2AClient._fetch``: the
credentials of the run only to the catalog's origin, redirects bounded), at most
``MAX_CATALOG_BYTES``; ``_catalog.read_catalog`` reads it. The agents' cards are read later,
when they are used, and kept as their HTTP caching headers say (``AgentCardFetcher``).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from a2a_anyio._catalog import MAX_CATALOG_BYTES, Catalog, CatalogAgent, catalog_url, read_catalog
from a2a_anyio._errors import A2ADiscoveryError
from a2a_anyio._limits import loads, read_file
from a2a_anyio._registry import CONFIG_ENV, MAX_REGISTRY_BYTES, AgentRegistry
from a2a_anyio._registry_file import parse_text
from a2a_anyio.cli._context import Context
from a2a_anyio.cli._errors import OK, UsageError


def _registry_path(ctx: Context) -> Path:
    """The file ``--write`` adds to: ``--config``, ``$A2A_ANYIO_CONFIG``, the registry
    found, else ``agents.yaml`` of the configuration directory."""
    named = ctx.args.config or os.environ.get(CONFIG_ENV)
    if named:
        return Path(named).expanduser()
    found = AgentRegistry.load().path
    if found is not None:
        return Path(found)
    return AgentRegistry.default_paths()[3]  # <config home>/a2a-anyio/agents.yaml


def _existing(path: Path) -> tuple[AgentRegistry, Any]:
    """The registry of ``path`` and its parsed content (an empty one if there is no file)."""
    if not path.exists():
        return AgentRegistry(path=path), {}
    registry = AgentRegistry.from_file(path)  # validated: a broken file is reported as such
    text = read_file(path, MAX_REGISTRY_BYTES).decode("utf-8")
    return registry, parse_text(text, path) or {}


async def import_agents(ctx: Context) -> int:
    a = ctx.args
    url = catalog_url(a.url)
    path = _registry_path(ctx) if a.write else None
    if path is not None and path.suffix.lower() == ".toml":
        raise UsageError(
            f"--write adds to a YAML registry; {path} is TOML: run without --write and add "
            "the agents it prints by hand"
        )
    if path is not None:
        registry, data = _existing(path)
        if path.exists() and b"#" in read_file(path, MAX_REGISTRY_BYTES):
            ctx.p.warn(f"{path} is written anew: its comments are not kept")
    else:
        registry, data = (ctx.registry, None)
    target = ctx.targets([url])[0]
    target.options["max_response_bytes"] = MAX_CATALOG_BYTES
    client = await ctx.client(target)
    response = await client._fetch(url)
    try:
        document = loads(response.content)
    except ValueError as exc:
        raise A2ADiscoveryError(
            f"{url} is not JSON: {exc}", agent=url, operation="catalog"
        ) from exc
    taken = [*registry.names(), *registry.group_names()]
    urls = {e.url: e.name for e in registry if e.url}
    found = read_catalog(document, source=url, names=taken, urls=urls)
    agents = _untagged(found.agents, {*registry.names(), *(x.name for x in found.agents)})
    written = _write(path, data, agents) if path is not None and agents else None
    _report(ctx, url, found, agents, path, written)
    return OK


def _untagged(agents: list[CatalogAgent], names: set[str]) -> list[CatalogAgent]:
    """The agents without the tags that are an agent's name (tags form groups)."""
    out = []
    for agent in agents:
        tags = tuple(t for t in agent.tags if t not in names)
        out.append(CatalogAgent(agent.name, agent.url, agent.identifier, agent.description, tags))
    return out


def _write(path: Path, data: Any, agents: list[CatalogAgent]) -> Path:
    """Add ``agents`` to the registry content ``data`` and write it to ``path`` whole (a
    file beside it first, then renamed over it: a failed write leaves the file as it was)."""
    import yaml

    data = dict(data) if isinstance(data, Mapping) else {}
    listed = data.get("agents") or []
    if isinstance(listed, Mapping):
        data["agents"] = {**listed, **{x.name: _without_name(x.entry()) for x in agents}}
    else:
        data["agents"] = [*listed, *(x.entry() for x in agents)]
    AgentRegistry.from_dict(data, source=path)  # what is written reads back
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    fd, aside = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(aside, mode)
        os.replace(aside, path)
    except BaseException:
        Path(aside).unlink(missing_ok=True)
        raise
    return path


def _without_name(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k != "name"}


def _report(
    ctx: Context,
    url: str,
    found: Catalog,
    agents: list[CatalogAgent],
    path: Path | None,
    written: Path | None,
) -> None:
    p = ctx.p
    if p.json_mode:
        p.json(
            {
                "catalog": url,
                "host": found.host,
                "agents": [x.entry() | {"identifier": x.identifier} for x in agents],
                "refused": [{"entry": x.where, "reason": x.why} for x in found.refused],
                "skipped": [{"entry": x.where, "reason": x.why} for x in found.skipped],
                "written": str(written) if written is not None else None,
            }
        )
    for passed in found.skipped:
        p.note(f"skipped {passed}")
    for passed in found.refused:
        p.warn(f"refused {passed}")
    if p.json_mode:
        return
    host = f" of {found.host}" if found.host else ""
    count = f"{len(agents)} agent{'' if len(agents) == 1 else 's'}"
    if path is None:
        import yaml

        if agents:
            p.paragraph(
                yaml.safe_dump(
                    {"agents": [x.entry() for x in agents]}, sort_keys=False, allow_unicode=True
                ).rstrip("\n")
            )
        them = "it" if len(agents) == 1 else "them"
        p.note(f"{count} in the catalog{host}; add {them} to the registry with --write")
        return
    for agent in agents:
        p.field("Added", f"{agent.name} ({agent.url})")
    p.note(f"{count} of the catalog{host} added to {path}")
