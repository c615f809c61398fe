"""a2a-anyio: an A2A (Agent2Agent) protocol client for asyncio and trio."""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from a2a_anyio import _model
from a2a_anyio._abandon import CancelGuard, CancelOutcome
from a2a_anyio._auth import Auth, MutualTLS
from a2a_anyio._card import AgentCardFetcher
from a2a_anyio._client import A2AClient
from a2a_anyio._conversation import Conversation, ConversationTurn
from a2a_anyio._deadline import CLIENT_TIMEOUT
from a2a_anyio._errors import (
    A2AAuthError,
    A2AClientError,
    A2AConnectionError,
    A2ADiscoveryError,
    A2AHTTPError,
    A2AProtocolError,
    A2ARPCError,
    A2AServerError,
    A2ATimeoutError,
    AuthRequiredError,
    ContentTypeNotSupportedError,
    ContextMismatchError,
    ExtendedCardNotConfiguredError,
    ExtensionSupportRequiredError,
    InvalidAgentResponseError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    ParseError,
    PushNotificationNotSupportedError,
    TaskFailedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from a2a_anyio._intercept import Interceptor, Operation
from a2a_anyio._model import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    Artifact,
    DataPart,
    FilePart,
    Message,
    Part,
    PushNotificationConfig,
    Role,
    SecurityScheme,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskPage,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_anyio._options import (
    ClientOptions,
    FanOutOptions,
    FanOutStreamOptions,
    SendOptions,
    StreamOptions,
)
from a2a_anyio._reducer import TaskReducer
from a2a_anyio._retry import NO_RETRY, RetryAttempt, RetryPolicy, no_retry_delays
from a2a_anyio._stream import MessageStream

if _TYPE_CHECKING:
    from a2a_anyio._agent_text import from_agent
    from a2a_anyio._auth_card import CardAuth
    from a2a_anyio._auth_schemes import ApiKey, Basic, Bearer
    from a2a_anyio._card_check import CardProblem, check_card
    from a2a_anyio._conformance import CheckResult, ConformanceReport, LeftTask, check_agent
    from a2a_anyio._fanout import AgentResult, MergedStreams, StreamItem, merge_streams
    from a2a_anyio._network import A2ANetworkPolicyError, NetworkPolicy
    from a2a_anyio._oauth import (
        OAuth2ClientCredentials,
        OAuth2JWTBearer,
        OAuth2TokenExchange,
        TokenSet,
    )
    from a2a_anyio._oauth_user import DeviceCode, OAuth2AuthorizationCode, OAuth2DeviceCode
    from a2a_anyio._oneshot import cancel_task, discover, get_task, send_text
    from a2a_anyio._pool import AgentPool, FanOutStream, fan_out, fan_out_stream
    from a2a_anyio._registry import AgentEntry, AgentRegistry, AgentRegistryError
    from a2a_anyio._signing import CardVerifier, VerifiedCard, canonicalize, sign_card
    from a2a_anyio._sync import SyncA2AClient, SyncMessageStream
    from a2a_anyio._sync_conversation import SyncConversation
    from a2a_anyio._sync_pool import SyncAgentPool
    from a2a_anyio._sync_tool import SyncAgentTool
    from a2a_anyio._tool import AgentTool, AgentToolFile, AgentToolProgress, AgentToolResult

__version__ = "0.1.0"
"""The version of a2a-anyio."""

# Loaded on first use: what a program that makes a client and calls it may never need.
# Fan-out, pools, the registry and the sync facade pull in more of anyio (memory streams,
# threads) than a single client needs; card signing is JWS, JWKS and JCS; the auth schemes
# are not needed by a client given a plain ``auth=`` value or none, nor the one-shot helpers
# by a program that makes its own client, nor the card checks by one that only calls agents.
# by a program that makes its own client; nor agents as tools by one that calls them itself.
_LAZY = {
    "ApiKey": "a2a_anyio._auth_schemes",
    "Basic": "a2a_anyio._auth_schemes",
    "Bearer": "a2a_anyio._auth_schemes",
    "CardAuth": "a2a_anyio._auth_card",
    "DeviceCode": "a2a_anyio._oauth_user",
    "OAuth2AuthorizationCode": "a2a_anyio._oauth_user",
    "OAuth2ClientCredentials": "a2a_anyio._oauth",
    "OAuth2DeviceCode": "a2a_anyio._oauth_user",
    "OAuth2JWTBearer": "a2a_anyio._oauth",
    "OAuth2TokenExchange": "a2a_anyio._oauth",
    "TokenSet": "a2a_anyio._oauth",
    "CardProblem": "a2a_anyio._card_check",
    "check_card": "a2a_anyio._card_check",
    "CheckResult": "a2a_anyio._conformance",
    "ConformanceReport": "a2a_anyio._conformance",
    "LeftTask": "a2a_anyio._conformance",
    "check_agent": "a2a_anyio._conformance",
    "AgentResult": "a2a_anyio._fanout",
    "FanOutStream": "a2a_anyio._pool",
    "MergedStreams": "a2a_anyio._fanout",
    "StreamItem": "a2a_anyio._fanout",
    "fan_out": "a2a_anyio._pool",
    "fan_out_stream": "a2a_anyio._pool",
    "merge_streams": "a2a_anyio._fanout",
    "cancel_task": "a2a_anyio._oneshot",
    "discover": "a2a_anyio._oneshot",
    "get_task": "a2a_anyio._oneshot",
    "send_text": "a2a_anyio._oneshot",
    "AgentPool": "a2a_anyio._pool",
    "A2ANetworkPolicyError": "a2a_anyio._network",
    "NetworkPolicy": "a2a_anyio._network",
    "AgentEntry": "a2a_anyio._registry",
    "AgentRegistry": "a2a_anyio._registry",
    "AgentRegistryError": "a2a_anyio._registry",
    "CardVerifier": "a2a_anyio._signing",
    "VerifiedCard": "a2a_anyio._signing",
    "canonicalize": "a2a_anyio._signing",
    "sign_card": "a2a_anyio._signing",
    "SyncA2AClient": "a2a_anyio._sync",
    "SyncAgentPool": "a2a_anyio._sync_pool",
    "SyncMessageStream": "a2a_anyio._sync",
    "AgentTool": "a2a_anyio._tool",
    "AgentToolFile": "a2a_anyio._tool",
    "AgentToolProgress": "a2a_anyio._tool",
    "AgentToolResult": "a2a_anyio._tool",
    "from_agent": "a2a_anyio._agent_text",
    "SyncAgentTool": "a2a_anyio._sync_tool",
    "SyncConversation": "a2a_anyio._sync_conversation",
}


def _plain_codecs() -> _model.PlainCodecs:
    from a2a_anyio._dialects import plain

    return plain


_model.codecs = _plain_codecs


def __getattr__(name: str) -> _Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'a2a_anyio' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "A2AAuthError",
    "A2AClient",
    "A2AClientError",
    "A2AConnectionError",
    "A2ADiscoveryError",
    "A2AHTTPError",
    "A2ANetworkPolicyError",
    "A2AProtocolError",
    "A2ARPCError",
    "A2AServerError",
    "A2ATimeoutError",
    "AgentCapabilities",
    "AgentCard",
    "AgentCardFetcher",
    "AgentEntry",
    "AgentExtension",
    "AgentInterface",
    "AgentPool",
    "AgentProvider",
    "AgentRegistry",
    "AgentRegistryError",
    "AgentResult",
    "AgentSkill",
    "AgentTool",
    "AgentToolFile",
    "AgentToolProgress",
    "AgentToolResult",
    "ApiKey",
    "Artifact",
    "Auth",
    "AuthRequiredError",
    "Basic",
    "Bearer",
    "CLIENT_TIMEOUT",
    "CancelGuard",
    "CancelOutcome",
    "CardAuth",
    "CardProblem",
    "CardVerifier",
    "CheckResult",
    "ClientOptions",
    "ConformanceReport",
    "ContentTypeNotSupportedError",
    "ContextMismatchError",
    "Conversation",
    "ConversationTurn",
    "DataPart",
    "DeviceCode",
    "ExtendedCardNotConfiguredError",
    "ExtensionSupportRequiredError",
    "FanOutOptions",
    "FanOutStream",
    "FanOutStreamOptions",
    "FilePart",
    "Interceptor",
    "InvalidAgentResponseError",
    "InvalidParamsError",
    "InvalidRequestError",
    "LeftTask",
    "MergedStreams",
    "Message",
    "MessageStream",
    "MethodNotFoundError",
    "MutualTLS",
    "NO_RETRY",
    "NetworkPolicy",
    "OAuth2AuthorizationCode",
    "OAuth2ClientCredentials",
    "OAuth2DeviceCode",
    "OAuth2JWTBearer",
    "OAuth2TokenExchange",
    "Operation",
    "ParseError",
    "Part",
    "PushNotificationConfig",
    "PushNotificationNotSupportedError",
    "RetryAttempt",
    "RetryPolicy",
    "Role",
    "SecurityScheme",
    "SendOptions",
    "StreamEvent",
    "StreamItem",
    "StreamOptions",
    "SyncA2AClient",
    "SyncAgentPool",
    "SyncAgentTool",
    "SyncConversation",
    "SyncMessageStream",
    "Task",
    "TaskArtifactUpdateEvent",
    "TaskFailedError",
    "TaskNotCancelableError",
    "TaskNotFoundError",
    "TaskPage",
    "TaskReducer",
    "TaskState",
    "TaskStatus",
    "TaskStatusUpdateEvent",
    "TextPart",
    "TokenSet",
    "UnsupportedOperationError",
    "VerifiedCard",
    "VersionNotSupportedError",
    "__version__",
    "cancel_task",
    "canonicalize",
    "check_agent",
    "check_card",
    "discover",
    "fan_out",
    "fan_out_stream",
    "from_agent",
    "get_task",
    "merge_streams",
    "no_retry_delays",
    "send_text",
    "sign_card",
]
