"""``check_agent`` (what ``a2a-anyio conformance`` runs) against every real server of the
interop suite, on asyncio and trio: the exact table each gives.

Every check passes but those listed per peer: skipped (with the exact reason) or failed (the
start of the reason). The failures are the peers' own deviations from the version their card
claims, each described in docs/cli.md ("What conformance finds in the peers of the test suite").
"""

from __future__ import annotations

from typing import Any

import pytest

from a2a_anyio._conformance import CHECKS, check_agent

from . import matrix

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

NO_PUSH = "skip: the card announces no push notifications"
NO_EXTENDED = "skip: the card announces no extended card"
NO_PUSH_OR_EXTENDED = {
    **dict.fromkeys(("push-create", "push-get", "push-list", "push-delete"), NO_PUSH),
    "extended-card": NO_EXTENDED,
}
V03 = {"list": "skip: A2A 0.3 has no task listing"}
LEGACY = {
    "list": "skip: the tasks/send dialect has no task listing",
    "push-list": "skip: the tasks/send dialect has no push-config list",
    "push-delete": "skip: the tasks/send dialect has no push-config delete",
    "extended-card": "skip: the tasks/send dialect has no extended card",
}
# The JS SDK writes a security scheme of its card as its TypeScript type holds it.
JS_CARD = "fail: securitySchemes.bearer: must hold exactly one of apiKeySecurityScheme"
# Over a v0.3 interface, the extended card a 1.x SDK answers keeps v1.0's security schemes.
V03_EXTENDED = {"extended-card": "fail: the extended card: securitySchemes.bearer.type: missing"}
LANGGRAPH_KIND = "fail: task: kind: A2A 1.0 has no kind"
PYA2A_TASK = 'fail: task: kind: must be "task", not null; contextId: missing'

Table = dict[str | None, dict[str, str]]

# peer: (fixture, path, client options, {interface: {check: what is not a pass}})
PEERS: dict[str, tuple[str, str, dict[str, Any], Table]] = {
    "sdk1-strict": ("strict_server", "", {}, {"JSON-RPC 1.0": {}, "HTTP+JSON 1.0": {}}),
    "sdk1-compat": (
        "compat_server",
        "",
        {},
        {
            "JSON-RPC 1.0": {},
            "HTTP+JSON 1.0": {},
            "JSON-RPC 0.3": V03,
            # Its v0.3 HTTP+JSON routes have no push-config delete: the v1.0 handler answers.
            "HTTP+JSON 0.3": {**V03, "push-delete": "fail: VersionNotSupportedError: [-32009]"},
        },
    ),
    "sdk1-grpc": (
        "sdk1_grpc_server",
        "",
        {},
        {"gRPC 1.0": {}, "gRPC 0.3": {**V03, **V03_EXTENDED}},
    ),
    "sdk03": (
        "sdk03_server",
        "",
        {},
        {
            "JSON-RPC 0.3": V03,
            "HTTP+JSON 0.3": {
                **V03,
                "push-list": "fail: A2AHTTPError: HTTP 500",  # "not implemented"
                "push-delete": "fail: A2AHTTPError: HTTP 405",  # no such route
            },
        },
    ),
    "sdk03-grpc": (
        "sdk03_grpc_server",
        "",
        {},
        {
            "gRPC 0.3": {
                **V03,
                "push-list": "fail: MethodNotFoundError: [-32601] gRPC status UNIMPLEMENTED",
                "push-delete": "fail: MethodNotFoundError: [-32601] gRPC status UNIMPLEMENTED",
                "extended-card": NO_EXTENDED,
            }
        },
    ),
    "js-strict": (
        "js_server",
        "",
        {},
        {None: {"card": JS_CARD}, "JSON-RPC 1.0": {}, "HTTP+JSON 1.0": {}},
    ),
    "js-compat": (
        "js_compat_server",
        "",
        {},
        {
            None: {"card": JS_CARD},
            "JSON-RPC 1.0": {},
            "HTTP+JSON 1.0": {},
            "JSON-RPC 0.3": V03,
            "HTTP+JSON 0.3": {**V03, **V03_EXTENDED},
        },
    ),
    "js-grpc": (
        "js_grpc_server",
        "",
        {},
        {None: {"card": JS_CARD}, "gRPC 1.0": {}, "gRPC 0.3": {**V03, **V03_EXTENDED}},
    ),
    "fasta2a": (
        "fasta2a_server",
        "",
        {},
        {
            "JSON-RPC 1.0": {
                "list": "skip: the agent does not list tasks (UnsupportedOperationError)",
                **NO_PUSH_OR_EXTENDED,
            }
        },
    ),
    # Its card says v0.3 JSON-RPC; it speaks the tasks/send dialect, routed by path.
    "pya2a": (
        "pya2a_server",
        "",
        {},
        {
            "JSON-RPC 0.3": {
                **V03,
                **NO_PUSH_OR_EXTENDED,
                **dict.fromkeys(("send", "stream", "get", "cancel", "subscribe"), PYA2A_TASK),
            }
        },
    ),
    "mastra": (
        "mastra_server",
        matrix.MASTRA_CARD,
        {},
        {"JSON-RPC 0.3": {**V03, "extended-card": NO_EXTENDED}},
    ),
    # v1.0 methods, enums and wrappers, with v0.3's kind members in its objects.
    "langgraph": (
        "langgraph_server",
        "",
        {},
        {
            "JSON-RPC 1.0": {
                **dict.fromkeys(("send", "stream", "get", "cancel", "subscribe"), LANGGRAPH_KIND),
                "list": "fail: page: tasks[0].kind: A2A 1.0 has no kind",
                **NO_PUSH_OR_EXTENDED,
            }
        },
    ),
    "v02": ("v02_server", "", {}, {"JSON-RPC 0.2": {"list": "skip: A2A 0.2 has no task listing"}}),
    "legacy": ("legacy_server", "", {}, {"JSON-RPC legacy": LEGACY}),
    "legacy-cookie": (
        "legacy_cookie_server",
        "",
        {"cookies": {"user": "alice"}},
        {"JSON-RPC legacy": LEGACY},
    ),
}


def expected_table(table: Table) -> list[tuple[str, str | None, str]]:
    rows: list[tuple[str, str | None, str]] = [
        ("card", None, table.get(None, {}).get("card", "pass"))
    ]
    for interface, odd in table.items():
        if interface is not None:
            rows += [(check, interface, odd.get(check, "pass")) for check in CHECKS]
    return rows


@pytest.mark.parametrize("peer", list(PEERS))
async def test_conformance_table(request: pytest.FixtureRequest, peer: str) -> None:
    fixture, path, options, table = PEERS[peer]
    url = str(request.getfixturevalue(fixture)) + path
    report = await check_agent(url, long_text="slow", check_timeout=10.0, **options)
    got = []
    for check, want in zip(report.checks, expected_table(table), strict=False):
        seen = check.outcome if check.outcome == "pass" else f"{check.outcome}: {check.detail}"
        # A failure's reason is compared up to its length: after it come ids and URLs.
        kept = seen[: len(want[2])] if want[2].startswith("fail") else seen
        got.append((check.name, check.interface, kept))
    assert len(report.checks) == len(expected_table(table))
    assert got == expected_table(table)
    assert report.left_running == []
    assert report.passed == all(not row[2].startswith("fail") for row in got)


def test_every_server_of_the_matrix_is_checked() -> None:
    assert {peer.fixture for peer in matrix.PEERS} == {fixture for fixture, *_ in PEERS.values()}
