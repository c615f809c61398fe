"""A2AClient over httpx.MockTransport: discovery, every operation, headers, lifecycle, errors."""

from __future__ import annotations

import json
import traceback
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from a2a_anyio import (
    A2AAuthError,
    A2AClient,
    A2AClientError,
    A2AConnectionError,
    A2ADiscoveryError,
    A2AHTTPError,
    A2AProtocolError,
    A2ATimeoutError,
    AgentCard,
    DataPart,
    ExtendedCardNotConfiguredError,
    Message,
    MethodNotFoundError,
    Role,
    Task,
    TaskNotFoundError,
    TaskState,
    TextPart,
    UnsupportedOperationError,
    send_text,
)

from ._support import (
    BASE,
    RPC_URL,
    FakeAgent,
    causes,
    drain,
    on_mock_clock,
    v03_card,
    v1_card,
)

pytestmark = pytest.mark.anyio

V1_TASK = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"}}
V03_TASK = {"kind": "task", "id": "t-1", "contextId": "c-1", "status": {"state": "completed"}}
V1_REPLY = {"message": {"messageId": "r-1", "role": "ROLE_AGENT", "parts": [{"text": "pong"}]}}
V03_REPLY = {
    "kind": "message",
    "messageId": "r-1",
    "role": "agent",
    "parts": [{"kind": "text", "text": "pong"}],
}
HOOK_V1 = {"taskId": "t-1", "id": "h-1", "url": "https://hook.example/cb", "token": "tok"}
HOOK_V03 = {
    "taskId": "t-1",
    "pushNotificationConfig": {"id": "h-1", "url": "https://hook.example/cb", "token": "tok"},
}


@asynccontextmanager
async def connect(
    agent: FakeAgent, url: str | None = BASE, **options: Any
) -> AsyncIterator[A2AClient]:
    async with (
        httpx.AsyncClient(transport=agent.transport()) as http,
        A2AClient(url, http_client=http, **options) as client,
    ):
        yield client


def v1_agent() -> FakeAgent:
    agent = FakeAgent(v1_card())
    agent.results["SendMessage"] = {"task": V1_TASK}
    return agent


def v03_agent() -> FakeAgent:
    agent = FakeAgent(v03_card())
    agent.results["message/send"] = V03_TASK
    return agent


# -- construction --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "agent.example.com",
        "ftp://agent.example.com",
        "https://",
        "/relative/path",
        "https://agent.example.com:99999/",
        "",
    ],
)
def test_malformed_url_is_a_value_error(url: str) -> None:
    with pytest.raises(ValueError, match="url"):
        A2AClient(url)
    with pytest.raises(ValueError, match="endpoint"):
        A2AClient(endpoint=url)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="url"):
        A2AClient(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs a url or an endpoint"):
        A2AClient()
    with pytest.raises(ValueError, match="protocol"):
        A2AClient(BASE, protocol="2.0")


# -- discovery -----------------------------------------------------------------------------------


async def test_v1_discovery_and_send() -> None:
    agent = v1_agent()
    async with connect(agent) as client:
        task = await client.send_message("hello")
    assert isinstance(task, Task)
    assert (task.id, task.state) == ("t-1", TaskState.COMPLETED)
    card_req, rpc = agent.requests
    assert (card_req.method, str(card_req.url)) == ("GET", BASE + "/.well-known/agent-card.json")
    assert (rpc.method, str(rpc.url)) == ("POST", RPC_URL)
    assert rpc.headers["A2A-Version"] == "1.0"
    assert rpc.headers["content-type"] == "application/json"
    body = json.loads(rpc.content)
    assert (body["jsonrpc"], body["method"]) == ("2.0", "SendMessage")
    message = body["params"]["message"]
    assert message["role"] == "ROLE_USER"
    assert message["parts"] == [{"text": "hello"}]
    assert message["messageId"]
    assert "configuration" not in body["params"]


async def test_v03_discovery_and_send() -> None:
    agent = v03_agent()
    agent.results["message/send"] = V03_REPLY
    async with connect(agent) as client:
        reply = await client.send_message("hello")
    assert isinstance(reply, Message)
    assert reply.text == "pong"
    [call] = agent.calls
    assert call["method"] == "message/send"
    assert call["params"]["message"]["kind"] == "message"
    assert call["params"]["message"]["role"] == "user"
    assert call["params"]["configuration"] == {"blocking": True}
    assert agent.rpc_requests[0].headers.get("A2A-Version") != "1.0"


async def test_hybrid_card_with_protocol_03() -> None:
    card = v1_card(
        supportedInterfaces=[
            {"url": BASE + "/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": BASE + "/v03", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
        ]
    )
    agent = FakeAgent(card)
    agent.results["message/send"] = V03_TASK
    async with connect(agent, protocol="0.3") as client:
        await client.send_message("x")
    assert str(agent.rpc_requests[0].url) == BASE + "/v03"
    assert agent.calls[0]["method"] == "message/send"


async def test_relative_interface_url_and_tenant() -> None:
    card = v1_card(
        supportedInterfaces=[
            {
                "url": "/rpc",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "1.0",
                "tenant": "acme",
            }
        ]
    )
    agent = FakeAgent(card)
    agent.results["GetTask"] = V1_TASK
    async with connect(agent) as client:
        await client.get_task("t-1")
    assert str(agent.rpc_requests[0].url) == BASE + "/rpc"
    assert agent.calls[0]["params"] == {"id": "t-1", "tenant": "acme"}


async def test_discovery_skips_interfaces_of_other_bindings() -> None:
    card = v1_card(
        supportedInterfaces=[
            {"url": BASE + "/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
            {"url": "grpc.example:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            {"url": BASE + "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        ]
    )
    agent = FakeAgent(card)
    agent.results["SendMessage"] = {"task": V1_TASK}
    async with connect(agent) as client:
        await client.send_message("x")
    assert str(agent.rpc_requests[0].url) == BASE + "/rpc"


async def test_card_accessors() -> None:
    agent = v1_agent()
    async with connect(agent, card_ttl=300) as client:
        card = await client.get_card()
        assert isinstance(card, AgentCard)
        assert await client.agent_card is card
        assert await client.discover() is card
        assert (await client.capabilities).streaming
    assert len(agent.requests) == 1  # cached


async def test_no_usable_interface() -> None:
    card = v1_card(
        supportedInterfaces=[{"url": RPC_URL, "protocolBinding": "GRPC", "protocolVersion": "1.0"}]
    )
    async with connect(FakeAgent(card), bindings=("jsonrpc", "rest")) as client:
        with pytest.raises(A2ADiscoveryError, match="offers no interface") as info:
            await client.send_message("x")
    assert "over jsonrpc/rest (it offers: GRPC 1.0)" in info.value.message


async def test_discovery_failure_names_the_agent() -> None:
    async with connect(FakeAgent(None)) as client:
        with pytest.raises(A2ADiscoveryError) as info:
            await client.get_task("t")
    assert info.value.agent == BASE


async def test_card_given_at_construction_skips_the_fetch() -> None:
    agent = v1_agent()
    async with connect(agent, card=v1_card()) as client:
        await client.send_message("x")
    assert [r.method for r in agent.requests] == ["POST"]


# -- send_message inputs -------------------------------------------------------------------------


async def test_send_v03_shaped_dict_to_a_v1_agent() -> None:
    agent = v1_agent()
    async with connect(agent) as client:
        await client.send_message(
            {
                "kind": "message",
                "role": "user",
                "parts": [{"kind": "text", "text": "hi"}, {"kind": "data", "data": {"a": 1}}],
            }
        )
    message = agent.calls[0]["params"]["message"]
    assert message["role"] == "ROLE_USER"
    assert message["parts"] == [{"text": "hi"}, {"data": {"a": 1}}]
    assert message["messageId"]


async def test_send_v1_shaped_dict_to_a_v03_agent() -> None:
    agent = v03_agent()
    async with connect(agent) as client:
        await client.send_message(
            {
                "messageId": "mine",
                "role": "ROLE_USER",
                "parts": [{"text": "hi"}, {"url": "https://f.example/x"}],
            }
        )
    message = agent.calls[0]["params"]["message"]
    assert message == {
        "kind": "message",
        "messageId": "mine",
        "role": "user",
        "parts": [
            {"kind": "text", "text": "hi"},
            {"kind": "file", "file": {"uri": "https://f.example/x"}},
        ],
    }


async def test_send_a_message_object_with_options() -> None:
    agent = v1_agent()
    msg = Message(Role.USER, [TextPart("a"), DataPart([1, 2])], message_id="m-7", context_id="old")
    async with connect(agent) as client:
        await client.send_message(
            msg,
            metadata={"skillId": "s"},
            context_id="c-9",
            task_id="t-9",
            blocking=False,
            history_length=3,
            accepted_output_modes=["text/plain"],
        )
    params = agent.calls[0]["params"]
    assert params["message"] == {
        "messageId": "m-7",
        "role": "ROLE_USER",
        "parts": [{"text": "a"}, {"data": [1, 2]}],
        "contextId": "c-9",
        "taskId": "t-9",
    }
    assert params["metadata"] == {"skillId": "s"}
    assert params["configuration"] == {
        "acceptedOutputModes": ["text/plain"],
        "historyLength": 3,
        "returnImmediately": True,
    }
    assert msg.context_id == "old"  # the caller's message is not changed


async def test_send_returns_a_message() -> None:
    agent = v1_agent()
    agent.results["SendMessage"] = V1_REPLY
    async with connect(agent) as client:
        reply = await client.send_message("ping")
    assert isinstance(reply, Message)
    assert (reply.role, reply.text) == (Role.AGENT, "pong")


#: What every refusal of a message says is accepted.
FORMS = (
    "a message is a str, a Message, or a dict in any dialect's shape, "
    'such as {"role": "user", "parts": [{"text": "hi"}]}'
)
BAD_MESSAGES = [
    ({"role": "user", "parts": []}, "message has no parts: "),
    ({"text": "hi"}, "message has no parts: "),
    ({"role": "user", "content": "hi"}, "message does not have a message's shape (content is not a list): "),
    ({"role": "user", "parts": ["hi"]}, "message does not have a message's shape (part is not an object): "),
    ({"role": "user", "parts": [{"text": 5}]}, "message does not have a message's shape (text part is not a string): "),
    (42, "message cannot be of type int: "),
    (None, "message cannot be of type NoneType: "),
]  # fmt: skip


@pytest.mark.parametrize("stream", [False, True], ids=["send", "stream"])
@pytest.mark.parametrize(("message", "error"), BAD_MESSAGES, ids=range(len(BAD_MESSAGES)))
async def test_a_bad_message_is_the_callers_error(message: Any, error: str, stream: bool) -> None:
    agent = v1_agent()
    async with connect(agent) as client:
        with pytest.raises(ValueError, match="a message is a str") as info:
            if stream:
                client.stream_message(message)
            else:
                await client.send_message(message)
    assert str(info.value) == error + FORMS
    shown = "".join(traceback.format_exception(info.value))
    assert "A2AProtocolError" not in shown  # no error of the agent's, not even as a cause
    assert agent.calls == []


@pytest.mark.parametrize(
    "message",
    [
        {"role": "user", "parts": [{"text": "hi"}]},  # v1.0 with v0.3's role
        {"parts": [{"text": "hi"}]},
        {"role": "user", "parts": [{"kind": "text", "text": "hi"}]},  # v0.3
        {"role": "user", "parts": [{"type": "text", "text": "hi"}]},  # tasks/send
        {"role": "ROLE_USER", "content": [{"text": "hi"}]},  # v0.3 HTTP+JSON
    ],
)
async def test_a_message_dict_in_any_dialect_s_shape(message: dict[str, Any]) -> None:
    agent = v1_agent()
    async with connect(agent) as client:
        await client.send_message(message)
    sent = agent.calls[0]["params"]["message"]
    assert (sent["role"], sent["parts"]) == ("ROLE_USER", [{"text": "hi"}])
    assert sent["messageId"]


async def test_a_v1_message_dict_without_a_role_is_the_user_s() -> None:
    agent = v1_agent()
    part = {"url": "https://files.example/a.pdf", "mediaType": "application/pdf"}
    async with connect(agent) as client:
        await client.send_message({"parts": [part]})
    sent = agent.calls[0]["params"]["message"]
    assert (sent["role"], sent["parts"]) == ("ROLE_USER", [part])


async def test_the_same_shape_from_the_agent_is_the_agent_s_error() -> None:
    agent = v1_agent()
    agent.results["SendMessage"] = {"message": {"messageId": "r", "role": "ROLE_AGENT", "parts": ["hi"]}}  # fmt: skip
    async with connect(agent) as client:
        with pytest.raises(A2AProtocolError, match="unexpected response shape: part is not an object"):  # fmt: skip
            await client.send_message("hi")


async def test_the_one_shot_send_takes_a_text_only() -> None:
    agent = v1_agent()
    async with httpx.AsyncClient(transport=agent.transport()) as http:
        with pytest.raises(TypeError) as info:
            await send_text(BASE, {"role": "user", "parts": ["hi"]}, http_client=http)  # type: ignore[arg-type]
        assert await send_text(BASE, "hi", http_client=http) == Task.from_dict(V1_TASK)
    assert str(info.value) == (
        "text must be a str, not dict (A2AClient.send_message takes a message in any form)"
    )
    assert len(agent.calls) == 1


BAD_OPTIONS = [
    ("metadata", "skill", "metadata must be a mapping (dict) of names to JSON values, not str"),
    ("metadata", [("a", 1)], "metadata must be a mapping (dict) of names to JSON values, not list"),
    ("accepted_output_modes", "text/plain", "accepted_output_modes must be a list of media types (str), not str"),
    ("accepted_output_modes", [1], "accepted_output_modes must be a list of media types (str), not list"),
    ("push_config", {"url": "https://hook.example/cb"}, "push_config must be a PushNotificationConfig, not dict"),
    ("history_length", "3", "history_length must be an int, not str"),
    ("context_id", 7, "context_id must be a str, not int"),
    ("task_id", 7, "task_id must be a str, not int"),
]  # fmt: skip


@pytest.mark.parametrize("stream", [False, True], ids=["send", "stream"])
@pytest.mark.parametrize(("name", "value", "error"), BAD_OPTIONS, ids=range(len(BAD_OPTIONS)))
async def test_an_option_of_the_wrong_type_says_what_it_accepts(
    name: str, value: Any, error: str, stream: bool
) -> None:
    agent = v1_agent()
    async with connect(agent) as client:
        with pytest.raises(TypeError) as info:
            if stream:
                client.stream_message("hi", **{name: value})
            else:
                await client.send_message("hi", **{name: value})
    assert str(info.value) == error
    assert agent.calls == []


async def test_blocking_is_a_bool_and_modes_any_sequence() -> None:
    agent = v1_agent()
    async with connect(agent) as client:
        with pytest.raises(TypeError, match=r"^blocking must be a bool, not str$"):
            await client.send_message("hi", blocking="no")  # type: ignore[arg-type]
        await client.send_message("hi", accepted_output_modes=("text/plain",))  # type: ignore[arg-type]
    assert agent.calls[0]["params"]["configuration"]["acceptedOutputModes"] == ["text/plain"]


# -- other operations ------------------------------------------------------------------------------


async def test_get_task() -> None:
    agent = v1_agent()
    agent.results["GetTask"] = V1_TASK
    async with connect(agent) as client:
        task = await client.get_task("t-1", history_length=2)
    assert task.id == "t-1"
    assert agent.calls[0]["method"] == "GetTask"
    assert agent.calls[0]["params"] == {"id": "t-1", "historyLength": 2}


async def test_get_task_not_found_is_typed() -> None:
    agent = v1_agent()
    agent.errors["GetTask"] = {"code": -32001, "message": "Task not found"}
    async with connect(agent) as client:
        with pytest.raises(TaskNotFoundError) as info:
            await client.get_task("nope")
    err = info.value
    assert (err.task_id, err.method, err.agent) == ("nope", "GetTask", RPC_URL)


async def test_list_tasks() -> None:
    agent = v1_agent()
    pages = iter(
        [
            {"tasks": [V1_TASK], "nextPageToken": "p2", "pageSize": 1, "totalSize": 2},
            {"tasks": [V1_TASK], "nextPageToken": "", "pageSize": 1, "totalSize": 2},
            {"tasks": []},
        ]
    )
    agent.results["ListTasks"] = lambda params: next(pages)
    async with connect(agent) as client:
        first = await client.list_tasks(context_id="c-1", limit=1)
        second = await client.list_tasks(context_id="c-1", limit=1, cursor=first.next_cursor)
        await client.list_tasks()
    assert first.next_cursor == "p2"
    assert (first.total_size, first.page_size) == (2, 1)
    assert [t.id for t in first.tasks] == ["t-1"]
    assert second.next_cursor is None
    assert [c["params"] for c in agent.calls] == [
        {"contextId": "c-1", "pageSize": 1},
        {"contextId": "c-1", "pageSize": 1, "pageToken": "p2"},
        {"pageSize": 50},
    ]
    assert {c["method"] for c in agent.calls} == {"ListTasks"}


async def test_a_v03_agent_is_asked_with_tasks_list() -> None:
    agent = v03_agent()
    page = {"tasks": [V03_TASK], "nextPageToken": "n-2", "pageSize": 1, "totalSize": 4}
    agent.results["tasks/list"] = page
    async with connect(agent) as client:
        got = await client.list_tasks("c-1", 1, status=TaskState.COMPLETED, history_length=0)
    assert [t.id for t in got.tasks] == ["t-1"]
    assert (got.next_cursor, got.page_size, got.total_size) == ("n-2", 1, 4)
    assert [(c["method"], c["params"]) for c in agent.calls] == [
        (
            "tasks/list",
            {"contextId": "c-1", "pageSize": 1, "status": "completed", "historyLength": 0},
        )
    ]


async def test_a_v03_agent_without_tasks_list_is_unsupported_and_keeps_its_wire() -> None:
    """-32601 to tasks/list says the agent does not list tasks, not that it speaks another
    dialect: the client stays on the interface it uses (here: not its HTTP+JSON one)."""
    rest = {"url": BASE + "/rest", "transport": "HTTP+JSON"}
    agent = FakeAgent(v03_card(additionalInterfaces=[{"url": RPC_URL, "transport": "JSONRPC"}, rest]))  # fmt: skip
    agent.results["message/send"] = V03_TASK  # tasks/list: -32601, as unknown methods get
    async with connect(agent) as client:
        with pytest.raises(UnsupportedOperationError, match="does not serve tasks/list") as info:
            await client.list_tasks()
        assert isinstance(info.value.__cause__, MethodNotFoundError)
        assert isinstance(await client.send_message("hi"), Task)
    assert [c["method"] for c in agent.calls] == ["tasks/list", "message/send"]


async def test_cancel_task() -> None:
    agent = v03_agent()
    agent.results["tasks/cancel"] = {**V03_TASK, "status": {"state": "canceled"}}
    async with connect(agent) as client:
        task = await client.cancel_task("t-1", metadata={"why": "bored"})
    assert task.state is TaskState.CANCELED
    assert agent.calls[0]["method"] == "tasks/cancel"
    assert agent.calls[0]["params"] == {"id": "t-1", "metadata": {"why": "bored"}}


async def test_push_configs_v1() -> None:
    agent = v1_agent()
    agent.results["CreateTaskPushNotificationConfig"] = HOOK_V1
    agent.results["GetTaskPushNotificationConfig"] = HOOK_V1
    agent.results["ListTaskPushNotificationConfigs"] = {"configs": [HOOK_V1]}
    agent.results["DeleteTaskPushNotificationConfig"] = None
    async with connect(agent) as client:
        created = await client.create_push_config(
            "t-1", "https://hook.example/cb", token="tok", config_id="h-1"
        )
        got = await client.get_push_config("t-1", "h-1")
        listed = await client.list_push_configs("t-1")
        await client.delete_push_config("t-1", "h-1")
        with pytest.raises(ValueError, match="url"):
            await client.create_push_config("t-1", "not a url")
    assert created == got == listed[0]
    assert (created.id, created.task_id, created.token) == ("h-1", "t-1", "tok")
    assert [(c["method"], c["params"]) for c in agent.calls] == [
        (
            "CreateTaskPushNotificationConfig",
            {"url": "https://hook.example/cb", "taskId": "t-1", "id": "h-1", "token": "tok"},
        ),
        ("GetTaskPushNotificationConfig", {"taskId": "t-1", "id": "h-1"}),
        ("ListTaskPushNotificationConfigs", {"taskId": "t-1"}),
        ("DeleteTaskPushNotificationConfig", {"taskId": "t-1", "id": "h-1"}),
    ]


async def test_push_configs_v03() -> None:
    agent = v03_agent()
    agent.results["tasks/pushNotificationConfig/set"] = HOOK_V03
    agent.results["tasks/pushNotificationConfig/get"] = HOOK_V03
    agent.results["tasks/pushNotificationConfig/list"] = [HOOK_V03]
    agent.results["tasks/pushNotificationConfig/delete"] = None
    async with connect(agent) as client:
        created = await client.create_push_config(
            "t-1", "https://hook.example/cb", token="tok", config_id="h-1"
        )
        got = await client.get_push_config("t-1", "h-1")
        listed = await client.list_push_configs("t-1")
        await client.delete_push_config("t-1", "h-1")
    assert created == got == listed[0]
    assert created.url == "https://hook.example/cb"
    assert [(c["method"], c["params"]) for c in agent.calls] == [
        (
            "tasks/pushNotificationConfig/set",
            {
                "taskId": "t-1",
                "pushNotificationConfig": {
                    "url": "https://hook.example/cb",
                    "id": "h-1",
                    "token": "tok",
                },
            },
        ),
        ("tasks/pushNotificationConfig/get", {"id": "t-1", "pushNotificationConfigId": "h-1"}),
        ("tasks/pushNotificationConfig/list", {"id": "t-1"}),
        ("tasks/pushNotificationConfig/delete", {"id": "t-1", "pushNotificationConfigId": "h-1"}),
    ]


@pytest.mark.parametrize(
    ("make", "method"),
    [(v1_agent, "GetExtendedAgentCard"), (v03_agent, "agent/getAuthenticatedExtendedCard")],
)
async def test_get_extended_card(make: Any, method: str) -> None:
    agent = make()
    agent.card["capabilities"]["extendedAgentCard"] = True  # read from v0.3 cards too
    agent.card["supportsAuthenticatedExtendedCard"] = True
    agent.results[method] = v1_card(name="Extended", skills=[{"id": "secret", "name": "Secret"}])
    async with connect(agent, auth="Bearer t") as client:
        card = await client.get_extended_card()
    assert card.name == "Extended"
    assert [s.id for s in card.skills] == ["secret"]
    [call] = agent.calls
    assert call["method"] == method
    assert "params" not in call
    assert agent.rpc_requests[0].headers["authorization"] == "Bearer t"


@pytest.mark.parametrize("make", [v1_agent, v03_agent])
async def test_an_agent_whose_card_announces_no_extended_card_has_none(make: Any) -> None:
    agent = make()
    async with connect(agent) as client:
        with pytest.raises(ExtendedCardNotConfiguredError, match="announces no extended card"):
            await client.get_extended_card()
    assert agent.calls == []  # nothing asked


async def test_call_returns_the_raw_result() -> None:
    agent = v1_agent()
    agent.results["cstp.queryDecisions"] = {"decisions": [{"id": 1}], "nextPageToken": ""}
    agent.results["cstp.ping"] = "pong"
    async with connect(agent) as client:
        result = await client.call("cstp.queryDecisions", {"query": "db"})
        assert await client.call("cstp.ping") == "pong"
    assert result == {"decisions": [{"id": 1}], "nextPageToken": ""}
    assert agent.calls[0] == {
        "jsonrpc": "2.0",
        "id": agent.calls[0]["id"],
        "method": "cstp.queryDecisions",
        "params": {"query": "db"},
    }
    assert "params" not in agent.calls[1]


async def test_call_unknown_method_is_typed() -> None:
    async with connect(v1_agent()) as client:
        with pytest.raises(MethodNotFoundError):
            await client.call("nope/nope")


async def test_ping() -> None:
    agent = v1_agent()
    async with connect(agent, auth="Bearer t") as client:
        rtt = await client.ping()
    assert isinstance(rtt, float)
    assert rtt >= 0.0
    [req] = agent.requests
    assert (req.method, str(req.url)) == ("GET", BASE + "/.well-known/agent-card.json")
    assert req.headers["authorization"] == "Bearer t"


# -- endpoint= -----------------------------------------------------------------------------------


async def test_endpoint_skips_discovery() -> None:
    agent = v1_agent()
    async with connect(agent, None, endpoint=RPC_URL) as client:
        await client.send_message("x")
        with pytest.raises(ValueError, match="no card"):
            await client.get_card()
    assert [r.method for r in agent.requests] == ["POST"]
    assert agent.rpc_requests[0].headers["A2A-Version"] == "1.0"
    assert agent.calls[0]["method"] == "SendMessage"


async def test_endpoint_falls_back_to_v03_once() -> None:
    agent = FakeAgent(None)  # a v0.3 server: PascalCase methods are unknown
    agent.results["message/send"] = V03_TASK
    agent.results["tasks/get"] = V03_TASK
    async with connect(agent, None, endpoint=RPC_URL) as client:
        task = await client.send_message("x")
        await client.get_task("t-1")
    assert isinstance(task, Task)
    assert [c["method"] for c in agent.calls] == ["SendMessage", "message/send", "tasks/get"]
    assert agent.rpc_requests[1].headers.get("A2A-Version") != "1.0"


async def test_endpoint_fallback_tries_each_dialect_once() -> None:
    agent = FakeAgent(None)  # knows no method at all
    async with connect(agent, None, endpoint=RPC_URL) as client:
        with pytest.raises(MethodNotFoundError):
            await client.send_message("x")
    assert [c["method"] for c in agent.calls] == ["SendMessage", "message/send", "tasks/send"]


@pytest.mark.parametrize("protocol", ["1.0", "0.3"])
async def test_endpoint_with_explicit_protocol_does_not_fall_back(protocol: str) -> None:
    agent = FakeAgent(None)
    async with connect(agent, None, endpoint=RPC_URL, protocol=protocol) as client:
        with pytest.raises(MethodNotFoundError):
            await client.send_message("x")
    assert [c["method"] for c in agent.calls] == [
        "SendMessage" if protocol == "1.0" else "message/send"
    ]


async def test_discovered_v1_agent_does_not_fall_back() -> None:
    agent = FakeAgent(v1_card())
    async with connect(agent) as client:
        with pytest.raises(MethodNotFoundError):
            await client.send_message("x")
    assert [c["method"] for c in agent.calls] == ["SendMessage"]


# -- credentials stay with their origin ---------------------------------------------------------

SECRETS: dict[str, Any] = {
    "auth": "Bearer s3cret",
    "cookies": {"sid": "42"},
    "headers": {"X-Team": "blue"},
}


async def test_credentials_go_to_the_users_origin() -> None:
    agent = v1_agent()
    agent.results["GetTask"] = V1_TASK
    async with connect(agent, **SECRETS) as client:
        await client.get_task("t-1")
    rpc = agent.rpc_requests[0]
    assert rpc.headers["authorization"] == "Bearer s3cret"
    assert rpc.headers["cookie"] == "sid=42"
    assert rpc.headers["x-team"] == "blue"


@pytest.mark.parametrize(
    "other",
    [
        "https://evil.example/a2a",
        "http://agent.example.com/a2a",
        "https://agent.example.com:8443/a2a",
        "https://sub.agent.example.com/a2a",
    ],
)
async def test_credentials_do_not_go_to_another_origin(other: str) -> None:
    agent = FakeAgent(v1_card(url=other))
    agent.results["GetTask"] = V1_TASK
    async with connect(agent, **SECRETS) as client:
        await client.get_task("t-1")
    rpc = agent.rpc_requests[0]
    assert str(rpc.url) == other
    for name in ("authorization", "cookie", "x-team"):
        assert name not in rpc.headers
    assert rpc.headers["A2A-Version"] == "1.0"


async def test_credentials_follow_the_endpoint_origin() -> None:
    agent = v1_agent()
    async with connect(agent, None, endpoint="https://rpc.example/a2a", auth="Bearer e") as client:
        await client.send_message("x")
    assert agent.rpc_requests[0].headers["authorization"] == "Bearer e"


# -- lifecycle -------------------------------------------------------------------------------------


async def test_close_is_idempotent_and_closed_client_refuses_work() -> None:
    agent = v1_agent()
    async with httpx.AsyncClient(transport=agent.transport()) as http:
        client = A2AClient(BASE, http_client=http)
        await client.close()
        await client.close()
        assert client.closed
        assert "closed" in repr(client)
        with pytest.raises(RuntimeError, match="closed"):
            await client.send_message("x")
        with pytest.raises(RuntimeError, match="closed"):
            await client.get_card()
        with pytest.raises(RuntimeError, match="closed"):
            client.stream_message("x")
        with pytest.raises(RuntimeError, match="closed"):
            await client.ping()
        with pytest.raises(RuntimeError, match="closed"):
            async with client:
                pass
        assert not http.is_closed  # an injected client belongs to the caller
    assert agent.requests == []


async def test_owned_http_client_is_closed() -> None:
    client = A2AClient(BASE)
    async with client:
        await client.__aenter__()  # entering twice is fine while open
    assert client.closed
    assert client._http.client.is_closed
    await client.aclose()


# -- transport failures never leak httpx exceptions -----------------------------------------------


def _raiser(exc_type: type[Exception]) -> Any:
    def respond(request: httpx.Request) -> httpx.Response:
        raise exc_type("boom", request=request)  # type: ignore[call-arg]

    return respond


@pytest.mark.parametrize(
    ("exc_type", "expected", "timeout"),
    [
        (httpx.ConnectError, A2AConnectionError, None),
        (httpx.ReadError, A2AConnectionError, None),
        (httpx.RemoteProtocolError, A2AConnectionError, None),
        (httpx.ConnectTimeout, A2ATimeoutError, "connect"),
        (httpx.ReadTimeout, A2ATimeoutError, "read"),
        (httpx.PoolTimeout, A2ATimeoutError, "pool"),
    ],
)
async def test_httpx_errors_are_mapped(
    exc_type: type[Exception], expected: type[A2AClientError], timeout: str | None
) -> None:
    async with (
        httpx.AsyncClient(transport=httpx.MockTransport(_raiser(exc_type))) as http,
        A2AClient(endpoint=RPC_URL, http_client=http) as client,
    ):
        with pytest.raises(A2AClientError) as info:
            await client.send_message("x")
        with pytest.raises(A2AClientError) as stream_info:
            await drain(client.stream_message("x"))
    for err in (info.value, stream_info.value):
        assert type(err) is expected
        # Built once from the httpx error; a retry that gave up raised a copy caused by it.
        assert isinstance(causes(err)[-1], httpx.HTTPError)
        if timeout is not None:
            assert isinstance(err, A2ATimeoutError)
            assert err.timeout == timeout
    assert info.value.agent == RPC_URL
    assert info.value.method == "SendMessage"


async def test_card_fetch_connection_error() -> None:
    async with (
        httpx.AsyncClient(transport=httpx.MockTransport(_raiser(httpx.ConnectError))) as http,
        A2AClient(BASE, http_client=http) as client,
    ):
        with pytest.raises(A2AConnectionError) as info:
            await client.get_card()
    assert info.value.agent == BASE
    assert info.value.retryable


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (httpx.Response(401, text="who are you"), A2AAuthError),
        (httpx.Response(403, json={"detail": "no"}), A2AAuthError),
        (httpx.Response(502, html="<html>bad gateway</html>"), A2AHTTPError),
        (httpx.Response(200, html="<html>login</html>"), A2AProtocolError),
        (httpx.Response(200, json={"jsonrpc": "2.0", "id": 999, "result": {}}), A2AProtocolError),
        (
            httpx.Response(
                500, json={"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "gone"}}
            ),
            TaskNotFoundError,
        ),
    ],
)
async def test_http_level_failures(
    response: httpx.Response, expected: type[A2AClientError]
) -> None:
    async with (
        httpx.AsyncClient(transport=httpx.MockTransport(lambda r: response)) as http,
        A2AClient(endpoint=RPC_URL, http_client=http) as client,
    ):
        with pytest.raises(expected) as info:
            await client.get_task("t-1")
    assert type(info.value) is expected
    if isinstance(info.value, A2AHTTPError):
        assert info.value.status_code == response.status_code


@on_mock_clock()
async def test_unary_deadline() -> None:
    async def slow(request: httpx.Request) -> httpx.Response:
        await anyio.sleep(100)
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": 1, "result": V1_TASK})

    async with (
        httpx.AsyncClient(transport=httpx.MockTransport(slow)) as http,
        A2AClient(endpoint=RPC_URL, http_client=http, timeout=5) as client,
    ):
        start = anyio.current_time()
        with pytest.raises(A2ATimeoutError) as info:
            await client.get_task("t-1")
        assert anyio.current_time() - start == pytest.approx(5)
    assert info.value.timeout == "deadline"
    assert info.value.method == "GetTask"


@on_mock_clock()
async def test_users_cancel_scope_wins() -> None:
    async def hang(request: httpx.Request) -> httpx.Response:
        await anyio.sleep_forever()
        raise AssertionError

    async with (
        httpx.AsyncClient(transport=httpx.MockTransport(hang)) as http,
        A2AClient(endpoint=RPC_URL, http_client=http, timeout=None) as client,
    ):
        start = anyio.current_time()
        with anyio.move_on_after(3) as scope:
            await client.send_message("x")
        assert scope.cancelled_caught
        assert anyio.current_time() - start == pytest.approx(3)
