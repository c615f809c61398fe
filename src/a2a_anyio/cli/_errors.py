"""Exit codes and the error envelope: one classification of every failure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

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
    ExtendedCardNotConfiguredError,
    ParseError,
)
from a2a_anyio._registry import AgentRegistryError

OK = 0
FAILURE = 1
USAGE = 2
UNREACHABLE = 3
AUTH = 4
TIMEOUT = 5
INTERRUPTED = 130
#: The status of a command killed by SIGPIPE (128 + 13), as shells report it.
OUTPUT_CLOSED = 141

# Our error classes whose A2A name differs (A2A v1.0 §3.3.2, JSON-RPC standard names).
_A2A_NAMES = {
    ParseError: "JSONParseError",
    A2AServerError: "InternalError",
    ExtendedCardNotConfiguredError: "ExtendedAgentCardNotConfiguredError",
}


class UsageError(Exception):
    """Invalid arguments, flags or flag combination (exit 2); ``parser`` printed the usage."""

    def __init__(self, message: str, *, parser: Any = None) -> None:
        super().__init__(message)
        self.parser = parser


class OutputClosed(BaseException):
    """The reader of the command's output went away (a pipe closed early, as ``| head -1``
    does): the command ends at once and quietly (exit 141), as SIGPIPE ends other commands.
    Not an ``Exception``: no handler of a command's failures may report it."""


class CardNotFound(Exception):
    """An agent reference that names no URL, card file or registry entry (exit 3); ``near``
    holds the registry's names closest to it."""

    def __init__(self, message: str, *, near: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.near = list(near)


def did_you_mean(names: Sequence[str]) -> str:
    """``did you mean 'a'?``, or ``'a', 'b' or 'c'`` for several."""
    quoted = [repr(n) for n in names]
    listed = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
    return f"did you mean {listed}?"


@dataclass(slots=True)
class Failure:
    """What a failure means to the caller: exit status, error code, message, hint."""

    exit_code: int
    code: str
    message: str
    hint: str | None = None
    a2a_code: int | str | None = None

    def envelope(self) -> dict[str, Any]:
        """The error object printed on stdout under ``-o json``."""
        return {
            "error": {
                "code": self.code,
                "message": self.message,
                "hint": self.hint,
                "a2aCode": self.a2a_code,
            }
        }


def classify(exc: BaseException, *, credentials: bool = False) -> Failure:
    """The ``Failure`` of an exception; ``credentials`` says whether any were sent.

    Exit 2 is for ``UsageError`` and ``AgentRegistryError`` only: the user's input. Whatever
    an agent sends is never reported as a usage error.
    """
    msg = str(exc)
    if isinstance(exc, UsageError):
        prog = getattr(exc.parser, "prog", "a2a-anyio")
        return Failure(USAGE, "A2ACLI_ERR_USAGE", msg, f"see {prog} --help")
    if isinstance(exc, AgentRegistryError):
        return Failure(USAGE, "A2A_ANYIO_ERR_CONFIG", msg, _config_hint(exc))
    if isinstance(exc, CardNotFound):
        hint = "give a URL, a card file, or a name from the registry (a2a-anyio agents)"
        if exc.near:
            hint = f"{did_you_mean(exc.near)} (a2a-anyio agents lists the registry)"
        return Failure(UNREACHABLE, "A2ACLI_ERR_CARD_NOT_FOUND", msg, hint)
    if isinstance(exc, A2ATimeoutError):
        return Failure(TIMEOUT, "A2ACLI_ERR_TIMEOUT", msg, "allow more time with --timeout SECONDS")
    if isinstance(exc, A2AConnectionError):
        return Failure(
            UNREACHABLE,
            "A2ACLI_ERR_UNREACHABLE",
            msg,
            "check that the agent runs and that -a/--agent points at it",
        )
    status = getattr(exc, "status_code", None)
    if isinstance(exc, A2AAuthError) or (
        isinstance(exc, A2ADiscoveryError) and status in (401, 403)
    ):
        if credentials:
            return Failure(
                AUTH,
                "A2ACLI_ERR_AUTH_FAILED",
                msg,
                "the agent refused the credentials: check the token or key",
                status,
            )
        schemes = " ".join(getattr(exc, "schemes", ()))
        oauth = "OAuth 2.0" in schemes or "OpenID Connect" in schemes
        return Failure(
            AUTH,
            "A2ACLI_ERR_CREDENTIALS_MISSING",
            msg,
            "sign in with 'a2a-anyio auth login AGENT --client-id ID', or pass --bearer TOKEN"
            if oauth
            else "pass --bearer TOKEN or --api-key KEY (or token_env in the registry)",
            status,
        )
    if isinstance(exc, A2ADiscoveryError):
        if status is not None or exc.not_found:
            return Failure(
                UNREACHABLE,
                "A2ACLI_ERR_CARD_NOT_FOUND",
                msg,
                "is the URL the agent's base URL or its card's URL? "
                "For a JSON-RPC service without a card use --endpoint URL",
                status,
            )
        return Failure(FAILURE, "A2ACLI_ERR_CARD_INVALID", msg, "check the card with --debug")
    if isinstance(exc, A2ARPCError):
        name = _A2A_NAMES.get(type(exc), type(exc).__name__)
        if name == "A2ARPCError":
            name = "InternalError"
        return Failure(FAILURE, name, msg, _rpc_hint(name), exc.code)
    if isinstance(exc, A2AHTTPError):
        return Failure(
            FAILURE, "A2A_ANYIO_ERR_HTTP", msg, "rerun with --debug to see the exchange", status
        )
    if isinstance(exc, A2AProtocolError):
        return Failure(
            FAILURE,
            "A2A_ANYIO_ERR_PROTOCOL",
            msg,
            "the agent's answer does not fit the protocol; rerun with --debug to see it",
        )
    if isinstance(exc, A2AClientError):
        return Failure(FAILURE, "A2ACLI_ERR_INTERNAL", msg)
    # Anything else is not the user's doing: a mistake in what the user gave is reported as a
    # UsageError (or an AgentRegistryError) where it is found, so a ValueError that gets here
    # came from an agent's answer and is a failure, not a usage error.
    return Failure(
        FAILURE,
        "A2ACLI_ERR_INTERNAL",
        f"{type(exc).__name__}: {msg}",
        "rerun with --debug for the traceback",
    )


def _config_hint(exc: AgentRegistryError) -> str:
    if exc.variable:
        return f"export {exc.variable}=... before running a2a-anyio"
    return "fix the registry file, or point --config at another one"


def _rpc_hint(name: str) -> str | None:
    return {
        "TaskNotFoundError": "list the agent's tasks with: a2a-anyio task list",
        "MethodNotFoundError": "the agent may speak another A2A version: try --protocol 0.3",
        "VersionNotSupportedError": "try --protocol 0.3 or --protocol 1.0",
        "UnsupportedOperationError": "the agent does not offer this operation",
        "PushNotificationNotSupportedError": "the agent's card declares no push notifications",
    }.get(name)


def exit_code_of(failures: list[Failure]) -> int:
    """One exit status for several failures: theirs when they agree, else 1."""
    codes = {f.exit_code for f in failures}
    if not codes:
        return OK
    return codes.pop() if len(codes) == 1 else FAILURE
