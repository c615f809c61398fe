"""The entry point: parse the arguments, run the command, report its failure."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import anyio

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup

from a2a_anyio.cli._context import Context
from a2a_anyio.cli._errors import (
    INTERRUPTED,
    OUTPUT_CLOSED,
    OutputClosed,
    UsageError,
    classify,
)
from a2a_anyio.cli._grammar import build_parser, finish_args
from a2a_anyio.cli._render import Printer


def _wants_json(argv: Sequence[str]) -> bool:
    for i, arg in enumerate(argv):
        if arg in ("-o", "--output") and i + 1 < len(argv) and argv[i + 1] == "json":
            return True
        if arg in ("-ojson", "--output=json"):
            return True
    return False


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    try:
        return _main(argv)
    except OutputClosed:
        return OUTPUT_CLOSED
    except BaseExceptionGroup as group:  # from a task group
        if group.subgroup(OutputClosed) is None:
            raise
        return OUTPUT_CLOSED


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:
            leaf = getattr(args, "parser", parser)
            leaf.error(f"unrecognized arguments: {' '.join(extra)}")
        args = finish_args(args)
    except UsageError as exc:
        sys.stderr.write((exc.parser or parser).format_usage())
        return _report(Printer("json" if _wants_json(argv) else "text"), exc)
    printer = Printer(args.output)
    try:
        if args.backend == "trio":
            try:
                import trio  # noqa: F401
            except ImportError:
                raise UsageError("--backend trio needs trio: pip install trio") from None
        ctx = Context(args, printer)
    except Exception as exc:  # a bad --header or --cookie, a missing backend
        return _report(printer, exc)
    try:
        return anyio.run(_run, ctx, backend=args.backend)
    except KeyboardInterrupt:
        pass
    except BaseExceptionGroup as group:  # trio raises Ctrl-C in a task group inside a group
        if group.subgroup(KeyboardInterrupt) is None:
            raise
    printer.error("interrupted")
    return INTERRUPTED


def _report(printer: Printer, exc: Exception) -> int:
    failure = classify(exc)
    printer.error(failure.message, failure.hint)
    if printer.json_mode:
        printer.json(failure.envelope())
    return failure.exit_code


async def _run(ctx: Context) -> int:
    async with ctx.stack:
        try:
            status: int = await ctx.args.func(ctx)
        except Exception as exc:
            ctx.debug.exception(exc)
            stream = bool(getattr(ctx.args, "stream", False))
            return ctx.report(ctx.failure(exc), stream=stream)
        return status
