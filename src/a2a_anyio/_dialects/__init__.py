"""Sans-IO wire dialects: pure encoders and decoders, one module per protocol family.

Nothing here imports httpx or anyio.
"""

from __future__ import annotations

from a2a_anyio._dialects.base import Dialect, SendConfig
from a2a_anyio._dialects.v03 import V03Dialect
from a2a_anyio._dialects.v1 import V1Dialect

__all__ = ["Dialect", "SendConfig", "V03Dialect", "V1Dialect", "dialect_for"]


def dialect_for(version: str | None, tenant: str | None = None) -> Dialect:
    """The JSON-RPC dialect for a Major.Minor protocol version."""
    if version is not None and version.startswith("1."):
        return V1Dialect(tenant)
    if version in (None, "0.3", "0.2"):
        return V03Dialect()
    raise ValueError(f"no JSON-RPC dialect for A2A version {version!r}")
