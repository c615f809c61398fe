"""A context manager that does nothing, and makes no object when entered."""

from __future__ import annotations


class NoContext:
    """``with`` or ``async with`` it does nothing, as a ``contextlib.nullcontext()``, and binds
    no method: a ``with`` keeps its manager's ``__exit__`` for the whole block, and a fan-out
    keeps thousands of blocks open at once. One instance serves all: ``NO_CONTEXT``."""

    __slots__ = ()

    @staticmethod
    def __enter__() -> None:
        return None

    @staticmethod
    def __exit__(*_: object) -> None:
        return None

    @staticmethod
    async def __aenter__() -> None:
        return None

    @staticmethod
    async def __aexit__(*_: object) -> None:
        return None


NO_CONTEXT = NoContext()
