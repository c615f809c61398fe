"""Sans-IO dialects: the payloads of each protocol version, one ``Dialect`` table each, and
the operations and arguments they carry (``ops``). How a transport carries them is the
bindings' (``_bindings``).

Nothing here imports httpx or anyio.
"""

from __future__ import annotations

from a2a_anyio._dialects.dialect import Dialect, Payload
from a2a_anyio._dialects.ops import (
    Call,
    Cancel,
    ListTasks,
    Op,
    OpArgs,
    PushCreate,
    PushRef,
    Send,
    SendConfig,
    TaskRef,
    task_of,
)

__all__ = [
    "Call",
    "Cancel",
    "Dialect",
    "ListTasks",
    "Op",
    "OpArgs",
    "Payload",
    "PushCreate",
    "PushRef",
    "Send",
    "SendConfig",
    "TaskRef",
    "task_of",
]
