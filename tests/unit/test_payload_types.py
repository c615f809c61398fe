"""The decoding registry of extension payloads: ``call(..., result_type=T)``,
``register_type(key, decoder)`` for data parts (by media type) and call results (by method),
kept per client and applied after the codecs; a decoder that fails is an A2AProtocolError.
Against the testing kit's agent, in process, on both backends."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from a2a_anyio import (
    A2AProtocolError,
    AgentPool,
    DataPart,
    MethodNotFoundError,
    Task,
    TaskArtifactUpdateEvent,
)
from a2a_anyio.testing import Emit, FakeAgent, SkillContext, artifact, status

from ._support import kit_client

pytestmark = pytest.mark.anyio

INVOICE = "application/vnd.acme.invoice+json"


@dataclass(frozen=True)
class Invoice:
    number: str
    total: float


class Strict:
    """A type no result fits."""

    def __init__(self, value: Any) -> None:
        raise TypeError(f"not strict enough: {value!r}")


class Model:
    """A pydantic-like model, known by its ``model_validate`` (pydantic is not needed)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    @classmethod
    def model_validate(cls, value: Any) -> Model:
        return cls(value)


def invoicing_agent(dialect: Any = "1.0") -> FakeAgent:
    """Each task ends with an invoice data part (labelled the way its dialect can), a plain
    data part, and an unlabelled one; ``acme/getInvoice`` returns an invoice."""
    agent = FakeAgent(dialect=dialect)
    invoice = {"number": "F-1", "total": 12.5}
    if dialect == "1.0":
        labelled = DataPart(invoice, INVOICE)
    else:  # data parts before v1.0 carry no media type: their metadata can
        labelled = DataPart(invoice, metadata={"mediaType": INVOICE})

    @agent.skill("bill")
    async def bill(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("working")
        yield artifact(parts=[labelled, DataPart({"other": 1}, "application/json")], name="out")
        yield artifact(data={"plain": True}, name="raw")
        yield status("completed")

    @agent.method("acme/getInvoice")
    async def get_invoice(params: Any) -> Any:
        return {"number": params["number"], "total": 99.0}

    return agent


def data_of(task: Task) -> list[Any]:
    return [p.data for a in task.artifacts for p in a.parts if isinstance(p, DataPart)]


@pytest.mark.parametrize("decoder", [Invoice, lambda d: ("invoice", d["number"])])
async def test_call_result_type_builds_the_users_type(decoder: Any) -> None:
    async with kit_client(invoicing_agent()) as client:
        result = await client.call("acme/getInvoice", {"number": "F-7"}, result_type=decoder)
        raw = await client.call("acme/getInvoice", {"number": "F-7"})
    assert result in (Invoice("F-7", 99.0), ("invoice", "F-7"))
    assert raw == {"number": "F-7", "total": 99.0}


async def test_a_pydantic_model_is_validated() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Bill(pydantic.BaseModel):  # type: ignore[name-defined,misc]
        number: str
        total: float

    async with kit_client(invoicing_agent()) as client:
        bill = await client.call("acme/getInvoice", {"number": "F-2"}, result_type=Bill)
        duck = await client.call("acme/getInvoice", {"number": "F-3"}, result_type=Model)
    assert (bill.number, bill.total) == ("F-2", 99.0)
    assert duck.value == {"number": "F-3", "total": 99.0}


async def test_a_registered_method_returns_its_type_and_result_type_wins() -> None:
    async with kit_client(invoicing_agent(), types={"acme/getInvoice": Invoice}) as client:
        typed = await client.call("acme/getInvoice", {"number": "F-1"})
        chosen = await client.call("acme/getInvoice", {"number": "F-1"}, result_type=Model)
    assert typed == Invoice("F-1", 99.0)
    assert isinstance(chosen, Model)


async def test_a_decoder_that_fails_is_a_protocol_error_naming_type_and_method() -> None:
    agent = invoicing_agent()
    async with kit_client(agent) as client:
        with pytest.raises(A2AProtocolError) as info:
            await client.call("acme/getInvoice", {"number": "F-1"}, result_type=Strict)
        with pytest.raises(A2AProtocolError) as wrong_shape:
            await client.call("acme/getInvoice", {"number": "F-1"}, result_type=Task)
    error = info.value
    assert "the result of acme/getInvoice does not fit Strict: TypeError: not strict enough" in str(
        error
    )
    assert isinstance(error.__cause__, TypeError)
    assert error.method == "acme/getInvoice" and error.operation == "call"
    sent = agent.requests_for("call")[0].body
    assert error.request_id == sent["id"]
    assert "does not fit Task: TypeError" in str(wrong_shape.value)  # a dataclass: T(**value)


@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
async def test_data_parts_of_a_registered_media_type_come_back_typed(dialect: str) -> None:
    async with kit_client(invoicing_agent(dialect)) as client:
        client.register_type(INVOICE, Invoice)
        task = await client.send_message("bill me")
        assert isinstance(task, Task)
        again = await client.get_task(task.id)
        async with client.stream_message("bill me") as stream:
            events = [e async for e in stream]
        assert stream.task is not None
        for seen in (task, again, stream.task):
            assert data_of(seen) == [Invoice("F-1", 12.5), {"other": 1}, {"plain": True}]
        [typed] = [
            p.data
            for e in events
            if isinstance(e, TaskArtifactUpdateEvent)
            for p in e.artifact.parts
            if isinstance(p, DataPart) and isinstance(p.data, Invoice)
        ]
        assert typed == Invoice("F-1", 12.5)


async def test_a_data_part_that_does_not_fit_fails_the_answer() -> None:
    async with kit_client(invoicing_agent(), types={INVOICE: Strict}) as client:
        with pytest.raises(A2AProtocolError) as info:
            await client.send_message("bill me")
    assert f"a data part of media type {INVOICE} does not fit Strict" in str(info.value)
    assert info.value.method == "SendMessage"
    assert isinstance(info.value.__cause__, TypeError)


async def test_the_registry_is_each_clients_own_and_the_pools_reaches_all() -> None:
    agent = invoicing_agent()
    async with (
        httpx.AsyncClient(transport=agent.transport()) as http,
        AgentPool(http_client=http) as pool,
    ):
        first = pool.client(agent.url)
        pool.register_type(INVOICE, Invoice)
        second = pool.client("http://agent.test/")  # made after: gets it too
        async with kit_client(agent) as alone:
            plain = await alone.send_message("bill me")
        for client in (first, second):
            task = await client.send_message("bill me")
            assert isinstance(task, Task) and data_of(task)[0] == Invoice("F-1", 12.5)
    assert isinstance(plain, Task) and data_of(plain)[0] == {"number": "F-1", "total": 12.5}


async def test_register_type_refuses_what_cannot_be_a_key_or_a_decoder() -> None:
    async with kit_client(invoicing_agent()) as client:
        with pytest.raises(ValueError, match="media type or a method name"):
            client.register_type("", Invoice)
        with pytest.raises(TypeError, match="class or a callable"):
            client.register_type(INVOICE, "Invoice")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        AgentPool().register_type(INVOICE, 42)  # type: ignore[arg-type]


async def test_a_failed_call_carries_its_request_id() -> None:
    agent = invoicing_agent()
    async with kit_client(agent) as client:
        with pytest.raises(MethodNotFoundError) as info:
            await client.call("acme/nothing", {})
    [sent] = [r.body for r in agent.requests if r.rpc_method == "acme/nothing"]
    assert info.value.request_id == sent["id"] and info.value.method == "acme/nothing"
