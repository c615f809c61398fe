"""Text tables of the bench: aligned columns and the number formats (standard library only)."""

from __future__ import annotations


def f1(x: float | None, spec: str = ".1f") -> str:
    """``x`` with one decimal (or ``spec``); ``n/a`` for None."""
    return "n/a" if x is None else format(x, spec)


def times(x: float | None) -> str:
    """A ratio: ``1.23x``; ``n/a`` for None."""
    return "n/a" if x is None else f"{x:.2f}x"


def grid(rows: list[tuple[str, ...]], left: tuple[int, ...] = (0, 1)) -> list[str]:
    """Rows as aligned text columns: those in ``left`` flush left, the others right."""
    widths = [max(len(r[i]) for r in rows if i < len(r)) for i in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [c.ljust(widths[i]) if i in left else c.rjust(widths[i]) for i, c in enumerate(r)]
        out.append("  ".join(cells).rstrip())
    return out
