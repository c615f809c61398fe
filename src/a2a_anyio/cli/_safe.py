"""The one sanitiser of text the command line shows: what an agent writes cannot drive the
terminal.

Agents choose names, skills, messages, artifacts and error texts. Shown as they are, an escape
sequence among them could clear the screen, set the window title, plant a hyperlink, answer a
terminal query into the shell's input, or move the cursor to overwrite earlier lines; rich
would read ``[link=...]`` as markup. ``clean`` turns every character that a terminal may act on
into a visible ``\\uXXXX`` escape: C0 controls (ESC, BEL, BS, CR...), DEL, C1 controls (U+0080
to U+009F, which some terminals take as CSI or OSC), the bidirectional embeddings, overrides
and isolates (text that reads in another order than it is stored), and lone surrogates (which
no encoder can write). ``safe_text`` makes a rich ``Text`` of it, which rich never reads as
markup. The same escapes are valid in a JSON string, so ``-o json`` output goes through
``clean`` too and keeps the agent's values exactly.
"""

from __future__ import annotations

import re

from rich.text import Text

from a2a_anyio._errors import UNSAFE_CHARACTERS as _UNSAFE

_IN_BLOCK = re.compile(f"[{_UNSAFE}]")  # tabs and newlines kept
_IN_LINE = re.compile(f"[\t\n{_UNSAFE}]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return " " if char in "\t\n" else f"\\u{ord(char):04x}"


def clean(text: str, *, multiline: bool = False) -> str:
    """``text`` with every control character escaped as ``\\uXXXX``.

    ``multiline`` keeps newlines and tabs (CRLF becomes LF); otherwise they become spaces, so
    the text stays on its line.
    """
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    return (_IN_BLOCK if multiline else _IN_LINE).sub(_escape, text)


def safe_text(value: str | Text, style: str = "", *, multiline: bool = False) -> Text:
    """A rich ``Text`` of ``value``, cleaned (a ``Text``'s own style is kept, its spans are
    not)."""
    if isinstance(value, Text):
        style = str(value.style) or style
        value = value.plain
    return Text(clean(value, multiline=multiline), style=style)
