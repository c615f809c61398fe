"""``--debug`` shows requests, options and tracebacks, and never a credential, however short.

Run in-process against the local ``auth_server`` (answers 401 to anything but its own token),
so the failure path is shown too; on both backends.
"""

from __future__ import annotations

import pytest

from a2a_anyio.cli import main
from a2a_anyio.cli._context import Debug
from a2a_anyio.cli._render import Printer

# Short values: the redaction used to skip anything under three characters.
BEARER, KEY, HEADER, COOKIE = "Zq", "Wj", "Yx", "Vk"


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("command", [["card"], ["send", "hello"]])
def test_debug_output_shows_no_short_secret(
    auth_server: str, backend: str, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "-a", auth_server, "--backend", backend, "--debug",
            "--bearer", BEARER, "--api-key", KEY, "--header", f"X-Tenant: {HEADER}",
            "--cookie", f"sid={COOKIE}", *command,
        ]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert "-> " in err and "agent " in err  # the request lines and the options line
    assert "x-tenant: ***" in err and "'X-Tenant': '***'" in err
    if command == ["send", "hello"]:
        assert code == 4  # the agent refused the credentials
    for value in (BEARER, KEY, HEADER, COOKIE):
        assert value not in out and value not in err, value


def test_redaction_of_echoed_secrets_of_any_length() -> None:
    debug = Debug(True, Printer("text"))
    debug.secrets.update({"a", "Zq", "long-secret"})
    text = debug.redact("token a; key=Zq (Zqx) long-secret!")
    assert text == "token ***; key=*** (Zqx) ***!"
