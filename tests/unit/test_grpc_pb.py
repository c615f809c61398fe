"""The gRPC binding's generated protobuf modules: the spec's messages, byte for byte on the
wire (checked against a2a-sdk's modules, from which ``scripts/regen_grpc_pb.py`` makes
them), loadable beside a2a-sdk's, with ``protobuf`` alone."""

from __future__ import annotations

import ast
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from a2a.compat.v0_3 import a2a_v0_3_pb2 as sdk_v0_3
from a2a.types import a2a_pb2 as sdk_v1

from a2a_anyio._bindings.grpc_pb import a2a_v0_3_pb2, a2a_v1_pb2

PAIRS = [
    pytest.param(a2a_v1_pb2, sdk_v1, id="v1.0"),
    pytest.param(a2a_v0_3_pb2, sdk_v0_3, id="v0.3"),
]


def _shape(file: Any) -> dict[str, Any]:
    """What the wire depends on in a file descriptor: messages, fields, enums, methods,
    with type names relative to the file's package."""
    prefix = f".{file.package}."

    def local(name: str) -> str:
        return name.removeprefix(prefix)

    def message(m: Any) -> Any:
        fields = [
            (f.name, f.number, f.type, f.label, local(f.type_name), f.oneof_index, f.json_name)
            for f in m.field
        ]
        nested = [message(n) for n in m.nested_type]
        enums = [enum(e) for e in m.enum_type]
        return (m.name, fields, [o.name for o in m.oneof_decl], nested, enums)

    def enum(e: Any) -> Any:
        return (e.name, [(v.name, v.number) for v in e.value])

    from google.protobuf import descriptor_pb2

    proto = descriptor_pb2.FileDescriptorProto()
    file.CopyToProto(proto)
    return {
        "messages": [message(m) for m in proto.message_type],
        "enums": [enum(e) for e in proto.enum_type],
        "services": [
            (
                s.name,
                [
                    (m.name, local(m.input_type), local(m.output_type), m.server_streaming)
                    for m in s.method
                ],
            )
            for s in proto.service
        ],
    }


@pytest.mark.parametrize(("ours", "sdk"), PAIRS)
def test_the_messages_are_the_spec_s(ours: ModuleType, sdk: ModuleType) -> None:
    assert ours.DESCRIPTOR.package == f"a2a_anyio.{sdk.DESCRIPTOR.package}"
    assert _shape(ours.DESCRIPTOR) == _shape(sdk.DESCRIPTOR)


def test_bytes_cross_both_ways() -> None:
    sdk_event = sdk_v1.StreamResponse(
        status_update=sdk_v1.TaskStatusUpdateEvent(
            task_id="t-1",
            context_id="c-1",
            status=sdk_v1.TaskStatus(
                state=sdk_v1.TASK_STATE_WORKING,
                message=sdk_v1.Message(
                    message_id="m-1",
                    role=sdk_v1.ROLE_AGENT,
                    parts=[sdk_v1.Part(text="working", media_type="text/plain")],
                ),
            ),
        )
    )
    sdk_event.status_update.metadata.update({"n": 1, "tags": ["a"]})
    wire = sdk_event.SerializeToString()
    event = a2a_v1_pb2.StreamResponse.FromString(wire)
    assert event.WhichOneof("payload") == "status_update"
    assert event.status_update.status.state == a2a_v1_pb2.TASK_STATE_WORKING
    assert event.status_update.status.message.parts[0].text == "working"
    assert event.status_update.metadata["tags"][0] == "a"
    assert event.SerializeToString(deterministic=True) == sdk_event.SerializeToString(
        deterministic=True
    )
    request = a2a_v0_3_pb2.SendMessageRequest(
        request=a2a_v0_3_pb2.Message(
            message_id="m-2", role=a2a_v0_3_pb2.ROLE_USER, content=[a2a_v0_3_pb2.Part(text="hi")]
        )
    )
    back = sdk_v0_3.SendMessageRequest.FromString(request.SerializeToString())
    assert back.request.content[0].text == "hi"
    assert back.request.role == sdk_v0_3.ROLE_USER


@pytest.mark.parametrize("module", [a2a_v1_pb2, a2a_v0_3_pb2])
def test_the_modules_need_protobuf_alone(module: ModuleType) -> None:
    assert module.__file__ is not None
    tree = ast.parse(Path(module.__file__).read_text())
    imported = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module is not None
    }
    imported |= {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert imported
    assert all(name.startswith("google.protobuf") for name in imported), imported
