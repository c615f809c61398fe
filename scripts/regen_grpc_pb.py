"""Regenerate the protobuf modules of the gRPC binding (``src/a2a_anyio/_bindings/grpc_pb/``).

    python3 scripts/regen_grpc_pb.py

It runs itself again in a throwaway environment (``uv run --isolated``) holding exactly
``PINS``, and there:

1. takes each version's file descriptor from the a2a-sdk release pinned below, which ships
   the spec's ``a2a.proto`` compiled: v1.0 (package ``lf.a2a.v1``) from
   ``a2a.types.a2a_pb2``, v0.3 (package ``a2a.v1``, the spec's v0.3.0
   ``specification/grpc/a2a.proto``) from ``a2a.compat.v0_3.a2a_v0_3_pb2``;
2. removes every custom option (``google.api.http``, ``field_behavior``,
   ``method_signature``: annotations for HTTP transcoding and code generators, nothing the
   gRPC wire carries) and so the ``google/api/*`` imports, so that the modules need
   ``protobuf`` alone;
3. puts the proto package under ``a2a_anyio.`` and names the file after its module: a
   process may hold a2a-sdk's modules too, and protobuf's default descriptor pool refuses a
   second definition of ``lf.a2a.v1.Task``. Messages carry no names on the wire, so the
   bytes are the spec's; the binding writes the service path (``/lf.a2a.v1.A2AService/...``)
   itself;
4. runs grpc-tools' protoc on the result (``--descriptor_set_in``) for ``_pb2.py`` and
   ``_pb2.pyi``: no ``_pb2_grpc.py``, nothing of grpcio.

The protoc of ``grpcio-tools`` pinned here (libprotoc 29.0) writes gencode 5.29.0, which
needs ``protobuf>=5.29.0`` at run time (the ``grpc`` extra says so) and loads on every later
release. ``tests/unit/test_grpc_pb.py`` checks the result against a2a-sdk's modules.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PINS = ("a2a-sdk==1.3.0", "grpcio-tools==1.71.2", "protobuf==5.29.6")
ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src"
PB_DIR = "a2a_anyio/_bindings/grpc_pb"
#: module name -> (a2a-sdk module holding the version's descriptor, its proto package)
SOURCES = {
    "a2a_v1": ("a2a.types.a2a_pb2", "lf.a2a.v1"),
    "a2a_v0_3": ("a2a.compat.v0_3.a2a_v0_3_pb2", "a2a.v1"),
}
PREFIX = "a2a_anyio."


def main() -> int:
    if sys.argv[1:] == ["--generate"]:
        generate()
        return 0
    uv = shutil.which("uv")
    cmd = [uv] if uv else [sys.executable, "-m", "uv"]
    cmd += ["run", "--isolated", "--no-project", "--python", sys.executable]
    for pin in PINS:
        cmd += ["--with", pin]
    cmd += ["python", str(Path(__file__).resolve()), "--generate"]
    return subprocess.run(cmd, check=False).returncode


def _strip_custom_options(proto: object) -> None:
    """Clear the extensions (custom options) of every ``options`` in a descriptor proto."""
    from google.protobuf.message import Message

    assert isinstance(proto, Message)
    for field, value in proto.ListFields():
        if field.name == "options":
            for ext, _ in value.ListFields():
                if ext.is_extension:
                    value.ClearExtension(ext)
            value.DiscardUnknownFields()
            if not value.ListFields():
                proto.ClearField("options")
        elif field.message_type is not None:
            items = value if field.label == field.LABEL_REPEATED else [value]
            for item in items:
                _strip_custom_options(item)


def _renamed(type_name: str, package: str) -> str:
    if type_name.startswith(f".{package}."):
        return f".{PREFIX}{type_name[1:]}"
    return type_name


def _rename_types(proto: object, package: str) -> None:
    """Move every reference to ``package``'s types under the new package."""
    from google.protobuf import descriptor_pb2 as d

    if isinstance(proto, d.FieldDescriptorProto) and proto.type_name:
        proto.type_name = _renamed(proto.type_name, package)
    if isinstance(proto, d.MethodDescriptorProto):
        proto.input_type = _renamed(proto.input_type, package)
        proto.output_type = _renamed(proto.output_type, package)
    from google.protobuf.message import Message

    assert isinstance(proto, Message)
    for field, value in proto.ListFields():
        if field.message_type is not None:
            items = value if field.label == field.LABEL_REPEATED else [value]
            for item in items:
                _rename_types(item, package)


def generate() -> None:
    import importlib

    from google.protobuf import descriptor_pb2, empty_pb2, struct_pb2, timestamp_pb2
    from grpc_tools import protoc

    files = descriptor_pb2.FileDescriptorSet()
    for module in (empty_pb2, struct_pb2, timestamp_pb2):
        module.DESCRIPTOR.CopyToProto(files.file.add())
    names = []
    for name, (source, package) in SOURCES.items():
        proto = files.file.add()
        importlib.import_module(source).DESCRIPTOR.CopyToProto(proto)
        assert proto.package == package, (source, proto.package)
        _strip_custom_options(proto)
        proto.dependency[:] = [dep for dep in proto.dependency if not dep.startswith("google/api/")]
        _rename_types(proto, package)
        proto.package = PREFIX + package
        proto.name = f"{PB_DIR}/{name}.proto"
        names.append(proto.name)
    with tempfile.TemporaryDirectory() as tmp:
        descriptors = os.path.join(tmp, "a2a.pb")
        Path(descriptors).write_bytes(files.SerializeToString())
        args = [
            "protoc",
            f"--descriptor_set_in={descriptors}",
            f"--python_out={OUT}",
            f"--pyi_out={OUT}",
            *names,
        ]
        if protoc.main(args) != 0:
            raise SystemExit("protoc failed")
    for name in SOURCES:
        print(f"wrote {PB_DIR}/{name}_pb2.py and .pyi")


if __name__ == "__main__":
    raise SystemExit(main())
