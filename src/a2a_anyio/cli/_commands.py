"""The commands: each takes the run's Context and returns an exit status."""

from __future__ import annotations

import mimetypes
import shlex
import sys
from collections.abc import Awaitable, Callable
from contextlib import nullcontext, suppress
from pathlib import Path
from typing import Any

import anyio

from a2a_anyio._abandon import CancelGuard
from a2a_anyio._card_check import card_version, check_card
from a2a_anyio._client import A2AClient
from a2a_anyio._dialects.card import parse_card
from a2a_anyio._errors import (
    A2AClientError,
    A2AHTTPError,
    A2AProtocolError,
    A2ATimeoutError,
    MethodNotFoundError,
    UnsupportedOperationError,
    install_extra,
)
from a2a_anyio._limits import loads
from a2a_anyio._model import (
    DataPart,
    FilePart,
    Message,
    Part,
    Role,
    StreamEvent,
    Task,
    TaskState,
    TextPart,
)
from a2a_anyio._stream import MessageStream
from a2a_anyio.cli import _files as files
from a2a_anyio.cli import _render as r
from a2a_anyio.cli._context import Context, Target, read_input
from a2a_anyio.cli._errors import FAILURE, OK, Failure, UsageError
from a2a_anyio.cli._live import AgentRow, live_task, waiting

Command = Callable[[Context], Awaitable[int]]

#: The most a --data, --params, --metadata or --file value may hold (a file, or stdin).
MAX_INPUT_BYTES = 32 * 1024 * 1024

# -- building the message ------------------------------------------------------------------


def _json_arg(value: str, flag: str) -> Any:
    """A JSON value from ``--data``/``--params``/``--metadata``: inline, ``@file``, a file's
    path, or ``-`` for stdin; at most ``MAX_INPUT_BYTES`` and ``MAX_JSON_DEPTH`` levels."""
    source: str | bytes = value
    where = "inline"
    if value == "-":
        source, where = sys.stdin.read(MAX_INPUT_BYTES + 1), "from standard input"
        if len(source) > MAX_INPUT_BYTES:
            raise UsageError(f"{flag}: standard input is larger than {MAX_INPUT_BYTES >> 20} MiB")
    elif value.startswith("@") or (
        not value.lstrip().startswith(("{", "[")) and Path(value).is_file()
    ):
        path = Path(value[1:] if value.startswith("@") else value).expanduser()
        source, where = read_input(path, flag, MAX_INPUT_BYTES), f"in {path}"
    try:
        return loads(source)
    except ValueError as exc:
        raise UsageError(f"{flag}: not usable JSON {where}: {exc}") from exc


def _file_part(value: str, media_type: str | None) -> FilePart:
    if value.startswith(("http://", "https://")):
        return FilePart(url=value, media_type=media_type, name=Path(value).name or None)
    path = Path(value).expanduser()
    data = read_input(path, "--file", MAX_INPUT_BYTES)
    guessed = mimetypes.guess_type(path.name)[0]
    return FilePart(data=data, media_type=media_type or guessed, name=path.name)


def build_message(ctx: Context) -> Message:
    """The user message of ``send``/``fan-out``: its text and part flags, in order."""
    a = ctx.args
    parts: list[Part] = []
    if getattr(a, "text", None):
        parts.append(TextPart(a.text))
    for kind, value, media_type in a.parts or []:
        if kind == "text":
            parts.append(TextPart(value, media_type))
        elif kind == "data":
            parts.append(DataPart(_json_arg(value, "--data"), media_type))
        else:
            parts.append(_file_part(value, media_type))
    if not parts:
        raise UsageError("nothing to send: give a TEXT, or --text, --data or --file")
    return Message(Role.USER, parts)


def message_metadata(ctx: Context) -> dict[str, Any] | None:
    value = getattr(ctx.args, "metadata", None)
    if value is None:
        return None
    meta = _json_arg(value, "--metadata")
    if not isinstance(meta, dict):
        raise UsageError("--metadata wants a JSON object")
    return meta


# -- card ------------------------------------------------------------------------------------


async def card(ctx: Context) -> int:
    if ctx.args.validate and not ctx.args.extended:
        return _validate(ctx, *await ctx.raw_card())
    target = ctx.target()
    if target.card is not None and not ctx.args.extended:
        data = target.card
        parsed = parse_card(data)
    else:
        client = await ctx.client(target)
        parsed = (
            await client.get_extended_card()
            if ctx.args.extended
            else await ctx.card(client, target)
        )
        data = parsed.raw
    if ctx.args.validate:  # the extended card: read, it came from the agent's interface
        return _validate(ctx, data, target.url)
    if ctx.p.json_mode:
        ctx.p.json(data)
    else:
        r.print_card(ctx.p, parsed)
    return OK


def _validate(ctx: Context, data: Any, card_url: str | None, size: int | None = None) -> int:
    """``card --validate``: each problem and warning of the card on a line; exit 1 if there
    is a problem (warnings leave the status 0)."""
    found = check_card(data, card_url=card_url, size=size)
    version = card_version(data, card_url) if isinstance(data, dict) else None
    label = "tasks/send (legacy)" if version == "legacy" else f"A2A {version}"
    what = f"this {label} card" if version else "this card"
    problems = [x for x in found if x.severity == "error"]
    if ctx.p.json_mode:
        listed = [
            {"path": x.path, "message": x.message, "kind": x.kind, "severity": x.severity}
            for x in found
        ]
        ctx.p.json({"version": version, "problems": listed})
    else:
        for problem in found:
            ctx.p.line(str(problem))
        if not problems:
            warned = len(found)
            also = f" ({warned} warning{'s' if warned > 1 else ''})" if warned else ""
            ctx.p.line(f"No problems found in {what}{also}.")
    if not problems:
        return OK
    count = f"{len(problems)} problem{'s' if len(problems) > 1 else ''}"
    ctx.p.error(f"{count} in {what}")
    return FAILURE


# -- send and streams ------------------------------------------------------------------------


def warn_ended(p: r.Printer, task: Task) -> bool:
    """A stderr warning when the task ended failed, rejected or canceled; whether it did."""
    ended = task.state in (TaskState.FAILED, TaskState.REJECTED, TaskState.CANCELED)
    if ended:
        p.warn(f"task {task.id} ended {task.state.value}")
    return ended


def cancel_within_timeout(ctx: Context, guard: CancelGuard) -> CancelGuard:
    """``guard``, its cancel's answer awaited only until ``--timeout`` from now: a cut's
    cancel goes out, and the command keeps its deadline."""
    if ctx.args.timeout:
        guard.answer_by = anyio.current_time() + ctx.args.timeout
    return guard


def say_left(ctx: Context, target: Target, guard: CancelGuard) -> None:
    """The stderr line for the task the command left on its agent (``guard.task_id``):
    cancelled there, or left running (``--no-cancel``)."""
    task_id, outcome = guard.task_id, guard.outcome
    if task_id is None:
        return
    name = target.name
    if outcome is None:
        ref = shlex.quote(target.ref)
        ctx.p.note(
            f"task {task_id} left running on {name}: cancel it with "
            f"a2a-anyio -a {ref} task cancel {task_id}"
        )
    elif isinstance(outcome.error, A2ATimeoutError) and anyio.current_time() >= guard.answer_by:
        ctx.p.note(f"asked {name} to cancel task {task_id}: no answer awaited past --timeout")
    elif outcome.error is not None:
        why = ctx.debug.redact(ctx.failure(outcome.error).message)
        ctx.p.warn(f"could not cancel task {task_id} on {name}: {why}")
    elif outcome.task is not None and not outcome.confirmed:
        state = outcome.task.status.state.value
        ctx.p.note(f"asked {name} to cancel task {task_id}: it is {state}")
    else:
        ctx.p.note(f"cancelled task {task_id} on {name}")


def _outcome(ctx: Context, result: Task | Message) -> None:
    """A stderr note when the task did not simply complete (the exit status stays 0)."""
    if not isinstance(result, Task) or warn_ended(ctx.p, result):
        return
    if result.state.is_interrupted:
        ctx.p.warn(
            f"task {result.id} is {result.state.value}: answer it with send --task-id {result.id}"
        )


async def send(ctx: Context) -> int:
    a = ctx.args
    target = ctx.target()
    client = await ctx.client(target)
    message = build_message(ctx)
    options: dict[str, Any] = {
        "metadata": message_metadata(ctx),
        "context_id": a.context_id,
        "task_id": a.task_id,
    }
    save_to = files.directory(a.save_files) if a.save_files else None
    if a.stream:
        if await _streams(ctx, client, target):
            stream = client.stream_message(message, total_timeout=a.timeout or None, **options)
            # Ctrl-C and --timeout cancel the task it started (or continues).
            guard = client.cancel_guard(a.task_id, cancel_on_exit=not a.no_cancel)
            guard = cancel_within_timeout(ctx, guard)
            return await _follow(ctx, target, stream, client, save_to, guard)
        ctx.p.note("note: the agent does not stream; sending without --stream")
    blocking = not a.no_wait
    # The task, known at once from an agent that streams: Ctrl-C and --timeout cancel it.
    guard = cancel_within_timeout(ctx, client.cancel_guard(cancel_on_exit=not a.no_cancel))
    try:
        async with guard:
            with waiting(ctx.p) if blocking else nullcontext():
                result = await _sent(ctx, client, target, message, blocking, guard, options)
    finally:
        say_left(ctx, target, guard)
    saved = await files.save_files(client, result, save_to) if save_to else None
    if ctx.p.json_mode:
        if isinstance(result, Task) and result.raw is None:
            # Followed through its stream, the task is folded from events: print it as the
            # agent reports it.
            with suppress(A2AClientError):
                result = await client.get_task(result.id)
        doc = r.response(result)
        if saved is not None:
            doc["savedFiles"] = [f.to_dict() for f in saved]
        (ctx.p.jsonl if a.stream else ctx.p.json)(doc)
    else:
        r.print_result(ctx.p, result, resume=ctx.resume_hint(target))
    _outcome(ctx, result)
    return _shown(ctx, saved)


async def _streams(ctx: Context, client: A2AClient, target: Target) -> bool:
    """Whether the agent streams, as its card says (a bare ``--endpoint`` has none: try)."""
    if client.url is None:
        return True
    return (await ctx.card(client, target)).capabilities.streaming


#: What an agent's stream may fail with, before its first event, where a plain send may not:
#: frames that are not A2A's, an HTTP status that says the road is not there (below), a
#: method it lacks. An agent's condition (429, 5xx) is no reason to send again.
_UNREADABLE_STREAM = (
    A2AProtocolError,
    A2AHTTPError,
    MethodNotFoundError,
    UnsupportedOperationError,
)
_NO_STREAM_HERE = (404, 405, 406, 415, 501)


async def _sent(
    ctx: Context,
    client: A2AClient,
    target: Target,
    message: Message,
    blocking: bool,
    guard: CancelGuard,
    options: dict[str, Any],
) -> Task | Message:
    """The result of ``send``. A task the agent answers with before it is done is followed
    up: --timeout bounds it all (default: no limit; each look at the task within the
    client's timeout). An agent that streams is followed through its stream, which names
    the task at once (to ``guard``); a stream that cannot be read before its first event is
    given up for a plain send, within the same --timeout."""
    timeout = ctx.args.timeout or None
    heard = False

    def on_event(event: StreamEvent) -> None:
        nonlocal heard
        heard = True
        guard(event)

    started = anyio.current_time()
    try:
        return await client.send_message(
            message, blocking=blocking, timeout=timeout, on_event=on_event, **options
        )
    except _UNREADABLE_STREAM as exc:
        if heard or not blocking:
            raise
        if isinstance(exc, A2AHTTPError) and exc.status_code not in _NO_STREAM_HERE:
            raise  # refused credentials, or the agent's condition
        if not await _streams(ctx, client, target):
            raise  # the plain send it made failed: no other road
        ctx.debug(f"the agent's stream cannot be read ({exc}); sending without streaming")
    left = None if timeout is None else timeout - (anyio.current_time() - started)
    if left is not None and left <= 0:
        raise A2ATimeoutError(
            f"no answer within the timeout of {timeout}s",
            timeout="deadline",
            agent=target.url,
            operation="send",
        )
    # Its error carries the task as last seen, which the guard reads.
    return await client.send_message(message, blocking=blocking, timeout=left, **options)


def _shown(ctx: Context, saved: list[files.SavedFile] | None) -> int:
    """The files saved, shown (``--save-files``); the exit status."""
    return OK if saved is None else files.show(ctx.p, saved, ctx.debug.redact)


async def _follow(
    ctx: Context,
    target: Target,
    stream: MessageStream,
    client: A2AClient | None = None,
    save_to: Path | None = None,
    guard: CancelGuard | None = None,
) -> int:
    """Consume a stream: JSON Lines, plain events, or a live view; then the outcome, and
    the final task's files saved into ``save_to`` (with ``client``). Ctrl-C and --timeout
    cancel, through ``guard``, the task the command started on the agent."""
    p = ctx.p
    row = AgentRow(target.name, target.url)
    last: StreamEvent | None = None
    try:
        with live_task(p, row):
            async with guard or nullcontext(), stream:
                async for event in stream:
                    last = event
                    row.apply(event)
                    if guard is not None:
                        guard(event)
                    if p.json_mode:
                        p.jsonl(r.response(event))
                    elif not p.rich:
                        r.print_event(p, event)
                if guard is not None:
                    guard.finished()
    except Exception as exc:
        ctx.debug.exception(exc)
        if guard is not None:
            say_left(ctx, target, guard)
        return ctx.report(ctx.failure(exc), stream=True)
    except BaseException:
        if guard is not None:
            say_left(ctx, target, guard)
        raise
    final: Task | Message | None = stream.task
    if isinstance(last, Message):
        final = last
    if final is None:
        return OK
    saved = None
    if client is not None and save_to is not None:
        saved = await files.save_files(client, final, save_to)
        if p.json_mode:
            p.jsonl({"savedFiles": [f.to_dict() for f in saved]})
    if not p.json_mode:
        if p.rich:
            r.print_result(p, final, resume=ctx.resume_hint(target))
        else:  # the last lines restate what a reader of the tail needs
            if isinstance(final, Task):
                p.field("Task ID", final.id)
                p.field("Context ID", final.context_id or "")
                p.field("State", r.state_name(final.status))
                if final.state.is_interrupted:
                    p.field("Resume", ctx.resume_hint(target).replace("{task_id}", final.id))
    _outcome(ctx, final)
    return _shown(ctx, saved)


async def task_get(ctx: Context) -> int:
    a = ctx.args
    target = ctx.target()
    client = await ctx.client(target)
    save_to = files.directory(a.save_files) if a.save_files else None
    if a.wait:
        got = await client.wait(
            a.task_id, timeout=a.timeout or None, poll_interval=a.poll_interval,
            max_interval=max(a.poll_interval, 2.0),
        )  # fmt: skip
        if a.history is not None:
            got = await client.get_task(a.task_id, history_length=a.history)
    else:
        got = await client.get_task(a.task_id, history_length=a.history)
    saved = await files.save_files(client, got, save_to) if save_to else None
    if ctx.p.json_mode:
        doc = r.wire(got)
        if saved is not None:
            doc = {**doc, "savedFiles": [f.to_dict() for f in saved]}
        ctx.p.json(doc)
    else:
        r.print_task(ctx.p, got, resume=ctx.resume_hint(target), history=a.history is not None)
    return _shown(ctx, saved)


async def task_cancel(ctx: Context) -> int:
    target = ctx.target()
    client = await ctx.client(target)
    got = await client.cancel_task(ctx.args.task_id)
    if ctx.p.json_mode:
        ctx.p.json(r.wire(got))
    else:
        r.print_task(ctx.p, got)
    return OK


async def task_list(ctx: Context) -> int:
    a = ctx.args
    client = await ctx.client(ctx.target())
    state = TaskState(a.state) if a.state else None
    page = await client.list_tasks(a.context_id, a.limit, a.cursor, status=state)
    if ctx.p.json_mode:
        ctx.p.json(r.wire(page))
        return OK
    if not page.tasks:
        ctx.p.note("no tasks")
    else:
        ctx.p.table(["Task ID", "Context ID", "State", "Latest"], r.task_rows(ctx.p, page.tasks))
    if page.next_cursor:
        ctx.p.field("Next cursor", page.next_cursor)
    return OK


async def task_subscribe(ctx: Context) -> int:
    a = ctx.args
    target = ctx.target()
    client = await ctx.client(target)
    stream = client.subscribe(a.task_id, total_timeout=a.timeout or None)
    if a.stream:
        return await _follow(ctx, target, stream)
    # Without --stream: follow quietly (or live on a terminal), then print the final task.
    row = AgentRow(target.name, target.url)
    with live_task(ctx.p, row):
        async with stream:
            async for event in stream:
                row.apply(event)
    final = await client.get_task(a.task_id)
    if ctx.p.json_mode:
        ctx.p.json(r.wire(final))
    else:
        r.print_task(ctx.p, final, resume=ctx.resume_hint(target))
    _outcome(ctx, final)
    return OK


async def task_download(ctx: Context) -> int:
    """``task download``: the files of a task's artifacts into a directory, by the rules of
    ``--save-files`` (one mechanism: ``_files.save_files``)."""
    a = ctx.args
    save_to = files.directory(a.dir, "--dir")
    client = await ctx.client(ctx.target())
    got = await client.get_task(a.task_id)
    saved = await files.save_files(client, got, save_to)
    if ctx.p.json_mode:
        ctx.p.json({"taskId": got.id, "savedFiles": [f.to_dict() for f in saved]})
    return _shown(ctx, saved)


# -- push configs ----------------------------------------------------------------------------


async def push_create(ctx: Context) -> int:
    a = ctx.args
    client = await ctx.client(ctx.target())
    config = await client.create_push_config(a.task_id, a.url, token=a.token, config_id=a.config_id)
    if a.token:
        ctx.debug.secrets.add(a.token)
    if ctx.p.json_mode:
        ctx.p.json(r.push_config_wire(config))
    else:
        r.print_push_config(ctx.p, config)
    return OK


async def push_get(ctx: Context) -> int:
    a = ctx.args
    client = await ctx.client(ctx.target())
    config = await client.get_push_config(a.task_id, a.config_id)
    if ctx.p.json_mode:
        ctx.p.json(r.push_config_wire(config))
    else:
        r.print_push_config(ctx.p, config)
    return OK


async def push_list(ctx: Context) -> int:
    a = ctx.args
    client = await ctx.client(ctx.target())
    configs = await client.list_push_configs(a.task_id)
    if ctx.p.json_mode:
        ctx.p.json({"configs": [r.push_config_wire(c) for c in configs]})
    elif not configs:
        ctx.p.note(f"task {a.task_id} has no push configs")
    else:
        rows = [[c.id or "", c.url, "yes" if c.token else "no"] for c in configs]
        ctx.p.table(["Config ID", "URL", "Token"], rows)
    return OK


async def push_delete(ctx: Context) -> int:
    a = ctx.args
    client = await ctx.client(ctx.target())
    await client.delete_push_config(a.task_id, a.config_id)
    if ctx.p.json_mode:
        ctx.p.json({})
    else:
        ctx.p.field("Deleted", f"push config {a.config_id} of task {a.task_id}")
    return OK


# -- call --------------------------------------------------------------------------------------


async def call(ctx: Context) -> int:
    a = ctx.args
    params = _json_arg(a.params, "--params") if a.params is not None else None
    client = await ctx.client(ctx.target())
    result = await client.call(a.method, params, idempotent=a.idempotent)
    ctx.p.json_view(result)
    return OK


# -- the registry ----------------------------------------------------------------------------


async def demo(ctx: Context) -> int:
    import importlib.util

    if importlib.util.find_spec("hypercorn") is None:  # an install older than the cli extra's
        return ctx.report(
            Failure(
                FAILURE,
                "A2ACLI_ERR_INTERNAL",
                "the demo serves its agents with hypercorn, which is not installed",
                f"{install_extra('cli')} (the cli extra brings it)",
            )
        )
    from a2a_anyio.cli._demo import run_demo

    return await run_demo(ctx)
