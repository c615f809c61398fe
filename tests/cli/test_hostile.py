"""What an agent writes cannot drive the terminal, and a bad answer is never a usage error.

A hostile FakeAgent (the testing kit's, served on 127.0.0.1) puts escape sequences, control
characters, bidirectional overrides and rich markup into every text it chooses: its card's
name, description, version and skills, status messages, artifact names and contents, and error
messages. The CLI runs against it (on the test's own event loop, ``--backend``) piped, in a
pseudo-terminal (rich and its live views), and with ``-o json``.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest

from a2a_anyio.testing import FakeAgent, SkillContext, artifact, status
from a2a_anyio.testing._skills import Emit

from ._pty import run_in_pty
from .conftest import RAW_NAME, RAW_TEXT, Run, clean_env, cli, run

pytestmark = pytest.mark.anyio

ATTACKS = (
    "[link=https://e.x]a[/link][red]b[/]:warning:",  # rich markup, an emoji code
    "\x1b]0;pwned\x07",  # OSC: the window title
    "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",  # OSC 8: a hyperlink
    "\x1b[2J\x1b[H",  # CSI: clear the screen
    "\x1b[6n",  # CSI: the terminal types its answer into the shell's input
    "\x07\x08\x00\x7f\rfake",  # C0 and DEL; CR to overwrite the line
    "\x9b31m\x9d0;pwned\x9c",  # C1 CSI, OSC and ST
    "\u202eevil\u202c\u2066x\u2069",  # bidi override, isolate
)
PAYLOAD = "<" + "|".join(ATTACKS) + ">"
# What a terminal may act on: C0 but tab and newline, DEL, C1, bidi controls, lone surrogates.
ACTIVE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# Each attack, as the CLI shows it: visible, inert.
SHOWN = (
    "[link=https://e.x]a[/link][red]b[/]:warning:",
    r"\u001b]0;pwned\u0007",
    r"\u001b]8;;https://evil.example\u001b\click",
    r"\u001b[2J\u001b[H",
    r"\u001b[6n",
    r"\u0007\u0008\u0000\u007f\u000dfake",
    r"\u009b31m\u009d0;pwned\u009c",
    r"\u202eevil\u202c\u2066x\u2069",
)


def hostile_agent() -> FakeAgent:
    agent = FakeAgent(name=f"Hostile {PAYLOAD}", description=PAYLOAD, version=PAYLOAD)

    @agent.skill("report", name=PAYLOAD, description=PAYLOAD, tags=[PAYLOAD])
    async def report(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("working", PAYLOAD)
        yield artifact(PAYLOAD, name=PAYLOAD)
        yield artifact(PAYLOAD, append=True, last_chunk=True)
        yield status("completed", PAYLOAD)

    agent.fault("get", error=-32001, message=PAYLOAD)  # `task get` fails with the payload
    return agent


def strings(value: Any) -> list[str]:
    """Every string of a JSON value."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return [value] if isinstance(value, str) else []


def assert_inert(run: Run, shown: tuple[str, ...] = SHOWN) -> None:
    """Nothing a terminal acts on was written, and the attacks are shown escaped."""
    text = run.out + run.err
    found = ACTIVE.search(text)
    assert found is None, (found, text)
    for attack in shown:
        assert attack in text, (attack, text)


async def test_plain_output_shows_agent_text_inert(anyio_backend: str) -> None:
    agent = hostile_agent()
    async with agent.serve():
        a = ["-a", agent.url]
        runs = {"card": await run(anyio_backend, *a, "card")}
        runs["send"] = await run(anyio_backend, *a, "send", "hi")
        runs["stream"] = await run(anyio_backend, *a, "send", "--stream", "hi")
        task_id = next(iter(agent.tasks))
        runs["list"] = await run(anyio_backend, *a, "task", "list")
        runs["fan-out"] = await run(anyio_backend, *a, "fan-out", "--stream", "hi")
        called = await run(anyio_backend, *a, "call", "ListTasks")  # JSON, even piped text
        runs["error"] = await run(anyio_backend, *a, "--debug", "task", "get", task_id)
        pinged = await run(anyio_backend, *a, "ping")
    for name, result in runs.items():
        assert result.code == (1 if name == "error" else 0), (name, result.err)
        cut = {"list": 1, "fan-out": 2}.get(name)  # their lines are cut to a width
        assert_inert(result, SHOWN[:cut])
    assert "Traceback" in runs["error"].err  # --debug's traceback, inert too
    assert called.code == 0 and ACTIVE.search(called.out.replace("\n", "")) is None
    assert PAYLOAD in strings(called.json())  # exactly as the agent wrote it
    assert pinged.code == 0
    assert_inert(pinged, (f"Hostile <{SHOWN[0]}",))


async def test_json_output_keeps_agent_text_exact_and_inert(anyio_backend: str) -> None:
    agent = hostile_agent()
    async with agent.serve():
        a = ["-a", agent.url, "-o", "json"]
        card = await run(anyio_backend, *a, "card")
        sent = await run(anyio_backend, *a, "send", "--stream", "hi")
        failed = await run(anyio_backend, *a, "task", "get", next(iter(agent.tasks)))
    for result in (card, sent, failed):
        assert ACTIVE.search(result.out.replace("\n", "")) is None, result.out
    doc = card.json()
    assert (doc["name"], doc["description"], doc["version"]) == (
        f"Hostile {PAYLOAD}",
        PAYLOAD,
        PAYLOAD,
    )
    assert doc["skills"][0]["tags"] == [PAYLOAD]
    events = sent.jsonl()
    assert events[-1]["statusUpdate"]["status"]["message"]["parts"][0]["text"] == PAYLOAD
    chunks = [e["artifactUpdate"]["artifact"] for e in events if "artifactUpdate" in e]
    assert chunks[0]["name"] == PAYLOAD
    assert [c["parts"][0]["text"] for c in chunks] == [PAYLOAD, PAYLOAD]
    assert failed.code == 1 and PAYLOAD in failed.json()["error"]["message"]


# Sequences rich itself writes: colours, the cursor hidden and shown, a line erased, the
# cursor moved up (the live view redraws); anything else came from an agent.
RICH_OWN = re.compile(r"\x1b\[[0-9;]*m|\x1b\[\?25[lh]|\x1b\[2K|\x1b\[[0-9]*A|\r")


async def test_rich_output_and_live_views_show_agent_text_inert(anyio_backend: str) -> None:
    agent = hostile_agent()
    async with agent.serve():
        env = clean_env()
        screens = [
            await anyio.to_thread.run_sync(
                partial(run_in_pty, "--backend", anyio_backend, "-a", agent.url, *args, env=env)
            )
            for args in (("card",), ("send", "--stream", "hi"), ("fan-out", "hi"))
        ]
    for code, raw in screens:
        assert code == 0, raw
        assert "\x1b[?25l" in raw or "Skills" in raw  # drawn by rich, not plain
        left = RICH_OWN.sub("", raw)
        found = ACTIVE.search(left.replace("\n", ""))
        assert found is None, (found, raw)
        assert "\x1b]" not in raw  # no OSC at all: no title, no link, markup or not
        assert r"\u001b]0;pwned" in left.replace("\n", "")
        assert SHOWN[0] in left and "⚠" not in left  # markup and emoji codes as text


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_lone_surrogates_and_c1_controls_in_json_text(
    backend: str, raw_agent: str, tmp_path: Path
) -> None:
    """Text no encoder writes (lone surrogates, from JSON escapes) is shown escaped, kept
    exact in JSON, and never fails the output (it used to end in exit 2)."""
    expected_name = json.loads(f'"{RAW_NAME}"')
    expected_text = json.loads(f'"{RAW_TEXT}"')
    a = ["--backend", backend, "-a", raw_agent]
    plain = [cli(*a, "card"), cli(*a, "send", "hi")]
    as_json = [cli(*a, "-o", "json", "card"), cli(*a, "-o", "json", "send", "hi")]
    for result in plain + as_json:
        assert result.code == 0, result.err
        assert ACTIVE.search(result.out.replace("\n", "")) is None, result.out
    assert r"Raw \ud800 agent \u009b2J \u001b]0;pwned\u0007" in plain[0].out
    assert r"lone \udc80 surrogate \u009d0;pwned\u009c \u202eevil" in plain[1].out
    assert as_json[0].json()["name"] == expected_name
    assert as_json[1].json()["message"]["parts"][0]["text"] == expected_text
    code, raw = run_in_pty(*a, "card", env=clean_env())
    assert code == 0 and "\x1b]" not in raw and r"\ud800" in raw


# -- a bad answer is the agent's fault, never a usage error (exit 2) ---------------------------


def answer_faults() -> list[Any]:
    def card_url(url: str) -> dict[str, Any]:
        iface = {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        return {"card": {"supportedInterfaces": [iface]}}

    return [
        # send follows the task through its stream when the agent streams
        pytest.param({}, ("stream", http_status := 503, "²"), id="retry-after-superscript"),
        pytest.param({}, ("stream", 429, "¹²³"), id="retry-after-superscripts-429"),
        pytest.param({}, ("get", http_status, "¹"), id="retry-after-get"),
        pytest.param(card_url("ftp://agent.example/a2a"), None, id="card-url-ftp"),
        pytest.param(card_url("javascript:alert(1)"), None, id="card-url-javascript"),
        pytest.param(card_url("http://agent.example:99999/a2a"), None, id="card-url-port"),
        pytest.param(card_url("http://[::1/a2a"), None, id="card-url-ipv6"),
    ]


@pytest.mark.parametrize(("options", "fault"), answer_faults())
async def test_a_bad_answer_is_never_a_usage_error(
    anyio_backend: str, options: dict[str, Any], fault: tuple[str, int, str] | None
) -> None:
    agent = FakeAgent(**options)
    if fault is not None:
        op, http_status, retry_after = fault
        agent.fault(op, http_status=http_status, retry_after=retry_after)
    async with agent.serve():
        a = ["-a", agent.url, "--timeout", "10", "-o", "json"]
        args = ("task", "get", "t-1") if fault and fault[0] == "get" else ("send", "hi")
        result = await run(anyio_backend, *a, *args)
    assert result.code not in (0, 2), result.err
    assert result.json()["error"]["code"] not in ("A2ACLI_ERR_USAGE", "A2A_ANYIO_ERR_CONFIG")
