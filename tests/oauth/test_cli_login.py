"""``a2a-anyio auth login / status / logout`` as a user runs them (a process), against the
real authorization server: a device code or the browser with a loopback redirect, the tokens
kept in a 0600 file, used (and refreshed) by later commands and registry entries, never shown
by ``--debug``."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from a2a_anyio.testing import FakeAgent
from tests.cli.conftest import Run, clean_env, cli
from tests.oauth.conftest import Idp

pytestmark = pytest.mark.anyio


def device_card(idp: str) -> dict[str, Any]:
    flow = {
        "deviceCode": {
            "deviceAuthorizationUrl": idp + "/device_authorization",
            "tokenUrl": idp + "/token",
            "scopes": {"a2a": "call"},
        }
    }
    return {
        "securitySchemes": {"oauth": {"oauth2SecurityScheme": {"flows": flow}}},
        "securityRequirements": [{"schemes": {"oauth": {"list": ["a2a"]}}}],
    }


def oidc_card(idp: str) -> dict[str, Any]:
    url = idp + "/.well-known/openid-configuration"
    return {
        "securitySchemes": {"oidc": {"type": "openIdConnect", "openIdConnectUrl": url}},
        "security": [{"oidc": []}],
    }


@asynccontextmanager
async def served(agent: FakeAgent) -> AsyncIterator[FakeAgent]:
    async with agent.serve():
        yield agent


async def run(env: dict[str, str], *args: str) -> Run:
    """The CLI on the test's event loop (``--backend``), in a worker thread."""
    loop = ("--backend", env["TEST_LOOP"])
    return await anyio.to_thread.run_sync(lambda: cli(*loop, *args, env=env))


async def device_login(idp: Idp, env: dict[str, str], *args: str) -> Run:
    """``auth login`` in a process; the user approves the code it shows."""
    proc = await anyio.to_thread.run_sync(lambda: start_login(env, args))
    assert proc.stderr is not None and proc.stdout is not None
    seen = []
    try:
        while True:
            line = await anyio.to_thread.run_sync(proc.stderr.readline)
            seen.append(line)
            if not line or "enter the code" in line:
                break
        if line:
            await idp.approve(line.rsplit(" ", 1)[1].strip())
        out, err = await anyio.to_thread.run_sync(lambda: proc.communicate(timeout=30))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return Run(proc.returncode, out, "".join(seen) + err)


def start_login(env: dict[str, str], args: tuple[str, ...]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "a2a_anyio.cli",
            "--backend",
            env["TEST_LOOP"],
            "auth",
            "login",
            *args,
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def kept(env: dict[str, str]) -> dict[str, Any]:
    """The sign-ins of the token file."""
    agents: dict[str, Any] = json.loads(Path(env["A2A_ANYIO_TOKENS"]).read_text())["agents"]
    return agents


def modes(env: dict[str, str]) -> tuple[int, int]:
    """The permissions of the token file and of its folder."""
    file = Path(env["A2A_ANYIO_TOKENS"])
    return stat.S_IMODE(file.stat().st_mode), stat.S_IMODE(file.parent.stat().st_mode)


def registry(env: dict[str, str], url: str) -> None:
    Path(env["A2A_ANYIO_CONFIG"]).write_text(f"agents:\n  - name: secure\n    url: {url}\n")


@pytest.fixture
def env(tmp_path: Path, anyio_backend_name: str) -> dict[str, str]:
    return clean_env(
        A2A_ANYIO_TOKENS=str(tmp_path / "cfg" / "tokens.json"),
        A2A_ANYIO_CONFIG=str(tmp_path / "agents.yaml"),
        TEST_LOOP=anyio_backend_name,  # the CLI runs on the test's loop too
    )


async def test_device_login_kept_used_refreshed_and_forgotten(
    idp: Idp, env: dict[str, str], tmp_path: Path
) -> None:
    agent = FakeAgent(auth=idp.check(), card=device_card(idp.url))
    async with served(agent):
        registry(env, agent.url)
        login = await device_login(
            idp, env, "secure", "--client-id", "cli", "--trust-issuer", idp.url
        )
        assert login.code == 0, login.err
        assert f"open {idp.url}/device?user_code=" in login.err
        assert "signed in to secure" in login.err
        assert modes(env) == (0o600, 0o700)
        first = kept(env)[agent.url]
        tokens = [first["access_token"], first["refresh_token"]]

        status = await run(env, "-o", "json", "auth", "status")
        assert status.code == 0 and status.json()[0]["agent"] == agent.url
        assert status.json()[0]["refreshable"] is True
        assert not any(t in status.out + status.err for t in tokens)

        sent = await run(env, "-a", "secure", "--debug", "send", "hi")  # the registry entry
        assert sent.code == 0, sent.err
        assert "-> POST" in sent.err

        await idp.control(revoke="1")  # expired at the server: refreshed, and kept
        again = await run(env, "-a", agent.url, "--debug", "send", "again")
        assert again.code == 0, again.err
        renewed = kept(env)[agent.url]
        assert renewed["access_token"] != first["access_token"]
        assert "form grant_type=***, refresh_token=***" in again.err
        tokens += [renewed["access_token"], renewed["refresh_token"]]
        for text in (sent.err, sent.out, again.err, again.out):
            assert not any(t in text for t in tokens)

        out = await run(env, "auth", "logout", "secure")
        assert out.code == 0 and "signed out of secure" in out.err
        assert kept(env) == {}
        refused = await run(env, "-a", "secure", "send", "hi")
        assert refused.code == 4  # authentication refused or missing


async def test_a_refresh_that_no_longer_works_says_to_sign_in_again(
    idp: Idp, env: dict[str, str]
) -> None:
    agent = FakeAgent(auth=idp.check(), card=device_card(idp.url))
    async with served(agent):
        login = await device_login(
            idp, env, agent.url, "--client-id", "cli", "--trust-issuer", idp.url
        )
        assert login.code == 0, login.err
        await idp.control(revoke_refresh="1")
        sent = await run(env, "-a", agent.url, "send", "hi")
        assert sent.code == 4
        assert f"run 'a2a-anyio auth login {agent.url}'" in sent.err


async def test_browser_login_through_the_loopback_redirect(idp: Idp, env: dict[str, str]) -> None:
    # The "browser" follows the authorization server's redirect back to the loopback port.
    browser = (
        f"{shlex.quote(sys.executable)} -c "
        + shlex.quote("import httpx, sys; httpx.get(sys.argv[1], follow_redirects=True)")
        + " %s"
    )
    agent = FakeAgent(dialect="0.3", auth=idp.check(), card=oidc_card(idp.url))
    async with served(agent):
        login = await run(
            {**env, "BROWSER": browser},
            "auth", "login", agent.url, "--browser", "--client-id", "cli",
            "--trust-issuer", idp.url,
        )  # fmt: skip
        assert login.code == 0, login.err
        assert "opening the browser" in login.err
        sent = await run(env, "-a", agent.url, "send", "hi")
        assert sent.code == 0, sent.err


async def test_an_oauth_agent_called_without_a_sign_in_says_how_to_sign_in(
    idp: Idp, env: dict[str, str]
) -> None:
    async with served(FakeAgent(auth=idp.check(), card=device_card(idp.url))) as agent:
        refused = await run(env, "-a", agent.url, "send", "hi")
    assert refused.code == 4
    assert "hint: sign in with 'a2a-anyio auth login AGENT --client-id ID'" in refused.err


async def test_a_card_without_oauth_or_an_untrusted_issuer(idp: Idp, env: dict[str, str]) -> None:
    async with served(FakeAgent(card=device_card(idp.url))) as agent:
        untrusted = await run(env, "auth", "login", agent.url, "--client-id", "cli")
    assert untrusted.code == 4 and "trust" in untrusted.err
    async with served(FakeAgent()) as agent:
        none = await run(env, "auth", "login", agent.url, "--client-id", "cli")
    assert none.code == 2 and "asks for no OAuth 2.0 sign-in" in none.err


def test_a_token_file_others_may_read_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "tokens.json"
    file.write_text('{"agents": {}}')
    os.chmod(file, 0o644)
    run_ = cli("-a", "http://127.0.0.1:1", "card", env=clean_env(A2A_ANYIO_TOKENS=str(file)))
    assert run_.code == 2 and "other users may read" in run_.err
