"""What every command needs: the agents it names, configured clients, and diagnostics."""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import re
import time
import traceback
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, unquote, urlsplit

from a2a_anyio._auth import Origin, origin_of
from a2a_anyio._card import MAX_CARD_BYTES, card_urls
from a2a_anyio._client import A2AClient
from a2a_anyio._dialects.card import parse_card, preferring
from a2a_anyio._errors import A2AClientError, A2ADiscoveryError, A2AHTTPError
from a2a_anyio._http import make_client, url_problem
from a2a_anyio._limits import loads, read_file
from a2a_anyio._model import AgentCard
from a2a_anyio._observe import SENSITIVE_WORDS
from a2a_anyio._options import ClientArguments
from a2a_anyio._registry import (
    AgentEntry,
    AgentRegistry,
    AgentRegistryError,
    header_fault,
    is_url,
)
from a2a_anyio._retry import RetryAttempt, RetryPolicy
from a2a_anyio.cli._errors import (
    TIMEOUT,
    UNREACHABLE,
    CardNotFound,
    Failure,
    UsageError,
    classify,
    did_you_mean,
)
from a2a_anyio.cli._render import Printer

if TYPE_CHECKING:
    from a2a_anyio._oauth import TokenSet

#: Header names whose values are never shown in diagnostics.
SENSITIVE_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key"}
)
_LOCAL_HOSTS = ("localhost", "127.", "[::1]", "0.0.0.0")
#: What ``-a`` takes, said when it is given something else.
AGENT_FORMS = (
    "an agent is an http(s) URL, a card file that exists, a name of the registry, "
    "or a host (agent.example.com, localhost:8000)"
)
_MAX_LOGGED_BODY = 2000


@dataclass(slots=True)
class Target:
    """One agent a command talks to: its display name, the reference the user gave, the
    ``A2AClient`` options, and the card when it was read from a file."""

    name: str
    ref: str
    options: ClientArguments
    card: dict[str, Any] | None = None
    entry: AgentEntry | None = None

    @property
    def url(self) -> str:
        return str(self.options.get("url") or self.options.get("endpoint") or self.ref)


#: Secrets shorter than this are replaced only where they stand alone, not inside words.
_SHORT = 4


class Debug:
    """``--debug`` diagnostics on stderr. Credential values are never formatted into them
    (the headers in ``secret_headers`` show ``***``), and every known secret, whatever its
    length, is replaced by ``***`` in the text as a last guard."""

    def __init__(self, enabled: bool, printer: Printer) -> None:
        self.enabled = enabled
        self._printer = printer
        self.secrets: set[str] = set()
        #: Lower-cased names of the headers that carry credentials (the user's headers too).
        self.secret_headers: set[str] = set(SENSITIVE_HEADERS)
        self._started: dict[int, float] = {}
        self._t0 = time.perf_counter()

    def redact(self, text: str) -> str:
        for secret in sorted(self.secrets, key=len, reverse=True):
            if len(secret) >= _SHORT:
                text = text.replace(secret, "***")
            elif secret:
                text = re.sub(rf"(?<![0-9A-Za-z]){re.escape(secret)}(?![0-9A-Za-z])", "***", text)
        return text

    def add_credentials(self, options: ClientArguments) -> None:
        """Know the secrets of a client's options: ``auth``, ``headers`` and ``cookies``."""
        auth = options.get("auth")
        if isinstance(auth, str):
            self.secrets.add(auth)
            self.secrets.add(auth.partition(" ")[2])
        for name, value in (options.get("headers") or {}).items():
            self.secret_headers.add(str(name).lower())
            self.secrets.add(str(value))
        self.secrets.update(str(v) for v in (options.get("cookies") or {}).values())

    def options(self, options: ClientArguments) -> dict[str, Any]:
        """``options`` fit to show: credential values replaced by ``***``."""
        shown: dict[str, Any] = {k: v for k, v in options.items() if k != "card"}
        if "auth" in shown:
            shown["auth"] = "***"
        for key in ("headers", "cookies"):
            if shown.get(key):
                shown[key] = dict.fromkeys(shown[key], "***")
        return shown

    def __call__(self, message: str) -> None:
        if self.enabled:
            elapsed = time.perf_counter() - self._t0
            self._printer.debug(f"debug {elapsed:7.3f}s {self.redact(message)}")

    def headers(self, headers: Any) -> str:
        shown = []
        for name, value in headers.items():
            lower = name.lower()
            sensitive = lower in self.secret_headers or any(w in lower for w in SENSITIVE_WORDS)
            shown.append(f"{name}: {'***' if sensitive else value}")
        return "; ".join(shown)

    async def on_request(self, request: Any) -> None:
        self._started[id(request)] = time.perf_counter()
        self(f"-> {request.method} {request.url} [{self.headers(request.headers)}]")
        try:
            body = request.content
        except Exception:  # a streamed request body: nothing to show
            body = b""
        if body and "x-www-form-urlencoded" in request.headers.get("content-type", ""):
            # A token request: each value may be a secret (a refresh token, a client secret).
            names = [k for k, _ in parse_qsl(body.decode("latin-1"), keep_blank_values=True)]
            self(f"   form {', '.join(f'{n}=***' for n in names)}")
        elif body:
            text = body.decode("utf-8", "replace")
            cut = "…" if len(text) > _MAX_LOGGED_BODY else ""
            self(f"   body {text[:_MAX_LOGGED_BODY]}{cut}")

    async def on_response(self, response: Any) -> None:
        started = self._started.pop(id(response.request), None)
        took = f" in {(time.perf_counter() - started) * 1000:.0f} ms" if started else ""
        ctype = response.headers.get("content-type", "")
        self(f"<- {response.status_code} {ctype} from {response.request.url}{took}")

    def on_retry(self, attempt: RetryAttempt) -> None:
        self(
            f"retry {attempt.operation}: try {attempt.attempt} failed ({attempt.error}); "
            f"next in {attempt.delay:.2f}s"
        )

    def exception(self, exc: BaseException) -> None:
        if self.enabled:
            text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            self._printer.debug(self.redact(text), multiline=True)


def parse_header(value: str) -> tuple[str, str]:
    """``Name: value`` (or ``Name:value``) from ``--header``."""
    name, sep, val = value.partition(":")
    if not sep or not name.strip():
        raise UsageError("--header wants 'Name: value'")
    return _checked("--header", name.strip(), val.strip())


def parse_cookie(value: str) -> tuple[str, str]:
    """``name=value`` from ``--cookie``."""
    name, sep, val = value.partition("=")
    if not sep or not name.strip():
        raise UsageError("--cookie wants 'name=value'")
    return _checked("--cookie", name.strip(), val.strip())


def _checked(flag: str, name: str, value: str) -> tuple[str, str]:
    if (fault := header_fault(name, value)) is not None:
        raise UsageError(f"{flag} {name!r}: {fault}")
    return name, value


def read_input(path: Path, what: str, limit: int) -> bytes:
    """A local file the user named, at most ``limit`` bytes; else a ``UsageError`` naming
    the option and the file (a directory, a FIFO, a device, too large, unreadable)."""
    try:
        return read_file(path, limit)
    except OSError as exc:
        raise UsageError(f"{what}: cannot read {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise UsageError(f"{what}: {path} {exc}") from exc


class Context:
    """One run of the command line: its arguments, printer, registry, clients and debug log."""

    def __init__(self, args: argparse.Namespace, printer: Printer) -> None:
        self.args = args
        self.p = printer
        self.debug = Debug(args.debug, printer)
        self.stack = AsyncExitStack()
        self._registry: AgentRegistry | None = None
        #: The hint for a failure at the origin of a name tried as a host, close to names of
        #: the registry.
        self._guessed: dict[Origin, str] = {}
        self.headers = dict(parse_header(h) for h in args.header or [])
        self.cookies = dict(parse_cookie(c) for c in args.cookie or [])
        for flag, value in (("--bearer", args.bearer), ("--api-key", args.api_key)):
            if value and header_fault("Authorization", value) is not None:
                raise UsageError(f"{flag}: the value holds a line break or NUL")
        if args.insecure:
            printer.warn("TLS certificates are not verified (--insecure): for development only")
        for secret in (args.bearer, args.api_key, *self.headers.values(), *self.cookies.values()):
            if secret:
                self.debug.secrets.add(secret)
        self.debug.secret_headers.update(name.lower() for name in self.headers)

    # -- output of failures ---------------------------------------------------------------

    @property
    def credentials(self) -> bool:
        """True when the user gave credentials of any kind (flags or the registry)."""
        a = self.args
        return bool(a.bearer or a.api_key or self.headers or self.cookies or self.debug.secrets)

    def failure(self, exc: BaseException) -> Failure:
        failure = classify(exc, credentials=self.credentials)
        agent = exc.agent if isinstance(exc, A2AClientError) else None
        if agent and failure.exit_code in (UNREACHABLE, TIMEOUT):
            origin = _origin(agent)
            if origin in self._guessed:  # a name tried as a host: the registry's near names
                failure = dataclasses.replace(failure, hint=self._guessed[origin])
        return failure

    def report(self, failure: Failure, *, stream: bool = False) -> int:
        """Print a failure (stderr; also stdout under -o json) and return its exit status."""
        self.p.error(self.debug.redact(failure.message), failure.hint)
        if self.p.json_mode:
            envelope = failure.envelope()
            envelope["error"]["message"] = self.debug.redact(failure.message)
            (self.p.jsonl if stream else self.p.json)(envelope)
        return failure.exit_code

    # -- the registry ---------------------------------------------------------------------

    @property
    def registry(self) -> AgentRegistry:
        if self._registry is None:
            self._registry = AgentRegistry.load(self.args.config)
            where = self._registry.path or "none found"
            self.debug(f"registry: {where}")
        return self._registry

    # -- agents ---------------------------------------------------------------------------

    def targets(self, refs: list[str] | None = None, *, allow_none: bool = False) -> list[Target]:
        """The agents named by ``refs`` (default ``-a``), groups expanded, duplicates dropped."""
        refs = list(self.args.agent or []) if refs is None else refs
        if not refs and self.args.endpoint:
            return [self._target(self.args.endpoint, {"endpoint": self.args.endpoint})]
        if not refs:
            if allow_none:
                return []
            raise UsageError("which agent? give -a/--agent URL|NAME (or set $A2A_ANYIO_AGENT)")
        out: dict[str, Target] = {}
        for ref in refs:
            for target in self._resolve(ref):
                out.setdefault(target.name, target)
        return list(out.values())

    def targets_each(self, refs: list[str]) -> list[Target | Unresolved]:
        """Like ``targets``, but a registry agent whose entry cannot be used (a variable it
        reads is not set) is returned as an ``Unresolved`` instead of stopping the others."""
        out: dict[str, Target | Unresolved] = {}
        for ref in refs:
            if is_url(ref) or _card_path(ref) is not None or ref not in self.registry:
                for target in self._resolve(ref):
                    out.setdefault(target.name, target)
                continue
            for entry in self.registry.resolve(ref):
                if entry.name in out:
                    continue
                try:
                    out[entry.name] = self._resolve(entry.name)[0]
                except AgentRegistryError as exc:
                    where = entry.url or entry.endpoint or "-"
                    out[entry.name] = Unresolved(entry.name, where, self.failure(exc))
        return list(out.values())

    def target(self, ref: str | None = None) -> Target:
        """The one agent of a single-agent command: ``ref`` if given, else ``-a``'s."""
        targets = self.targets([ref] if ref else None)
        if len(targets) != 1:
            names = ", ".join(t.name for t in targets)
            raise UsageError(
                f"this command talks to one agent, and -a names {len(targets)}: {names}"
            )
        return targets[0]

    def _resolve(self, ref: str) -> list[Target]:
        path = _card_path(ref)
        if path is not None:
            return [self._card_file(ref, path)]
        if is_url(ref):
            if (problem := url_problem(ref)) is not None:
                raise UsageError(f"-a: {ref!r} {problem}; {AGENT_FORMS}")
            return [self._target(ref, {"url": ref})]
        registry = self.registry
        if ref in registry:
            out = []
            for entry in registry.resolve(ref):
                self.debug.secrets.update(entry.secrets())
                if self.args.bearer:  # the flag's token replaces the entry's
                    entry = dataclasses.replace(entry, token_env=None)
                out.append(self._target(entry.name, entry.client_options(), ref=ref, entry=entry))
            return out
        if _names_file(ref):
            raise UsageError(f"-a: no such card file: {ref!r}; {AGENT_FORMS}")
        near = difflib.get_close_matches(ref, [*registry.names(), *registry.group_names()])
        host = ref.split("/", 1)[0]
        if "." in host or ":" in host or host == "localhost":  # a bare host or origin
            scheme = "http" if ref.startswith(_LOCAL_HOSTS) else "https"
            url = f"{scheme}://{ref}"
            if near and (origin := _origin(url)) is not None:  # a typo? said if it fails
                where = registry.path or "the registry"
                self._guessed[origin] = (
                    f"{ref!r} is not in {where}, so it was tried as a host; {did_you_mean(near)}"
                )
            return [self._target(ref, {"url": url})]
        where = str(registry.path) if registry.path else "the registry (no registry file found)"
        raise CardNotFound(
            f"{ref!r} is not a URL, a card file, or an agent or group of {where}", near=near
        )

    def _card_file(self, ref: str, path: Path) -> Target:
        data = _card_json(path)
        card = parse_card(data)
        options: ClientArguments = {"card": data, "url": card.interfaces[0].url}
        return self._target(ref, options, card=data)

    async def raw_card(self) -> tuple[Any, str | None, int | None]:
        """The one agent's card as its JSON, not read into a card (which would refuse a card
        too broken to use), the URL it came from and its size in bytes (None, None for a card
        file)."""
        refs = self.args.agent or []
        if len(refs) == 1 and (path := _card_path(refs[0])) is not None:
            return _card_json(path), None, None
        client = await self.client(self.target())
        if client.url is None:
            raise UsageError("--endpoint names a service without a card: give -a URL")
        failures = []
        for url in card_urls(client.url):  # where the client looks for it, in that order
            try:
                content = (await client._fetch(url)).content
                return loads(content), url, len(content)
            except A2AHTTPError as exc:
                if exc.status_code != 404:
                    raise
                failures.append(f"{url}: HTTP 404")
            except ValueError as exc:
                failures.append(f"{url}: not JSON ({exc})")
        found = "; ".join(failures)
        raise A2ADiscoveryError(f"no agent card found ({found})", not_found=True, agent=client.url)

    def _target(
        self,
        name: str,
        options: ClientArguments,
        *,
        ref: str | None = None,
        card: dict[str, Any] | None = None,
        entry: AgentEntry | None = None,
    ) -> Target:
        a = self.args
        opts = options.copy()
        if a.bearer:
            bearer = a.bearer if a.bearer.lower().startswith("bearer ") else f"Bearer {a.bearer}"
            opts["auth"] = bearer
        headers = dict(opts.get("headers") or {})
        if a.api_key:
            headers["X-API-Key"] = a.api_key
        headers.update(self.headers)
        if headers:
            opts["headers"] = headers
        cookies = {**(opts.get("cookies") or {}), **self.cookies}
        if cookies:
            opts["cookies"] = cookies
        if a.insecure:
            opts["verify"] = False
        if a.network_policy == "strict":
            from a2a_anyio._network import NetworkPolicy

            opts["network_policy"] = NetworkPolicy()
        if a.timeout is not None:
            opts["timeout"] = a.timeout or None
        if a.protocol:
            opts["protocol"] = a.protocol
        if a.endpoint:
            opts["endpoint"] = a.endpoint
        if a.debug:
            policy = opts.get("retry") or RetryPolicy()
            opts["retry"] = dataclasses.replace(policy, on_retry=self.debug.on_retry)
        if a.binding:  # preferred first, the others as the fallbacks
            opts["bindings"] = preferring(a.binding)
        if "auth" not in opts:
            self._signed_in(opts, name, str(opts.get("url") or opts.get("endpoint") or ref or name))
        self.debug.add_credentials(opts)
        return Target(name, ref or name, opts, card, entry)

    def _signed_in(self, opts: ClientArguments, name: str, url: str) -> None:
        """The sign-in kept for ``url`` (``auth login``) as ``opts``' auth, if there is one."""
        from a2a_anyio._token_file import TokenFile

        def hide(tokens: TokenSet) -> None:
            self.debug.secrets.update(t for t in (tokens.access_token, tokens.refresh_token) if t)

        try:
            auth = TokenFile().auth(url, f"run 'a2a-anyio auth login {name}'", hide)
        except ValueError as exc:
            raise UsageError(str(exc)) from exc
        if auth is not None:
            opts["auth"] = auth

    async def client(self, target: Target) -> A2AClient:
        """An open client for ``target``, closed when the command ends."""
        opts = target.options.copy()
        try:  # a bad option (a URL, a CA bundle) is the user's: nothing was sent yet
            if self.args.debug:
                shown = self.debug.options(opts)
                if isinstance(policy := opts.get("retry"), RetryPolicy):
                    shown["retry"] = f"{policy.attempts} attempts"
                self.debug(f"agent {target.name}: {shown}")
                http = make_client(
                    verify=opts.get("verify", True), network_policy=opts.get("network_policy")
                )
                http.event_hooks = {
                    "request": [self.debug.on_request],
                    "response": [self.debug.on_response],
                }
                self.stack.push_async_callback(http.aclose)
                opts["http_client"] = http
            client = A2AClient(**opts)
        except (ValueError, OSError) as exc:
            entry = target.entry
            if entry is not None:
                raise AgentRegistryError(str(exc), path=entry.source, entry=entry.where) from exc
            flag = "--endpoint" if target.ref == self.args.endpoint else "-a"
            raise UsageError(f"{flag}: {exc}") from exc
        self.stack.push_async_callback(client.close)
        return client

    async def card(self, client: A2AClient, target: Target) -> AgentCard:
        """The target's card: the file's, or fetched."""
        if target.card is not None:
            return parse_card(target.card)
        return await client.get_card()

    def resume_hint(self, target: Target) -> str:
        """The command that answers an interrupted task (``{task_id}`` left to fill)."""
        import shlex

        return f"a2a-anyio -a {shlex.quote(target.ref)} send --task-id {{task_id}} 'REPLY'"


@dataclass(frozen=True, slots=True)
class Unresolved:
    """A registry agent that could not be made into a ``Target``, and why."""

    name: str
    url: str
    failure: Failure


def _origin(url: str) -> Origin | None:
    try:
        return origin_of(url)
    except ValueError:  # a port that is no number: the client refuses the URL itself
        return None


def _card_json(path: Path) -> Any:
    """The JSON of a card file (``-a card.json``)."""
    raw = read_input(path, "-a", MAX_CARD_BYTES)
    try:
        return loads(raw)
    except ValueError as exc:
        raise UsageError(f"-a: the card file {path} is not JSON: {exc}") from exc


def _names_file(ref: str) -> bool:
    """True for a reference written as a file's path: ``.json`` at its end, or a start that no
    host or registry name has (``/``, ``./``, ``../``, ``~``)."""
    return ref.lower().endswith(".json") or ref.startswith(("/", "./", "../", "~"))


def _card_path(ref: str) -> Path | None:
    if ref.startswith("file://"):
        return Path(unquote(urlsplit(ref).path))
    path = Path(ref).expanduser()
    if path.suffix.lower() == ".json" and path.exists():
        return path
    return None
