"""Task groups that run beside a caller's block without wrapping its exceptions."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from anyio.abc import TaskGroup

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup


@asynccontextmanager
async def beside() -> AsyncIterator[TaskGroup]:
    """A task group for work that runs while the caller's block does (a server, a worker).

    An exception of the block, or of the one task that failed, comes out as itself, not in
    an exception group (nested ones too, as when two agents are served); a group of several
    failures stays a group.
    """
    try:
        async with anyio.create_task_group() as group:
            yield group
    except BaseExceptionGroup as exc:
        sole = _sole(exc)
        if sole is None:
            raise
        try:
            raise sole from sole.__cause__
        finally:
            del sole  # (the traceback keeps this frame: no cycle through it)


def _sole(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """The one exception of ``group`` and the single-member groups inside it, or None."""
    exc: BaseException = group
    while isinstance(exc, BaseExceptionGroup):
        if len(exc.exceptions) != 1:
            return None
        exc = exc.exceptions[0]
    return exc
