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


# -- ProtoJSON into a message ----------------------------------------------------------------

Reader = Callable[[Any, Any], None]

_READERS: dict[Descriptor, Reader] = {}


def from_json(cls: type[Message], value: Any) -> Message:
    """A message of ``cls`` from its ProtoJSON: what ``json_format.ParseDict`` makes of it
    (field names in either form, enums by name or number, 64-bit integers and bytes from
    strings; ValueError or TypeError for what it refuses, an unknown field among them)."""
    message = cls()
    _read(message, value)
    return message


def _read(message: Any, value: Any) -> None:
    descriptor = message.DESCRIPTOR
    (_READERS.get(descriptor) or _reader(descriptor))(message, value)


def _reader(descriptor: Descriptor) -> Reader:
    name = descriptor.full_name
    read: Reader
    if name == "google.protobuf.Struct":
        read = _read_struct
    elif name == "google.protobuf.Value":
        read = _read_value
    elif name == "google.protobuf.ListValue":
        read = _read_list
    elif name in _BY_STRING:
        read = _read_by_string
    elif (name.startswith("google.protobuf.") and name != "google.protobuf.Empty") or any(
        f.type not in _KNOWN for f in descriptor.fields
    ):
        read = json_format.ParseDict
    else:
        read = _read_regular(descriptor)
    _READERS[descriptor] = read
    return read


def _read_regular(descriptor: Descriptor) -> Reader:
    full = descriptor.full_name
    fields: dict[str, tuple[FieldDescriptor, str | None, Reader]] = {}
    for f in descriptor.fields:
        oneof = f.containing_oneof.name if f.containing_oneof is not None else None
        entry = (f, oneof, _field_reader(f))
        fields[f.json_name] = entry
        fields.setdefault(f.name, entry)

    def read(message: Any, value: Any) -> None:
        if not isinstance(value, dict):
            if isinstance(value, list | tuple | str) and not value:
                return  # nothing to read, as json_format reads it
            raise TypeError(f"a {full} is a JSON object, not {type(value).__name__}")
        oneofs: set[str] = set()
        for key, item in value.items():
            found = fields.get(key)
            if found is None:
                raise ValueError(f'{full} has no field named "{key}"')
            field, oneof, read_field = found
            if item is None:
                _read_null(message, field)
                continue
            if oneof is not None:
                if oneof in oneofs:
                    raise ValueError(f'{full} has more than one field of "{oneof}"')
                oneofs.add(oneof)
            read_field(message, item)

    return read


def _read_null(message: Any, field: FieldDescriptor) -> None:
    """JSON's null: a ``Value``'s null, else the field left unset."""
    if field.message_type is not None and field.message_type.full_name == "google.protobuf.Value":
        getattr(message, field.name).null_value = 0
    elif field.enum_type is not None and field.enum_type.full_name == "google.protobuf.NullValue":
        setattr(message, field.name, 0)
    else:
        message.ClearField(field.name)


def _field_reader(field: FieldDescriptor) -> Reader:
    """How a JSON value of ``field`` goes into a message (all of it: a list or a map too)."""
    attr = field.name
    entry = field.message_type
    if entry is not None and entry.GetOptions().map_entry:
        key_of = _map_key(entry.fields_by_name["key"])
        item = entry.fields_by_name["value"]
        into = item.type == FieldDescriptor.TYPE_MESSAGE
        convert = _same if into else _scalar(item)

        def read_map(message: Any, value: Any) -> None:
            message.ClearField(attr)
            if not isinstance(value, dict):
                raise TypeError(f"the map {attr} is a JSON object")
            target = getattr(message, attr)
            for key, x in value.items():
                if into:
                    _read(target[key_of(key)], x)
                else:
                    target[key_of(key)] = convert(x)

        return read_map
    if field.is_repeated:
        if entry is not None:
            nulls = entry.full_name == "google.protobuf.Value"

            def read_messages(message: Any, value: Any) -> None:
                message.ClearField(attr)
                if not isinstance(value, list | tuple):
                    raise TypeError(f"the repeated field {attr} is a JSON array")
                target = getattr(message, attr)
                for x in value:
                    if x is None and not nulls:
                        raise ValueError(f"a null in the repeated field {attr}")
                    _read(target.add(), x)

            return read_messages
        convert = _scalar(field)

        def read_scalars(message: Any, value: Any) -> None:
            message.ClearField(attr)
            if not isinstance(value, list | tuple):
                raise TypeError(f"the repeated field {attr} is a JSON array")
            if any(x is None for x in value):
                raise ValueError(f"a null in the repeated field {attr}")
            getattr(message, attr).extend([convert(x) for x in value])

        return read_scalars
    if entry is not None:

        def read_message(message: Any, value: Any) -> None:
            sub = getattr(message, attr)
            sub.SetInParent()
            _read(sub, value)

        return read_message
    convert = _scalar(field)

    def read_scalar(message: Any, value: Any) -> None:
        setattr(message, attr, convert(value))

    return read_scalar


def _scalar(field: FieldDescriptor) -> Writer:
    kind = field.type
    if kind == FieldDescriptor.TYPE_STRING:
        return _string
    if kind == FieldDescriptor.TYPE_BOOL:
        return _bool
    if kind == FieldDescriptor.TYPE_BYTES:
        return _bytes
    if kind == FieldDescriptor.TYPE_ENUM:
        enum = field.enum_type
        by_name: dict[str, int] = {v.name: v.number for v in enum.values}
        known: set[int] = {v.number for v in enum.values}

        def number(value: Any) -> int:
            found = by_name.get(value) if isinstance(value, str) else None
            if found is not None:
                return found
            try:
                found = int(value)
            except ValueError:
                raise ValueError(f"{value!r} is no value of {enum.full_name}") from None
            if found not in known and enum.is_closed:
                raise ValueError(f"{value!r} is no value of {enum.full_name}")
            return found

        return number
    return _integer  # the integer types (the float ones are json_format's)


def _map_key(field: FieldDescriptor) -> Writer:
    if field.type == FieldDescriptor.TYPE_BOOL:
        return _bool_key
    if field.type == FieldDescriptor.TYPE_STRING:
        return _string
    return _integer


def _bool_key(value: Any) -> bool:
    if value not in ("true", "false"):
        raise ValueError(f'a map key {value!r}, not "true" or "false"')
    return bool(value == "true")


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is no string")
    value.encode()  # an unpaired surrogate has no UTF-8: UnicodeEncodeError, a ValueError
    return value


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{value!r} is no true or false")
    return value


def _integer(value: Any) -> int:
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise ValueError(f"{value!r} is no integer")
    if isinstance(value, str) and " " in value:
        raise ValueError(f"{value!r} is no integer")
    return int(value)


def _bytes(value: Any) -> bytes:
    encoded = value.encode() if isinstance(value, str) else value
    return base64.urlsafe_b64decode(encoded + b"=" * (4 - len(encoded) % 4))


def _read_struct(message: Any, value: Any) -> None:
    if not isinstance(value, dict):
        raise TypeError("a Struct is a JSON object")
    message.Clear()  # present, even empty
    fields = message.fields
    for key, item in value.items():
        _read_value(fields[key], item)


def _read_list(message: Any, value: Any) -> None:
    if not isinstance(value, list | tuple):
        raise TypeError("a ListValue is a JSON array")
    message.ClearField("values")
    values = message.values
    for item in value:
        _read_value(values.add(), item)


def _read_value(message: Any, value: Any) -> None:
    if isinstance(value, dict):
        _read_struct(message.struct_value, value)
    elif isinstance(value, list | tuple):
        _read_list(message.list_value, value)
    elif value is None:
        message.null_value = 0
    elif isinstance(value, bool):
        message.bool_value = value
    elif isinstance(value, str):
        message.string_value = value
    elif isinstance(value, int | float):
        message.number_value = value
    else:
        raise TypeError(f"{type(value).__name__} has no JSON form")


def _read_by_string(message: Any, value: Any) -> None:
    if not isinstance(value, str):
        raise TypeError(f"a {message.DESCRIPTOR.name} is a JSON string")
    message.FromJsonString(value)
