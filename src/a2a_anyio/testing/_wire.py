"""The fake agent's wire: the client's codecs, used from the server's side (requests read,
answers written), and the spelling checks of a strict agent."""

from __future__ import annotations

from typing import Any

from a2a_anyio._bindings import JsonRpcCodec, WireCodec, codec_for
from a2a_anyio._bindings.rest import RestCodec
from a2a_anyio._dialects import Op, OpArgs, Send
from a2a_anyio._errors import A2AProtocolError
from a2a_anyio._model import JSONDict, Message, Role


class InvalidParams(Exception):
    """A request that does not have the dialect's shape (answered with -32602 / HTTP 400)."""


def server_codecs(dialect: str, binding: str) -> tuple[JsonRpcCodec, RestCodec | None]:
    """The JSON-RPC codec of ``dialect``, and its REST codec unless ``binding`` is
    "jsonrpc" (the JSON-RPC one also writes the push notifications)."""
    rpc = codec_for("jsonrpc", dialect, "")
    rest = None if binding == "jsonrpc" else codec_for("rest", dialect, "")
    assert isinstance(rpc, JsonRpcCodec)
    assert rest is None or isinstance(rest, RestCodec)
    return rpc, rest


def read_args(codec: WireCodec, op: Op, params: Any, strict: bool) -> OpArgs:
    """The args of ``op`` from its ``params``; InvalidParams for params the agent refuses
    (``strict``: a message spelled as another dialect spells it, or without its id)."""
    try:
        args = codec.decode_params(op, params)
    except (A2AProtocolError, ValueError) as exc:
        raise InvalidParams(str(exc)) from None
    if isinstance(args, Send):
        _check(codec, args.message, strict)
    return args


def _check(codec: WireCodec, message: Message, strict: bool) -> None:
    if message.role is Role.UNSPECIFIED:
        raise InvalidParams("message.role is missing or not a role of this dialect")
    ours = codec.dialect.encode_message(message)
    if strict and (problem := _misspelled(ours, message.raw or {})) is not None:
        raise InvalidParams(problem)
    if not message.parts:
        raise InvalidParams("message.parts must contain at least one part")


def _misspelled(ours: JSONDict, raw: JSONDict) -> str | None:
    """What the message ``raw`` spells otherwise than ``ours``, the dialect's own encoding
    of it: its role, kind, id, where its parts are, their discriminators."""
    for key in ("role", "kind"):
        if key in ours and raw.get(key) != ours[key]:
            return f"message.{key} must be {ours[key]!r}"
    if "messageId" in ours and not raw.get("messageId"):
        return "message.messageId is required"
    parts = "content" if "content" in ours else "parts"
    if not isinstance(raw.get(parts), list):
        return f"message.{parts} is required"
    for i, (mine, theirs) in enumerate(zip(ours[parts], raw[parts], strict=False)):
        for key in ("kind", "type"):
            if key in mine and (not isinstance(theirs, dict) or key not in theirs):
                return f"message.{parts}[{i}].{key} is required"
    return None
