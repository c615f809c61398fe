"""Sans-IO wire dialects: pure encoders and decoders, one module per protocol family, and the
codecs that bind a dialect to an HTTP binding at one URL.

Nothing here imports httpx or anyio.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

# The JSON-RPC codecs, which nearly every agent speaks, load with the package; the others
# when a client first needs them (``codec_for``).
from a2a_anyio._dialects import jsonrpc_codec as jsonrpc_codec
from a2a_anyio._dialects.base import Dialect
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
    "version_family",
]


#: (binding, version family) -> the codec that speaks it, as "module:class" in this package:
#: a new binding or dialect is a new codec and a line here. A codec's module is imported when
#: a client first needs it, so a client of JSON-RPC agents never loads the REST binding.
CODECS: dict[tuple[str, str], str] = {
    ("jsonrpc", "1.0"): "jsonrpc_codec:V1JsonRpcCodec",
    ("jsonrpc", "0.3"): "jsonrpc_codec:V03JsonRpcCodec",
    ("jsonrpc", "0.2"): "jsonrpc_codec:V02JsonRpcCodec",
    ("jsonrpc", "legacy"): "legacy_codec:LegacyJsonRpcCodec",
    ("jsonrpc", "python-a2a"): "legacy_codec:PythonA2ACodec",  # tasks/send routed by path
    ("rest", "1.0"): "rest_codec:V1RestCodec",
    ("rest", "0.3"): "rest_codec:V03RestCodec",
    ("rest", "0.2"): "rest_codec:V03RestCodec",  # the 0.2.6 spec documents the v0.3 REST layout
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
    where = CODECS.get(key)
    if where is None:
        raise ValueError(f"no codec for A2A {version!r} over {binding!r}")
    module, name = where.split(":")
    cls: type[WireCodec] = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    return cls(url, tenant=tenant, extensions=extensions)
