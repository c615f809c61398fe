"""What an agent's answer gets wrong for the A2A version and binding it was asked in.

The client reads answers leniently (a v1.0 agent's task shaped as v0.3 shapes it, a state in
another version's spelling): these checks are not. Each looks at an object's JSON as the agent
sent it (the ``raw`` of what the client decoded) and lists, as ``path: message`` strings, the
members the shape requires that are missing, members of the wrong JSON type, enum values and
discriminators that are not the version's (a2a-protocol §4). Members a version does not know
are no problem: answers may carry more. The envelope around the objects (JSON-RPC, SSE frames,
v1.0's ``{"task": ...}`` wrapper) is the client's to read: an answer it cannot read fails
before these checks run.

Shapes: ``"1.0"`` (ProtoJSON of the v1.0 proto, every binding), ``"0.3"`` (v0.2/v0.3
JSON-RPC, ``kind`` discriminators), ``"0.3-proto"`` (ProtoJSON of the v0.3 proto: v0.3
HTTP+JSON and gRPC) and ``"legacy"`` (the ``tasks/send`` dialect).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

#: The shape an interface's answers have: by its version, and, for v0.3, its binding.
SHAPES = ("1.0", "0.3", "0.3-proto", "legacy")

_KEBAB = ("submitted", "working", "input-required", "completed", "canceled", "failed")
_STATES = {
    "1.0": {
        f"TASK_STATE_{s.upper().replace('-', '_')}" for s in (*_KEBAB, "rejected", "auth-required")
    },
    "0.3": {*_KEBAB, "rejected", "auth-required", "unknown"},
    "legacy": {*_KEBAB, "unknown"},
}
_STATES["0.3-proto"] = (_STATES["1.0"] - {"TASK_STATE_CANCELED"}) | {"TASK_STATE_CANCELLED"}
_STATES["1.0"].add("TASK_STATE_UNSPECIFIED")
_STATES["0.3-proto"].add("TASK_STATE_UNSPECIFIED")
_ROLES = {
    "1.0": {"ROLE_USER", "ROLE_AGENT"},
    "0.3-proto": {"ROLE_USER", "ROLE_AGENT"},
    "0.3": {"user", "agent"},
    "legacy": {"user", "agent"},
}
_TYPES = {str: "a string", dict: "an object", list: "an array", bool: "a boolean", int: "a number"}


def shape_of(version: str, binding: str) -> str:
    """The shape of the answers of an interface of ``version`` ("1.0", "0.3", "0.2",
    "legacy") over ``binding`` ("JSONRPC", "HTTP+JSON", "GRPC")."""
    if version == "1.0" or version == "legacy":
        return version
    return "0.3" if binding == "JSONRPC" else "0.3-proto"


class _Shape:
    """The problems of one answer, found member by member."""

    def __init__(self, shape: str) -> None:
        if shape not in SHAPES:
            raise ValueError(f"shape must be one of {', '.join(SHAPES)}, not {shape!r}")
        self.shape = shape
        self.problems: list[str] = []

    def add(self, path: str, message: str) -> None:
        self.problems.append(f"{path}: {message}" if path else message)

    def member(self, obj: dict[str, Any], key: str, path: str, kind: type, need: bool) -> Any:
        at = f"{path}.{key}" if path else key
        value = obj.get(key)
        if value is None:
            if need:
                self.add(at, "missing")
            return None
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            self.add(at, f"must be {_TYPES[kind]}, not {_json_type(value)}")
            return None
        return value

    def objects(
        self, obj: dict[str, Any], key: str, path: str, need: bool
    ) -> Iterable[tuple[dict[str, Any], str]]:
        at = f"{path}.{key}" if path else key
        for i, item in enumerate(self.member(obj, key, path, list, need) or []):
            if isinstance(item, dict):
                yield item, f"{at}[{i}]"
            else:
                self.add(f"{at}[{i}]", f"must be an object, not {_json_type(item)}")

    def kind(self, obj: dict[str, Any], path: str, expected: str) -> None:
        """The ``kind`` discriminator: required before v1.0 over JSON-RPC, absent elsewhere."""
        kind = obj.get("kind")
        if self.shape == "0.3":
            if kind != expected:
                self.add(_at(path, "kind"), f'must be "{expected}", not {_shown(kind)}')
        elif kind is not None and self.shape != "legacy":
            self.add(_at(path, "kind"), f"{self.label} has no kind (v0.3 JSON-RPC's discriminator)")

    def enum(self, obj: dict[str, Any], key: str, path: str, allowed: set[str]) -> None:
        value = self.member(obj, key, path, str, True)
        if value is not None and value not in allowed:
            self.add(_at(path, key), f"{_shown(value)} is not a value of {self.label}")

    @property
    def label(self) -> str:
        return {"legacy": "the tasks/send dialect", "0.3-proto": "v0.3's ProtoJSON"}.get(
            self.shape, f"A2A {self.shape}"
        )

    # -- objects ------------------------------------------------------------------------

    def task(self, d: dict[str, Any], path: str = "") -> None:
        self.kind(d, path, "task")
        self.member(d, "id", path, str, True)
        self.member(d, "contextId", path, str, self.shape == "0.3")
        status = self.member(d, "status", path, dict, True)
        if status is not None:
            self.status(status, _at(path, "status"))
        for artifact, at in self.objects(d, "artifacts", path, False):
            self.artifact(artifact, at)
        for message, at in self.objects(d, "history", path, False):
            self.message(message, at)
        self.member(d, "metadata", path, dict, False)

    def status(self, d: dict[str, Any], path: str) -> None:
        self.enum(d, "state", path, _STATES[self.shape])
        message = self.member(d, "message", path, dict, False)
        if message is not None:
            self.message(message, _at(path, "message"))
        self.member(d, "timestamp", path, str, False)

    def message(self, d: dict[str, Any], path: str = "") -> None:
        self.kind(d, path, "message")
        if self.shape != "legacy":
            self.member(d, "messageId", path, str, True)
        self.enum(d, "role", path, _ROLES[self.shape])
        key = "content" if self.shape == "0.3-proto" else "parts"
        for part, at in self.objects(d, key, path, True):
            self.part(part, at)
        for key in ("taskId", "contextId"):
            self.member(d, key, path, str, False)

    def artifact(self, d: dict[str, Any], path: str) -> None:
        if self.shape != "legacy":
            self.member(d, "artifactId", path, str, True)
        for part, at in self.objects(d, "parts", path, True):
            self.part(part, at)

    def part(self, d: dict[str, Any], path: str) -> None:
        if self.shape in ("0.3", "legacy"):
            key = "kind" if self.shape == "0.3" else "type"
            kind = d.get(key)
            if kind not in ("text", "file", "data"):
                self.add(_at(path, key), f'must be "text", "file" or "data", not {_shown(kind)}')
                return
            if kind == "text":
                self.member(d, "text", path, str, True)
            elif kind == "data":
                self.member(d, "data", path, dict, True)
            elif (file := self.member(d, "file", path, dict, True)) is not None:
                self.one_of(file, _at(path, "file"), ("bytes", "uri"))
            return
        if self.shape == "0.3-proto":
            found = self.one_of(d, path, ("text", "file", "data"))
            if found == "file" and isinstance(d["file"], dict):
                self.one_of(d["file"], _at(path, "file"), ("fileWithUri", "fileWithBytes"))
            elif found == "data" and isinstance(d["data"], dict):
                self.member(d["data"], "data", _at(path, "data"), dict, True)
            return
        found = self.one_of(d, path, ("text", "raw", "url", "data"))
        if found in ("text", "raw", "url"):
            self.member(d, found, path, str, True)

    def one_of(self, d: dict[str, Any], path: str, keys: tuple[str, ...]) -> str | None:
        present = [k for k in keys if d.get(k) is not None]
        if len(present) != 1:
            names = ", ".join(keys)
            self.add(path, f"must hold exactly one of {names} (it holds {len(present)})")
            return None
        return present[0]

    def status_update(self, d: dict[str, Any]) -> None:
        self.kind(d, "", "status-update")
        self.member(d, "id" if self.shape == "legacy" else "taskId", "", str, True)
        self.member(d, "contextId", "", str, self.shape == "0.3")
        status = self.member(d, "status", "", dict, True)
        if status is not None:
            self.status(status, "status")
        self.member(d, "final", "", bool, self.shape == "0.3")

    def artifact_update(self, d: dict[str, Any]) -> None:
        self.kind(d, "", "artifact-update")
        self.member(d, "id" if self.shape == "legacy" else "taskId", "", str, True)
        self.member(d, "contextId", "", str, self.shape == "0.3")
        artifact = self.member(d, "artifact", "", dict, True)
        if artifact is not None:
            self.artifact(artifact, "artifact")
        for key in ("append", "lastChunk"):
            self.member(d, key, "", bool, False)

    def push_config(self, d: dict[str, Any]) -> None:
        if self.shape == "1.0":
            self.member(d, "url", "", str, True)
            for key in ("taskId", "id", "token"):
                self.member(d, key, "", str, False)
            auth = self.member(d, "authentication", "", dict, False)
            if auth is not None:
                self.member(auth, "scheme", "authentication", str, True)
            return
        if self.shape == "0.3-proto":
            self.member(d, "name", "", str, True)
        else:
            self.member(d, "id" if self.shape == "legacy" else "taskId", "", str, True)
        inner = self.member(d, "pushNotificationConfig", "", dict, True)
        if inner is not None:
            self.member(inner, "url", "pushNotificationConfig", str, True)
            auth = self.member(inner, "authentication", "pushNotificationConfig", dict, False)
            if auth is not None:
                at = "pushNotificationConfig.authentication"
                schemes = self.member(auth, "schemes", at, list, True) or []
                if not all(isinstance(s, str) for s in schemes):
                    self.add(f"{at}.schemes", "must be an array of strings")

    def page(self, d: dict[str, Any]) -> None:
        """A ``ListTasksResponse``: ProtoJSON leaves out what equals its default (an empty
        list, an empty token, a zero), so each member is checked when present."""
        for task, at in self.objects(d, "tasks", "", False):
            self.task(task, at)
        self.member(d, "nextPageToken", "", str, False)
        for key in ("pageSize", "totalSize"):
            self.member(d, key, "", int, False)


def answer_problems(raw: Any, what: str, shape: str) -> list[str]:
    """What ``raw``, the JSON of one answer of ``what`` ("task", "message", "status-update",
    "artifact-update", "push-config", "page"), gets wrong for ``shape`` (``SHAPES``); an
    empty list when nothing.

    Raises:
        ValueError: ``what`` or ``shape`` is none of those.
    """
    checker = _Shape(shape)
    check = {
        "task": checker.task,
        "message": checker.message,
        "status-update": checker.status_update,
        "artifact-update": checker.artifact_update,
        "push-config": checker.push_config,
        "page": checker.page,
    }.get(what)
    if check is None:
        raise ValueError(f"no shape of answer is called {what!r}")
    if not isinstance(raw, dict):
        return [f"the {what} is {_json_type(raw)}, not a JSON object"]
    check(raw)
    return checker.problems


def _at(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return _TYPES.get(type(value), "a number")


def _shown(value: Any) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= 60 else text[:59] + "…"
