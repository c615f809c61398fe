"""The keyword options of the client, its calls and fan-outs, as TypedDicts: code that passes
them on (``**options: Unpack[ClientOptions]``) is checked by type checkers, name by name; and
the records a client keeps of them, checked once, for what its calls do unless told otherwise."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict

from a2a_anyio._auth import AuthInput
from a2a_anyio._deadline import Timeout, check_timeout
from a2a_anyio._http import AsyncClient, VerifyTypes
from a2a_anyio._intercept import Interceptor
from a2a_anyio._model import AgentCard, PushNotificationConfig, StreamEvent
from a2a_anyio._payloads import Decoder
from a2a_anyio._retry import RetryPolicy

if TYPE_CHECKING:
    from a2a_anyio._network import NetworkPolicy
    from a2a_anyio._signing import CardVerifier

#: A client's ``idle_timeout``: the longest gap between a stream's events.
DEFAULT_IDLE_TIMEOUT = 300.0


class StreamDefaults(NamedTuple):
    """What a client's streams do unless a call says otherwise (``stream_defaults`` checks)."""

    idle_timeout: float | None
    keep_events: int | None
    resume: bool


def stream_defaults(idle_timeout: object, keep_events: object, resume: object) -> StreamDefaults:
    """The client's stream options, checked.

    Raises:
        ValueError, TypeError: ``idle_timeout`` as ``check_timeout`` refuses it;
            ``keep_events`` that is neither None nor a whole number >= 0 (ValueError).
    """
    idle = check_timeout(idle_timeout, "idle_timeout")
    if keep_events is not None and (
        isinstance(keep_events, bool) or not isinstance(keep_events, int) or keep_events < 0
    ):
        raise ValueError(f"keep_events must be None or >= 0, not {keep_events!r}")
    return StreamDefaults(idle, keep_events, bool(resume))


class AgentOptions(TypedDict, total=False):
    """The options of ``A2AClient`` that are an agent's own: what a pool passes on to each
    client it makes (the rest are the pool's: ``ClientOptions``)."""

    auth: AuthInput
    headers: Mapping[str, str] | None
    cookies: Mapping[str, str] | None
    idle_timeout: float | None
    card_ttl: float
    protocol: str
    bindings: Sequence[str]
    endpoint: str | None
    tenant: str | None
    extensions: Sequence[str] | None
    card: AgentCard | Mapping[str, Any] | None
    retry: RetryPolicy | None
    resume: bool
    connect_timeout: float
    max_response_bytes: int
    max_event_bytes: int
    trusted_origins: Sequence[str]
    cross_origin: str
    card_verifier: CardVerifier | None
    keep_events: int | None
    types: Mapping[str, Decoder] | None
    interceptors: Sequence[Interceptor | object]
    cancel_on_exit: bool
    cancel_grace: float
    network_policy: NetworkPolicy | None


class ClientOptions(AgentOptions, total=False):
    """Every keyword option of ``A2AClient``, for code that passes them on
    (``**options: Unpack[ClientOptions]``): a type checker then checks each by its name and
    type. ``SyncA2AClient``, the one-shot helpers and ``AgentRegistry.client`` take them so."""

    verify: VerifyTypes
    timeout: float | None
    http_client: AsyncClient | None
    logger: logging.Logger | None
    tracing: bool


class ClientArguments(ClientOptions, total=False):
    """Every keyword argument of ``A2AClient``, ``url`` too: what a registry entry makes."""

    url: str | None


EventCallback = Callable[[StreamEvent], Any]


class FanOutOptions(TypedDict, total=False):
    """The options of ``send_message`` each send of a fan-out takes (``fan_out``,
    ``AgentPool.fan_out``, ``SyncAgentPool.fan_out``): those of ``SendOptions`` but
    ``timeout`` and ``cancel_on_exit``, which are the fan-out's own."""

    metadata: Mapping[str, Any] | None
    blocking: bool
    history_length: int | None
    accepted_output_modes: list[str] | None
    push_config: PushNotificationConfig | None
    on_event: EventCallback | None
    headers: Mapping[str, str] | None


class SendOptions(FanOutOptions, total=False):
    """The options of ``send_message`` a conversation's turn takes (``Conversation.send``):
    all but ``context_id`` and ``task_id``, which the conversation sets."""

    timeout: Timeout
    cancel_on_exit: bool | None


class FanOutStreamOptions(TypedDict, total=False):
    """The options of ``stream_message`` each stream of ``fan_out_stream`` takes: those of
    ``StreamOptions`` but ``cancel_on_exit``, which is the fan-out's own."""

    metadata: Mapping[str, Any] | None
    history_length: int | None
    accepted_output_modes: list[str] | None
    push_config: PushNotificationConfig | None
    idle_timeout: float | None
    total_timeout: float | None
    resume: bool | None
    headers: Mapping[str, str] | None


class StreamOptions(FanOutStreamOptions, total=False):
    """The options of ``stream_message`` a conversation's turn takes
    (``Conversation.stream``): all but ``context_id`` and ``task_id``."""

    cancel_on_exit: bool | None
