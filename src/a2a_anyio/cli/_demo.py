"""The ``demo`` command's slot: a guided run against a local demo agent, once it exists."""

from __future__ import annotations

from typing import TYPE_CHECKING

from a2a_anyio.cli._errors import FAILURE

if TYPE_CHECKING:
    from a2a_anyio.cli._context import Context


async def run_demo(ctx: Context) -> int:
    """Run the demo; until the demo agent lands this says so and exits 1."""
    ctx.p.error(
        "the demo is not available yet in this version of a2a-anyio",
        "try a2a-anyio --help for the commands that talk to your own agents",
    )
    return FAILURE
