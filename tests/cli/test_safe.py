"""The sanitiser of the CLI's output, and every method of the printer that writes with it."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_anyio.cli._render import Printer
from a2a_anyio.cli._safe import clean

ACTIVE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()))  # surrogates too
WORDS = "\U0001f469\u200d\U0001f4bb \u0645\u0631\u062d\u0628\u0627 \u200e\u05e9\u05dc\u05d5\u05dd \u6f22 \u00e9"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b[31mred", r"\u001b[31mred"),  # CSI
        ("\x1b]0;title\x07", r"\u001b]0;title\u0007"),  # OSC, BEL
        ("\x1b]8;;http://x\x1b\\", "\\u001b]8;;http://x\\u001b\\"),  # OSC 8, ST
        ("a\rb\x08c\x00d\x7f", r"a\u000db\u0008c\u0000d\u007f"),  # C0, DEL
        ("\x9b2J\x9d0;t\x9c\x85", r"\u009b2J\u009d0;t\u009c\u0085"),  # C1
        ("\u202ecba\u202c", r"\u202ecba\u202c"),  # bidi override
        (
            "\u2066\u2067\u2068x\u2069\u202a\u202b\u202d",
            r"\u2066\u2067\u2068x\u2069\u202a\u202b\u202d",
        ),
        ("lone \ud800 \udfff", r"lone \ud800 \udfff"),  # no encoder writes these
        ("two\nlines\tand a tab", "two lines and a tab"),  # one line
        ("[red]x[/red] :warning:", "[red]x[/red] :warning:"),  # markup is rich's, not ours
        (WORDS, WORDS),  # text stays text: emoji, Arabic, Hebrew with its mark, CJK
    ],
)
def test_clean_escapes_what_a_terminal_acts_on(text: str, shown: str) -> None:
    assert clean(text) == shown


def test_clean_keeps_lines_and_tabs_of_a_block() -> None:
    assert clean("a\r\nb\n\tc\rd", multiline=True) == "a\nb\n\tc\\u000dd"


@given(ANY_TEXT)
def test_nothing_active_survives(text: str) -> None:
    assert ACTIVE.search(clean(text)) is None
    assert "\n" not in clean(text) and "\t" not in clean(text)
    assert ACTIVE.search(clean(text, multiline=True)) is None


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


EVIL = "\x1b]8;;https://evil.example\x1b\\[link=https://evil.example]click[/link]\x9b6n\u202e"
WRITES: list[tuple[str, Any]] = [
    ("line", lambda p: p.line(EVIL)),
    ("field", lambda p: p.field("Name", EVIL)),
    ("paragraph", lambda p: p.paragraph(f"{EVIL}\n{EVIL}")),
    ("block", lambda p: p.block("Artifact", f"{EVIL}\n{EVIL}", title=EVIL)),
    ("table", lambda p: p.table(["Skill"], [[EVIL]], title="Skills")),
    ("json_view", lambda p: p.json_view({"name": EVIL})),
    ("note", lambda p: p.note(EVIL)),
    ("warn", lambda p: p.warn(EVIL)),
    ("error", lambda p: p.error(EVIL, hint=EVIL)),
    ("debug", lambda p: p.debug(f"Traceback\n{EVIL}", multiline=True)),
]


@pytest.mark.parametrize("tty", [True, False], ids=["rich", "plain"])
@pytest.mark.parametrize(("name", "write"), WRITES, ids=[w[0] for w in WRITES])
def test_every_printer_method_writes_agent_text_inert(name: str, write: Any, tty: bool) -> None:
    out, err = (Terminal(), Terminal()) if tty else (io.StringIO(), io.StringIO())
    printer = Printer(stdout=out, stderr=err)
    write(printer)
    text = out.getvalue() + err.getvalue()
    assert "\x1b]" not in text and "\x9b" not in text and "\u202e" not in text
    if tty:  # what is left of ESC is rich's own styling (colours)
        text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    assert ACTIVE.search(text.replace("\n", "")) is None, text
    assert "[link=https://evil.example]click[/link]" in text  # markup shown, not obeyed
    assert r"\u001b]8;;https://evil.example" in text


@given(st.recursive(st.none() | ANY_TEXT | st.integers(), lambda x: st.lists(x, max_size=3)))
def test_json_output_is_inert_and_the_same_value(value: Any) -> None:
    document, record = io.StringIO(), io.StringIO()
    Printer("json", stdout=document).json(value)
    Printer("json", stdout=record).jsonl(value)
    for out in (document.getvalue(), record.getvalue()):
        assert ACTIVE.search(out.replace("\n", "")) is None
        assert json.loads(out) == value
