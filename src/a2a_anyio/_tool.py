"""Remote agents as tools for language models: ``await client.as_tool()``.

An ``AgentTool`` is framework-neutral: a name, a description and a JSON Schema made from the
agent's card, and a call that sends a message and gives back an answer a model can read. Its
``to_openai``, ``to_anthropic`` and ``to_mcp`` are the plain dicts those APIs take. What the
agent wrote (its card, its answers) reaches a model only through ``from_agent``: cleaned,
capped and fenced.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
import re
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from a2a_anyio._abandon import CancelGuard
from a2a_anyio._agent_text import cleaned, fenced_json, from_agent, unfenced
from a2a_anyio._deadline import CLIENT_TIMEOUT, Timeout, check_timeout, resolve_timeout
from a2a_anyio._errors import (
    UNSAFE_CHARACTERS,
    A2AClientError,
    AuthRequiredError,
    clipped,
)
from a2a_anyio._model import (
    AgentCard,
    DataPart,
    FilePart,
    Message,
    Part,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)

if TYPE_CHECKING:
    from a2a_anyio._auth import Credentials
    from a2a_anyio._conversation import Conversation

#: What a tool's name may be: what the OpenAI and Anthropic APIs and MCP all accept.
NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
#: The longest description a tool gets from its card (characters).
MAX_DESCRIPTION = 1024
#: At most this many of the card's skills are offered as the ``skill`` argument.
MAX_SKILLS = 100
#: The conversations a tool remembers by context id, for a call that continues one.
MAX_CONTEXTS = 256
_PROGRESS_TEXT = 200
#: The longest text of an answer a model reads (characters), the status message's, each
#: data value's (as JSON), each id's and file's; at most ``MAX_PARTS`` data values and files.
MAX_RESULT_TEXT = 20_000
MAX_RESULT_MESSAGE = 2000
MAX_RESULT_DATA = 4000
MAX_RESULT_ID = 200
MAX_PARTS = 50
#: What a skill id must be to be offered as the ``skill`` argument: an id the model gives
#: back as it is, which holds no words (it is not fenced: it must be given back exactly).
SKILL_ID = re.compile(r"[A-Za-z0-9_.:/@+-]{1,64}")

_UNSAFE = re.compile(f"[{UNSAFE_CHARACTERS}]")
_NOT_IN_NAME = re.compile(r"[^a-zA-Z0-9_-]+")

ProgressCallback = Callable[["AgentToolProgress"], Any]


def plain(text: str) -> str:
    """``text`` with the characters of ``UNSAFE_CHARACTERS`` left out (newlines kept)."""
    return _UNSAFE.sub("", text.replace("\r\n", "\n"))


def _one_line(text: str) -> str:
    return cleaned(text, one_line=True)


Secrets = Callable[[], Iterable[str]]


class ToolClient(Protocol):
    """What a tool asks of its client (an ``A2AClient``)."""

    url: str | None
    endpoint: str | None
    timeout: float | None
    _credentials: Credentials

    def cancel_guard(self) -> CancelGuard: ...

    def conversation(
        self, context_id: str | None = None, *, state: Mapping[str, Any] | None = None
    ) -> Conversation: ...

    async def get_task(self, task_id: str, *, timeout: Timeout) -> Task: ...


def secrets_of(client: ToolClient) -> Secrets:
    """What gives the secrets ``client`` holds (its credentials' values, as they are when
    asked), to keep them out of what a model reads."""
    return client._credentials.secrets


def tool_name(name: str) -> str:
    """A tool name made from an agent's name: letters without their accents, digits, ``_``
    and ``-``; every other run of characters becomes ``_``; at most 64 characters
    (``agent`` when nothing is left)."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    made = _NOT_IN_NAME.sub("_", ascii_name).strip("_-")[:64].rstrip("_-")
    return made or "agent"


#: What a tool's description says before the card's words.
DESCRIPTION_LEAD = "A remote A2A agent; its card says: "


def _description(card: AgentCard, secrets: Iterable[str]) -> str:
    text = _one_line(card.name)
    about = _one_line(card.description)
    if about:
        text = f"{text}: {about}" if text else about
    skills = []
    for skill in card.skills[:MAX_SKILLS]:
        said = [_one_line(skill.id)]  # then its name and description, when they add to it
        for words in (_one_line(skill.name), _one_line(skill.description or "")):
            if words and words not in said:
                said.append(words)
        about = f" ({': '.join(said[1:])})" if len(said) > 1 else ""
        skills.append(clipped(said[0] + about, 200))
    if skills:
        text += f" Skills: {'; '.join(skills)}."
    room = MAX_DESCRIPTION - len(DESCRIPTION_LEAD) - len(from_agent(""))
    return DESCRIPTION_LEAD + from_agent(text, limit=room, secrets=secrets, one_line=True)


def _parameters(card: AgentCard) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "text": {"type": "string", "description": "The request for the agent, in words."},
        "data": {
            "type": "object",
            "description": "Structured input for the agent, sent with the text as a data part.",
        },
    }
    skills = list(dict.fromkeys(s.id for s in card.skills[:MAX_SKILLS] if SKILL_ID.fullmatch(s.id)))
    if skills:
        properties["skill"] = {
            "type": "string",
            "enum": skills,
            "description": "Which of the agent's skills should take the request.",
        }
    properties["context_id"] = {
        "type": "string",
        "description": "To continue a conversation: the context_id of an earlier answer "
        "(an answer that asks for more input gives one; call again with it and the reply).",
    }
    return {
        "type": "object",
        "properties": properties,
        "required": ["text"],
        "additionalProperties": False,
    }


@dataclass(frozen=True, slots=True)
class AgentToolFile:
    """A file in an agent's answer, by reference: its name and media type, and its ``url``
    or, for a file sent inline, its ``size`` in bytes (the bytes are in the answer's task,
    never in the tool's result)."""

    name: str | None = None
    media_type: str | None = None
    url: str | None = None
    size: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The reference as a JSON-ready dict (``name``, ``media_type``, ``url``, ``size``)."""
        return {
            "name": self.name,
            "media_type": self.media_type,
            "url": self.url,
            "size": self.size,
        }

    def __str__(self) -> str:
        about = ", ".join(x for x in (self.media_type, _size(self.size)) if x)
        shown = plain(self.name or "unnamed file") + (f" ({plain(about)})" if about else "")
        return f"{shown} {plain(self.url)}" if self.url else shown


def _size(size: int | None) -> str | None:
    return None if size is None else f"{size} bytes"


@dataclass(frozen=True, slots=True)
class AgentToolResult:
    """What a tool call gives back: the agent's answer, as a model can read it.

    ``text`` is the answer's text (the task's artifacts, or the agent's Message), ``message``
    what the agent said of the task's status ("which date?", "it failed"), ``data`` the
    values of its data parts, ``files`` its files by reference. ``state`` is the task's
    (None when the agent answered with a Message); ``task_id`` and ``context_id`` name the
    task and the conversation: a call with that ``context_id`` continues it (and the task,
    when it waits for input). ``answer`` is the Task or Message itself.

    A task that failed, was rejected or canceled, or waits for input or authentication is a
    result like any other: ``to_text()`` says so in words, and ``is_error`` is true for the
    first three.
    """

    text: str
    state: TaskState | None
    task_id: str | None
    context_id: str | None
    message: str = ""
    data: list[Any] = field(default_factory=list)
    files: list[AgentToolFile] = field(default_factory=list)
    answer: Task | Message | None = field(default=None, repr=False, compare=False)
    secrets: Secrets = field(default=tuple, repr=False, compare=False)

    @classmethod
    def of(cls, answer: Task | Message, secrets: Secrets = tuple) -> AgentToolResult:
        """The result that ``answer`` (an agent's Task or Message) makes; ``secrets`` gives
        the credentials that ``to_text`` and ``to_dict`` leave out (``from_agent``)."""
        if isinstance(answer, Message):
            return cls(
                text=answer.text,
                state=None,
                task_id=answer.task_id,
                context_id=answer.context_id,
                data=_data(answer.parts),
                files=_files(answer.parts, None),
                answer=answer,
                secrets=secrets,
            )
        status = answer.status.message
        files = [f for artifact in answer.artifacts for f in _files(artifact.parts, artifact.name)]
        return cls(
            text=answer.text,
            state=answer.status.state,
            task_id=answer.id,
            context_id=answer.context_id,
            message=status.text if status is not None else "",
            data=[value for artifact in answer.artifacts for value in _data(artifact.parts)],
            files=files,
            answer=answer,
            secrets=secrets,
        )

    @property
    def is_error(self) -> bool:
        """True when the task failed, was rejected or was canceled."""
        return self.state in (TaskState.FAILED, TaskState.REJECTED, TaskState.CANCELED)

    def to_dict(self) -> dict[str, Any]:
        """The result as a JSON-ready dict, for a model: each string the agent wrote (its
        text, message, ids, the strings of its data, its files' names, types and URLs)
        through ``from_agent``, as ``to_text`` writes them; data a registered type decoded
        is written with ``str``."""
        held = tuple(self.secrets())
        return {
            "state": self.state.value if self.state is not None else None,
            "text": self._fenced(self.text, MAX_RESULT_TEXT, held),
            "message": self._fenced(self.message, MAX_RESULT_MESSAGE, held),
            "task_id": self._id(self.task_id, held),
            "context_id": self._id(self.context_id, held),
            "data": fenced_json(self.data[:MAX_PARTS], limit=MAX_RESULT_TEXT, secrets=held),
            "files": [
                {
                    key: value
                    if key == "size" or value is None
                    else self._fenced(value, 500, held, True)
                    for key, value in f.to_dict().items()
                }
                for f in self.files[:MAX_PARTS]
            ],
        }

    def to_text(self) -> str:
        """The result in words, for a model: the answer, or what became of the task and,
        when the agent waits for input, how to answer it. What the agent wrote is each
        time between the fences of ``from_agent``; the rest is this library's."""
        held = tuple(self.secrets())
        state, said = self.state, self.message.strip()
        lines = []
        if state is None or state is TaskState.COMPLETED:
            if self.text or said:
                lines.append(self._fenced(self.text or said, MAX_RESULT_TEXT, held))
            else:
                lines.append("(the agent answered without text)")
        else:
            lead = _LEADS.get(state, f"The agent's task is {state.value}")
            message = self._fenced(said, MAX_RESULT_MESSAGE, held)
            lines.append(f"{lead}: {message}" if said else f"{lead}.")
            if self.text:
                lines.append(self._fenced(self.text, MAX_RESULT_TEXT, held))
        lines += [
            "data: "
            + self._fenced(
                json.dumps(value, ensure_ascii=False, default=str), MAX_RESULT_DATA, held
            )
            for value in self.data[:MAX_PARTS]
        ]
        lines += ["file: " + self._fenced(str(f), 500, held, True) for f in self.files[:MAX_PARTS]]
        if self.context_id is not None:
            context = self._id(self.context_id, held)
            if state is not None and state.is_interrupted:
                task = f" (task {self._id(self.task_id, held)})" if self.task_id else ""
                lines.append(f"To answer, call the tool again with context_id {context}{task}.")
            else:
                lines.append(f"(context_id {context} continues this conversation)")
        return "\n".join(lines)

    @staticmethod
    def _fenced(text: str, limit: int, held: Iterable[str], one_line: bool = False) -> str:
        return from_agent(text, limit=limit, secrets=held, one_line=one_line)

    @staticmethod
    def _id(value: str | None, held: Iterable[str]) -> str | None:
        if value is None:
            return None
        return from_agent(value, limit=MAX_RESULT_ID, secrets=held, one_line=True)

    def __str__(self) -> str:
        return self.to_text()


_LEADS = {
    TaskState.INPUT_REQUIRED: "The agent asks for more input",
    TaskState.AUTH_REQUIRED: "The agent needs authentication before it goes on",
    TaskState.FAILED: "The agent's task failed",
    TaskState.REJECTED: "The agent rejected the task",
    TaskState.CANCELED: "The agent's task was canceled",
}


def _data(parts: list[Part]) -> list[Any]:
    return [part.data for part in parts if isinstance(part, DataPart)]


def _files(parts: list[Part], name: str | None) -> list[AgentToolFile]:
    return [
        AgentToolFile(
            part.name or name,
            part.media_type,
            part.url,
            len(part.data) if part.data is not None else None,
        )
        for part in parts
        if isinstance(part, FilePart)
    ]


@dataclass(frozen=True, slots=True)
class AgentToolProgress:
    """One event of a tool call as it runs (``on_progress``): ``count`` events so far (from
    1), the task's id and ``state`` as last seen, a line of ``text`` the event carries (a
    status message; an artifact's chunk of text, or else its name; cleaned and cut short),
    and the ``event`` itself."""

    count: int
    task_id: str | None
    state: TaskState | None
    text: str
    event: StreamEvent = field(repr=False)

    def __str__(self) -> str:
        state = self.state.value if self.state is not None else "answered"
        return f"{state}: {self.text}" if self.text else state


class _Events:
    """A tool call's ``on_event``: what the call has seen of its task (its ``guard``'s, to
    cancel it when the call is abandoned), and progress for ``on_progress``."""

    def __init__(self, guard: CancelGuard, on_progress: ProgressCallback | None) -> None:
        self.guard = guard
        self.on_progress = on_progress
        self.count = 0

    async def __call__(self, event: StreamEvent) -> None:
        self.count += 1
        self.guard(event)
        if isinstance(event, (Task, TaskStatusUpdateEvent)):
            said = event.status.message.text if event.status.message else ""
        elif isinstance(event, TaskArtifactUpdateEvent):
            said = event.artifact.text or event.artifact.name or ""
        else:
            said = event.text
        if self.on_progress is not None:
            seen = self.guard.seen
            text = clipped(_one_line(said), _PROGRESS_TEXT)
            progress = AgentToolProgress(self.count, seen.task_id, seen.state, text, event)
            outcome = self.on_progress(progress)
            if inspect.isawaitable(outcome):
                await outcome


@dataclass(frozen=True, slots=True)
class _Arguments:
    text: str
    data: Mapping[str, Any] | None
    skill: str | None
    context_id: str | None


class AgentTool:
    """A remote agent as a tool for a language model (``await client.as_tool()``).

    ``name`` (made from the card's name, or given), ``description`` (the card's, with its
    skills) and ``parameters`` (a JSON Schema: ``text``, required; ``data``, an object;
    ``skill``, one of the card's skill ids; ``context_id``, to continue a conversation)
    describe it; ``to_openai()``, ``to_anthropic()`` and ``to_mcp()`` are the dicts of those
    APIs. ``await tool(**arguments)`` or ``await tool.call(arguments)`` sends the request
    (streamed when the agent streams: ``on_progress`` sees each event) and returns an
    ``AgentToolResult``.

    The tool remembers the conversations of its last ``MAX_CONTEXTS`` contexts: a call with
    a ``context_id`` goes in that context, and continues its task when the agent asked for
    input (or authentication). ``timeout`` bounds each call (by default the client's; None:
    no limit). A call that is cancelled, or that runs out of time, asks the agent to cancel
    the task it started (within the client's ``cancel_grace``, shielded; when its id is known:
    at once from an agent that streams, else once the agent answered); past the call's
    timeout the cancel goes out and its answer is not awaited.
    """

    def __init__(
        self,
        client: ToolClient,
        card: AgentCard,
        *,
        name: str | None = None,
        timeout: Timeout = CLIENT_TIMEOUT,
        on_progress: ProgressCallback | None = None,
    ) -> None:
        if name is not None and (not isinstance(name, str) or not NAME.fullmatch(name)):
            raise ValueError(f"a tool's name is 1 to 64 letters, digits, '_' or '-', not {name!r}")
        if timeout is not CLIENT_TIMEOUT:
            check_timeout(timeout)
        self._client = client
        self._card = card
        self._name = name if name is not None else tool_name(card.name)
        self._secrets = secrets_of(client)
        self._description = _description(card, self._secrets())
        self._parameters = _parameters(card)
        self.timeout = timeout
        self.on_progress = on_progress
        self._contexts: OrderedDict[str, dict[str, Any]] = OrderedDict()

    @property
    def name(self) -> str:
        """The tool's name: ``^[a-zA-Z0-9_-]{1,64}$``."""
        return self._name

    @property
    def description(self) -> str:
        """What the tool does: ``DESCRIPTION_LEAD``, then the card's name, description and
        skills through ``from_agent`` (on one line), at most ``MAX_DESCRIPTION`` characters
        in all."""
        return self._description

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON Schema of the arguments (a copy)."""
        return copy.deepcopy(self._parameters)

    @property
    def card(self) -> AgentCard:
        """The agent's card the tool was made from."""
        return self._card

    def result(self, answer: Task | Message) -> AgentToolResult:
        """The result ``answer`` makes, which leaves the client's credentials out of what a
        model reads (``AgentToolResult.of`` with its secrets)."""
        return AgentToolResult.of(answer, self._secrets)

    def to_openai(self) -> dict[str, Any]:
        """The tool as the OpenAI Chat Completions API takes it:
        ``{"type": "function", "function": {"name", "description", "parameters"}}``."""
        function = {"name": self.name, "description": self.description}
        return {"type": "function", "function": {**function, "parameters": self.parameters}}

    def to_anthropic(self) -> dict[str, Any]:
        """The tool as the Anthropic Messages API takes it:
        ``{"name", "description", "input_schema"}``."""
        return {"name": self.name, "description": self.description, "input_schema": self.parameters}

    def to_mcp(self) -> dict[str, Any]:
        """The tool as MCP lists it: ``{"name", "description", "inputSchema"}``."""
        return {"name": self.name, "description": self.description, "inputSchema": self.parameters}

    def __repr__(self) -> str:
        return f"<AgentTool {self.name!r} of {self._client.url or self._client.endpoint!r}>"

    async def __call__(self, **arguments: Any) -> AgentToolResult:
        """``await tool(text=..., ...)``: the same as ``await tool.call(arguments)``."""
        return await self.call(arguments)

    async def call(
        self, arguments: Mapping[str, Any], *, on_progress: ProgressCallback | None = None
    ) -> AgentToolResult:
        """Send the request that ``arguments`` make (as a model gives them, checked against
        ``parameters``; a null is taken as an argument left out) and return the answer.

        ``on_progress`` (sync or async; the tool's by default) is called with an
        ``AgentToolProgress`` for each event as it arrives.

        Raises:
            ValueError: an unknown argument, ``text`` missing, a ``skill`` the card does not
                name (the error names the argument and what it accepts).
            TypeError: ``arguments`` is not a mapping, or an argument of the wrong type.
            A2AClientError: the request failed (``A2ATimeoutError``: not within ``timeout``).
                A task that failed or waits for input is a result, not an error.
            RuntimeError: the client is closed.
        """
        checked = self._check(arguments)
        message = Message.user(checked.text, data=checked.data)
        metadata = {"skillId": checked.skill} if checked.skill is not None else None
        conversation = self._conversation(checked.context_id)
        # A call abandoned (its timeout, a cancel scope) has its task cancelled, as every
        # call the library abandons does: the task its events named; the cancel's answer
        # awaited only until the call's timeout, which it keeps.
        guard = self._client.cancel_guard()
        limit = resolve_timeout(self.timeout, self._client.timeout)
        if limit is not None:
            guard.answer_by = anyio.current_time() + limit
        events = _Events(guard, on_progress if on_progress is not None else self.on_progress)
        try:
            async with guard:
                answer = await conversation.send(
                    message, metadata=metadata, on_event=events, timeout=self.timeout
                )
        except AuthRequiredError as exc:  # an answer: the task stays open in the conversation
            answer = exc.task
        if isinstance(answer, Task) and answer.context_id is None and answer.state.is_interrupted:
            answer = await self._with_context(answer)
        result = AgentToolResult.of(answer, self._secrets)
        context_id = result.context_id or conversation.context_id  # an answer may not say it
        if context_id is None:
            return result
        self._remember(context_id, answer)
        return dataclasses.replace(result, context_id=context_id)

    # -- the arguments ------------------------------------------------------------------

    def _check(self, arguments: Mapping[str, Any]) -> _Arguments:
        if not isinstance(arguments, Mapping):
            raise TypeError(
                f"the arguments of {self.name} are a mapping (a JSON object), "
                f"not {type(arguments).__name__}"
            )
        accepted = list(self._parameters["properties"])
        for key in arguments:
            if key not in accepted:
                raise ValueError(
                    f"{self.name} has no argument {key!r}: it takes {', '.join(accepted)}"
                )
        given = {key: value for key, value in arguments.items() if value is not None}
        if "text" not in given:
            raise ValueError(f"{self.name} needs the argument 'text' (a string)")
        for key in ("text", "skill", "context_id"):
            if key in given and not isinstance(given[key], str):
                raise TypeError(
                    f"the argument {key!r} of {self.name} is a string, "
                    f"not {type(given[key]).__name__}"
                )
        data = given.get("data")
        if data is not None and not isinstance(data, Mapping):
            raise TypeError(
                f"the argument 'data' of {self.name} is an object (a dict), "
                f"not {type(data).__name__}"
            )
        skill = given.get("skill")
        if skill is not None and skill not in self._parameters["properties"]["skill"]["enum"]:
            known = ", ".join(repr(s) for s in self._parameters["properties"]["skill"]["enum"])
            raise ValueError(
                f"the argument 'skill' of {self.name} is one of {known}, not {skill!r}"
            )
        context_id = given.get("context_id")  # as the model read it: fenced, perhaps
        context_id = unfenced(context_id) if context_id is not None else None
        return _Arguments(given["text"], data and dict(data), skill, context_id)

    # -- conversations ----------------------------------------------------------------

    def _conversation(self, context_id: str | None) -> Conversation:
        if context_id is None:
            return self._client.conversation()
        state = self._contexts.get(context_id)
        if state is None:
            return self._client.conversation(context_id)
        return self._client.conversation(state=state)

    def _remember(self, context_id: str, answer: Task | Message) -> None:
        """Keep what continues the conversation (a conversation's state): its context and
        its open task, not its turns."""
        task = answer if isinstance(answer, Task) and not answer.state.is_terminal else None
        self._contexts[context_id] = {
            "context_id": context_id,
            "task": task.to_dict() if task is not None else None,
            "history": [],
        }
        self._contexts.move_to_end(context_id)
        while len(self._contexts) > MAX_CONTEXTS:
            self._contexts.popitem(last=False)

    async def _with_context(self, task: Task) -> Task:
        """``task`` as the agent has it, which names its context: the events of a
        ``tasks/send`` agent's stream do not, and an answer to it needs one."""
        try:
            return await self._client.get_task(task.id, timeout=self.timeout)
        except A2AClientError:
            return task  # the answer stands; only its continuation is lost
