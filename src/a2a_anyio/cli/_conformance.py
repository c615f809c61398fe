"""``a2a-anyio conformance``: qualify an agent, a table of checks (or one JSON document)."""

from __future__ import annotations

import argparse
from typing import Any

from a2a_anyio._conformance import ConformanceReport, check_agent
from a2a_anyio._http import make_client
from a2a_anyio.cli._context import Context
from a2a_anyio.cli._errors import FAILURE, OK, UsageError

_SHOWN = {"pass": "pass", "fail": "FAIL", "skip": "skipped"}


def add_options(p: argparse.ArgumentParser, seconds: Any) -> None:
    """The command's own options (``seconds`` reads a number of seconds)."""
    p.add_argument(
        "agent_name", nargs="?", metavar="AGENT",
        help="the agent: URL, card URL or registry name (else -a)",
    )  # fmt: skip
    p.add_argument(
        "--text", default="hello", metavar="TEXT",
        help="the message of the send, stream, get and list checks (default: hello)",
    )  # fmt: skip
    p.add_argument(
        "--long", metavar="TEXT",
        help="a message that starts a task that runs until it is cancelled, for the cancel "
        "and subscribe checks (default: --text; a task that ends at once skips them)",
    )  # fmt: skip
    p.add_argument(
        "--check-timeout", type=seconds, default=10.0, metavar="SECONDS",
        help="the most one check may take (default: 10)",
    )  # fmt: skip
    p.add_argument(
        "--total-timeout", type=seconds, default=120.0, metavar="SECONDS",
        help="the most all checks may take; those not begun by then are skipped (default: 120)",
    )  # fmt: skip


async def conformance(ctx: Context) -> int:
    a = ctx.args
    target = ctx.target(a.agent_name)
    if target.card is not None or "url" not in target.options:
        raise UsageError("conformance checks an agent at a URL: give its URL (not a card file)")
    options = {k: v for k, v in target.options.items() if k not in ("url", "timeout")}
    for name in ("check_timeout", "total_timeout"):
        if not getattr(a, name):
            raise UsageError(f"--{name.replace('_', '-')} must be more than 0")
    if a.debug:  # each request and answer on stderr, as the other commands show them
        http = make_client(verify=target.options.get("verify", True))
        http.event_hooks = {"request": [ctx.debug.on_request], "response": [ctx.debug.on_response]}
        ctx.stack.push_async_callback(http.aclose)
        options["http_client"] = http
    report = await check_agent(
        target.url,
        text=a.text,
        long_text=a.long,
        check_timeout=a.check_timeout,
        total_timeout=a.total_timeout,
        **options,  # type: ignore[arg-type]
    )
    _print(ctx, report)
    return OK if report.passed else FAILURE


def _print(ctx: Context, report: ConformanceReport) -> None:
    p = ctx.p
    for left in report.left_running:
        p.warn(f"task {left.task_id} ({left.interface}) is left running: {left.reason}")
    if p.json_mode:
        p.json(report.to_dict())
        return
    rows = [[c.name, c.interface or "-", _SHOWN[c.outcome], c.detail] for c in report.checks]
    p.table(["Check", "Interface", "Result", "Detail"], rows)
    counts = report.to_dict()["counts"]
    summary = f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped"
    if report.passed:
        p.line(summary)
    else:
        p.error(summary)
