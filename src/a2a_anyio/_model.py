"""The version-neutral typed model every dialect decodes into and encodes from.

Objects decoded from the wire keep the JSON dict they came from in ``raw`` (``None`` for
objects built in code), so nothing a server sent is ever lost to the model. Every model
object turns into the A2A JSON of a version and back with ``to_dict`` / ``from_dict``.
"""

from __future__ import annotations

import enum
import os
import reprlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import Field, dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

JSONDict = dict[str, Any]
_M = TypeVar("_M", bound="PlainDicts")


def new_id() -> str:
    """A random (version 4) UUID as text, as ``str(uuid.uuid4())`` writes it. Written out
    because importing ``uuid`` loads ``platform`` and probes the system: a few milliseconds
    added to every ``import a2a_anyio``."""
    b = bytearray(os.urandom(16))
    b[6] = b[6] & 0x0F | 0x40  # version 4
    b[8] = b[8] & 0x3F | 0x80  # the RFC 4122 variant
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class PlainDicts:
    """``to_dict`` and ``from_dict``, which every model class has, and the ``__repr__`` and
    ``__eq__`` that ``@dataclass`` would write for each (the model classes leave them out
    with ``repr=False, eq=False``: writing them per class took 40% of this module's import
    time)."""

    __slots__ = ()
    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]  # each model class's, by @dataclass

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.repr)
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        names = [f.name for f in fields(self) if f.compare]
        return tuple(getattr(self, n) for n in names) == tuple(getattr(other, n) for n in names)

    # With __eq__ and mutable fields, unhashable: as @dataclass makes them.
    __hash__ = None  # type: ignore[assignment]

    def to_dict(self, version: str = "1.0") -> JSONDict:
        """This object as the A2A JSON of ``version``: ``"1.0"`` (ProtoJSON names and enums,
        as v1.0 agents send them) or ``"0.3"`` (``kind`` discriminators, lowercase states,
        as v0.3 JSON-RPC agents send them). Unset values are left out; what a version
        cannot carry is said on the class (``from_dict`` then reads it as unset).

        Raises:
            ValueError: ``version`` is neither "1.0" nor "0.3".
        """
        return codecs().to_dict(self, version)

    @classmethod
    def from_dict(cls: type[_M], data: Mapping[str, Any]) -> _M:
        """The object read from its A2A JSON in any dialect: v1.0, v0.3 (JSON-RPC or
        HTTP+JSON), v0.2 or the ``tasks/send`` dialect, told apart by what ``data`` holds
        (``raw`` keeps it).

        Raises:
            A2AProtocolError: ``data`` is not such an object (an ``AgentCard``:
                ``A2ADiscoveryError``, as for a card an agent serves).
        """
        return codecs().from_dict(cls, data)


class PlainCodecs(Protocol):
    """What ``to_dict`` and ``from_dict`` run: the dialects' encoders and decoders."""

    def to_dict(self, obj: PlainDicts, version: str = ...) -> JSONDict: ...
    def from_dict(self, cls: type[_M], data: Mapping[str, Any]) -> _M: ...


def _not_wired() -> PlainCodecs:
    raise RuntimeError("the model's codecs are loaded by the a2a_anyio package")


#: Loads the codecs ``to_dict`` and ``from_dict`` run. The codecs import the model, so the
#: model does not import them: the package wires them in (``a2a_anyio/__init__.py``), and
#: importing any module of it runs the package first. They load at the first call.
codecs: Callable[[], PlainCodecs] = _not_wired


class Role(str, enum.Enum):
    """Who wrote a message (v0.3 has no unspecified role: it is written as ``user``)."""

    USER = "user"
    AGENT = "agent"
    UNSPECIFIED = "unspecified"


class TaskState(str, enum.Enum):
    """The state of a task; ``UNKNOWN`` stands for any value this client does not recognise.

    The wire value of an unrecognised state is kept in ``TaskStatus.wire_state``.
    """

    SUBMITTED = "submitted"
    WORKING = "working"
    INPUT_REQUIRED = "input-required"
    AUTH_REQUIRED = "auth-required"
    COMPLETED = "completed"
    CANCELED = "canceled"
    FAILED = "failed"
    REJECTED = "rejected"
    UNKNOWN = "unknown"

    @property
    def is_terminal(self) -> bool:
        """True for states a task never leaves: completed, canceled, failed, rejected."""
        return self in _TERMINAL

    @property
    def is_interrupted(self) -> bool:
        """True when the agent waits for the client: input-required, auth-required."""
        return self in _INTERRUPTED

    @property
    def is_final(self) -> bool:
        """True when a stream or a blocking call ends here: terminal or interrupted."""
        return self in _TERMINAL or self in _INTERRUPTED


_TERMINAL = frozenset(
    {TaskState.COMPLETED, TaskState.CANCELED, TaskState.FAILED, TaskState.REJECTED}
)
_INTERRUPTED = frozenset({TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED})


class RawMadeAgain(PlainDicts):
    """A model class whose ``raw`` a decoder may leave unset (``del obj.raw``) when the JSON
    is exactly what ``to_dict("1.0")`` makes of the object: ``raw`` is then made again, equal
    to it, the first time it is read. A task keeps thousands of parts, and the status and
    messages it holds; this keeps no second copy of them as JSON."""

    __slots__ = ()

    if not TYPE_CHECKING:  # for type checkers, no attribute of any other name

        def __getattr__(self, name: str) -> Any:
            # Only an attribute not set comes here: ``raw`` of an object decoded so.
            if name != "raw":
                raise AttributeError(
                    f"{type(self).__qualname__!r} object has no attribute {name!r}"
                )
            raw = self.to_dict("1.0")
            object.__setattr__(self, "raw", raw)  # each subclass's field
            return raw


@dataclass(slots=True, repr=False, eq=False)
class TextPart(RawMadeAgain):
    """A piece of text (a v0.3 text part has no media type).

    A part decoded from v1.0 JSON that holds its text alone (``{"text": ...}``, what the
    chunks of a streamed artifact are) keeps no copy of that JSON (``RawMadeAgain``).
    """

    text: str
    media_type: str | None = None
    metadata: JSONDict | None = None
    raw: JSONDict | None = field(default=None, repr=False, compare=False)


@dataclass(slots=True, repr=False, eq=False)
class FilePart(PlainDicts):
    """A file, inline (``data`` holds its bytes) or by reference (``url``)."""

    data: bytes | None = None
    url: str | None = None
    media_type: str | None = None
    name: str | None = None
    metadata: JSONDict | None = None
    raw: JSONDict | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if (self.data is None) == (self.url is None):
            raise ValueError("a FilePart holds exactly one of data= or url=")


@dataclass(slots=True, repr=False, eq=False)
class DataPart(PlainDicts):
    """Structured data: any JSON value (pre-1.0 peers accept only objects: other values go to
    them as ``{"value": ...}``, marked, and come back unwrapped). A v0.3 data part has no
    media type."""

    data: Any
    media_type: str | None = None
    metadata: JSONDict | None = None
    raw: JSONDict | None = field(default=None, repr=False, compare=False)


Part = TextPart | FilePart | DataPart
"""One part of a message or an artifact: text, a file (inline or by URL) or JSON data."""


def _joined_text(parts: Sequence[Part]) -> str:
    return "".join(p.text for p in parts if isinstance(p, TextPart))


def _first_data(parts: Sequence[Part]) -> Any:
    for p in parts:
        if isinstance(p, DataPart):
            return p.data
    return None


@dataclass(slots=True, repr=False, eq=False)
class Message(RawMadeAgain):
    """One turn of a conversation between a user and an agent. One decoded from v1.0 JSON
    that holds only its id, role, text parts and task and context ids keeps no copy of that
    JSON (``RawMadeAgain``)."""

    role: Role
    parts: list[Part]
    message_id: str = field(default_factory=new_id)
    context_id: str | None = None
    task_id: str | None = None
    metadata: JSONDict | None = None
    extensions: list[str] | None = None
    reference_task_ids: list[str] | None = None
    raw: JSONDict | None = field(default=None, repr=False, compare=False)

    @classmethod
    def user(
        cls,
        text: str | None = None,
        *,
        data: Any = None,
        context_id: str | None = None,
        task_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Message:
        """A user message with a text part and/or a data part and a fresh message id."""
        parts: list[Part] = []
        if text is not None:
            parts.append(TextPart(text))
        if data is not None:
            parts.append(DataPart(data))
        if not parts:
            raise ValueError("a message needs text=, data= or both")
        return cls(
            Role.USER,
            parts,
            new_id(),
            context_id,
            task_id,
            dict(metadata) if metadata is not None else None,
        )

    @property
    def text(self) -> str:
        """The text parts joined together ("" when there are none)."""
        return _joined_text(self.parts)


@dataclass(slots=True, repr=False, eq=False)
class Artifact(PlainDicts):
    """An output of a task."""

    artifact_id: str
    parts: list[Part]
    name: str | None = None
    description: str | None = None
    metadata: JSONDict | None = None
    extensions: list[str] | None = None
    raw: JSONDict | None = field(default=None, repr=False, compare=False)

    @property
    def text(self) -> str:
        """The text parts joined together."""
        return _joined_text(self.parts)

    @property
    def data(self) -> Any:
        """The value of the first data part, or None."""
        return _first_data(self.parts)


@dataclass(slots=True, repr=False, eq=False)
class TaskStatus(RawMadeAgain):
    """Where a task stands, with an optional message from the agent.

    ``wire_state`` is the state as the agent spelled it; like ``raw``, it is not compared.
    One decoded from v1.0 JSON as ``to_dict`` writes it keeps no copy of that JSON
    (``RawMadeAgain``).
    """

    state: TaskState
    message: Message | None = None
    timestamp: str | None = None
    wire_state: str | None = field(default=None, compare=False)
    raw: JSONDict | None = field(default=None, repr=False, compare=False)


@dataclass(slots=True, repr=False, eq=False)
class Task(PlainDicts):
    """A unit of work an agent tracks."""

    id: str
    context_id: str | None
    status: TaskStatus
    artifacts: list[Artifact] = field(default_factory=list)
    history: list[Message] = field(default_factory=list)
    metadata: JSONDict | None = None
    raw: JSONDict | None = field(default=None, repr=False, compare=False)

    @property
    def state(self) -> TaskState:
        """Shortcut for ``task.status.state``."""
        return self.status.state

    @property
    def text(self) -> str:
        """The text of every artifact, joined in order."""
        return "".join(a.text for a in self.artifacts)


@dataclass(slots=True, repr=False, eq=False)
class TaskStatusUpdateEvent(PlainDicts):
    """A change of a task's status.

    ``final`` is true on the last event of a stream in every dialect: pre-1.0 servers send it,
    and for v1.0 (which has no such flag) it is set for terminal and interrupted states.
    Before v1.0 it is set for terminal states too, whatever the flag says.
    """

    task_id: str
    context_id: str | None
    status: TaskStatus
    final: bool = False
    metadata: JSONDict | None = None
    raw: JSONDict | None = field(default=None, repr=False, compare=False)


@dataclass(slots=True, repr=False, eq=False)
class TaskArtifactUpdateEvent(PlainDicts):
    """A new artifact, or a chunk of one (``append``) that may be the last (``last_chunk``)."""

    task_id: str
    context_id: str | None
    artifact: Artifact
    append: bool = False
    last_chunk: bool = False
    metadata: JSONDict | None = None
    raw: JSONDict | None = field(default=None, repr=False, compare=False)


StreamEvent = Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent
"""What a stream yields: a Task snapshot, the agent's Message, or a status or artifact update."""


@dataclass(slots=True, repr=False, eq=False)
class TaskPage(PlainDicts):
    """One page of ``list_tasks``; ``next_cursor`` is None on the last page.

    v0.3 has no task listing: ``to_dict("0.3")`` keeps v1.0's layout, with v0.3 tasks.
    """

    tasks: list[Task]
    next_cursor: str | None = None
    total_size: int | None = None
    page_size: int | None = None
    raw: JSONDict | None = field(default=None, repr=False, compare=False)


@dataclass(slots=True, repr=False, eq=False)
class PushNotificationConfig(PlainDicts):
    """Where and how an agent posts notifications about a task."""

    url: str
    task_id: str | None = None
    id: str | None = None
    token: str | None = None
    auth_scheme: str | None = None
    auth_credentials: str | None = field(default=None, repr=False)
    raw: JSONDict | None = field(default=None, repr=False, compare=False)


@dataclass(slots=True, repr=False, eq=False)
class AgentInterface(PlainDicts):
    """One endpoint of an agent: its URL, binding (JSONRPC, HTTP+JSON, GRPC) and version.

    A v0.3 interface is a URL and a transport: its card states one version for all of them
    (the first interface's) and no tenants.
    """

    url: str
    binding: str = "JSONRPC"
    protocol_version: str | None = None
    tenant: str | None = None


@dataclass(slots=True, repr=False, eq=False)
class AgentExtension(PlainDicts):
    """An extension the agent supports."""

    uri: str
    description: str | None = None
    required: bool = False
    params: JSONDict | None = None


@dataclass(slots=True, repr=False, eq=False)
class AgentCapabilities(PlainDicts):
    """Optional features of an agent.

    v1.0 has no ``state_transition_history``; before v1.0, ``extended_agent_card`` is the
    card's ``supportsAuthenticatedExtendedCard``, not one of its capabilities.
    """

    streaming: bool = False
    push_notifications: bool = False
    extended_agent_card: bool = False
    state_transition_history: bool = False
    extensions: list[AgentExtension] = field(default_factory=list)


@dataclass(slots=True, repr=False, eq=False)
class AgentSkill(PlainDicts):
    """Something the agent can do."""

    id: str
    name: str
    description: str | None = None
    tags: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)
    input_modes: list[str] | None = None
    output_modes: list[str] | None = None


@dataclass(slots=True, repr=False, eq=False)
class AgentProvider(PlainDicts):
    """The organisation behind an agent."""

    organization: str
    url: str | None = None


@dataclass(slots=True, repr=False, eq=False)
class SecurityScheme(PlainDicts):
    """An authentication scheme a card declares, in one shape for every card version.

    ``type`` is one of ``apiKey``, ``http``, ``oauth2``, ``openIdConnect``, ``mutualTLS``;
    ``to_dict`` writes the members of that type only.
    """

    type: str
    scheme: str | None = None
    bearer_format: str | None = None
    location: str | None = None
    name: str | None = None
    flows: JSONDict | None = None
    open_id_connect_url: str | None = None
    description: str | None = None
    oauth2_metadata_url: str | None = None


@dataclass(slots=True, repr=False, eq=False)
class AgentCard(PlainDicts):
    """What an agent says about itself, normalised from any card version."""

    name: str
    description: str
    version: str | None
    interfaces: list[AgentInterface]
    capabilities: AgentCapabilities
    skills: list[AgentSkill] = field(default_factory=list)
    security_schemes: dict[str, SecurityScheme] = field(default_factory=dict)
    security_requirements: list[dict[str, list[str]]] = field(default_factory=list)
    provider: AgentProvider | None = None
    default_input_modes: list[str] = field(default_factory=list)
    default_output_modes: list[str] = field(default_factory=list)
    documentation_url: str | None = None
    icon_url: str | None = None
    raw: JSONDict = field(default_factory=dict, repr=False, compare=False)
