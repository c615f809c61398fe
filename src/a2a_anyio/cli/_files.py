"""``--save-files DIR``: the files of an answer, written into a directory the user named.

Every file part of the task's artifacts (or of the agent's message) is written into DIR:
inline bytes as they are; a URL's content fetched by the client as it fetches everything
(its credentials only to the agent's own origin, redirects bounded, the body at most the
client's response limit). The names come from the agent, so none is trusted: ``safe_name``
keeps only a plain name, one that no platform reads as a device or a path; each file is
written aside under a temporary name in DIR, then put in place under a name where nothing
stands yet (never through a symlink, never over a file: ``report-1.pdf`` then), so that a
write that fails leaves nothing under the name; nothing is written outside DIR.
"""

from __future__ import annotations

import mimetypes
import os
import re
import secrets
import unicodedata
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anyio import to_thread

from a2a_anyio._client import A2AClient
from a2a_anyio._errors import A2AClientError
from a2a_anyio._model import Artifact, FilePart, Message, Task
from a2a_anyio.cli._errors import FAILURE, OK, UsageError
from a2a_anyio.cli._render import Printer

#: The longest name made from an agent's, in UTF-8 bytes (file systems allow 255; a number
#: added to it needs room).
MAX_NAME_BYTES = 200
_SEPARATORS = re.compile(r"[/\\]")
#: What Windows refuses in a name; replaced so that the directory can travel.
_REFUSED = re.compile(r'[<>:"|?*]')
#: Windows' device names. Windows reads a name as the device whatever its case and extension,
#: with spaces before the extension (``nul .txt``), and with a superscript digit (``COM¹``).
_DEVICES = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
    | {f"{port}{digit}" for port in ("COM", "LPT") for digit in "0123456789¹²³"}
)
#: Controls, formatting (the bidirectional overrides among them) and lone surrogates.
_INVISIBLE = frozenset({"Cc", "Cf", "Cs"})
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
_CREATE |= getattr(os, "O_BINARY", 0)


@dataclass(slots=True)
class SavedFile:
    """One file part and what became of it: ``path`` where it was written, else ``error``."""

    path: Path | None
    size: int
    media_type: str | None
    artifact_id: str | None
    url: str | None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"artifactId": self.artifact_id, "url": self.url}
        if self.path is None:
            return {**out, "error": self.error}
        return {"path": str(self.path), "size": self.size, "mediaType": self.media_type, **out}


def directory(value: str, flag: str = "--save-files") -> Path:
    """The directory of ``--save-files`` (or of ``flag``), created if need be (before
    anything is sent)."""
    path = Path(value).expanduser()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise UsageError(f"{flag}: {value} is not a directory") from None
    except OSError as exc:
        raise UsageError(f"{flag}: cannot create {value}: {exc.strerror or exc}") from exc
    return path


def safe_name(name: str) -> str:
    """``name`` as a plain file name: its last path segment (``/`` and ``\\`` both
    separate), without control or formatting characters, leading dots and spaces, trailing
    dots and spaces (which Windows drops), or the characters Windows refuses; a device name
    (``is_device_name``) gets a leading ``_``; at most ``MAX_NAME_BYTES``. Empty when
    nothing is left."""
    name = _SEPARATORS.split(name)[-1]
    name = "".join(c for c in name if unicodedata.category(c) not in _INVISIBLE)
    name = _REFUSED.sub("_", name).strip().lstrip(". ")
    stem, suffix = _split(name.rstrip(". "))
    budget = MAX_NAME_BYTES - len(suffix.encode())
    name = (stem.encode()[:budget].decode("utf-8", "ignore") + suffix).rstrip(". ")
    return "_" + name if is_device_name(name) else name


def is_device_name(name: str) -> bool:
    """Whether Windows reads the file name ``name`` as a device (``CON``, ``nul .txt``,
    ``conin$``, ``COM¹.log``): its part before the first dot, spaces at its end dropped, in
    any case. The one rule ``safe_name`` applies on every platform."""
    return name.partition(".")[0].rstrip(" ").upper() in _DEVICES


def _split(name: str) -> tuple[str, str]:
    """The stem and the suffix (``.pdf``) of a name; a long "suffix" is part of the stem."""
    stem, dot, suffix = name.rpartition(".")
    if not dot or not stem or len(suffix) > 16:
        return name, ""
    return stem, dot + suffix


def file_parts(result: Task | Message) -> list[tuple[FilePart, Artifact | None]]:
    """The file parts of a task's artifacts, or of a message, in order."""
    if isinstance(result, Message):
        return [(p, None) for p in result.parts if isinstance(p, FilePart)]
    return [(p, a) for a in result.artifacts for p in a.parts if isinstance(p, FilePart)]


def _name(part: FilePart, artifact: Artifact | None, number: int) -> str:
    """The part's name, else its artifact's (with the extension of the part's media type),
    else ``artifact-N`` with that extension; each made safe."""
    ext = mimetypes.guess_extension(part.media_type or "") or ""
    if part.name and (name := safe_name(part.name)):
        return name
    if artifact is not None and artifact.name and (name := safe_name(artifact.name)):
        return name if _split(name)[1] or not ext else safe_name(name + ext)
    return f"artifact-{number}{ext}"


def _write(root: Path, name: str, data: bytes, numbers: dict[str, int]) -> str:
    """Write ``data`` into a new file of the directory ``root`` named ``name``, or
    ``stem-N.ext`` when that exists (a file, a directory or a symlink, which is never
    followed); the name used. The data is written aside first, so that a write that fails
    leaves nothing under the name. ``numbers`` remembers, per name, the number to try next:
    many files of one name cost one try each, not one per file saved before."""
    stem, suffix = _split(name)
    aside = _write_aside(root, data)
    try:
        number = numbers.get(name, 0)
        while True:
            candidate = name if number == 0 else f"{stem}-{number}{suffix}"
            number += 1
            path = root / candidate
            if path.parent != root:  # a name is one segment; never anything else
                raise ValueError(f"refusing the name {candidate!r}")
            if _put(aside, path):
                numbers[name] = number
                return candidate
    finally:
        with suppress(FileNotFoundError):
            os.unlink(aside)


def _write_aside(root: Path, data: bytes) -> Path:
    """A new file of ``root`` under a hidden temporary name that holds ``data``; on a
    failure (a full disk, a size limit), none."""
    while True:
        aside = root / f".{secrets.token_hex(8)}.part"
        try:
            fd = os.open(aside, _CREATE, 0o644)
        except FileExistsError:
            continue
        break
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    except BaseException:
        os.unlink(aside)
        raise
    return aside


def _put(aside: Path, path: Path) -> bool:
    """Give the written file ``aside`` the name ``path`` unless something stands there
    already (then False). A hard link takes a name only where none is; on a file system
    without them (FAT, some network shares) the name is taken by creating an empty file,
    which the written one then replaces."""
    try:
        os.link(aside, path)
    except FileExistsError:
        return False
    except OSError:
        pass
    else:
        return True
    try:
        os.close(os.open(path, _CREATE, 0o644))
    except FileExistsError:
        return False
    try:
        os.replace(aside, path)
    except BaseException:
        os.unlink(path)
        raise
    return True


async def save_files(client: A2AClient, result: Task | Message, where: Path) -> list[SavedFile]:
    """Write every file part of ``result`` into ``where``; what became of each. A part that
    cannot be fetched or written is recorded with its error, and the others are saved."""
    out: list[SavedFile] = []
    root = await to_thread.run_sync(where.resolve)
    numbers: dict[str, int] = {}
    for number, (part, artifact) in enumerate(file_parts(result), 1):
        art_id = artifact.artifact_id if artifact is not None else None
        media_type = part.media_type
        try:
            if part.data is not None:
                data = part.data
            else:
                assert part.url is not None
                resp = await client._fetch(part.url)
                data, media_type = resp.content, media_type or resp.content_type or None
            name = _name(part, artifact, number)
            name = await to_thread.run_sync(_write, root, name, data, numbers)
        except (A2AClientError, OSError, ValueError) as exc:
            if isinstance(exc, A2AClientError):
                why = exc.message
            elif isinstance(exc, OSError) and exc.strerror:
                why = exc.strerror
            else:
                why = str(exc)
            out.append(SavedFile(None, 0, media_type, art_id, part.url, why))
            continue
        out.append(SavedFile(where / name, len(data), media_type, art_id, part.url))
    return out


def show(p: Printer, saved: list[SavedFile], redact: Callable[[str], str] = str) -> int:
    """One ``Saved:`` line per file written (text output), an error line per file that was
    not (stderr); the exit status: 1 when a file was not saved."""
    if not saved:
        p.note("no files to save")
    for item in saved:
        if item.path is not None:
            if not p.json_mode:
                kind = item.media_type or "unknown type"
                p.field("Saved", f"{item.path} ({item.size} bytes, {kind})")
        else:
            what = item.url or "a file"
            p.error(redact(f"not saved: {what}: {item.error}"))
    return FAILURE if any(item.path is None for item in saved) else OK
