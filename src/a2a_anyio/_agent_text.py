"""What an agent wrote, made fit for a language model's context: ``from_agent``.

Every road from an agent to a model (a tool's description, a tool's answer, the MCP bridge's
tools, answers, progress and errors) goes through ``from_agent``: the text is cleaned of
characters a reader cannot see, of credentials, capped, and put between the two fences
``AGENT_TEXT_OPEN`` and ``AGENT_TEXT_CLOSE``. The fences are made of two characters that are
never left in an agent's text (``⟦`` and ``⟧`` become ``[`` and ``]``), so an agent cannot
close its fence early or open one of its own: what lies between a pair was written by the
agent, and everything outside it by this library.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from a2a_anyio._errors import UNSAFE_CHARACTERS, clipped

AGENT_TEXT_OPEN = "\u27e6agent\u27e7"
"""Opens what an agent wrote: ``⟦agent⟧``."""
AGENT_TEXT_CLOSE = "\u27e6/agent\u27e7"
"""Closes what an agent wrote: ``⟦/agent⟧``."""
#: The longest text of one piece an agent wrote, by default (characters, fences apart).
MAX_AGENT_TEXT = 8000
REDACTED = "[redacted]"

#: Characters that show nothing but change what a reader sees or a model reads, beside
#: ``UNSAFE_CHARACTERS``: the soft hyphen, the Arabic letter mark, the Mongolian vowel
#: separator, zero-width spaces and joiners, the left-to-right and right-to-left marks, the
#: invisible operators, the byte order mark, the variation selectors but the text and emoji
#: ones (FE0E, FE0F), and the tag characters (which spell ASCII no one sees).
INVISIBLE_CHARACTERS = (
    "\u00ad\u061c\u180e\u200b-\u200f\u2060-\u2064\ufeff\ufe00-\ufe0d"
    "\U000e0000-\U000e007f\U000e0100-\U000e01ef"
)
_HIDDEN = re.compile(f"[{UNSAFE_CHARACTERS}{INVISIBLE_CHARACTERS}]")
_FENCE_CHARACTERS = str.maketrans({"\u27e6": "[", "\u27e7": "]"})
#: Shorter credentials are not searched for: they would match ordinary words.
MIN_SECRET = 4

# Strings shaped like credentials, whoever's they are: each is replaced whole (the named
# groups ``keep`` stay, to say what was there). Each pattern starts where the character
# before cannot continue it, and looks ahead a bounded way: the time is linear in the text.
_SHAPES = re.compile(
    "|".join(
        (
            # An Authorization value: "Bearer <token>", "Basic <base64>"...
            r"(?P<keep>\b(?:Bearer|Basic|Token)\s{1,8})"
            r"(?=[A-Za-z]{0,256}[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,}",
            # A JSON Web Token (a JWS header and payload, both JSON objects, and a signature)
            r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
            # Provider keys by their documented prefixes: OpenAI and Anthropic (sk-), GitHub,
            # GitLab, Slack, AWS access key ids, Google API keys
            r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}",
            r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
            r"(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}",
            r"(?<![A-Za-z0-9-])xox[abprs]-[A-Za-z0-9-]{10,}",
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
            r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}",
            # A PEM private key, whole (or to the end, when cut short)
            r"-----BEGIN [A-Z ]{0,32}PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]{0,32}PRIVATE KEY-----|$)",
            # The password of a URL's user information
            r"(?P<keep2>(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,31}://[^\s:/@]{1,256}:)[^\s@/]{1,256}(?=@)",
            # A query parameter or assignment whose name says it is secret, when its value
            # holds a digit or a sign (a word of prose stays)
            r"(?P<keep3>(?<![A-Za-z0-9])(?:access_token|refresh_token|id_token|api_?key|apikey"
            r"|client_secret|password|passwd|secret|token|sig|signature)\s{0,8}[=:]\s{0,8})"
            r"(?=[^\s&#;,'\"]{0,256}[0-9_.~+/=-])[^\s&#;,'\"]{4,}",
        )
    ),
    re.IGNORECASE,
)
#: How far past its limit a text is cleaned before it is cut (a secret that straddles the
#: limit is found whole, then cut away with the rest).
_MARGIN = 4096


def _shape(match: re.Match[str]) -> str:
    kept = match.group("keep") or match.group("keep2") or match.group("keep3") or ""
    return kept + REDACTED


def cleaned(
    text: str, secrets: Iterable[str] = (), *, one_line: bool = False, limit: int | None = None
) -> str:
    """``text`` without the characters of ``UNSAFE_CHARACTERS`` and ``INVISIBLE_CHARACTERS``
    (``\\r\\n`` made ``\\n``; with ``one_line``, every run of white space one space), each of
    ``secrets`` (at least ``MIN_SECRET`` characters) and each string shaped like a
    credential replaced by ``[redacted]``, and the fence characters ``⟦`` ``⟧`` made ``[``
    ``]``. With ``limit``, what lies well past it is dropped before the search. Not capped,
    not fenced: ``from_agent`` does both."""
    text = _HIDDEN.sub("", text.replace("\r\n", "\n"))  # first: no hidden character splits a secret
    if one_line:
        text = " ".join(text.split())
    if limit is not None:
        text = text[: limit + _MARGIN]
    for secret in sorted({s for s in secrets if len(s) >= MIN_SECRET}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    text = _SHAPES.sub(_shape, text)
    return text.translate(_FENCE_CHARACTERS)


def from_agent(
    text: str,
    *,
    limit: int = MAX_AGENT_TEXT,
    secrets: Iterable[str] = (),
    one_line: bool = False,
) -> str:
    """What an agent wrote, as a model may read it: ``cleaned`` (hidden characters,
    ``secrets`` and credential-shaped strings out), cut to ``limit`` characters (``...``
    ending what was cut), between ``AGENT_TEXT_OPEN`` and ``AGENT_TEXT_CLOSE``.

    ``secrets`` are the credentials the caller holds for the agent (``AgentTool`` gives its
    client's), removed wherever the agent echoes them back.

    Raises:
        TypeError: ``text`` is not a str.
    """
    if not isinstance(text, str):
        raise TypeError(f"from_agent takes a str, not {type(text).__name__}")
    inner = clipped(cleaned(text, secrets, one_line=one_line, limit=limit), limit)
    return f"{AGENT_TEXT_OPEN}{inner}{AGENT_TEXT_CLOSE}"


def unfenced(text: str) -> str:
    """``text`` without the fences ``from_agent`` put around it, when it has them (a model
    that gives back an id as it read it); else ``text``."""
    if text.startswith(AGENT_TEXT_OPEN) and text.endswith(AGENT_TEXT_CLOSE):
        inner = text[len(AGENT_TEXT_OPEN) : -len(AGENT_TEXT_CLOSE)]
        if AGENT_TEXT_OPEN not in inner and AGENT_TEXT_CLOSE not in inner:
            return inner
    return text


def fenced_json(value: Any, *, limit: int, secrets: Iterable[str] = ()) -> Any:
    """A JSON value an agent sent, each string in it through ``from_agent`` (each key
    ``cleaned`` on one line and cut to 64 characters); numbers, booleans and nulls as they
    are. Its strings together take at most about ``limit`` characters: past it, the rest of
    a container is left out."""
    held = frozenset(secrets)
    budget = [limit]

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            piece = from_agent(item, limit=max(16, min(budget[0], MAX_AGENT_TEXT)), secrets=held)
            budget[0] -= len(piece)
            return piece
        if isinstance(item, dict):
            out: dict[str, Any] = {}
            for key, member in item.items():
                if budget[0] <= 0:
                    break
                out[clipped(cleaned(str(key), held, one_line=True, limit=64), 64)] = walk(member)
            return out
        if isinstance(item, list | tuple):
            items = []
            for member in item:
                if budget[0] <= 0:
                    break
                items.append(walk(member))
            return items
        if item is None or isinstance(item, bool | int | float):
            return item
        return walk(str(item))  # a value a registered type decoded

    return walk(json.loads(json.dumps(value, default=str)))
