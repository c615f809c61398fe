"""A send's message and options, checked and made before anything is sent: what
``send_message`` and ``stream_message`` take, the fan-outs and the interceptors' changes too."""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, NoReturn

from a2a_anyio._auth import check_headers
from a2a_anyio._dialects import SendConfig
from a2a_anyio._dialects._values import UNEXPECTED_SHAPE
from a2a_anyio._errors import A2AProtocolError
from a2a_anyio._model import Message, PushNotificationConfig, Role, new_id

MessageInput = str | Mapping[str, Any] | Message


#: The forms a message is accepted in, said by the errors that refuse one.
MESSAGE_FORMS = (
    "a message is a str, a Message, or a dict in any dialect's shape, "
    'such as {"role": "user", "parts": [{"text": "hi"}]}'
)


def coerce_message(message: MessageInput) -> Message:
    """A Message from a str, a dict in any dialect's shape, or a Message.

    Raises:
        ValueError: anything else, or a dict that is not a message (it says ``MESSAGE_FORMS``).
    """
    if isinstance(message, Message):
        return message
    if isinstance(message, str):
        return Message.user(message)
    if not isinstance(message, Mapping):
        raise ValueError(f"message cannot be of type {type(message).__name__}: {MESSAGE_FORMS}")
    try:
        decoded = Message.from_dict(message)
    except A2AProtocolError as exc:
        # The readers of the agent's values blame the agent; this value is the caller's.
        why = exc.message.removeprefix(UNEXPECTED_SHAPE)
        raise ValueError(
            f"message does not have a message's shape ({why}): {MESSAGE_FORMS}"
        ) from None
    if not decoded.parts:
        raise ValueError(f"message has no parts: {MESSAGE_FORMS}")
    if "role" not in message:
        decoded = replace(decoded, role=Role.USER)
    return decoded if decoded.message_id else replace(decoded, message_id=new_id())


def prepare_send(
    message: MessageInput,
    metadata: Mapping[str, Any] | None = None,
    context_id: str | None = None,
    task_id: str | None = None,
    blocking: bool = True,
    history_length: int | None = None,
    accepted_output_modes: Sequence[str] | None = None,
    push_config: PushNotificationConfig | None = None,
) -> tuple[Message, SendConfig]:
    """The message and options of a send (as ``send_message`` takes them), checked before
    anything is sent.

    Raises:
        ValueError: a message that cannot be made into a ``Message`` (see ``coerce_message``).
        TypeError: an option of the wrong type (the error names what it accepts).
    """
    msg = coerce_message(message)
    if metadata is not None and not isinstance(metadata, Mapping):
        refuse("metadata", metadata, "a mapping (dict) of names to JSON values")
    for name, value in (("context_id", context_id), ("task_id", task_id)):
        if value is not None and not isinstance(value, str):
            refuse(name, value, "a str")
    if not isinstance(blocking, bool):
        refuse("blocking", blocking, "a bool")
    if history_length is not None and (
        not isinstance(history_length, int) or isinstance(history_length, bool)
    ):
        refuse("history_length", history_length, "an int")
    if accepted_output_modes is not None and (
        isinstance(accepted_output_modes, str)
        or not isinstance(accepted_output_modes, Sequence)
        or not all(isinstance(mode, str) for mode in accepted_output_modes)
    ):
        refuse("accepted_output_modes", accepted_output_modes, "a list of media types (str)")
    if push_config is not None and not isinstance(push_config, PushNotificationConfig):
        refuse("push_config", push_config, "a PushNotificationConfig")
    if context_id is not None or task_id is not None:
        msg = replace(
            msg,
            context_id=context_id if context_id is not None else msg.context_id,
            task_id=task_id if task_id is not None else msg.task_id,
        )
    config = SendConfig(
        blocking,
        history_length,
        list(accepted_output_modes) if accepted_output_modes is not None else None,
        push_config,
        dict(metadata) if metadata else None,
    )
    return msg, config


def check_send(message: MessageInput, options: Mapping[str, Any]) -> None:
    """Raise what ``prepare_send`` raises for ``message`` and the options of ``options`` it
    takes, and its ``headers`` (the others, a timeout say, are left alone): a call that
    sends to many agents raises the caller's mistakes once, before sending."""
    prepare_send(message, **{k: v for k, v in options.items() if k in _PREPARED})
    if options.get("headers") is not None:
        check_headers("headers", options["headers"])


_PREPARED = frozenset(inspect.signature(prepare_send).parameters) - {"message"}


def refuse(name: str, value: Any, accepted: str) -> NoReturn:
    """Raise the TypeError of an option of the wrong type: it names what is accepted."""
    raise TypeError(f"{name} must be {accepted}, not {type(value).__name__}")
