"""RFC 8785 JSON Canonicalization Scheme (JCS): the bytes an Agent Card signature covers."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_DEPTH", "canonical_json", "canonicalize"]

#: Containers nested deeper than this have no canonical form here (bounded recursion).
MAX_DEPTH = 256
_MAX_SAFE_INT = 2**53

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}
_NEEDS_ESCAPE = re.compile(r'[\x00-\x1f"\\]')


def _escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    return _ESCAPES.get(ch) or f"\\u{ord(ch):04x}"


def _string(value: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_escape, value) + '"'


def _number(value: float) -> str:
    """ECMAScript ``Number::toString`` (ECMA-262 §7.1.12.1) of a finite double, as RFC 8785
    §3.2.2.3 requires. ``repr`` gives the shortest digits that round-trip, which is the ``s``
    (and ``k``) ECMAScript asks for; only the layout differs."""
    if not math.isfinite(value):
        raise ValueError(f"{value!r} has no JSON representation (RFC 8785 forbids NaN/Infinity)")
    if value == 0:
        return "0"  # also -0
    if value < 0:
        return "-" + _number(-value)
    mantissa, _, exp = repr(value).partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    raw = (int_part + frac_part).lstrip("0")
    digits = raw.rstrip("0")
    k = len(digits)
    # value == int(digits) * 10 ** (n - k)
    n = k + (int(exp) if exp else 0) - len(frac_part) + (len(raw) - k)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    e = n - 1
    head = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{head}e{'+' if e >= 0 else '-'}{abs(e)}"


def _integer(value: int) -> str:
    if -_MAX_SAFE_INT <= value <= _MAX_SAFE_INT:
        return str(int(value))
    try:  # beyond 2**53 a JSON number is the nearest double (I-JSON), as JSON.parse reads it
        return _number(float(value))
    except OverflowError:
        raise ValueError("integer too large for a JSON number") from None


def _write(value: Any, out: list[str], depth: int) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, int):
        out.append(_integer(value))
    elif isinstance(value, float):
        out.append(_number(float(value)))
    elif isinstance(value, (Mapping, list, tuple)):
        if depth >= MAX_DEPTH:
            raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, Mapping):
            if not all(isinstance(k, str) for k in value):
                raise ValueError("JSON object keys must be strings")
            # RFC 8785 §3.2.3: sort by UTF-16 code units; big-endian UTF-16 bytes compare alike.
            items = sorted(value.items(), key=lambda kv: kv[0].encode("utf-16-be", "surrogatepass"))
            out.append("{")
            for i, (key, item) in enumerate(items):
                out.append("," if i else "")
                out.append(_string(key) + ":")
                _write(item, out, depth + 1)
            out.append("}")
        else:
            out.append("[")
            for i, item in enumerate(value):
                out.append("," if i else "")
                _write(item, out, depth + 1)
            out.append("]")
    else:
        raise ValueError(f"{type(value).__name__} has no JSON representation")


def canonical_json(value: Any) -> bytes:
    """The RFC 8785 (JCS) canonical UTF-8 bytes of a JSON value (dicts/Mappings, lists/tuples,
    str, int, float, bool, None). Raises ``ValueError`` for NaN/Infinity, non-string keys,
    invalid Unicode (lone surrogates), other types, or nesting deeper than ``MAX_DEPTH``."""
    out: list[str] = []
    _write(value, out, 0)
    try:
        return "".join(out).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("JSON text is not valid Unicode (lone surrogate)") from None


_DROP = object()


def _omit_empty(value: Any) -> Any:
    """``value`` without null, "", [] and {} members/elements, recursively (an object or array
    emptied that way goes too): the "default values omitted" form of A2A v0.3 §8.4.1, the one
    the a2a-sdk signs."""
    if isinstance(value, Mapping):
        kept = {k: v for k, v in ((k, _omit_empty(v)) for k, v in value.items()) if v is not _DROP}
        return kept or _DROP
    if isinstance(value, (list, tuple)):
        items = [v for v in (_omit_empty(v) for v in value) if v is not _DROP]
        return items or _DROP
    if value is None or value == "":
        return _DROP
    return value


def canonicalize(card: Mapping[str, Any], *, omit_empty: bool = False) -> bytes:
    """The bytes an Agent Card signature covers: RFC 8785 JCS of ``card`` without its
    top-level ``signatures`` member.

    ``omit_empty=True`` first drops null, "", [] and {} values recursively (A2A v0.3 §8.4.1
    "default value omission", as the a2a-sdk does). Raises ``ValueError`` when the card has no
    canonical form (NaN/Infinity, lone surrogates, ...).

    Raises:
        ValueError: the card has no canonical form (NaN or Infinity, lone surrogates...).
    """
    if not isinstance(card, Mapping):
        raise ValueError("an Agent Card is a JSON object")
    body: Any = {k: v for k, v in card.items() if k != "signatures"}
    if omit_empty:
        body = _omit_empty(body)
        if body is _DROP:
            body = {}
    return canonical_json(body)
