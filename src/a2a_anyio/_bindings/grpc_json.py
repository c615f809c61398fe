"""A protobuf message as ProtoJSON, the value the dialects decode: what
``google.protobuf.json_format.MessageToDict`` gives (field names in their JSON form, enums
by name, 64-bit integers and bytes as strings, fields left unset absent), with each whole
number a ``Value`` holds an int, as a JSON body gives it (protobuf's ``Value`` holds every
number as a double). One writer per message type, made at its first use from the type's
descriptor, so that a message costs one pass over the fields it has set.

The writer knows the field types the A2A and ``google.rpc`` messages have; a message with
another one (``float``, ``double``) and the well-known types other than ``Struct``,
``Value``, ``ListValue``, ``Empty`` and the ``ToJsonString`` ones are written by
``json_format`` itself.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor

if TYPE_CHECKING:
    from google.protobuf.message import Message

Writer = Callable[[Any], Any]

_WRITERS: dict[Descriptor, Writer] = {}
_BY_STRING = frozenset(
    {"google.protobuf.Timestamp", "google.protobuf.Duration", "google.protobuf.FieldMask"}
)
_AS_IS = frozenset(
    {FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BOOL, FieldDescriptor.TYPE_INT32,
     FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SFIXED32, FieldDescriptor.TYPE_UINT32,
     FieldDescriptor.TYPE_FIXED32}
)  # fmt: skip
_INT64 = frozenset(
    {FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_SINT64, FieldDescriptor.TYPE_SFIXED64,
     FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64}
)  # fmt: skip
_KNOWN = _AS_IS | _INT64 | {FieldDescriptor.TYPE_BYTES, FieldDescriptor.TYPE_ENUM,
                            FieldDescriptor.TYPE_MESSAGE}  # fmt: skip


def to_json(message: Message) -> Any:
    """``message`` as ProtoJSON (a dict for a message, what its JSON form is for a
    well-known type). ValueError for what ProtoJSON cannot say (a ``Value`` of NaN)."""
    descriptor = message.DESCRIPTOR
    write = _WRITERS.get(descriptor) or _writer(descriptor)
    return write(message)


def whole(value: Any) -> Any:
    """``value`` with each whole number an int (in place where it is a dict or a list)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, float | dict | list):
                value[key] = whole(item)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, float | dict | list):
                value[index] = whole(item)
    elif isinstance(value, float) and value.is_integer() and abs(value) <= 2**53:
        return int(value)
    return value


def _writer(descriptor: Descriptor) -> Writer:
    name = descriptor.full_name
    write: Writer
    if name == "google.protobuf.Struct":
        write = _struct
    elif name == "google.protobuf.Value":
        write = _value
    elif name == "google.protobuf.ListValue":
        write = _list
    elif name in _BY_STRING:
        write = _by_string
    elif (name.startswith("google.protobuf.") and name != "google.protobuf.Empty") or any(
        f.type not in _KNOWN for f in descriptor.fields
    ):
        write = _generic
    else:
        write = _regular(descriptor)
    _WRITERS[descriptor] = write
    return write


def _regular(descriptor: Descriptor) -> Writer:
    fields = {f: (f.json_name, _field(f)) for f in descriptor.fields}

    def write(message: Any) -> dict[str, Any]:
        out = {}
        for field, value in message.ListFields():
            name, convert = fields[field]
            out[name] = convert(value)
        return out

    return write


def _field(field: FieldDescriptor) -> Writer:
    """How a value of ``field`` is written (all of it: a list or a map too)."""
    entry = field.message_type
    if entry is not None and entry.GetOptions().map_entry:
        value = _one(entry.fields_by_name["value"])
        if entry.fields_by_name["key"].type == FieldDescriptor.TYPE_BOOL:
            return lambda m: {("true" if k else "false"): value(m[k]) for k in m}
        return lambda m: {str(k): value(m[k]) for k in m}
    one = _one(field)
    if field.is_repeated:
        if one is _same:
            return list
        return lambda items: [one(x) for x in items]
    return one


def _one(field: FieldDescriptor) -> Writer:
    kind = field.type
    if kind in _AS_IS:
        return _same
    if kind == FieldDescriptor.TYPE_MESSAGE:
        return to_json
    if kind == FieldDescriptor.TYPE_ENUM:
        if field.enum_type.full_name == "google.protobuf.NullValue":
            return _null
        names = {v.number: v.name for v in field.enum_type.values}
        return lambda n: names.get(n, n)
    if kind == FieldDescriptor.TYPE_BYTES:
        return _base64
    return str  # the 64-bit integers


def _same(value: Any) -> Any:
    return value


def _null(value: Any) -> None:
    return None


def _base64(value: bytes) -> str:
    return base64.b64encode(value).decode()


def _by_string(message: Any) -> Any:
    return message.ToJsonString()


def _generic(message: Message) -> Any:
    return whole(json_format.MessageToDict(message))


def _struct(message: Any) -> dict[str, Any]:
    fields = message.fields
    return {key: _value(fields[key]) for key in fields}


def _list(message: Any) -> list[Any]:
    return [_value(x) for x in message.values]


def _value(message: Any) -> Any:
    kind = message.WhichOneof("kind")
    if kind == "string_value":
        return message.string_value
    if kind == "number_value":
        number: float = message.number_value
        if math.isinf(number) or math.isnan(number):
            raise ValueError(f"a Value of {number} has no JSON form")
        if number.is_integer() and abs(number) <= 2**53:
            return int(number)
        return number
    if kind == "bool_value":
        return message.bool_value
    if kind == "struct_value":
        return _struct(message.struct_value)
    if kind == "list_value":
        return _list(message.list_value)
    return None
