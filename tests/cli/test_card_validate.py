"""``card --validate``: what a real agent's card gets wrong, one problem a line, exit 1; a
card too broken for the client to read is checked all the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from a2a_anyio._card import MAX_CARD_BYTES
from a2a_anyio.testing import FakeAgent

from .conftest import GOOD_TOKEN, FileServer, cli, run

pytestmark = pytest.mark.anyio

SKILL = {"id": "s", "name": "S", "description": "a skill", "tags": []}
BROKEN = {
    "capabilities": {"streaming": "yes"},  # the client refuses to read such a card
    "securityRequirements": [{"schemes": {"oauth": {}}}],
    "skills": [SKILL, SKILL],
}
JSON = {"Content-Type": "application/json"}
PROBLEMS = [
    'supportedInterfaces[1].protocolBinding: unknown binding "GRCP"',
    "capabilities.streaming: must be a boolean, not a string",
    'securityRequirements[0].schemes.oauth: no scheme "oauth" in securitySchemes',
    'skills[1].id: duplicate skill id "s" (skills[0] has it too)',
]


async def test_a_good_card_passes_and_a_bad_one_lists_its_problems(anyio_backend: str) -> None:
    good, old, bad = FakeAgent(), FakeAgent(dialect="0.3"), FakeAgent(card=BROKEN)
    async with good.serve(), old.serve(), bad.serve():
        bad.card_overrides["supportedInterfaces"] = [
            {"url": f"{bad.url}/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": f"{bad.url}/grpc", "protocolBinding": "GRCP", "protocolVersion": "1.0"},
        ]
        passed = await run(anyio_backend, "-a", good.url, "card", "--validate")
        passed_03 = await run(anyio_backend, "-a", old.url, "card", "--validate")
        failed = await run(anyio_backend, "-a", bad.url, "card", "--validate")
        as_json = await run(anyio_backend, "-a", bad.url, "-o", "json", "card", "--validate")
    assert (passed.code, passed.out) == (0, "No problems found in this A2A 1.0 card.\n")
    assert (passed_03.code, passed_03.out) == (0, "No problems found in this A2A 0.3 card.\n")
    assert failed.code == 1
    assert failed.out.splitlines() == PROBLEMS
    assert failed.err == "error: 4 problems in this A2A 1.0 card\n"
    assert as_json.code == 1
    doc = as_json.json()
    assert doc["version"] == "1.0"
    assert [f"{p['path']}: {p['message']}" for p in doc["problems"]] == PROBLEMS
    assert [p["kind"] for p in doc["problems"]] == ["binding", "type", "security", "duplicate"]


def test_a_card_file_the_client_cannot_read_is_checked(tmp_path: Path) -> None:
    card = {"supportedInterfaces": [], "skills": [SKILL]}  # no name, no interface...
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card))
    result = cli("-a", str(path), "card", "--validate")
    assert result.code == 1, result.err
    assert result.out.splitlines() == [
        "name: missing: A2A 1.0 requires it",
        "description: missing: A2A 1.0 requires it",
        "version: missing: A2A 1.0 requires it",
        "supportedInterfaces: is empty: an agent needs one",
        "capabilities: missing: A2A 1.0 requires it",
        "defaultInputModes: missing: A2A 1.0 requires it",
        "defaultOutputModes: missing: A2A 1.0 requires it",
    ]
    shown = cli("-a", str(path), "card")  # without --validate: the client's own error
    assert shown.code == 1 and "agent card has no name" in shown.err


def test_a_card_behind_a_login_or_nowhere_fails_as_card_does(auth_server: str) -> None:
    refused = cli("-a", f"{auth_server}/private/", "card", "--validate")
    assert refused.code == 4, refused.err  # authentication, with its hint
    assert "hint: pass --bearer TOKEN" in refused.err
    allowed = cli("-a", f"{auth_server}/private/", "--bearer", GOOD_TOKEN, "card", "--validate")
    assert allowed.code == 0, allowed.err
    missing = cli("-a", f"{auth_server}/nothing/", "card", "--validate")
    assert missing.code == 3, missing.err
    assert "no agent card found" in missing.err


@pytest.mark.parametrize(
    ("card", "what"),
    [(b'["a"]', "an array"), (b'"card"', "a string"), (b"42", "a number"), (b"null", "null")],
)
async def test_json_that_is_no_object_is_reported_as_a_problem(
    anyio_backend: str, tmp_path: Path, card: bytes, what: str
) -> None:
    server = FileServer(files={"/.well-known/agent-card.json": (200, card, JSON)})
    async with server.serve():
        served = await run(anyio_backend, "-a", server.url, "card", "--validate")
        as_json = await run(anyio_backend, "-a", server.url, "-o", "json", "card", "--validate")
    path = tmp_path / "card.json"
    path.write_bytes(card)
    read = await run(anyio_backend, "-a", str(path), "card", "--validate")
    for result in (served, read):
        assert (result.code, result.out) == (1, f"the card is {what}, not a JSON object\n")
        assert result.err == "error: 1 problem in this card\n"
    assert as_json.code == 1
    assert as_json.json() == {
        "version": None,
        "problems": [
            {
                "path": "",
                "message": f"the card is {what}, not a JSON object",
                "kind": "type",
                "severity": "error",
            }
        ],
    }


async def test_a_card_larger_than_the_client_reads_is_a_problem(anyio_backend: str) -> None:
    agent = FakeAgent()
    agent.card_overrides["padding"] = "x" * (MAX_CARD_BYTES + 1)  # a member no version knows
    async with agent.serve():
        shown = await run(anyio_backend, "-a", agent.url, "card")
        checked = await run(anyio_backend, "-a", agent.url, "card", "--validate")
    assert shown.code == 1 and f"larger than {MAX_CARD_BYTES} bytes" in shown.err
    assert checked.code == 1
    size = checked.out.split(" bytes", 1)[0].rsplit(" ", 1)[-1]
    assert int(size) > MAX_CARD_BYTES
    assert checked.out == (
        f"the card is {size} bytes: the client reads no card larger than {MAX_CARD_BYTES}\n"
    )


async def test_warnings_leave_the_exit_status_as_it_is(anyio_backend: str) -> None:
    agent = FakeAgent()
    async with agent.serve():  # served from a local address: its author is testing it
        agent.card_overrides["documentationUrl"] = ""  # as the JS SDK's sample card has it
        agent.card_overrides["supportedInterfaces"] = [
            {"url": "http://0.0.0.0:1/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ]
        checked = await run(anyio_backend, "-a", agent.url, "card", "--validate")
        as_json = await run(anyio_backend, "-a", agent.url, "-o", "json", "card", "--validate")
        agent.card_overrides["version"] = ""
        failed = await run(anyio_backend, "-a", agent.url, "card", "--validate")
    unreachable = (
        'supportedInterfaces[0].url: warning: "http://0.0.0.0:1/a2a": no other host can reach '
        "0.0.0.0 (an address to listen on, not to connect to)"
    )
    empty = "documentationUrl: warning: is empty: the client reads it as absent (leave it out)"
    assert checked.code == 0, checked.err
    assert checked.out.splitlines() == [
        unreachable,
        empty,
        "No problems found in this A2A 1.0 card (2 warnings).",
    ]
    assert as_json.code == 0
    assert [(p["kind"], p["severity"]) for p in as_json.json()["problems"]] == [
        ("local-url", "warning"),
        ("empty", "warning"),
    ]
    assert failed.code == 1
    assert failed.out.splitlines() == ["version: missing: A2A 1.0 requires it", unreachable, empty]
    assert failed.err == "error: 1 problem in this A2A 1.0 card\n"
