"""What a fake agent's user declares: its dialect and bindings, options, skills, extension
methods, faults, and the card that describes them. No state of its own beyond that."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import a2a_anyio.testing._errors as codes
from a2a_anyio._dialects.card import encode_card
from a2a_anyio._model import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    JSONDict,
    Message,
    SecurityScheme,
)
from a2a_anyio.testing._errors import AgentError
from a2a_anyio.testing._skills import Emit, Skill, SkillContext, artifact, status
from a2a_anyio.testing._types import Fault, Method
from a2a_anyio.testing._wire import server_codecs

Dialect = Literal["1.0", "0.3", "0.2", "legacy"]
Binding = Literal["jsonrpc", "rest", "both"]
#: Says whether an ``Authorization`` value (None: none was sent) lets a request in.
AuthCheck = Callable[[str | None], Awaitable[bool]]


@dataclass(slots=True)
class SkillInfo:
    """A registered skill and how the card describes it."""

    id: str
    fn: Skill
    name: str
    description: str
    tags: list[str]
    examples: list[str]


async def _echo(ctx: SkillContext) -> AsyncIterator[Emit]:
    """The default skill: works, returns the text (and data) it got as an artifact."""
    yield status("working")
    yield artifact(text=ctx.text or None, data=ctx.data, name="echo")


class AgentConfig:
    """A fake agent's configuration (``FakeAgent`` documents the options)."""

    def __init__(
        self,
        *,
        dialect: Dialect = "1.0",
        binding: Binding = "jsonrpc",
        name: str = "Fake Agent",
        description: str = "A scriptable A2A agent for tests",
        version: str = "1.0.0",
        skills: Mapping[str, Skill] | None = None,
        default_skill: str | None = None,
        streaming: bool = True,
        push_notifications: bool = True,
        extended_card: Mapping[str, Any] | None = None,
        card: Mapping[str, Any] | None = None,
        auth: str | AuthCheck | None = None,
        delay: float = 0.0,
        event_delay: float = 0.0,
        cancelable: bool = True,
        answers_at_once: bool = False,
        strict: bool = True,
        rpc_path: str = "/a2a",
        rest_path: str = "/rest",
        base_url: str = "http://agent.test",
    ) -> None:
        if dialect not in ("1.0", "0.3", "0.2", "legacy"):
            raise ValueError(f'dialect must be "1.0", "0.3", "0.2" or "legacy", not {dialect!r}')
        if binding not in ("jsonrpc", "rest", "both"):
            raise ValueError(f'binding must be "jsonrpc", "rest" or "both", not {binding!r}')
        if dialect == "legacy" and binding != "jsonrpc":
            raise ValueError("the legacy tasks/send dialect has only the JSON-RPC binding")
        self.dialect: Dialect = dialect
        self.binding: Binding = binding
        self.name = name
        self.description = description
        self.version = version
        self.default_skill = default_skill
        self.streaming = streaming
        self.push_notifications = push_notifications
        self.extended_card = dict(extended_card) if extended_card is not None else None
        self.card_overrides = dict(card or {})
        self.auth = auth
        self.delay = delay
        self.event_delay = event_delay
        self.cancelable = cancelable
        self.answers_at_once = answers_at_once
        self.strict = strict
        self.rpc_path = "/" + rpc_path.strip("/")
        self.rest_path = ("/" + rest_path.strip("/")).rstrip("/")
        self.base_url = base_url.rstrip("/")
        self.rpc_codec, self.rest_codec = server_codecs(dialect, binding)
        self.faults: list[Fault] = []
        self.skills: dict[str, SkillInfo] = {}
        #: extension methods by name (JSON-RPC), see ``add_method``
        self.methods: dict[str, Method] = {}
        for skill_id, fn in (skills or {}).items():
            self.add_skill(skill_id, fn)

    # -- skills and methods ---------------------------------------------------------

    def add_skill(
        self,
        skill_id: str,
        fn: Skill,
        *,
        name: str | None = None,
        description: str | None = None,
        tags: Iterable[str] = (),
        examples: Iterable[str] = (),
    ) -> None:
        """Register ``fn`` (an async generator function of a ``SkillContext``) as ``skill_id``.

        Raises:
            TypeError: ``fn`` is not an async generator function.
        """
        if not callable(fn):
            raise TypeError("a skill is an async generator function")
        self.skills[skill_id] = SkillInfo(
            skill_id,
            fn,
            name or skill_id,
            description or (inspect.getdoc(fn) or skill_id).split("\n", 1)[0],
            list(tags),
            list(examples),
        )

    def skill(
        self,
        skill_id: str,
        *,
        name: str | None = None,
        description: str | None = None,
        tags: Iterable[str] = (),
        examples: Iterable[str] = (),
    ) -> Callable[[Skill], Skill]:
        """Decorator: ``@agent.skill("echo")`` registers the async generator function below.

        Raises:
            TypeError: the decorated function is not an async generator function.
        """

        def register(fn: Skill) -> Skill:
            self.add_skill(
                skill_id, fn, name=name, description=description, tags=tags, examples=examples
            )
            return fn

        return register

    def pick_skill(self, message: Message, metadata: Mapping[str, Any]) -> tuple[str, Skill]:
        """The skill a message asks for (``metadata.skillId``), else the default one, else the
        first registered, else the echo.

        Raises:
            AgentError: -32602 (an unknown skill) or -32603 (no such default skill).
        """
        wanted = (message.metadata or {}).get("skillId") or metadata.get("skillId")
        if wanted is not None:
            info = self.skills.get(str(wanted))
            if info is None:
                raise AgentError(codes.INVALID_PARAMS, f"unknown skill {wanted!r}")
            return info.id, info.fn
        if self.default_skill is not None:
            info = self.skills.get(self.default_skill)
            if info is None:
                raise AgentError(codes.INTERNAL_ERROR, f"no skill {self.default_skill!r}")
            return info.id, info.fn
        if self.skills:
            info = next(iter(self.skills.values()))
            return info.id, info.fn
        return "echo", _echo

    def add_method(self, name: str, fn: Method) -> None:
        """Serve ``fn`` as the JSON-RPC method ``name`` (an extension's): called with the
        request's params, its result is the answer; an async generator function's values
        are streamed instead, one event each (an ``AgentError`` it raises, as the last
        event). Faults name these requests ``"call"``.

        Raises:
            TypeError: ``fn`` is not callable.
            ValueError: ``name`` is a method of the agent's dialect.
        """
        if not callable(fn):
            raise TypeError("an extension method is a function of its params")
        if self.rpc_codec.op_for(name) is not None:
            raise ValueError(f"{name} is an A2A method of v{self.dialect}")
        self.methods[name] = fn

    def method(self, name: str) -> Callable[[Method], Method]:
        """Decorator: ``@agent.method("ext/count")`` serves the function below (see
        ``add_method``).

        Raises:
            TypeError: the decorated object is not callable.
            ValueError: ``name`` is a method of the agent's dialect.
        """

        def register(fn: Method) -> Method:
            self.add_method(name, fn)
            return fn

        return register

    # -- faults ---------------------------------------------------------------------

    def fault(
        self,
        op: str | None = None,
        *,
        times: int | None = None,
        delay: float = 0.0,
        event_delay: float = 0.0,
        cut_after: int | None = None,
        cut: Literal["close", "reset"] = "close",
        error: int | None = None,
        message: str | None = None,
        http_status: int | None = None,
        retry_after: float | str | None = None,
    ) -> Fault:
        """Add a fault (see ``Fault``) and return it.

        Raises:
            ValueError: an unknown operation.
        """
        f = Fault(
            op, times, delay, event_delay, cut_after, cut, error, message, http_status, retry_after
        )
        self.faults.append(f)
        return f

    def rate_limit(
        self, times: int, *, retry_after: float | str = 1, op: str | None = None
    ) -> Fault:
        """Answer the next ``times`` (matching) requests with 429 and ``Retry-After``."""
        return self.fault(op, times=times, http_status=429, retry_after=retry_after)

    def clear_faults(self) -> None:
        """Remove every fault."""
        self.faults.clear()

    async def authorized(self, value: str | None) -> bool:
        """Whether a request's ``Authorization`` value (None: none) passes ``auth``.

        Raises:
            Exception: whatever the ``auth`` function raises.
        """
        if self.auth is None or isinstance(self.auth, str):
            return self.auth is None or value == self.auth
        return await self.auth(value)

    def take_faults(self, op: str | None) -> list[Fault]:
        """The faults that apply to one request of ``op``, counted as applied."""
        out = []
        for f in self.faults:
            if (f.op is None or f.op == op) and not f.exhausted:
                f.hits += 1
                out.append(f)
        return out

    # -- URLs and card --------------------------------------------------------------

    @property
    def url(self) -> str:
        """The base URL (``base_url``)."""
        return self.base_url

    @property
    def rpc_url(self) -> str:
        """The JSON-RPC endpoint."""
        return self.url + self.rpc_path

    @property
    def rest_url(self) -> str:
        """The HTTP+JSON base (v0.2/v0.3 paths add ``/v1``)."""
        return self.url + self.rest_path

    @property
    def card_url(self) -> str:
        """Where its card is: ``agent-card.json`` (v0.3, v1.0) or ``agent.json``."""
        name = "agent-card.json" if self.dialect in ("1.0", "0.3") else "agent.json"
        return f"{self.url}/.well-known/{name}"

    def require_push(self) -> None:
        """Check that push notifications are on.

        Raises:
            AgentError: -32003 (push notifications off).
        """
        if not self.push_notifications:
            raise AgentError(codes.PUSH_NOT_SUPPORTED, "Push Notification is not supported")

    def _skills(self) -> list[AgentSkill]:
        infos = list(self.skills.values()) or [
            SkillInfo("echo", _echo, "Echo", "Echoes the text it receives", [], [])
        ]
        return [AgentSkill(i.id, i.name, i.description, i.tags, i.examples) for i in infos]

    def card(self, base_url: str | None = None, *, extended: bool = False) -> JSONDict:
        """The agent card this agent serves, in its dialect's shape, for ``base_url``."""
        base = (base_url or self.url).rstrip("/")
        legacy = self.dialect == "legacy"
        version = {"1.0": "1.0", "0.3": "0.3.0", "0.2": "0.2.5"}.get(self.dialect)
        interfaces = [
            AgentInterface(base + path, binding, version)
            for path, binding, served in (
                (self.rpc_path, "JSONRPC", self.binding in ("jsonrpc", "both")),
                (self.rest_path, "HTTP+JSON", self.binding in ("rest", "both")),
            )
            if served
        ]
        modes = ["text"] if legacy else ["text/plain", "application/json"]
        schemes: dict[str, SecurityScheme] = {}
        if self.auth and not legacy:  # legacy cards only name their schemes
            bearer = "Bearer" if self.dialect == "1.0" else "bearer"
            schemes["bearer"] = SecurityScheme("http", scheme=bearer)
        model = AgentCard(
            name=self.name,
            description=self.description,
            version=self.version,
            interfaces=interfaces,
            capabilities=AgentCapabilities(
                streaming=self.streaming,
                push_notifications=self.push_notifications,
                extended_agent_card=self.extended_card is not None,
            ),
            skills=self._skills(),
            security_schemes=schemes,
            security_requirements=[{"Bearer" if legacy else "bearer": []}] if self.auth else [],
            default_input_modes=modes,
            default_output_modes=modes,
        )
        card = encode_card(model, "1.0" if self.dialect == "1.0" else "legacy" if legacy else "0.3")
        card.update(self.card_overrides)
        if extended and self.extended_card is not None:
            card.update(self.extended_card)
        return card
