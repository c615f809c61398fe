"""AgentRegistry: the agents a user works with, by name, from a YAML or TOML file.

The file holds ``defaults``, ``agents`` and ``groups``; credentials stay in the environment
(``token_env``, ``${VAR}`` in urls, headers and cookies) and are read only when a client is
made, so one agent's missing variable never breaks the others. Every agent's ``tags`` also
form groups. YAML needs PyYAML and TOML on Python 3.10 needs tomli (both in the ``cli`` extra).
"""

from __future__ import annotations

import difflib
import math
import os
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from a2a_anyio._client import A2AClient, check_url
from a2a_anyio._errors import A2AClientError
from a2a_anyio._limits import read_file
from a2a_anyio._retry import RetryPolicy

#: The environment variable naming the registry file ``AgentRegistry.load()`` reads first.
CONFIG_ENV = "A2A_ANYIO_CONFIG"
#: A registry file larger than this is refused.
MAX_REGISTRY_BYTES = 1024 * 1024

_AGENT_FIELDS = (
    "name", "description", "url", "endpoint", "token_env", "headers", "cookies", "protocol",
    "binding", "timeout_seconds", "retries", "verify", "tags",
)  # fmt: skip
_DEFAULT_FIELDS = (
    "token_env", "headers", "cookies", "protocol", "binding", "timeout_seconds", "retries",
    "verify",
)  # fmt: skip
_TOP_FIELDS = ("defaults", "agents", "groups")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_VAR = re.compile(r"\$\$|\$\{([^}]*)\}")
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # an HTTP field or cookie name
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
}


class AgentRegistryError(A2AClientError, ValueError):
    """A registry file, entry or lookup that cannot be used.

    ``path`` (the file), ``entry`` (the agent or group) and ``field`` say where, when known;
    ``variable`` names the environment variable that is missing, when that is the cause.
    It is a ``ValueError`` too: a configuration mistake, not a failure of an agent.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        entry: str | None = None,
        field: str | None = None,
        variable: str | None = None,
    ) -> None:
        where = ": ".join(
            x for x in (path, entry, f"field {field!r}" if field else None) if x is not None
        )
        super().__init__(f"{where}: {message}" if where else message)
        self.path = path
        self.entry = entry
        self.field = field
        self.variable = variable

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True, slots=True)
class AgentEntry:
    """One agent of a registry, as written in its file (``${VAR}`` not yet substituted).

    ``url`` is the agent's base URL or card URL; ``endpoint`` a JSON-RPC URL used without
    discovery (at least one of the two is set). ``protocol`` is ``auto``, ``1.0``, ``0.3``,
    ``0.2`` or ``legacy``; ``binding`` (``jsonrpc`` or ``rest``) is the preferred binding, the
    other one being the fallback. ``retries`` counts the retries after the
    first try (None: the client's default policy). ``source`` and ``where`` name the file
    and the entry it came from.
    """

    name: str
    url: str | None = None
    endpoint: str | None = None
    description: str | None = None
    token_env: str | None = None
    # Credentials: kept out of the repr.
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    cookies: Mapping[str, str] = field(default_factory=dict, repr=False)
    protocol: str = "auto"
    binding: str = "jsonrpc"
    timeout_seconds: float | None = 30.0
    retries: int | None = None
    verify: bool | str = True
    tags: tuple[str, ...] = ()
    source: str | None = field(default=None, compare=False, repr=False)
    where: str | None = field(default=None, compare=False, repr=False)

    def _error(self, message: str, field: str | None = None, **kw: Any) -> AgentRegistryError:
        return AgentRegistryError(
            message, path=self.source, entry=self.where or f"agent {self.name!r}", field=field, **kw
        )

    def _expand(self, value: str, what: str, env: Mapping[str, str]) -> str:
        def sub(match: re.Match[str]) -> str:
            if match.group(0) == "$$":
                return "$"
            name, sep, default = match.group(1).partition(":-")
            if name in env:
                return env[name]
            if sep:
                return default
            raise self._error(f"environment variable {name} is not set", what, variable=name)

        return _VAR.sub(sub, value)

    def auth(self, env: Mapping[str, str] | None = None) -> str | None:
        """The ``Authorization`` value: ``Bearer <token>`` read from ``token_env``, or None."""
        if self.token_env is None:
            return None
        env = os.environ if env is None else env
        token = env.get(self.token_env)
        if not token:
            raise self._error(
                f"environment variable {self.token_env} is not set (it holds the bearer token)",
                "token_env",
                variable=self.token_env,
            )
        if header_fault("Authorization", token) is not None:
            raise self._error(
                f"environment variable {self.token_env} holds a line break or NUL",
                "token_env",
                variable=self.token_env,
            )
        return f"Bearer {token}"

    def client_options(self, env: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The ``A2AClient`` keyword arguments of this entry, variables substituted."""
        env = os.environ if env is None else env
        opts: dict[str, Any] = {
            "protocol": self.protocol,
            "bindings": ("rest", "jsonrpc") if self.binding == "rest" else ("jsonrpc", "rest"),
            "timeout": self.timeout_seconds,
            "verify": self.verify,
        }
        if isinstance(self.verify, str) and not Path(self.verify).is_file():
            raise self._error(
                f"no CA bundle file at {self.verify!r} (verify takes true, false or the path "
                "of a CA bundle)",
                "verify",
            )
        if self.url is not None:
            opts["url"] = self._url(self._expand(self.url, "url", env), "url")
        if self.endpoint is not None:
            opts["endpoint"] = self._url(self._expand(self.endpoint, "endpoint", env), "endpoint")
        if (auth := self.auth(env)) is not None:
            opts["auth"] = auth
        for key in ("headers", "cookies"):
            table: Mapping[str, str] = getattr(self, key)
            if table:
                opts[key] = {k: self._field(key, k, v, env) for k, v in table.items()}
        if self.retries is not None:
            opts["retry"] = RetryPolicy(attempts=self.retries + 1)
        return opts

    def _url(self, value: str, what: str) -> str:
        try:
            return check_url(value, what)
        except ValueError as exc:
            raise self._error(str(exc), what) from None

    def _field(self, key: str, name: str, value: str, env: Mapping[str, str]) -> str:
        """A header's or cookie's value with its variables substituted, checked."""
        value = self._expand(value, f"{key}.{name}", env)
        if header_fault(name, value) is not None:  # a variable brought a line break in
            raise self._error("the value holds a line break or NUL", f"{key}.{name}")
        return value

    def secrets(self, env: Mapping[str, str] | None = None) -> list[str]:
        """The credential values this entry sends (for redacting them from diagnostics)."""
        env = os.environ if env is None else env
        found: list[str] = []
        if self.token_env and env.get(self.token_env):
            found.append(env[self.token_env])
        for value in (*self.headers.values(), *self.cookies.values()):
            for match in _VAR.finditer(value):
                name = (match.group(1) or "").partition(":-")[0]
                if name and env.get(name):
                    found.append(env[name])
        return found

    def client(self, env: Mapping[str, str] | None = None, **overrides: Any) -> A2AClient:
        """An ``A2AClient`` configured from this entry; ``overrides`` win over the entry."""
        return A2AClient(**{**self.client_options(env), **overrides})


class AgentRegistry:
    """Named agents and groups of them, loaded from a file or a dict.

    ``get(name)`` returns an ``AgentEntry``, ``client(name)`` an ``A2AClient`` configured from
    it, ``group(name)`` the entries of an explicit group or of a tag, ``resolve(name)`` either
    (an agent as a one-entry list). ``AgentRegistry.load()`` reads ``$A2A_ANYIO_CONFIG``, else
    ``./agents.yaml``, else ``~/.config/a2a-anyio/agents.yaml`` (``.yml``/``.toml`` too), and
    is empty when there is none.
    """

    def __init__(
        self,
        agents: Mapping[str, AgentEntry] | None = None,
        groups: Mapping[str, list[str]] | None = None,
        *,
        path: str | Path | None = None,
    ) -> None:
        self._agents: dict[str, AgentEntry] = dict(agents or {})
        self._groups: dict[str, list[str]] = {k: list(v) for k, v in (groups or {}).items()}
        self.path = Path(path) if path is not None else None

    # -- loading --------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: Any, *, source: str | Path | None = None) -> AgentRegistry:
        """A registry from the parsed content of a file; ``source`` names it in errors."""
        return _Parser(str(source) if source is not None else "<registry>").parse(data, source)

    @classmethod
    def from_file(cls, path: str | Path) -> AgentRegistry:
        """A registry from a ``.yaml``/``.yml`` or ``.toml`` file (JSON is valid YAML)."""
        p = Path(path).expanduser()
        try:
            text = read_file(p, MAX_REGISTRY_BYTES).decode("utf-8")
        except OSError as exc:
            raise AgentRegistryError(
                f"cannot read the registry: {exc.strerror}", path=str(p)
            ) from exc
        except UnicodeDecodeError as exc:
            raise AgentRegistryError(f"not UTF-8 text (byte {exc.start})", path=str(p)) from exc
        except ValueError as exc:  # not a regular file, or too large
            raise AgentRegistryError(f"the registry {exc}", path=str(p)) from exc
        return cls.from_dict(_parse_text(text, p), source=p)

    @staticmethod
    def default_paths() -> list[Path]:
        """Where ``load()`` looks, in order (``$A2A_ANYIO_CONFIG`` is checked before these)."""
        config_home = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
        dirs = [Path.cwd(), config_home / "a2a-anyio"]
        return [d / f"agents{ext}" for d in dirs for ext in (".yaml", ".yml", ".toml")]

    @classmethod
    def load(cls, path: str | Path | None = None) -> AgentRegistry:
        """The registry of ``path``, of ``$A2A_ANYIO_CONFIG``, or of the first default file
        that exists; an empty registry when there is none."""
        if path is not None:
            return cls.from_file(path)
        named = os.environ.get(CONFIG_ENV)
        if named:
            if not Path(named).expanduser().exists():
                raise AgentRegistryError(
                    f"${CONFIG_ENV} names {named}, which does not exist", path=named
                )
            return cls.from_file(named)
        for candidate in cls.default_paths():
            if candidate.exists():  # a directory or a FIFO there is reported, not skipped
                return cls.from_file(candidate)
        return cls()

    # -- lookups --------------------------------------------------------------------------

    def names(self) -> list[str]:
        """The agents' names, in file order."""
        return list(self._agents)

    def group_names(self) -> list[str]:
        """Every group: the explicit ones in file order, then tags that are not groups too."""
        out = list(self._groups)
        for entry in self._agents.values():
            out.extend(t for t in entry.tags if t not in out)
        return out

    def __contains__(self, name: object) -> bool:
        return name in self._agents or name in self.group_names()

    def __iter__(self) -> Iterator[AgentEntry]:
        return iter(self._agents.values())

    def __len__(self) -> int:
        return len(self._agents)

    def __repr__(self) -> str:
        return f"<AgentRegistry {self.path or '(in memory)'}: {len(self._agents)} agents>"

    def _where(self) -> str:
        return str(self.path) if self.path is not None else "the registry"

    def _unknown(self, name: str, what: str, choices: list[str]) -> AgentRegistryError:
        near = difflib.get_close_matches(name, choices, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        known = ", ".join(choices) or "none"
        return AgentRegistryError(
            f"no {what} named {name!r} in {self._where()} (known: {known}){hint}"
        )

    def get(self, name: str) -> AgentEntry:
        """The agent called ``name``; ``AgentRegistryError`` when there is none."""
        try:
            return self._agents[name]
        except KeyError:
            raise self._unknown(name, "agent", self.names()) from None

    def group(self, name: str) -> list[AgentEntry]:
        """The agents of group ``name``: its explicit members, then the agents tagged with it."""
        members = list(self._groups.get(name, []))
        members += [
            e.name for e in self._agents.values() if name in e.tags and e.name not in members
        ]
        if not members and name not in self._groups:
            raise self._unknown(name, "group", self.group_names())
        return [self._agents[m] for m in members]

    def resolve(self, name: str) -> list[AgentEntry]:
        """An agent as ``[entry]``, or a group's entries."""
        if name in self._agents:
            return [self._agents[name]]
        if name in self.group_names():
            return self.group(name)
        raise self._unknown(name, "agent or group", [*self.names(), *self.group_names()])

    def client(self, name: str, **overrides: Any) -> A2AClient:
        """An ``A2AClient`` for agent ``name``: its url, ``Bearer`` token from ``token_env``,
        headers, cookies, protocol, timeout, ``RetryPolicy(attempts=retries + 1)`` and verify;
        ``overrides`` (any ``A2AClient`` keyword) win over the entry."""
        return self.get(name).client(**overrides)


# -- parsing ------------------------------------------------------------------------------


def _parse_text(text: str, path: Path) -> Any:
    suffix = path.suffix.lower()
    if suffix == ".toml":
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - Python 3.10
            try:
                import tomli as tomllib
            except ImportError as exc:
                raise AgentRegistryError(
                    "reading TOML on Python 3.10 needs tomli: pip install 'a2a-anyio[cli]'",
                    path=str(path),
                ) from exc
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise AgentRegistryError(f"not valid TOML: {exc}", path=str(path)) from exc
        except RecursionError:
            raise AgentRegistryError("not valid TOML: nested too deep", path=str(path)) from None
    try:
        import yaml
    except ImportError as exc:  # pragma: no cover - the cli extra installs it
        raise AgentRegistryError(
            "reading YAML needs PyYAML: pip install 'a2a-anyio[cli]'", path=str(path)
        ) from exc
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise AgentRegistryError(f"not valid YAML: {_yaml_problem(exc)}", path=str(path)) from exc
    except RecursionError:
        raise AgentRegistryError("not valid YAML: nested too deep", path=str(path)) from None


def _yaml_problem(exc: Any) -> str:
    """PyYAML's several-line message, on one line: the problem and where it is."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    if problem and mark is not None:
        return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
    return " ".join(str(exc).split())


class _Parser:
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

    def parse(self, data: Any, path: str | Path | None) -> AgentRegistry:
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
        return AgentRegistry(agents, groups, path=path)

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
        if "token_env" in d:
            value = d["token_env"]
            if not isinstance(value, str) or not _ENV_NAME.match(value):
                raise self.error(
                    f"must be an environment variable's name, not {value!r}", where, "token_env"
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
            norm = _PROTOCOLS.get(str(value).strip().lower()) if value is not None else None
            if norm is None or isinstance(value, bool):
                raise self.error(
                    f"must be auto, 1.0, 0.3, 0.2 or legacy, not {value!r}", where, "protocol"
                )
            out["protocol"] = norm
        if "binding" in d:
            value = d["binding"]
            norm = _BINDINGS.get(str(value).strip().lower()) if isinstance(value, str) else None
            if norm is None:
                raise self.error(f"must be jsonrpc or rest, not {value!r}", where, "binding")
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
                    f"must be a positive number of seconds (or null for none), not {value!r}",
                    where,
                    "timeout_seconds",
                )
            out["timeout_seconds"] = float(value) if value is not None else None
        if "retries" in d:
            value = d["retries"]
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise self.error(
                    f"must be a whole number, 0 or more, not {value!r}", where, "retries"
                )
            out["retries"] = value
        if "verify" in d:
            value = d["verify"]
            if not isinstance(value, (bool, str)) or value == "":
                raise self.error(
                    f"must be true, false or a CA bundle's path, not {value!r}", where, "verify"
                )
            if isinstance(value, str) and value.strip().lower() in _BOOLEAN_WORDS:
                raise self.error(
                    f"{value!r} is a string: write true or false without quotes", where, "verify"
                )
            out["verify"] = str(Path(value).expanduser()) if isinstance(value, str) else value
        return out

    def check_template(self, value: str, where: str, field: str) -> None:
        for match in _VAR.finditer(value):
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


def header_fault(name: str, value: str) -> str | None:
    """Why ``name: value`` cannot be sent as a header (or a cookie), or None; the reason
    never quotes the value, which may be a secret."""
    if not _TOKEN.match(name):
        return "not a valid header or cookie name"
    if "\r" in value or "\n" in value or "\0" in value:
        return "the value holds a line break or NUL"
    return None


def is_url(target: str) -> bool:
    """True for an absolute http(s) URL (a registry name never is one)."""
    return target.startswith(("http://", "https://"))
