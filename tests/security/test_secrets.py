"""Secrets stay out of errors, logs and reprs; credentials that cannot go into a request
unchanged are refused when the client is built.

A header value with CR or LF would add headers of the caller's choosing (or be refused by the
HTTP layer with an error that quotes it), NUL and other control characters likewise, and a
value outside ASCII makes httpx raise ``UnicodeEncodeError`` on every request. Each is a
``ValueError`` naming the option, never its value, before any request. Values made at run time
(an auth function's, a token endpoint's) are checked before they are sent.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from typing import Any

import anyio.lowlevel
import httpx
import pytest

from a2a_anyio import (
    A2AClient,
    A2AClientError,
    A2AProtocolError,
    AgentEntry,
    AgentPool,
    ApiKey,
    Basic,
    Bearer,
    OAuth2ClientCredentials,
    SyncA2AClient,
    SyncAgentPool,
)
from a2a_anyio.testing import FakeAgent
from tests.unit._support import RPC_URL

pytestmark = pytest.mark.anyio

URL = "https://agent.example.com"
BAD = ["\r", "\n", "\r\n", "\x00", "\x01", "\x7f"]


def secret(bad: str) -> str:
    return f"s3c{bad}ret-value"


def refused(build: Callable[[], object], option: str) -> None:
    """``build()`` raises ValueError naming ``option`` and showing no part of the value."""
    with pytest.raises(ValueError, match="holds") as info:
        build()
    text = str(info.value)
    assert option in text, text
    assert "s3c" not in text and "ret-value" not in text


# -- refused when the client is built ----------------------------------------------------------

OPTIONS: dict[str, Callable[[str], dict[str, Any]]] = {
    "auth": lambda v: {"auth": f"Bearer {v}"},
    "headers['X-Key']": lambda v: {"headers": {"X-Key": v}},
    "cookies['sid']": lambda v: {"cookies": {"sid": v}},
}


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("option", OPTIONS)
def test_a_client_refuses_control_characters_in_credentials(option: str, bad: str) -> None:
    options = OPTIONS[option](secret(bad))
    sent: list[httpx.Request] = []
    http = httpx.AsyncClient(transport=httpx.MockTransport(sent.append))  # type: ignore[arg-type]
    refused(lambda: A2AClient(URL, http_client=http, **options), option)
    refused(lambda: AgentPool(**options), option)  # not at the first use of an agent
    refused(lambda: SyncA2AClient(URL, **options), option)
    refused(lambda: SyncAgentPool(**options), option)
    assert sent == []


@pytest.mark.parametrize("option", OPTIONS)
def test_values_outside_ascii_are_refused_too(option: str) -> None:
    # httpx would raise UnicodeEncodeError on every request
    refused(lambda: A2AClient(URL, **OPTIONS[option]("s3c\u00e9ret-value")), option)


@pytest.mark.parametrize("bad", ["\r\n", "\x00", " ", ":", "\u00e9"])
def test_names_that_are_not_tokens_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="headers has a name that is not an HTTP token"):
        A2AClient(URL, headers={f"X{bad}s3c": "v"})
    with pytest.raises(ValueError, match="cookies has a name that is not an HTTP token"):
        A2AClient(URL, cookies={f"X{bad}s3c": "v"})
    with pytest.raises(ValueError, match="a name that is not an HTTP token"):
        ApiKey("v", name=f"X{bad}s3c")


def test_a_semicolon_in_a_cookie_would_start_another_one() -> None:
    refused(lambda: A2AClient(URL, cookies={"sid": "s3c; admin=ret-value"}), "cookies['sid']")
    refused(lambda: ApiKey("s3c; admin=ret-value", location="cookie"), "ApiKey value")


SCHEMES: list[tuple[str, Callable[[str], object]]] = [
    ("Bearer token", lambda v: Bearer(v)),
    ("Basic username", lambda v: Basic(v, "pw")),
    ("Basic password", lambda v: Basic("ann", v)),
    ("ApiKey value", lambda v: ApiKey(v)),
    ("ApiKey value", lambda v: ApiKey(v, name="k", location="cookie")),
    ("ApiKey value", lambda v: ApiKey(v, name="k", location="query")),
    (
        "OAuth2ClientCredentials client_secret",
        lambda v: OAuth2ClientCredentials(URL + "/token", "client", v),
    ),
    ("OAuth2ClientCredentials client_id", lambda v: OAuth2ClientCredentials(URL, v, "x")),
    (
        "OAuth2ClientCredentials audience",
        lambda v: OAuth2ClientCredentials(URL, "c", "x", audience=v),
    ),
]


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize(("field", "build"), SCHEMES)
def test_auth_schemes_refuse_control_characters(
    field: str, build: Callable[[str], object], bad: str
) -> None:
    refused(lambda: build(secret(bad)), field)


def test_a_scheme_changed_after_it_was_made_is_checked_by_the_client() -> None:
    auth = OAuth2ClientCredentials(URL + "/token", "client", "fine")
    auth.client_secret = secret("\n")
    refused(lambda: A2AClient(URL, auth=auth), "OAuth2ClientCredentials client_secret")


def test_a_url_with_a_password_is_refused() -> None:
    with_password = "https://ann:s3cret-value@agent.example.com"
    for options in (
        {"url": with_password},
        {"endpoint": with_password + "/a2a"},
        {"url": URL, "trusted_origins": [with_password]},
    ):
        with pytest.raises(ValueError, match="user name or password") as info:
            A2AClient(**options)
        assert "s3cret" not in str(info.value)


# -- values made at run time ---------------------------------------------------------------------


class Agent:
    """Answers GetTask with 200, and the token endpoint with ``token``; keeps every request."""

    def __init__(self, token: str = "tok") -> None:
        self.token = token
        self.requests: list[httpx.Request] = []

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        await anyio.lowlevel.checkpoint()
        if request.url.path == "/token":
            return httpx.Response(200, json={"access_token": self.token, "expires_in": 60})
        task = {"id": "t", "status": {"state": "TASK_STATE_COMPLETED"}}
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": 1, "result": task})

    def client(self, auth: Any) -> A2AClient:
        http = httpx.AsyncClient(transport=httpx.MockTransport(self.handle))
        return A2AClient(endpoint=RPC_URL, protocol="1.0", auth=auth, http_client=http)

    @property
    def calls(self) -> list[httpx.Request]:
        return [r for r in self.requests if r.url.path != "/token"]


@pytest.mark.parametrize("bad", BAD)
async def test_an_auth_function_returning_control_characters_is_refused(bad: str) -> None:
    agent = Agent()

    async def provider() -> str:
        await anyio.lowlevel.checkpoint()
        return f"Bearer {secret(bad)}"

    async with agent.client(provider) as client:
        with pytest.raises(ValueError, match="auth function") as info:
            await client.get_task("t")
    assert "s3c" not in str(info.value)
    assert agent.calls == []


@pytest.mark.parametrize("bad", [*BAD, " ", "\u00e9"])
async def test_a_token_a_header_cannot_carry_is_refused_unquoted(bad: str) -> None:
    agent = Agent(token=f"t0ken{bad}X-Injected: 1")
    auth = OAuth2ClientCredentials("https://agent.example.com/token", "client", "secret")
    async with agent.client(auth) as client:
        with pytest.raises(A2AProtocolError, match="bad token response") as info:
            await client.get_task("t")
    assert "t0ken" not in str(info.value) and "Injected" not in str(info.value)
    assert agent.calls == []


@pytest.mark.parametrize("bad", ["\r\n", "\x00"])
async def test_a_header_the_http_layer_refuses_is_not_quoted_in_the_error(bad: str) -> None:
    # A default header of an injected client is the user's own, outside the checks: over a
    # real connection h11 refuses it, with an error that quotes the value.
    async with FakeAgent().serve() as agent:
        http = httpx.AsyncClient(headers={"X-Private": f"s3cret-value{bad}X: 1"})
        async with A2AClient(endpoint=agent.rpc_url, protocol="1.0", http_client=http) as client:
            with pytest.raises(A2AClientError) as info:
                await client.get_task("t")
        await http.aclose()
    error = info.value
    assert "s3cret" not in "".join(traceback.format_exception(type(error), error, None))
    assert not error.retryable


async def test_no_secret_in_any_log_line(caplog: pytest.LogCaptureFixture) -> None:
    secrets = ["s3cret-bearer", "s3cret-header", "s3cret-cookie", "s3cret-client", "t0ken"]
    caplog.set_level(logging.DEBUG)  # every logger: httpx, httpcore, hypercorn, ours
    async with FakeAgent().serve() as agent:
        for auth in (
            Bearer("s3cret-bearer"),
            OAuth2ClientCredentials(agent.url + "/token", "client", "s3cret-client"),
        ):
            client = A2AClient(
                agent.url,
                auth=auth,
                headers={"X-Private": "s3cret-header"},
                cookies={"sid": "s3cret-cookie"},
            )
            async with client:
                with pytest.raises(A2AClientError):  # the agent has no task "t"
                    await client.get_task("t")
    assert any("HTTP Request" in r.getMessage() for r in caplog.records)
    for record in caplog.records:
        text = record.getMessage()
        assert not any(s in text for s in secrets), text


# -- reprs ---------------------------------------------------------------------------------------


def test_a_registry_entry_shows_no_header_or_cookie_value() -> None:
    entry = AgentEntry(
        "a", url=URL, headers={"X-Key": "s3cret-value"}, cookies={"sid": "s3cret-value"}
    )
    assert "s3cret" not in repr(entry)
