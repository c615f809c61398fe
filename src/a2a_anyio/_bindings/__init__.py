"""Sans-IO bindings: how a transport carries each operation (JSON-RPC, HTTP+JSON,
python-a2a's path routing, gRPC), each speaking a dialect of ``_dialects`` at one URL as a
codec.

Nothing here imports httpx or anyio.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

# The JSON-RPC binding, which nearly every agent speaks, loads with the package; the others
# when a client first needs them (``codec_for``).
from a2a_anyio._bindings.base import EventDecoder, Fallback, WireCodec, WireRequest
from a2a_anyio._bindings.jsonrpc import JsonRpcCodec
from a2a_anyio._dialects import Dialect

__all__ = [
    "CODECS",
    "EventDecoder",
    "Fallback",
    "JsonRpcCodec",
    "WireCodec",
    "WireRequest",
    "codec_for",
    "dialect_named",
    "version_family",
]


#: (binding, version family) -> the codec class that carries it and the dialect it speaks,
#: each as "module:name" (a binding in this package, a dialect in ``_dialects``): a new
#: binding or dialect is a line here. A module is imported when a client first needs it, so
#: a client of JSON-RPC agents never loads the REST binding.
CODECS: dict[tuple[str, str], tuple[str, str]] = {
    ("jsonrpc", "1.0"): ("jsonrpc:JsonRpcCodec", "v1:V1"),
    ("jsonrpc", "0.3"): ("jsonrpc:JsonRpcCodec", "v03:V03"),
    ("jsonrpc", "0.2"): ("jsonrpc:JsonRpcCodec", "v03:V02"),
    ("jsonrpc", "legacy"): ("jsonrpc:JsonRpcCodec", "legacy:LEGACY"),
    ("jsonrpc", "python-a2a"): ("paths:PythonA2ACodec", "legacy:PYTHON_A2A"),
    ("rest", "1.0"): ("rest:RestCodec", "v1:V1"),
    ("rest", "0.3"): ("rest:RestCodec", "v03_rest:V03_REST"),
    ("rest", "0.2"): ("rest:RestCodec", "v03_rest:V03_REST"),
    ("grpc", "1.0"): ("grpc:GrpcCodec", "v1:V1"),
    ("grpc", "0.3"): ("grpc:GrpcCodec", "v03_rest:V03_REST"),
    ("grpc", "0.2"): ("grpc:GrpcCodec", "v03_rest:V03_REST"),
}
_BINDINGS = {"jsonrpc": "jsonrpc", "rest": "rest", "http+json": "rest", "grpc": "grpc"}


def version_family(version: str) -> str:
    """The family a version string belongs to: "1.0" for any 1.x, else its Major.Minor
    ("0.3.0" -> "0.3"); "legacy" stays."""
    major, _, rest = version.strip().partition(".")
    if major == "1":
        return "1.0"
    if version == "legacy" or not rest:
        return version
    return f"{major}.{rest.split('.')[0]}"


def _load(package: str, where: str) -> object:
    module, name = where.split(":")
    return getattr(importlib.import_module(f"{package}.{module}"), name)


def dialect_named(where: str) -> Dialect:
    """The dialect ``CODECS`` names "module:name"."""
    dialect = _load("a2a_anyio._dialects", where)
    assert isinstance(dialect, Dialect)
    return dialect


def codec_for(
    binding: str,
    version: str,
    url: str,
    *,
    tenant: str | None = None,
    extensions: Sequence[str] = (),
) -> WireCodec:
    """The codec for ``binding`` ("jsonrpc", "rest", "grpc", or a card's "JSONRPC" /
    "HTTP+JSON" / "GRPC")
    and A2A ``version`` ("1.0", "0.3.0", "legacy", ...) at interface ``url``.

    ValueError for a pair no codec speaks.
    """
    key = (_BINDINGS.get(binding.lower(), binding), version_family(version))
    where = CODECS.get(key)
    if where is None:
        raise ValueError(f"no codec for A2A {version!r} over {binding!r}")
    cls = _load(__name__, where[0])
    assert isinstance(cls, type) and issubclass(cls, WireCodec)
    return cls(dialect_named(where[1]), url, tenant=tenant, extensions=extensions)
