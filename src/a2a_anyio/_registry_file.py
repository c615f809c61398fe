"""Reading a registry file: YAML or TOML text parsed, every agent and group validated."""

from __future__ import annotations

import difflib
import math
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from a2a_anyio._errors import install_extra, shown
from a2a_anyio._http import check_url
from a2a_anyio._registry_entry import VAR, AgentEntry, AgentRegistryError, header_fault

_AGENT_FIELDS = (
    "name", "description", "url", "path", "endpoint", "token_env", "headers", "cookies",
    "protocol", "binding", "timeout_seconds", "retries", "verify", "tags",
)  # fmt: skip
_DEFAULT_FIELDS = (
    "path", "token_env", "headers", "cookies", "protocol", "binding", "timeout_seconds",
    "retries", "verify",
)  # fmt: skip
_TOP_FIELDS = ("defaults", "agents", "groups")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PATH = re.compile(r"^/[^?#\s]*$")
_BOOLEAN_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "1", "0"})
_PROTOCOLS = {
    "auto": "auto",
    "1": "1.0",
    "1.0": "1.0",
    "v1": "1.0",
    "v1.0": "1.0",
    "0.3": "0.3",
    "0.3.0": "0.3",
    "v0.3": "0.3",
    "0.2": "0.2",
    "v0.2": "0.2",
    "legacy": "legacy",
}
_BINDINGS = {
    "jsonrpc": "jsonrpc",
    "json-rpc": "jsonrpc",
    "rest": "rest",
    "http+json": "rest",
    "http-json": "rest",
    "grpc": "grpc",
}


def parse_text(text: str, path: Path) -> Any:
    suffix = path.suffix.lower()
    if suffix == ".toml":
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - Python 3.10
            try:
                import tomli as tomllib
            except ImportError as exc:
                raise AgentRegistryError(
                    f"reading TOML on Python 3.10 needs tomli: {install_extra('cli')}",
                    path=str(path),
                ) from exc
        try:
            return tomllib.loads(text)
        except ValueError as exc:  # TOMLDecodeError, or an int past Python's digit limit
            raise AgentRegistryError(f"not valid TOML: {exc}", path=str(path)) from exc
        except RecursionError:
            raise AgentRegistryError("not valid TOML: nested too deep", path=str(path)) from None
    try:
        import yaml
    except ImportError as exc:  # pragma: no cover - the cli extra installs it
        raise AgentRegistryError(
            f"reading YAML needs PyYAML: {install_extra('cli')}", path=str(path)
        ) from exc
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise AgentRegistryError(f"not valid YAML: {_yaml_problem(exc)}", path=str(path)) from exc
    except ValueError as exc:  # a value its type refuses: 2001-13-45, !!int x, 5000 digits
        raise AgentRegistryError(f"not valid YAML: {exc}", path=str(path)) from exc
    except RecursionError:
        raise AgentRegistryError("not valid YAML: nested too deep", path=str(path)) from None


def _yaml_problem(exc: Any) -> str:
    """PyYAML's several-line message, on one line: the problem and where it is."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    if problem and mark is not None:
        return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
    return " ".join(str(exc).split())


class Parser:
    """Validates one file's content; every error names the file, the entry and the field."""

    def __init__(self, source: str) -> None:
        self.source = source

    def error(
        self, message: str, entry: str | None = None, field: str | None = None
    ) -> AgentRegistryError:
        return AgentRegistryError(message, path=self.source, entry=entry, field=field)

    def unknown_fields(self, d: Mapping[str, Any], allowed: tuple[str, ...], entry: str) -> None:
        for key in d:
            if key not in allowed:
                near = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                raise self.error(
                    f"unknown field{hint}; allowed: {', '.join(allowed)}", entry, str(key)
                )

    def parse(self, data: Any) -> tuple[dict[str, AgentEntry], dict[str, list[str]]]:
        """The agents and groups of a file's content."""
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise self.error(f"the file must hold a mapping, not {_kind(data)}")
        self.unknown_fields(data, _TOP_FIELDS, "top level")
        defaults = data.get("defaults") or {}
        if not isinstance(defaults, Mapping):
            raise self.error(f"must be a mapping, not {_kind(defaults)}", "defaults")
        self.unknown_fields(defaults, _DEFAULT_FIELDS, "defaults")
        base = self.options(defaults, "defaults")

        raw_agents = data.get("agents") or []
        if isinstance(raw_agents, Mapping):  # the TOML-friendly form: [agents.NAME]
            items = []
            for name, body in raw_agents.items():
                if not isinstance(body, Mapping):
                    raise self.error(f"must be a mapping, not {_kind(body)}", f"agents.{name}")
                if "name" in body and body["name"] != name:
                    raise self.error(f"differs from the key {name!r}", f"agents.{name}", "name")
                items.append((f"agents.{name}", {**body, "name": name}))
        elif isinstance(raw_agents, list):
            items = [(f"agents[{i}]", body) for i, body in enumerate(raw_agents)]
        else:
            raise self.error(f"must be a list or a mapping, not {_kind(raw_agents)}", "agents")

        agents: dict[str, AgentEntry] = {}
        for where, body in items:
            entry = self.agent(body, where, base)
            if entry.name in agents:
                raise self.error(f"duplicate agent name {entry.name!r}", entry.where, "name")
            agents[entry.name] = entry

        raw_groups = data.get("groups") or {}
        if not isinstance(raw_groups, Mapping):
            raise self.error(f"must be a mapping, not {_kind(raw_groups)}", "groups")
        groups: dict[str, list[str]] = {}
        for gname, members in raw_groups.items():
            where = f"groups.{gname}"
            if not isinstance(gname, str) or not _NAME.match(gname):
                raise self.error("a group name is letters, digits, '_', '.', '-'", where)
            if gname in agents:
                raise self.error("a group cannot have the name of an agent", where)
            if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
                raise self.error(f"must be a list of agent names, not {_kind(members)}", where)
            for member in members:
                if member not in agents:
                    near = difflib.get_close_matches(member, list(agents), n=1)
                    hint = f"; did you mean {near[0]!r}?" if near else ""
                    raise self.error(f"unknown agent {member!r}{hint}", where)
            groups[gname] = list(dict.fromkeys(members))
        for entry in agents.values():
            for tag in entry.tags:
                if tag in agents:
                    raise self.error(
                        f"tag {tag!r} is also an agent's name (tags form groups)",
                        entry.where,
                        "tags",
                    )
        return agents, groups

    def agent(self, body: Any, where: str, base: dict[str, Any]) -> AgentEntry:
        if not isinstance(body, Mapping):
            raise self.error(f"an agent must be a mapping, not {_kind(body)}", where)
        name = body.get("name")
        if not isinstance(name, str) or not name:
            raise self.error("every agent needs a name", where, "name")
        if not _NAME.match(name):
            raise self.error(
                f"{name!r}: a name is letters, digits, '_', '.', '-' (not starting with one "
                "of the last three)",
                where,
                "name",
            )
        where = f"{where} ({name})"
        self.unknown_fields(body, _AGENT_FIELDS, where)
        url = self.url(body, "url", where)
        endpoint = self.url(body, "endpoint", where)
        if url is None and endpoint is None:
            raise self.error("an agent needs a url (or an endpoint)", where, "url")
        if endpoint is not None and "path" in body:
            raise self.error(
                "path is joined to the url; endpoint is a whole URL: give one of them",
                where,
                "path",
            )
        description = body.get("description")
        if description is not None and not isinstance(description, str):
            raise self.error(f"must be a string, not {_kind(description)}", where, "description")
        tags = body.get("tags", [])
        if isinstance(tags, str):
            tags = [tags]
        if not isinstance(tags, list) or not all(
            isinstance(t, str) and _NAME.match(t) for t in tags
        ):
            raise self.error(
                "must be a list of names (letters, digits, '_', '.', '-')", where, "tags"
            )
        opts = {**base, **self.options(body, where)}
        if endpoint is not None:
            opts.pop("path", None)  # an agent's own endpoint wins over the default path
        headers = {**base.get("headers", {}), **opts.get("headers", {})}
        cookies = {**base.get("cookies", {}), **opts.get("cookies", {})}
        opts.update(headers=headers, cookies=cookies)
        return AgentEntry(
            name=name,
            url=url,
            endpoint=endpoint,
            description=description,
            tags=tuple(dict.fromkeys(tags)),
            source=self.source,
            where=where,
            given=frozenset(opts),
            **opts,
        )

    def url(self, body: Mapping[str, Any], key: str, where: str) -> str | None:
        value = body.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.error(f"must be a string, not {_kind(value)}", where, key)
        if "${" not in value:  # a URL built from variables is checked when they are known
            try:
                check_url(value, key)
            except ValueError as exc:
                raise self.error(str(exc), where, key) from None
        return value

    def options(self, d: Mapping[str, Any], where: str) -> dict[str, Any]:
        """The options shared by ``defaults`` and agents, validated and normalised."""
        out: dict[str, Any] = {}
        if "path" in d:
            value = d["path"]
            if not isinstance(value, str) or not _PATH.match(value):
                raise self.error(
                    f"must be a URL path starting with '/' (e.g. /cstp), not {shown(value)}",
                    where,
                    "path",
                )
            out["path"] = value
        if "token_env" in d:
            value = d["token_env"]
            if not isinstance(value, str) or not _ENV_NAME.match(value):
                raise self.error(
                    f"must be an environment variable's name, not {shown(value)}",
                    where,
                    "token_env",
                )
            out["token_env"] = value
        for key in ("headers", "cookies"):
            if key in d:
                value = d[key]
                if not isinstance(value, Mapping):
                    raise self.error(f"must be a mapping, not {_kind(value)}", where, key)
                table: dict[str, str] = {}
                for k, v in value.items():
                    if not isinstance(v, (str, int, float)) or isinstance(v, bool):
                        raise self.error(f"must be a string, not {_kind(v)}", where, f"{key}.{k}")
                    if (fault := header_fault(str(k), str(v))) is not None:
                        raise self.error(fault, where, f"{key}.{k}")
                    table[str(k)] = str(v)
                    self.check_template(str(v), where, f"{key}.{k}")
                out[key] = table
        if "protocol" in d:
            value = d["protocol"]
            spelled = shown(value) if isinstance(value, (int, float)) else value  # 1.0, 1
            norm = _PROTOCOLS.get(spelled.strip().lower()) if isinstance(spelled, str) else None
            if norm is None or isinstance(value, bool):
                raise self.error(
                    f"must be auto, 1.0, 0.3, 0.2 or legacy, not {shown(value)}", where, "protocol"
                )
            out["protocol"] = norm
        if "binding" in d:
            value = d["binding"]
            norm = _BINDINGS.get(str(value).strip().lower()) if isinstance(value, str) else None
            if norm is None:
                raise self.error(
                    f"must be jsonrpc, rest or grpc, not {shown(value)}", where, "binding"
                )
            out["binding"] = norm
        if "timeout_seconds" in d:
            value = d["timeout_seconds"]
            if value is not None and (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or value <= 0
            ):
                raise self.error(
                    f"must be a positive number of seconds (or null for none), not {shown(value)}",
                    where,
                    "timeout_seconds",
                )
            out["timeout_seconds"] = float(value) if value is not None else None
        if "retries" in d:
            value = d["retries"]
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise self.error(
                    f"must be a whole number of tries in all, 1 or more (1: no retry), "
                    f"not {shown(value)}",
                    where,
                    "retries",
                )
            out["retries"] = value
        if "verify" in d:
            value = d["verify"]
            if not isinstance(value, (bool, str)) or value == "":
                raise self.error(
                    f"must be true, false or a CA bundle's path, not {shown(value)}",
                    where,
                    "verify",
                )
            if isinstance(value, str) and value.strip().lower() in _BOOLEAN_WORDS:
                raise self.error(
                    f"{value!r} is a string: write true or false without quotes", where, "verify"
                )
            out["verify"] = str(Path(value).expanduser()) if isinstance(value, str) else value
        return out

    def check_template(self, value: str, where: str, field: str) -> None:
        for match in VAR.finditer(value):
            if match.group(0) == "$$":
                continue
            name = match.group(1).partition(":-")[0]
            if not _ENV_NAME.match(name):
                raise self.error(f"${{{match.group(1)}}} does not name a variable", where, field)


def _kind(value: Any) -> str:
    return {
        dict: "a mapping",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "nothing",
    }.get(type(value), type(value).__name__)
