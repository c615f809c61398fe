"""The keyword options of the client, its calls and fan-outs, as TypedDicts: code that passes
them on (``**options: Unpack[ClientOptions]``) is checked by type checkers, name by name."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from a2a_anyio._auth import AuthInput
from a2a_anyio._deadline import Timeout
from a2a_anyio._http import AsyncClient, VerifyTypes
from a2a_anyio._intercept import Interceptor
from a2a_anyio._model import AgentCard, PushNotificationConfig, StreamEvent
from a2a_anyio._payloads import Decoder
from a2a_anyio._retry import RetryPolicy

if TYPE_CHECKING:
    from a2a_anyio._network import NetworkPolicy
    from a2a_anyio._signing import CardVerifier


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
