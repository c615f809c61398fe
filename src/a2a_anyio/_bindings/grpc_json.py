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
    found = _by_hand(descriptor)
    write = _regular(descriptor) if found is None else found[0]
    _WRITERS[descriptor] = write
    return write


def _by_hand(descriptor: Descriptor) -> tuple[Writer, Reader] | None:
    """How a message of ``descriptor`` is written and read when not field by field: a
    well-known type's own way, ``json_format``'s for a type with a field of a kind not in
    ``_SCALARS``; None for a message read and written field by field."""
    name = descriptor.full_name
    found = _WELL_KNOWN.get(name)
    if found is not None:
        return found
    if (name.startswith("google.protobuf.") and name != "google.protobuf.Empty") or any(
        f.type not in _SCALARS and f.type not in _COMPOUND for f in descriptor.fields
    ):
        return _generic, json_format.ParseDict
    return None


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
    if kind == FieldDescriptor.TYPE_MESSAGE:
        return to_json
    if kind == FieldDescriptor.TYPE_ENUM:
        if field.enum_type.full_name == "google.protobuf.NullValue":
            return _null
        names = {v.number: v.name for v in field.enum_type.values}
        return lambda n: names.get(n, n)
    return _SCALARS[kind][0]


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
    found = _by_hand(descriptor)
    read = _read_regular(descriptor) if found is None else found[1]
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
    return _SCALARS[kind][1]


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


_T = FieldDescriptor
#: Each scalar kind of field the messages have: how a value is written, how one is read
#: (the float kinds are json_format's: a message with one is written and read by it).
_SCALARS: dict[int, tuple[Writer, Writer]] = {
    _T.TYPE_STRING: (_same, _string),
    _T.TYPE_BOOL: (_same, _bool),
    _T.TYPE_BYTES: (_base64, _bytes),
    **dict.fromkeys(
        (_T.TYPE_INT32, _T.TYPE_SINT32, _T.TYPE_SFIXED32, _T.TYPE_UINT32, _T.TYPE_FIXED32),
        (_same, _integer),
    ),
    **dict.fromkeys(  # ProtoJSON says the 64-bit integers as strings
        (_T.TYPE_INT64, _T.TYPE_SINT64, _T.TYPE_SFIXED64, _T.TYPE_UINT64, _T.TYPE_FIXED64),
        (str, _integer),
    ),
}
#: The kinds of field whose way depends on the field's own type.
_COMPOUND = frozenset({_T.TYPE_ENUM, _T.TYPE_MESSAGE})
#: The well-known types written and read by hand (the rest of ``google.protobuf`` are
#: json_format's).
_WELL_KNOWN: dict[str, tuple[Writer, Reader]] = {
    "google.protobuf.Struct": (_struct, _read_struct),
    "google.protobuf.Value": (_value, _read_value),
    "google.protobuf.ListValue": (_list, _read_list),
    **dict.fromkeys(_BY_STRING, (_by_string, _read_by_string)),
}
