"""AgentRegistry: the agents a user works with, by name, from a YAML or TOML file.

The file holds ``defaults``, ``agents`` and ``groups``; credentials stay in the environment
(``token_env``, ``${VAR}`` in urls, headers and cookies) and are read only when a client is
made, so one agent's missing variable never breaks the others. Every agent's ``tags`` also
form groups. YAML needs PyYAML and TOML on Python 3.10 needs tomli (both in the ``cli`` extra).
"""

from __future__ import annotations

import builtins
import difflib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from a2a_anyio._client import A2AClient
from a2a_anyio._limits import read_file
from a2a_anyio._options import ClientOptions
from a2a_anyio._registry_entry import AgentEntry, AgentRegistryError, header_fault, is_url
from a2a_anyio._registry_file import Parser, parse_text

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "CONFIG_ENV",
    "MAX_REGISTRY_BYTES",
    "AgentEntry",
    "AgentRegistry",
    "AgentRegistryError",
    "header_fault",
    "is_url",
]

#: The environment variable naming the registry file ``AgentRegistry.load()`` reads first.
CONFIG_ENV = "A2A_ANYIO_CONFIG"
#: A registry file larger than this is refused.
MAX_REGISTRY_BYTES = 1024 * 1024


class AgentRegistry:
    """Named agents and groups of them, loaded from a file or a dict.

    ``AgentRegistry(path)`` reads a file (as ``from_file``). ``entry(name)`` returns an
    ``AgentEntry`` (``get(name)`` the same, or None for an unknown name), ``client(name)`` an
    ``A2AClient`` configured from it, ``group(name)`` the entries of an explicit group or of a
    tag, ``resolve(name)`` either (an agent as a one-entry list); ``names()`` (or ``list()``)
    the agents' names. ``AgentRegistry.load()`` reads ``$A2A_ANYIO_CONFIG``, else
    ``./agents.yaml``, else ``~/.config/a2a-anyio/agents.yaml`` (``.yml``/``.toml`` too), and
    is empty when there is none.
    """

    def __init__(
        self,
        agents: Mapping[str, AgentEntry] | str | os.PathLike[str] | None = None,
        groups: Mapping[str, list[str]] | None = None,
        *,
        path: str | Path | None = None,
    ) -> None:
        """The agents and groups given, or those of the file ``agents`` names.

        Raises:
            AgentRegistryError: the file cannot be read or is not a valid registry.
            TypeError: a file given with ``groups`` or ``path``.
        """
        if isinstance(agents, (str, os.PathLike)):
            if groups is not None or path is not None:
                raise TypeError("AgentRegistry(path) reads its agents and groups from the file")
            loaded = type(self).from_file(agents)
            agents, groups, path = loaded._agents, loaded._groups, loaded.path
        self._agents: dict[str, AgentEntry] = dict(agents or {})
        self._groups: dict[str, list[str]] = {k: list(v) for k, v in (groups or {}).items()}
        self.path: Path | None = Path(path) if path is not None else None

    # -- loading --------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: Any, *, source: str | Path | None = None) -> AgentRegistry:
        """A registry from the parsed content of a file; ``source`` names it in errors.

        Raises:
            AgentRegistryError: the data is not a valid registry; the message names the entry and field.
        """
        agents, groups = Parser(str(source) if source is not None else "<registry>").parse(data)
        return cls(agents, groups, path=source)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> AgentRegistry:
        """A registry from a ``.yaml``/``.yml`` or ``.toml`` file (JSON is valid YAML).

        Raises:
            AgentRegistryError: the file cannot be read (not a regular file, over 1 MiB, not UTF-8) or is not a
                valid registry.
        """
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
        return cls.from_dict(parse_text(text, p), source=p)

    @staticmethod
    def default_paths() -> list[Path]:
        """Where ``load()`` looks, in order (``$A2A_ANYIO_CONFIG`` is checked before these)."""
        config_home = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
        # The working directory's files by their relative names: messages then say
        # "agents.yaml", as the user would, not a long absolute path.
        dirs = [Path(), config_home / "a2a-anyio"]
        return [d / f"agents{ext}" for d in dirs for ext in (".yaml", ".yml", ".toml")]

    @classmethod
    def load(cls, path: str | Path | None = None) -> AgentRegistry:
        """The registry of ``path``, of ``$A2A_ANYIO_CONFIG``, or of the first default file
        that exists; an empty registry when there is none.

        Raises:
            AgentRegistryError: ``$A2A_ANYIO_CONFIG`` names a file that does not exist, or the file found is
                unusable.
        """
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

    def entry(self, name: str) -> AgentEntry:
        """The agent called ``name``; ``AgentRegistryError`` when there is none.

        Raises:
            AgentRegistryError: no agent has that name (the message lists the known ones).
        """
        try:
            return self._agents[name]
        except KeyError:
            raise self._unknown(name, "agent", self.names()) from None

    def get(self, name: str) -> AgentEntry | None:
        """The agent called ``name``, or None when there is none."""
        return self._agents.get(name)

    def group(self, name: str) -> list[AgentEntry]:
        """The agents of group ``name``: its explicit members, then the agents tagged with it.

        Raises:
            AgentRegistryError: no group has that name.
        """
        members = list(self._groups.get(name, []))
        members += [
            e.name for e in self._agents.values() if name in e.tags and e.name not in members
        ]
        if not members and name not in self._groups:
            raise self._unknown(name, "group", self.group_names())
        return [self._agents[m] for m in members]

    def resolve(self, name: str) -> list[AgentEntry]:
        """An agent as ``[entry]``, or a group's entries.

        Raises:
            AgentRegistryError: neither an agent nor a group has that name.
        """
        if name in self._agents:
            return [self._agents[name]]
        if name in self.group_names():
            return self.group(name)
        raise self._unknown(name, "agent or group", [*self.names(), *self.group_names()])

    def client(self, name: str, **overrides: Unpack[ClientOptions]) -> A2AClient:
        """An ``A2AClient`` for agent ``name``: its url, ``Bearer`` token from ``token_env``,
        headers, cookies, protocol, timeout, ``RetryPolicy(attempts=retries)`` and verify,
        ``endpoint`` when it has one or a ``path``; ``overrides`` (``ClientOptions``: any
        ``A2AClient`` keyword but ``url``) win over the entry.

        Raises:
            AgentRegistryError: no agent has that name, or a variable its entry reads is not set.
            ValueError: an option the client refuses.
        """
        return self.entry(name).client(**overrides)

    # The seed API's spelling of names(); defined last: in the class body ``list`` is this
    # method from here on.
    def list(self) -> builtins.list[str]:
        """The agents' names, in file order (the same as ``names()``)."""
        return self.names()
