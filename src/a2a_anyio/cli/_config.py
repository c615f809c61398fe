"""``config show``: the settings of this run, each with the source it came from.

A setting comes from, highest first: a flag, an environment variable, the registry file (its
``defaults``, which every agent of the file takes unless it says otherwise), or the built-in
default. Credential values are never shown: a bearer token, an API key, a header's or a
cookie's value is ``***``; a variable's name (``token_env``) is shown, not its value.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from a2a_anyio._http import DEFAULT_TIMEOUT
from a2a_anyio._limits import read_file
from a2a_anyio._registry import CONFIG_ENV, MAX_REGISTRY_BYTES, AgentRegistry
from a2a_anyio._registry_file import Parser, parse_text
from a2a_anyio.cli._context import Context
from a2a_anyio.cli._errors import OK

MASK = "***"

#: The global options ``config show`` reports, with what applies when nobody sets them.
_BUILT_IN: dict[str, tuple[str, Any]] = {
    "agent": ("--agent", None),
    "endpoint": ("--endpoint", None),
    "bearer": ("--bearer", None),
    "api_key": ("--api-key", None),
    "header": ("--header", None),
    "cookie": ("--cookie", None),
    "insecure": ("--insecure", False),
    "timeout": ("--timeout", f"{DEFAULT_TIMEOUT:g} s a call, streams unbounded"),
    "protocol": ("--protocol", "auto"),
    "binding": ("--binding", "the card's order"),
    "output": ("--output", "text"),
    "debug": ("--debug", False),
    "backend": ("--backend", "asyncio"),
}
_SECRET = frozenset({"bearer", "api_key"})


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting: its name, the value that applies (masked if secret), and its source."""

    name: str
    value: Any
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "source": self.source}


def _shown(name: str, value: Any) -> Any:
    if value is None:
        return None
    if name in _SECRET:
        return MASK
    if name == "header":
        return [f"{h.partition(':')[0].strip()}: {MASK}" for h in value]
    if name == "cookie":
        return [f"{c.partition('=')[0].strip()}={MASK}" for c in value]
    return value


def settings(ctx: Context) -> list[Setting]:
    """The global settings of the run, then the registry file and its ``defaults``."""
    a = ctx.args
    out = []
    for name, (flag, default) in _BUILT_IN.items():
        value = getattr(a, name, None)
        if name in a.from_env:
            source = f"environment ${a.from_env[name]}"
        elif value is not None and value is not False and value != [] and value != default:
            source = f"flag {flag}"
            if name == "timeout" and value == 0:
                value = "0 (no limit)"
        else:
            source, value = "default", default
        out.append(Setting(flag.removeprefix("--"), _shown(name, value), source))
    return out + _registry_settings(ctx)


def _registry_settings(ctx: Context) -> list[Setting]:
    """Where the registry file came from, and each value of its ``defaults``."""
    a = ctx.args
    registry: AgentRegistry = ctx.registry  # validated: a broken file is reported as such
    path = registry.path
    if path is None:
        looked = ", ".join(str(p) for p in AgentRegistry.default_paths())
        return [Setting("config", None, f"default: none found (looked at {looked})")]
    if a.config:
        source = "flag --config"
    elif os.environ.get(CONFIG_ENV):
        source = f"environment ${CONFIG_ENV}"
    else:
        source = "default location"
    out = [Setting("config", str(path), source)]
    where = f"registry file {path} (defaults)"
    for key, value in _defaults(path).items():
        out.append(Setting(f"defaults.{key}", _file_value(key, value), where))
    return out


def _defaults(path: Path) -> dict[str, Any]:
    """The ``defaults`` of a registry file, validated as the registry reads them."""
    data = parse_text(read_file(path, MAX_REGISTRY_BYTES).decode("utf-8"), path)
    raw = data.get("defaults") if isinstance(data, Mapping) else None
    return Parser(str(path)).options(raw or {}, "defaults")


def _file_value(key: str, value: Any) -> Any:
    if key in ("headers", "cookies"):
        return dict.fromkeys(value, MASK)
    return value


async def config_show(ctx: Context) -> int:
    """``config show``: a table (Setting, Value, Source), or ``{"settings": [...]}``."""
    found = settings(ctx)
    if ctx.p.json_mode:
        ctx.p.json({"settings": [s.to_dict() for s in found]})
        return OK
    ctx.p.table(["Setting", "Value", "Source"], [[s.name, _text(s.value), s.source] for s in found])
    return OK


def _text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "-"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {v}" for k, v in value.items()) or "-"
    return str(value)
