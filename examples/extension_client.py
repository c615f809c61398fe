"""A typed client for a JSON-RPC extension service at a custom path (a decision log with
guardrails, "CSTP", at ``/cstp``), built on ``A2AClient.call`` with retries, typed errors and
dataclass results: each method's result type is registered with the client
(``types=``), which builds it from the JSON. Without ``--url`` it starts its own tiny service
(Starlette, served on 127.0.0.1 by the testing kit's ``serve_app``) that answers the first
request with a 503.

uv run python examples/extension_client.py                   # starts the local service
uv run python examples/extension_client.py --backend trio
uv run python examples/extension_client.py --url URL         # a CSTP service's JSON-RPC URL
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from a2a_anyio import (
    A2AClient,
    A2AClientError,
    A2AConnectionError,
    A2AHTTPError,
    A2ARPCError,
    RetryAttempt,
    RetryPolicy,
)
from a2a_anyio.testing import serve_app

# -- the client --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Decision:
    id: str
    title: str
    status: str
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GuardrailVerdict:
    allowed: bool
    violations: list[str]  # the ids of the guardrails the action breaks


def decisions(result: dict[str, Any]) -> list[Decision]:
    """``{"decisions": [...]}`` as Decisions."""
    return [
        Decision(d["id"], d["title"], d["status"], tuple(d.get("tags", ())))
        for d in result["decisions"]
    ]


def intent_id(result: dict[str, Any]) -> str:
    """``{"intentId": "I-0001"}`` as its id."""
    found = result["intentId"]
    if not isinstance(found, str):
        raise TypeError(f"intentId is not a string: {found!r}")
    return found


#: What each method's result is made into (any callable of the JSON, or a dataclass, built
#: with ``T(**result)``); an answer that does not fit is an A2AProtocolError.
RESULT_TYPES: dict[str, Callable[..., Any]] = {
    "cstp.queryDecisions": decisions,
    "cstp.checkGuardrail": GuardrailVerdict,
    "cstp.announceIntent": intent_id,
}


class CstpError(Exception):
    """Any failure of the CSTP service."""


class CstpUnavailableError(CstpError):
    """The service could not be reached or kept failing (after the retries)."""


class CstpRequestError(CstpError):
    """The service refused the request with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"[{code}] {message}")
        self.code = code
        self.data = data


class CstpResponseError(CstpError):
    """The service answered something this client does not understand."""


class CstpClient:
    """``async with CstpClient(endpoint) as cstp:`` then the service's three methods.

    Queries and guardrail checks change nothing, so they are retried on connection failures
    and on 429/502/503/504 alike; an announcement only when it never reached the service.
    Each call has the client's 10 s deadline; an announcement gets 5 s.
    """

    def __init__(self, endpoint: str, *, retry: RetryPolicy | None = None) -> None:
        policy = retry or RetryPolicy(attempts=3, backoff=0.2)
        self._client = A2AClient(endpoint=endpoint, retry=policy, timeout=10, types=RESULT_TYPES)

    async def __aenter__(self) -> CstpClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._client.close()

    async def query_decisions(self, query: str, *, limit: int = 10) -> list[Decision]:
        found: list[Decision] = await self._call(
            "cstp.queryDecisions", {"query": query, "limit": limit}, idempotent=True
        )
        return found

    async def check_guardrail(self, action: str) -> GuardrailVerdict:
        verdict: GuardrailVerdict = await self._call(
            "cstp.checkGuardrail", {"action": action}, idempotent=True
        )
        return verdict

    async def announce_intent(self, intent: str) -> str:
        """Announce what the caller is about to do; returns the intent's id."""
        found: str = await self._call("cstp.announceIntent", {"intent": intent}, timeout=5)
        return found

    async def _call(self, method: str, params: dict[str, Any], **options: Any) -> Any:
        try:
            # idempotent=True lets the client's policy repeat a read after a 503 too.
            return await self._client.call(method, params, **options)
        except A2ARPCError as exc:
            raise CstpRequestError(exc.code, exc.message, exc.data) from exc
        except (A2AConnectionError, A2AHTTPError) as exc:
            raise CstpUnavailableError(str(exc)) from exc
        except A2AClientError as exc:  # not JSON-RPC, wrong id, a result of the wrong shape
            raise CstpResponseError(str(exc)) from exc


# -- a tiny local CSTP service -----------------------------------------------------------------

DECISIONS = [
    {"id": "D-101", "title": "Use PostgreSQL for orders", "status": "accepted", "tags": ["db"]},
    {"id": "D-117", "title": "Shard the events database", "status": "proposed", "tags": ["db"]},
    {"id": "D-123", "title": "Retire the SOAP gateway", "status": "accepted", "tags": ["api"]},
]


class RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def cstp_service(busy: int = 1) -> Starlette:
    """A JSON-RPC service at ``/cstp`` whose first ``busy`` requests are answered 503."""
    intents = itertools.count(1)

    def query(params: dict[str, Any]) -> Any:
        text = str(params.get("query", "")).lower()
        if not text:
            raise RpcError(-32602, "query must not be empty")
        found = [d for d in DECISIONS if text in str(d["title"]).lower() or text in d["tags"]]
        return {"decisions": found[: int(params.get("limit", 10))]}

    def guardrail(params: dict[str, Any]) -> Any:
        action = str(params.get("action", "")).lower()
        violations = ["no-destructive-prod"] if "drop" in action and "prod" in action else []
        return {"allowed": not violations, "violations": violations}

    def announce(params: dict[str, Any]) -> Any:
        if not params.get("intent"):
            raise RpcError(-32602, "intent must not be empty")
        return {"intentId": f"I-{next(intents):04d}"}

    methods: dict[str, Callable[[dict[str, Any]], Any]] = {
        "cstp.queryDecisions": query,
        "cstp.checkGuardrail": guardrail,
        "cstp.announceIntent": announce,
    }

    async def rpc(request: Request) -> Response:
        nonlocal busy
        if busy > 0:
            busy -= 1
            return Response("busy, try again", status_code=503)
        body = await request.json()
        try:
            method = methods.get(body.get("method"))
            if method is None:
                raise RpcError(-32601, f"method not found: {body.get('method')}")
            answer = {"result": method(body.get("params") or {})}
        except RpcError as exc:
            answer = {"error": {"code": exc.code, "message": str(exc)}}
        return JSONResponse({"jsonrpc": "2.0", "id": body.get("id"), **answer})

    return Starlette(routes=[Route("/cstp", rpc, methods=["POST"])])


# -- the demo ----------------------------------------------------------------------------------


async def demo(cstp: CstpClient) -> None:
    for decision in await cstp.query_decisions("db"):
        print(f"decision {decision.id} [{decision.status}] {decision.title}")
    for action in ("drop table users on prod", "add an index on staging"):
        verdict = await cstp.check_guardrail(action)
        blocked = f"blocked by {', '.join(verdict.violations)}"
        print(f"guardrail {action!r}: {'allowed' if verdict.allowed else blocked}")
    print(f"intent announced: {await cstp.announce_intent('migrate orders to PG 17')}")
    try:
        await cstp.query_decisions("")
    except CstpRequestError as exc:
        print(f"refused: {exc} (code {exc.code})")


async def main(url: str | None) -> int:
    def on_retry(attempt: RetryAttempt) -> None:
        error, delay = attempt.error.message, attempt.delay
        print(f"  retry: {attempt.operation} got {error}; again in {delay:.2f}s")

    policy = RetryPolicy(attempts=3, backoff=0.2, on_retry=on_retry)
    async with AsyncExitStack() as stack:
        if url is None:
            url = await stack.enter_async_context(serve_app(cstp_service())) + "/cstp"
            print(f"local CSTP service at {url}")
        async with CstpClient(url, retry=policy) as cstp:
            try:
                await demo(cstp)
            except CstpError as exc:  # caught here: serve_app would wrap it in a group
                print(f"CSTP failed: {type(exc).__name__}: {exc}")
                return 1
    return 0


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0].replace("``", ""))
    parser.add_argument("--url", help="a CSTP service's JSON-RPC URL (default: start a local one)")
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    args = parser.parse_args()
    print(f"== {args.backend} ==")
    sys.exit(anyio.run(main, args.url, backend=args.backend))


if __name__ == "__main__":
    cli()
