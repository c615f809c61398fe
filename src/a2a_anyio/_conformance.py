"""Qualifying an agent: ``check_agent`` runs every operation its card announces, over every
interface the card offers, and checks each answer against the version that interface claims.

One check at a time, each within its own time limit and all within an overall one. Every task
a check starts is cancelled on the agent before the report is made (a stream a time limit cuts
cancels its own, ``cancel_on_exit``); a task that could not be is listed in the report.
"""

from __future__ import annotations

import math
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import anyio

from a2a_anyio._answer_shapes import answer_problems, shape_of
from a2a_anyio._card_check import card_version, check_card
from a2a_anyio._client import A2AClient
from a2a_anyio._dialects.card import candidates, major_minor
from a2a_anyio._errors import (
    A2AAuthError,
    A2AClientError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
    install_extra,
)
from a2a_anyio._model import (
    AgentCard,
    AgentInterface,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a_anyio._retry import NO_RETRY
from a2a_anyio._wires import grpc_missing

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from a2a_anyio._options import ClientOptions

Outcome = Literal["pass", "fail", "skip"]

#: The checks of an interface, in the order they run.
CHECKS = (
    "send",
    "stream",
    "get",
    "list",
    "cancel",
    "subscribe",
    "push-create",
    "push-get",
    "push-list",
    "push-delete",
    "extended-card",
)
#: Where a push config created by a check points: a name that never resolves (RFC 2606).
HOOK_URL = "https://a2a-anyio-conformance.invalid/hook"
#: The id of that config (the tasks/send dialect has none).
CONFIG_ID = "a2a-anyio-conformance"
#: How long the subscribe check waits for a first event before it cancels the task: a v0.3
#: agent sends none until the task changes (its stream must be open on the agent by then).
SUBSCRIBE_SETTLE = 0.3
#: How long the sweep gives a task the agent answered a cancel of without ending it.
CANCEL_SETTLE = 0.3
_BINDING_NAMES = {"JSONRPC": "jsonrpc", "HTTP+JSON": "rest", "GRPC": "grpc"}
_BINDING_TITLES = {"JSONRPC": "JSON-RPC", "HTTP+JSON": "HTTP+JSON", "GRPC": "gRPC"}
_CARD_NAMES = {"legacy": "tasks/send", "1.0": "A2A 1.0", "0.3": "A2A 0.3", "0.2": "A2A 0.2"}
_MOST_SHOWN = 3  # problems shown in a check's detail


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One check: its ``name`` (``"card"`` or one of ``CHECKS``), the ``interface`` it ran
    over (``"JSON-RPC 1.0"``; None for the card), its ``outcome`` (``"pass"``, ``"fail"``,
    ``"skip"``), ``detail`` (what was seen, what is wrong, or why it was skipped) and how
    long it took (``seconds``)."""

    name: str
    interface: str | None
    outcome: Outcome
    detail: str
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class LeftTask:
    """A task a check started that could not be cancelled: its id, the interface, and why."""

    task_id: str
    interface: str
    reason: str


@dataclass(frozen=True, slots=True)
class ConformanceReport:
    """What ``check_agent`` found: the ``agent``'s URL, where its card came from
    (``card_url``), the version the card claims (``"1.0"``, ``"0.3"``, ``"0.2"``,
    ``"legacy"``), every check in order, and the tasks left running on the agent."""

    agent: str
    card_url: str | None
    version: str
    checks: list[CheckResult]
    left_running: list[LeftTask] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when no check failed."""
        return all(c.outcome != "fail" for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON (the schema of ``a2a-anyio conformance -o json``)."""
        counts = {o: sum(c.outcome == o for c in self.checks) for o in ("pass", "fail", "skip")}
        return {
            "agent": self.agent,
            "cardUrl": self.card_url,
            "version": self.version,
            "passed": self.passed,
            "counts": counts,
            "checks": [
                {
                    "check": c.name,
                    "interface": c.interface,
                    "outcome": c.outcome,
                    "detail": c.detail,
                    "seconds": round(c.seconds, 3),
                }
                for c in self.checks
            ],
            "leftRunning": [
                {"taskId": t.task_id, "interface": t.interface, "reason": t.reason}
                for t in self.left_running
            ],
        }


class _Failed(Exception):
    """A check's failure, with what is wrong."""


class _Skipped(Exception):
    """A check that cannot run, with why."""


async def check_agent(
    url: str,
    *,
    text: str = "hello",
    long_text: str | None = None,
    check_timeout: float = 10.0,
    total_timeout: float = 120.0,
    **options: Unpack[ClientOptions],
) -> ConformanceReport:
    """Qualify the agent at ``url``: its card (``check_card``), then over every interface the
    card offers, each operation it announces (``CHECKS``), each answer checked against the
    shape of the interface's version (required members, JSON types, enum spellings,
    discriminators); what the card does not announce is skipped, with why.

    ``text`` is the message of the send, stream, get and list checks; ``long_text`` (default:
    ``text``) one that starts a task that runs until it is cancelled, for the cancel and
    subscribe checks (a task that ends at once is skipped there). Each check is given
    ``check_timeout`` seconds, all of them ``total_timeout`` (checks not begun by then are
    skipped); cancelling the tasks they left takes at most ``check_timeout`` more (and a
    stream a limit cuts cancels its task within the client's ``cancel_grace``). ``options``
    are ``A2AClient``'s (credentials, ``verify``...); each interface gets a client of its own,
    told its binding and version, without retries or stream resumes.

    Raises:
        A2ADiscoveryError: no card at ``url``, or one the client cannot read.
        A2AConnectionError: the agent cannot be reached (``A2ATimeoutError``: not in time).
        A2AAuthError: the card is refused without credentials.
        ValueError: a time limit that is not a positive number, or a bad option.
    """
    for name, value in (("check_timeout", check_timeout), ("total_timeout", total_timeout)):
        if not isinstance(value, int | float) or not value > 0 or math.isnan(value):
            raise ValueError(f"{name} must be a positive number of seconds, not {value!r}")
    settings: dict[str, Any] = {**options, "timeout": check_timeout}
    async with A2AClient(url, **settings) as client:  # the card within check_timeout
        card = await client.get_card()
        card_url = client._discovery.fetcher.card_url
    run = _Run(url, card, card_url, settings, text, long_text or text, check_timeout)
    run.deadline = anyio.current_time() + total_timeout
    run.total = total_timeout
    run.card_check()
    for iface in _interfaces(card, card_url):
        await run.interface(*iface)
    return ConformanceReport(url, card_url, run.version, run.checks, run.left)


def _interfaces(card: AgentCard, card_url: str | None) -> list[tuple[AgentInterface, str | None]]:
    """The card's interfaces, one per binding and version, each with the version the client
    is told (None: not one it speaks)."""
    claimed = card_version(card.raw, card_url)
    out: dict[tuple[str, str | None], AgentInterface] = {}
    for iface in card.interfaces:
        version: str | None = claimed
        if claimed == "1.0":
            mm = major_minor(iface.protocol_version) or "0.3"
            version = "1.0" if mm.startswith("1.") else mm if mm in ("0.3", "0.2") else None
        out.setdefault((iface.binding, version), iface)
    return [(iface, version) for (_, version), iface in out.items()]


class _Run:
    """The checks of one agent, and the tasks they started."""

    def __init__(
        self,
        url: str,
        card: AgentCard,
        card_url: str | None,
        options: dict[str, Any],
        text: str,
        long_text: str,
        check_timeout: float,
    ) -> None:
        self.url = url
        self.card = card
        self.card_url = card_url
        self.version = card_version(card.raw, card_url)
        self.options = options
        self.text = text
        self.long_text = long_text
        self.check_timeout = check_timeout
        self.deadline = math.inf
        self.total = math.inf
        self.checks: list[CheckResult] = []
        #: What is left of the time all sweeps may take together: one check's.
        self.sweep_left = check_timeout
        self.left: list[LeftTask] = []
        #: The tasks checks started and their clients, by id, with their interface.
        self.started: dict[str, tuple[A2AClient, str, TaskState | None]] = {}
        self.credentials = bool(
            options.get("auth") or options.get("headers") or options.get("cookies")
        )

    # -- the card -------------------------------------------------------------------------

    def card_check(self) -> None:
        problems = [
            p for p in check_card(self.card.raw, card_url=self.card_url) if p.severity == "error"
        ]
        if problems:
            self.record("card", None, "fail", _listed([str(p) for p in problems]))
        else:
            self.record(
                "card", None, "pass", f"a valid {_CARD_NAMES.get(self.version, self.version)} card"
            )

    def record(
        self, name: str, interface: str | None, outcome: Outcome, detail: str, seconds: float = 0.0
    ) -> None:
        self.checks.append(CheckResult(name, interface, outcome, detail, seconds))

    # -- an interface ---------------------------------------------------------------------

    async def interface(self, iface: AgentInterface, version: str | None) -> None:
        binding = _BINDING_TITLES.get(iface.binding, iface.binding)
        label = f"{binding} {version or iface.protocol_version or '?'}"
        name = _BINDING_NAMES.get(iface.binding)
        why = None
        if version is None or name is None:
            why = f"the client does not speak {iface.protocol_version if version is None else iface.binding}"
        elif name == "grpc" and (missing := grpc_missing()) is not None:
            why = f"gRPC needs the grpc extra ({missing} is missing: {install_extra('grpc')})"
        if why is not None or version is None or name is None:
            for check in CHECKS:
                self.record(check, label, "skip", why or "")
            return
        try:
            candidates(self.card, version, (name,), self.card_url)
            protocol = version
        except A2AClientError:  # the client reads the card otherwise (python-a2a's): let it
            protocol = "auto"
        options = {**self.options, "protocol": protocol, "bindings": (name,), "card": self.card.raw}
        options.update(retry=NO_RETRY, resume=False)
        async with A2AClient(self.url, **options) as client:
            checker = _Interface(self, client, label, version, shape_of(version, iface.binding))
            for check in CHECKS:
                await self.run(check, label, checker)
            await self.sweep()

    async def run(self, check: str, label: str, checker: _Interface) -> None:
        left = self.deadline - anyio.current_time()
        if left <= 0:
            self.record(
                check, label, "skip", f"not run: the overall limit of {self.total:g} s was reached"
            )
            return
        limit = min(self.check_timeout, left)
        started = anyio.current_time()
        outcome: Outcome = "fail"
        try:
            with anyio.move_on_after(limit) as scope:
                detail = await getattr(checker, check.replace("-", "_"))()
                outcome = "pass"
            if scope.cancelled_caught:
                outcome = "fail"
                if limit < self.check_timeout:
                    detail = f"not done when the overall limit of {self.total:g} s ran out"
                else:
                    detail = f"no answer within the limit of {limit:g} s"
        except _Skipped as exc:
            outcome, detail = "skip", str(exc)
        except _Failed as exc:
            detail = str(exc)
        except Exception as exc:  # whatever the agent does is reported, never raised
            detail = _error(exc)
        self.record(check, label, outcome, detail, anyio.current_time() - started)

    # -- the tasks left -------------------------------------------------------------------

    def started_task(self, client: A2AClient, label: str, task: Task) -> None:
        self.started[task.id] = (client, label, task.status.state)

    def saw(self, task_id: str, state: TaskState) -> None:
        if task_id in self.started:
            client, label, _ = self.started[task_id]
            self.started[task_id] = (client, label, state)

    async def sweep(self) -> None:
        """Cancel every task a check started that is not known to be over; list those that
        could not be."""
        running = [
            (i, c, lb) for i, (c, lb, s) in self.started.items() if s is None or not s.is_terminal
        ]
        self.started.clear()
        if not running:
            return
        handled: set[str] = set()
        began = anyio.current_time()
        with anyio.move_on_after(self.sweep_left, shield=True) as scope:
            for task_id, client, label in running:
                reason = await _cancelled(client, task_id)
                handled.add(task_id)
                if reason is not None:
                    self.left.append(LeftTask(task_id, label, reason))
        self.sweep_left = max(0.0, self.sweep_left - (anyio.current_time() - began))
        if scope.cancelled_caught:
            for task_id, _, label in running:
                if task_id not in handled:
                    why = f"not cancelled within {self.check_timeout:g} s"
                    self.left.append(LeftTask(task_id, label, why))


async def _cancelled(client: A2AClient, task_id: str) -> str | None:
    """Cancel a task unless it is over (a task waiting for input is not): None when it is
    (or is gone), else why not."""
    try:
        task = await client.get_task(task_id)
        if task.status.state.is_terminal:
            return None
        task = await client.cancel_task(task_id)
        if not task.status.state.is_terminal:  # a cancel may take a moment to land
            await anyio.sleep(CANCEL_SETTLE)
            task = await client.get_task(task_id)
    except TaskNotFoundError:
        return None
    except TaskNotCancelableError as exc:
        return f"the agent refused to cancel it: {_error(exc)}"
    except Exception as exc:
        return _error(exc)
    if task.status.state.is_terminal:
        return None
    return f"asked to cancel it, it is {task.status.state.value}"


class _Interface:
    """The checks of one interface (binding and version), in ``CHECKS`` order: each returns
    what it saw, or raises ``_Failed`` or ``_Skipped``."""

    def __init__(self, run: _Run, client: A2AClient, label: str, version: str, shape: str) -> None:
        self.run = run
        self.client = client
        self.label = label
        self.version = version
        self.shape = shape
        self.caps = run.card.capabilities
        self.task: Task | None = None  # the send check's
        self.no_task = "no task to work on: the send check got none"
        self.config_id: str | None = None

    def check(self, obj: Any, what: str | None = None) -> None:
        """``_Failed`` when the answer ``obj`` does not have its version's shape."""
        what = what or _what(obj)
        raw = getattr(obj, "raw", None)
        if raw is None:
            return  # built by the client (a stream's folded task): nothing the agent sent
        problems = answer_problems(raw, what, self.shape)
        if problems:
            raise _Failed(f"{what}: {_listed(problems)}")

    def needs(self, flag: bool, what: str) -> None:
        if not flag:
            raise _Skipped(f"the card announces no {what}")

    def keep(self, task: Task) -> Task:
        self.run.started_task(self.client, self.label, task)
        return task

    # -- the checks ----------------------------------------------------------------------

    async def send(self) -> str:
        result = await self.client.send_message(self.run.text, timeout=None)
        if isinstance(result, Task):  # the next checks work on it, whatever its shape
            self.task = self.keep(result)
        self.check(result)
        if isinstance(result, Message):
            return "the agent answered with a message"
        return f"task {result.status.state.value}"

    async def stream(self) -> str:
        self.needs(self.caps.streaming, "streaming")
        count, first = 0, None
        stream = self.client.stream_message(self.run.text, cancel_on_exit=True)
        async with stream:
            async for event in stream:
                count += 1
                first = first or event
                if stream.task is not None:  # known at once, to be cancelled if need be
                    self.keep(stream.task)
                self.check(event)
        if self.version == "1.0" and not isinstance(first, (Task, Message)):
            raise _Failed(f"the first event is {_what(first)}: A2A 1.0 streams begin with the task")
        final = stream.task
        if final is not None:
            self.run.saw(final.id, final.status.state)
            return f"{_count(count, 'event')}, task {final.status.state.value}"
        return _count(count, "event")

    async def get(self) -> str:
        if self.task is None:
            raise _Skipped(self.no_task)
        got = await self.client.get_task(self.task.id)
        self.check(got)
        if got.id != self.task.id:
            raise _Failed(f"asked for task {self.task.id}, got task {got.id}")
        return f"task {got.status.state.value}"

    async def list(self) -> str:
        if self.version != "1.0":
            raise _Skipped(f"{_named(self.version)} has no task listing")
        context = self.task.context_id if self.task is not None else None
        try:
            page = await self.client.list_tasks(context_id=context, limit=10)
        except UnsupportedOperationError as exc:  # no card flag says whether it lists
            raise _Skipped("the agent does not list tasks (UnsupportedOperationError)") from exc
        self.check(page, "page")
        if self.task is not None and all(t.id != self.task.id for t in page.tasks):
            listed = _count(len(page.tasks), "task")
            raise _Failed(f"the send check's task is not among the {listed} of its context")
        return _count(len(page.tasks), "task")

    async def started(self, stack: AsyncExitStack) -> Task:
        """A task of ``long_text`` that still runs; else ``_Skipped``. Started by a stream,
        kept open in ``stack``, when the agent streams: the stream names the task at once,
        where a send may wait for the task's end (a tasks/send agent's, some others')."""
        if self.version == "legacy" and not self.caps.streaming:
            raise _Skipped("a tasks/send agent that does not stream names a task only at its end")
        if self.caps.streaming:
            stream = self.client.stream_message(self.run.long_text, cancel_on_exit=True)
            await stack.enter_async_context(stream)
            result: Task | Message | None = None
            async for event in stream:
                self.check(event)
                result = event if isinstance(event, Message) else stream.task
                if result is not None:
                    break
        else:
            result = await self.client.send_message(
                self.run.long_text, blocking=False, timeout=None, cancel_on_exit=True
            )
            self.check(result)
        if not isinstance(result, Task):
            raise _Skipped("the agent answered with a message: no task")
        self.keep(result)
        if result.status.state.is_final:
            raise _Skipped(f"the task was {result.status.state.value} at once: give a longer one")
        return result

    async def cancel(self) -> str:
        async with AsyncExitStack() as stack:
            return await self.cancelled(await self.started(stack))

    async def cancelled(self, task: Task) -> str:
        try:
            canceled = await self.client.cancel_task(task.id)
        except TaskNotCancelableError:  # right, if it ended meanwhile
            now = await self.client.get_task(task.id)
            self.run.saw(task.id, now.status.state)
            if not now.status.state.is_terminal:
                raise
            state = now.status.state.value
            raise _Skipped(f"the task was {state} before the cancel: give a longer one") from None
        self.check(canceled)
        self.run.saw(task.id, canceled.status.state)
        if canceled.id != task.id:
            raise _Failed(f"cancelled task {task.id}, got task {canceled.id}")
        return f"task {canceled.status.state.value}"

    async def subscribe(self) -> str:
        self.needs(self.caps.streaming, "streaming")
        async with AsyncExitStack() as stack:
            return await self.subscribed(await self.started(stack))

    async def subscribed(self, task: Task) -> str:
        events: list[Any] = []
        heard = anyio.Event()
        failed: list[BaseException] = []
        stream = self.client.subscribe(task.id, cancel_on_exit=True)

        async def follow() -> None:
            try:
                async with stream:
                    async for event in stream:
                        events.append(event)
                        heard.set()
                        self.check(event)
            except Exception as exc:  # reported once the canceller is done too
                failed.append(exc)
            heard.set()

        async def cancel_soon() -> None:
            with anyio.move_on_after(
                SUBSCRIBE_SETTLE
            ):  # a v0.3 agent may say nothing until it changes
                await heard.wait()
            try:
                self.run.saw(task.id, (await self.client.cancel_task(task.id)).status.state)
            except Exception as exc:  # the task runs on: so would its stream
                failed.append(exc)
                tg.cancel_scope.cancel()

        async with anyio.create_task_group() as tg:
            tg.start_soon(follow)
            tg.start_soon(cancel_soon)
        if failed:
            raise failed[0]
        first = events[0] if events else None
        if self.version == "1.0" and not isinstance(first, Task):
            raise _Failed(f"the first event is {_what(first)}: A2A 1.0 begins with the task")
        final = stream.task
        state = final.status.state.value if final is not None else "unknown"
        return f"{_count(len(events), 'event')}, task {state}"

    async def push_create(self) -> str:
        self.needs(self.caps.push_notifications, "push notifications")
        if self.task is None:
            raise _Skipped(self.no_task)
        config_id = None if self.version == "legacy" else CONFIG_ID  # no ids in tasks/send
        config = await self.client.create_push_config(
            self.task.id, HOOK_URL, token="conformance", config_id=config_id
        )
        self.check(config, "push-config")
        if config.url != HOOK_URL:
            raise _Failed(f"created a config for {HOOK_URL}, got one for {config.url}")
        self.config_id = config.id
        if config_id is not None and config.id != config_id:
            raise _Failed(f"created config {config_id!r}, got config {config.id!r}")
        return "config created"

    async def push_get(self) -> str:
        self.needs(self.caps.push_notifications, "push notifications")
        if self.task is None:
            raise _Skipped(self.no_task)
        config = await self.client.get_push_config(self.task.id, self.config_id)
        self.check(config, "push-config")
        if config.url != HOOK_URL:
            raise _Failed(f"the config's URL is {config.url}, not {HOOK_URL}")
        return "config read"

    async def push_list(self) -> str:
        self.needs(self.caps.push_notifications, "push notifications")
        if self.version == "legacy":
            raise _Skipped("the tasks/send dialect has no push-config list")
        if self.task is None:
            raise _Skipped(self.no_task)
        configs = await self.client.list_push_configs(self.task.id)
        for config in configs:
            self.check(config, "push-config")
        if not any(c.url == HOOK_URL for c in configs):
            raise _Failed(f"the config created is not among the {len(configs)} listed")
        return _count(len(configs), "config")

    async def push_delete(self) -> str:
        self.needs(self.caps.push_notifications, "push notifications")
        if self.version == "legacy":
            raise _Skipped("the tasks/send dialect has no push-config delete")
        if self.task is None or self.config_id is None:
            raise _Skipped("no config to delete: push-create made none with an id")
        await self.client.delete_push_config(self.task.id, self.config_id)
        return "config deleted"

    async def extended_card(self) -> str:
        if self.version == "legacy":
            raise _Skipped("the tasks/send dialect has no extended card")
        self.needs(self.caps.extended_agent_card, "extended card")
        try:
            card = await self.client.get_extended_card()
        except A2AAuthError as exc:
            if self.run.credentials:
                raise
            raise _Skipped(f"it needs credentials ({_error(exc)})") from exc
        problems = [p for p in check_card(card.raw) if p.severity == "error"]
        if problems:
            raise _Failed(f"the extended card: {_listed([str(p) for p in problems])}")
        return _count(len(card.skills), "skill")


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _named(version: str) -> str:
    return "the tasks/send dialect" if version == "legacy" else f"A2A {version}"


def _what(obj: object) -> str:
    if isinstance(obj, Task):
        return "task"
    if isinstance(obj, Message):
        return "message"
    if isinstance(obj, TaskStatusUpdateEvent):
        return "status-update"
    if isinstance(obj, TaskArtifactUpdateEvent):
        return "artifact-update"
    return "nothing" if obj is None else type(obj).__name__


def _listed(problems: list[str]) -> str:
    shown = "; ".join(problems[:_MOST_SHOWN])
    more = len(problems) - _MOST_SHOWN
    return f"{shown} (and {more} more)" if more > 0 else shown


def _error(exc: BaseException) -> str:
    name = type(exc).__name__
    if isinstance(exc, A2AClientError):
        return f"{name}: {exc}"
    return f"{name}: {exc} (not an A2AClientError)"
