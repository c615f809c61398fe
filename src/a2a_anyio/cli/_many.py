"""The commands over many agents: the registry's list, fan-out, ping."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

import anyio
from rich.live import Live

from a2a_anyio._abandon import CancelGuard
from a2a_anyio._errors import A2ATimeoutError
from a2a_anyio._fanout import CUT_AT_DEADLINE
from a2a_anyio._model import (
    StreamEvent,
)
from a2a_anyio.cli import _render as r
from a2a_anyio.cli._commands import build_message, message_metadata, say_left
from a2a_anyio.cli._context import Context, Target, Unresolved
from a2a_anyio.cli._errors import OK, Failure, UsageError, exit_code_of
from a2a_anyio.cli._live import AgentRow, FanOutView


async def agents(ctx: Context) -> int:
    reg = ctx.registry
    p = ctx.p
    groups = {g: [e.name for e in reg.group(g)] for g in reg.group_names()}
    if p.json_mode:
        p.json(
            {
                "path": str(reg.path) if reg.path else None,
                "agents": [
                    {
                        "name": e.name,
                        "url": e.url,
                        "path": e.path,
                        "endpoint": e.endpoint,
                        "description": e.description,
                        "tokenEnv": e.token_env,
                        "headers": sorted(e.headers),
                        "cookies": sorted(e.cookies),
                        "protocol": e.protocol,
                        "binding": e.binding,
                        "timeoutSeconds": e.timeout_seconds,
                        "retries": e.retries,
                        "verify": e.verify,
                        "tags": list(e.tags),
                    }
                    for e in reg
                ],
                "groups": groups,
            }
        )
        return OK
    if reg.path is None:
        looked = ", ".join(str(x) for x in reg.default_paths())
        p.note(f"no registry file found (looked at $A2A_ANYIO_CONFIG, {looked})")
        return OK
    p.note(f"registry: {reg.path}")
    rows = []
    for e in reg:
        auth = []
        if e.token_env:
            auth.append(f"bearer ${e.token_env}")
        if e.headers:
            auth.append("headers: " + ", ".join(sorted(e.headers)))
        if e.cookies:
            auth.append("cookies: " + ", ".join(sorted(e.cookies)))
        where = f"{e.url} (path {e.path})" if e.path else e.url or f"{e.endpoint} (endpoint)"
        rows.append([e.name, where, "; ".join(auth) or "-", ", ".join(e.tags) or "-"])
    p.table(["Name", "URL", "Credentials", "Tags"], rows)
    if groups:
        p.table(["Group", "Agents"], [[g, ", ".join(m)] for g, m in groups.items()])
    return OK


# -- many agents -----------------------------------------------------------------------------


async def fan_out(ctx: Context) -> int:
    a = ctx.args
    targets = ctx.targets()
    message = build_message(ctx)
    metadata = message_metadata(ctx)
    p = ctx.p
    rows = [AgentRow(t.name, t.url) for t in targets]
    limiter = anyio.CapacityLimiter(a.limit or len(targets))
    # The tasks left on their agents (cut at --timeout, or Ctrl-C): cancelled unless --no-cancel.
    left: list[tuple[Target, CancelGuard]] = []

    def say_what_was_left() -> None:
        for target, guard in left:
            say_left(ctx, target, guard)

    async def one(target: Target, row: AgentRow) -> None:
        guard: CancelGuard | None = None

        def on_event(event: StreamEvent) -> None:
            if guard is not None:
                guard(event)
            row.apply(event)
            if p.json_mode and a.stream:
                p.jsonl({"agent": row.name, "event": r.response(event)})
            elif a.stream and not p.rich:
                latest = r.one_line(row.latest, 80)
                p.line(f"{row.name}: {row.state}" + (f": {latest}" if latest else ""))

        try:
            async with limiter:
                client = await ctx.client(target)
                guard = client.cancel_guard(cancel_on_exit=not a.no_cancel)
                left.append((target, guard))  # says something once it left a task
                with anyio.move_on_after(a.timeout or None) as scope:
                    guard.answer_by = scope.deadline  # a cut's cancel keeps --timeout too
                    async with guard:  # cut at --timeout, a time limit, Ctrl-C
                        result = await client.send_message(
                            message, metadata=metadata, on_event=on_event
                        )
                    row.finish(result)
                if scope.cancelled_caught:
                    raise A2ATimeoutError(
                        f"{CUT_AT_DEADLINE}: no answer within the timeout of {a.timeout}s",
                        timeout="deadline",
                        agent=target.url,
                        operation="send",
                    )
        except Exception as exc:
            failure = ctx.failure(exc)
            ctx.debug(f"{row.name} failed: {exc!r}")
            row.fail(exc, failure)
            if p.json_mode and a.stream:
                p.jsonl({"agent": row.name, **failure.envelope()})

    live = (
        Live(FanOutView(rows), console=p.console, refresh_per_second=10, transient=True)
        if p.rich
        else nullcontext()
    )
    try:
        with live:
            async with anyio.create_task_group() as group:
                for target, row in zip(targets, rows, strict=True):
                    group.start_soon(one, target, row)
    except BaseException:  # Ctrl-C
        say_what_was_left()
        raise

    failures = [row.failure for row in rows if row.failure is not None]
    if p.json_mode:
        if not a.stream:
            p.json({"results": [_row_json(row) for row in rows]})
    else:
        summary = []
        for row in rows:
            result = row.failure.message if row.failure else row.latest
            state = row.state_text() if p.rich else row.state
            summary.append([row.name, state, f"{row.elapsed:.2f}s", r.one_line(result, 70)])
        p.table(["Agent", "State", "Time", "Result"], summary)
    for row in rows:
        if row.failure is not None:
            p.warn(f"{row.name}: {row.failure.message}")
    say_what_was_left()
    return exit_code_of(failures)


def _row_json(row: AgentRow) -> dict[str, Any]:
    return {
        "agent": row.name,
        "url": row.url,
        "elapsed": round(row.elapsed, 3),
        "response": r.response(row.result) if row.result is not None else None,
        "error": row.failure.envelope()["error"] if row.failure else None,
    }


async def ping(ctx: Context) -> int:
    # Each agent on its own: one whose registry entry reads a variable that is not set is
    # reported in its row (exit 2) while the others are pinged.
    refs = list(ctx.args.agent or [])
    if refs:
        targets = ctx.targets_each(refs)
    elif ctx.args.endpoint:
        targets = list(ctx.targets())
    else:
        targets = ctx.targets_each(ctx.registry.names())
    if not targets:
        raise UsageError("nothing to ping: give -a/--agent, or define agents in a registry")
    outcomes: list[dict[str, Any]] = [{} for _ in targets]
    failures: list[Failure] = []

    async def one(i: int, target: Target | Unresolved) -> None:
        out = outcomes[i]
        out.update(agent=target.name, url=target.url, ok=False, ms=None, card=None, error=None)
        if isinstance(target, Unresolved):
            failures.append(target.failure)
            out["error"] = target.failure.envelope()["error"]
            return
        try:
            client = await ctx.client(target)
            out["ms"] = round(await client.ping(), 1)
            if client.url is not None or target.card is not None:  # an endpoint has no card
                card = await ctx.card(client, target)
                out["card"] = {"name": card.name, "version": card.version}
            out["ok"] = True
        except Exception as exc:
            failure = ctx.failure(exc)
            failures.append(failure)
            out["error"] = failure.envelope()["error"]

    async with anyio.create_task_group() as group:
        for i, target in enumerate(targets):
            group.start_soon(one, i, target)
    if ctx.p.json_mode:
        ctx.p.json({"results": outcomes})
    else:
        rows = []
        for out in outcomes:
            card, error = out["card"], out["error"]
            what = f"{card['name']} {card['version'] or ''}".strip() if card else "-"
            what = error["message"] if error else what
            status = "ok" if out["ok"] else out["error"]["code"]
            ms = f"{out['ms']:.0f} ms" if out["ms"] is not None else "-"
            rows.append([out["agent"], out["url"], status, ms, r.one_line(what, 60)])
        ctx.p.table(["Agent", "URL", "Status", "Time", "Card"], rows)
        for out in outcomes:
            if out["error"] is not None:
                ctx.p.warn(f"{out['agent']}: {ctx.debug.redact(out['error']['message'])}")
    return exit_code_of(failures)
