"""Sans-IO wire dialects: pure encoders and decoders, one module per protocol family, and the
codecs that bind a dialect to an HTTP binding at one URL.

Nothing here imports httpx or anyio.
"""

from __future__ import annotations

from collections.abc import Sequence

from a2a_anyio._dialects.base import Dialect
from a2a_anyio._dialects.jsonrpc_codec import (
    LegacyJsonRpcCodec,
    PythonA2ACodec,
    V02JsonRpcCodec,
    V03JsonRpcCodec,
    V1JsonRpcCodec,
)
from a2a_anyio._dialects.legacy import LegacyDialect
from a2a_anyio._dialects.ops import (
    Call,
    Cancel,
    ListTasks,
    Op,
    OpArgs,
    PushCreate,
    PushRef,
    Send,
    SendConfig,
    TaskRef,
)
from a2a_anyio._dialects.rest_codec import V03RestCodec, V1RestCodec
from a2a_anyio._dialects.v03 import V02Dialect, V03Dialect
from a2a_anyio._dialects.v1 import V1Dialect
from a2a_anyio._dialects.wire import EventDecoder, Fallback, WireCodec, WireRequest

__all__ = [
    "CODECS",
    "Call",
    "Cancel",
    "Dialect",
    "EventDecoder",
    "Fallback",
    "LegacyDialect",
    "ListTasks",
    "Op",
    "OpArgs",
    "PushCreate",
    "PushRef",
    "Send",
    "SendConfig",
    "TaskRef",
    "V02Dialect",
    "V03Dialect",
    "V1Dialect",
    "WireCodec",
    "WireRequest",
    "codec_for",
    "dialect_for",
    "version_family",
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


#: (binding, version family) -> the codec that speaks it: a new binding or dialect is a new
#: codec and a line here.
CODECS: dict[tuple[str, str], type[WireCodec]] = {
    ("jsonrpc", "1.0"): V1JsonRpcCodec,
    ("jsonrpc", "0.3"): V03JsonRpcCodec,
    ("jsonrpc", "0.2"): V02JsonRpcCodec,
    ("jsonrpc", "legacy"): LegacyJsonRpcCodec,
    ("jsonrpc", "python-a2a"): PythonA2ACodec,  # tasks/send routed by path, not by method
    ("rest", "1.0"): V1RestCodec,
    ("rest", "0.3"): V03RestCodec,
    ("rest", "0.2"): V03RestCodec,  # the 0.2.6 spec documents the v0.3 REST layout
}
_BINDINGS = {"jsonrpc": "jsonrpc", "rest": "rest", "http+json": "rest"}


def version_family(version: str) -> str:
    """The family a version string belongs to: "1.0" for any 1.x, else its Major.Minor
    ("0.3.0" -> "0.3"); "legacy" stays."""
    major, _, rest = version.strip().partition(".")
    if major == "1":
        return "1.0"
    if version == "legacy" or not rest:
        return version
    return f"{major}.{rest.split('.')[0]}"


def codec_for(
    binding: str,
    version: str,
    url: str,
    *,
    tenant: str | None = None,
    extensions: Sequence[str] = (),
) -> WireCodec:
    """The codec for ``binding`` ("jsonrpc", "rest", or a card's "JSONRPC" / "HTTP+JSON")
    and A2A ``version`` ("1.0", "0.3.0", "legacy", ...) at interface ``url``.

    ValueError for a pair no codec speaks.
    """
    key = (_BINDINGS.get(binding.lower(), binding), version_family(version))
    cls = CODECS.get(key)
    if cls is None:
        raise ValueError(f"no codec for A2A {version!r} over {binding!r}")
    return cls(url, tenant=tenant, extensions=extensions)
