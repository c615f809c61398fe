"""One agent of a registry (``AgentEntry``) and the error a registry raises."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from a2a_anyio._client import A2AClient
from a2a_anyio._dialects.card import preferring
from a2a_anyio._errors import A2AClientError
from a2a_anyio._http import check_url
from a2a_anyio._options import ClientArguments, ClientOptions
from a2a_anyio._retry import RetryPolicy

if TYPE_CHECKING:
    from typing_extensions import Unpack

#: ``${VAR}``, ``${VAR:-default}`` and ``$$`` in urls, headers and cookies.
VAR = re.compile(r"\$\$|\$\{([^}]*)\}")
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # an HTTP field or cookie name


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
    discovery (at least one of the two is set); ``path`` (``/cstp``) makes ``url`` + ``path``
    that endpoint, for a plain JSON-RPC service without a card (the card, if any, is still
    looked up at ``url``). ``protocol`` is ``auto``, ``1.0``, ``0.3``, ``0.2`` or ``legacy``;
    ``binding`` (``jsonrpc``, ``rest`` or ``grpc``) is the preferred binding, the others
    being the fallbacks. ``retries`` is the number of tries in all, the first included
    (``RetryPolicy(attempts=retries)``; None: the client's default policy, 3 tries).
    ``source`` and ``where`` name the file and the entry it came from; ``given`` the fields
    among ``protocol``, ``binding``, ``timeout_seconds`` and ``verify`` that its file set (in
    the entry or the file's ``defaults``): in a pool, the pool's options apply in place of
    the others (None: all four are the entry's, as for an entry made in code).
    """

    name: str
    url: str | None = None
    endpoint: str | None = None
    path: str | None = None
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
    given: frozenset[str] | None = field(default=None, compare=False, repr=False)

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

        return VAR.sub(sub, value)

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

    def client_options(self, env: Mapping[str, str] | None = None) -> ClientArguments:
        """The ``A2AClient`` keyword arguments of this entry, variables substituted."""
        env = os.environ if env is None else env
        opts: ClientArguments = {}
        given = self.given
        # What the file left unsaid is left out: the client's defaults, or a pool's options.
        if given is None or "protocol" in given:
            opts["protocol"] = self.protocol
        if given is None or "binding" in given:
            opts["bindings"] = preferring(self.binding)
        if given is None or "timeout_seconds" in given:
            opts["timeout"] = self.timeout_seconds
        if given is None or "verify" in given:
            opts["verify"] = self.verify
        if isinstance(self.verify, str) and not Path(self.verify).is_file():
            raise self._error(
                f"no CA bundle file at {self.verify!r} (verify takes true, false or the path "
                "of a CA bundle)",
                "verify",
            )
        if self.url is not None:
            opts["url"] = url = self._url(self._expand(self.url, "url", env), "url")
            if self.path is not None:
                base = urlsplit(url)
                joined = base._replace(path=base.path.rstrip("/") + self.path)
                opts["endpoint"] = self._url(urlunsplit(joined), "path")
        if self.endpoint is not None:
            opts["endpoint"] = self._url(self._expand(self.endpoint, "endpoint", env), "endpoint")
        if (auth := self.auth(env)) is not None:
            opts["auth"] = auth
        for key in ("headers", "cookies"):
            table: Mapping[str, str] = getattr(self, key)
            if table:
                opts[key] = {k: self._field(key, k, v, env) for k, v in table.items()}
        if self.retries is not None:
            opts["retry"] = RetryPolicy(attempts=self.retries)
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
            for match in VAR.finditer(value):
                name = (match.group(1) or "").partition(":-")[0]
                if name and env.get(name):
                    found.append(env[name])
        return found

    def client(
        self, env: Mapping[str, str] | None = None, **overrides: Unpack[ClientOptions]
    ) -> A2AClient:
        """An ``A2AClient`` configured from this entry; ``overrides`` win over the entry."""
        options: ClientArguments = {**self.client_options(env), **overrides}
        return A2AClient(**options)


def header_fault(name: str, value: str) -> str | None:
    """Why ``name: value`` cannot be sent as a header (or a cookie), or None; the reason
    never quotes the value, which may be a secret."""
    if not _TOKEN.match(name):
        return "not a valid header or cookie name"
    if "\r" in value or "\n" in value or "\0" in value:
        return "the value holds a line break or NUL"
    return None


#: A scheme of two letters or more (one letter is a Windows drive), then ``:/``.
_URL_LIKE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:/")


def is_url(target: str) -> bool:
    """True for a target written as a URL: a scheme, a colon and a slash (a registry name never
    holds one). Whether it can be requested (an absolute http(s) URL) is ``url_problem``'s to
    say: ``htp://x`` or ``http:/x`` is a URL that cannot, never a name or a host."""
    return _URL_LIKE.match(target) is not None
