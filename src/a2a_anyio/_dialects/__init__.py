"""Sans-IO wire dialects: pure encoders and decoders, one module per protocol family.

Nothing here imports httpx or anyio.
"""

from __future__ import annotations

from a2a_anyio._dialects.base import Dialect, SendConfig
from a2a_anyio._dialects.legacy import LegacyDialect
from a2a_anyio._dialects.v03 import V02Dialect, V03Dialect
from a2a_anyio._dialects.v1 import V1Dialect

__all__ = [
    "Dialect",
    "LegacyDialect",
    "SendConfig",
    "V02Dialect",
    "V03Dialect",
    "V1Dialect",
    "dialect_for",
]


def dialect_for(version: str | None, tenant: str | None = None) -> Dialect:
    """The JSON-RPC dialect for a Major.Minor protocol version (or "legacy")."""
    if version is not None and version.startswith("1."):
        return V1Dialect(tenant)
    if version in (None, "0.3"):
        return V03Dialect()
    if version == "0.2":
        return V02Dialect()
    if version == "legacy":
        return LegacyDialect()
    raise ValueError(f"no JSON-RPC dialect for A2A version {version!r}")
