"""The decoding registry of extension payloads: the user's types for data parts and for
``call()`` results, kept per client.

A key is a media type for data parts (``application/vnd.acme.invoice+json``) and a method
name for ``call()`` results (``acme/getInvoice``); both live in one table. The client applies
it after a codec decoded an answer: the codecs stay pure, shared by every client and server,
and know nothing of what one client's user registered.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from a2a_anyio._errors import A2AProtocolError, ErrorContext, clipped
from a2a_anyio._model import (
    Artifact,
    DataPart,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskPage,
    TaskStatus,
    TaskStatusUpdateEvent,
)

#: What turns a JSON value into the user's type: a dataclass (built with ``T(**value)``), a
#: pydantic model (``T.model_validate(value)``), or any callable of the value.
Decoder = Callable[..., Any]
#: The most characters of a decoder's error an A2AProtocolError's message quotes.
_MAX_WHY = 300


def build(decoder: Decoder, value: Any) -> Any:
    """``value`` made into ``decoder``'s type (see ``Decoder``); what the decoder raises
    passes through."""
    validate = getattr(decoder, "model_validate", None)
    if callable(validate):  # a pydantic model, known by its method: pydantic is not needed
        return validate(value)
    if isinstance(decoder, type) and dataclasses.is_dataclass(decoder):
        if not isinstance(value, Mapping):
            raise TypeError(f"a JSON object was expected, not {type(value).__name__}")
        return decoder(**value)
    return decoder(value)


def _name(decoder: Decoder) -> str:
    return str(getattr(decoder, "__qualname__", None) or repr(decoder))


def part_key(part: DataPart) -> str | None:
    """The key a data part is looked up by: its media type (v1.0 ``mediaType``), else a
    string ``mediaType`` in its metadata, where parts of earlier versions (which have no
    media type) can carry one."""
    if part.media_type:
        return part.media_type
    named = (part.metadata or {}).get("mediaType")
    return named if isinstance(named, str) and named else None


class PayloadTypes:
    """One client's registry: key -> decoder (see the module)."""

    __slots__ = ("_decoders",)

    def __init__(self, decoders: Mapping[str, Decoder] | None = None) -> None:
        self._decoders: dict[str, Decoder] = {}
        for key, decoder in (decoders or {}).items():
            self.register(key, decoder)

    def register(self, key: str, decoder: Decoder) -> None:
        """Decode the payloads of ``key`` with ``decoder`` from now on (replacing any other)."""
        if not isinstance(key, str) or not key:
            raise ValueError(f"a type's key is a media type or a method name, not {key!r}")
        if not callable(decoder):
            raise TypeError(f"a decoder is a class or a callable, not {decoder!r}")
        self._decoders[key] = decoder

    def __bool__(self) -> bool:
        return bool(self._decoders)

    def result(
        self, method: str, value: Any, result_type: Decoder | None, context: ErrorContext
    ) -> Any:
        """A ``call()`` result as ``result_type``, else as the type registered for
        ``method``, else as it came."""
        decoder = result_type if result_type is not None else self._decoders.get(method)
        if decoder is None:
            return value
        return _decoded(decoder, value, f"the result of {method}", context)

    def parts(self, value: Any, context: ErrorContext) -> None:
        """Decode, in place, the data of every data part of ``value`` (a task, a message, an
        event or a page of tasks) whose key has a decoder. ``value`` was just decoded from
        the wire, and is seen once: nothing else holds it yet."""
        if not self._decoders:
            return
        for part in _data_parts(value):
            key = part_key(part)
            decoder = self._decoders.get(key) if key is not None else None
            if decoder is not None:
                part.data = _decoded(
                    decoder, part.data, f"a data part of media type {key}", context
                )


def _decoded(decoder: Decoder, value: Any, what: str, context: ErrorContext) -> Any:
    try:
        return build(decoder, value)
    except Exception as exc:
        why = clipped(f"{type(exc).__name__}: {exc}", _MAX_WHY)  # it may quote the value
        raise A2AProtocolError(f"{what} does not fit {_name(decoder)}: {why}", **context) from exc


def _data_parts(value: Any) -> Iterator[DataPart]:
    """The data parts of a decoded answer, each once."""
    seen: set[int] = set()
    for message in _messages(value):
        for part in message.parts:
            if isinstance(part, DataPart) and id(part) not in seen:
                seen.add(id(part))
                yield part


def _messages(value: Any) -> Iterator[Message | Artifact]:
    """What holds parts in ``value``: messages and artifacts."""
    if isinstance(value, TaskPage):
        for task in value.tasks:
            yield from _messages(task)
    elif isinstance(value, Task):
        yield from _status(value.status)
        yield from value.history
        yield from value.artifacts
    elif isinstance(value, Message):
        yield value
    elif isinstance(value, TaskStatusUpdateEvent):
        yield from _status(value.status)
    elif isinstance(value, TaskArtifactUpdateEvent):
        yield value.artifact


def _status(status: TaskStatus) -> Iterator[Message]:
    if status.message is not None:
        yield status.message
