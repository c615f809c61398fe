"""Bounds on input read from outside the process: local files and JSON nesting.

Used by the registry, the command line and the push receiver, so that a FIFO or a device
named as a file, a huge file, or JSON nested thousands of levels deep is refused with a
``ValueError`` that the caller words for its user, never a hang, an exhausted memory or a
``RecursionError``.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

#: Containers nested deeper than this are refused.
MAX_JSON_DEPTH = 100

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def read_file(path: str | Path, limit: int) -> bytes:
    """The content of the regular file at ``path``, at most ``limit`` bytes.

    ``ValueError`` when it is not a regular file or is larger than ``limit``; ``OSError`` when
    it cannot be opened or read. It never blocks on a FIFO: the file is opened non-blocking
    and checked before anything is read.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "a special file")
            raise ValueError(f"is {kind}, not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(limit + 1)  # a file that grows while it is read is still cut here
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ValueError(f"is larger than {_size(limit)}")
    return data


def loads(data: str | bytes, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads(data)``, refused (``ValueError``) when nested deeper than ``max_depth``."""
    too_deep = ValueError(f"JSON nested deeper than {max_depth} levels")
    try:
        value = json.loads(data)
    except RecursionError:
        raise too_deep from None
    level: list[Any] = [value]
    for _ in range(max_depth):
        level = [
            child
            for item in level
            if isinstance(item, (dict, list))
            for child in (item.values() if isinstance(item, dict) else item)
        ]
        if not level:
            return value
    if any(isinstance(item, (dict, list)) for item in level):
        raise too_deep
    return value


def _size(limit: int) -> str:
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if limit >= size and limit % size == 0:
            return f"{limit // size} {unit}"
    return f"{limit} bytes"
