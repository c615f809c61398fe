"""``config show``: each setting of a run with its source, secrets masked (run as a process)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import anyio.to_thread
import pytest

from .conftest import Run, clean_env, cli

pytestmark = pytest.mark.anyio

REGISTRY = """\
defaults:
  timeout_seconds: 20
  retries: 2
  token_env: TEAM_TOKEN
  headers: {X-Team-Key: literal-team-secret}
agents:
  - name: a
    url: http://127.0.0.1:9
"""


async def show(backend: str, *args: str, env: dict[str, str], cwd: Path) -> Run:
    return await anyio.to_thread.run_sync(
        partial(cli, "--backend", backend, *args, "config", "show", env=env, cwd=cwd)
    )


def sources(result: Run) -> dict[str, tuple[object, str]]:
    return {s["name"]: (s["value"], s["source"]) for s in result.json()["settings"]}


async def test_each_setting_says_where_it_came_from_and_no_secret_is_shown(
    anyio_backend: str, tmp_path: Path
) -> None:
    (tmp_path / "agents.yaml").write_text(REGISTRY)
    env = clean_env(
        A2A_ANYIO_BEARER="env-bearer-secret", HOME=str(tmp_path), TEAM_TOKEN="tok-secret"
    )
    flags = ("--header", "X-Extra: flag-header-secret", "--cookie", "sid=cookie-secret")
    result = await show(
        anyio_backend, *flags, "--timeout", "7", "-o", "json", env=env, cwd=tmp_path
    )
    assert result.code == 0, result.err
    got = sources(result)
    assert got["bearer"] == ("***", "environment $A2A_ANYIO_BEARER")
    assert got["header"] == (["X-Extra: ***"], "flag --header")
    assert got["cookie"] == (["sid=***"], "flag --cookie")
    assert got["timeout"] == (7.0, "flag --timeout")
    assert got["output"] == ("json", "flag --output")
    assert got["protocol"] == ("auto", "default")
    assert got["backend"][1] == ("flag --backend" if anyio_backend == "trio" else "default")
    assert got["config"] == ("agents.yaml", "default location")
    file = "registry file agents.yaml (defaults)"
    assert got["defaults.timeout_seconds"] == (20.0, file)
    assert got["defaults.token_env"] == ("TEAM_TOKEN", file)
    assert got["defaults.headers"] == ({"X-Team-Key": "***"}, file)
    for secret in ("env-bearer-secret", "flag-header-secret", "cookie-secret", "tok-secret"):
        assert secret not in result.out + result.err
    assert "literal-team-secret" not in result.out

    # A flag wins over the environment; $A2A_ANYIO_CONFIG names the file; text is a table.
    (tmp_path / "other.yaml").write_text("agents: []\n")
    env["A2A_ANYIO_CONFIG"] = str(tmp_path / "other.yaml")
    text = await show(anyio_backend, "--bearer", "flag-secret", env=env, cwd=tmp_path)
    assert text.code == 0, text.err
    rows = {line.split()[0]: line.split(None, 2)[1:] for line in text.out.splitlines()[1:]}
    assert text.out.splitlines()[0].split() == ["SETTING", "VALUE", "SOURCE"]
    assert rows["bearer"] == ["***", "flag --bearer"]
    assert rows["config"] == [str(tmp_path / "other.yaml"), "environment $A2A_ANYIO_CONFIG"]
    assert "flag-secret" not in text.out + text.err


async def test_a_broken_registry_file_is_reported_as_such(
    anyio_backend: str, tmp_path: Path
) -> None:
    (tmp_path / "agents.yaml").write_text("defaults: {retries: many}\n")
    result = await show(anyio_backend, env=clean_env(HOME=str(tmp_path)), cwd=tmp_path)
    assert result.code == 2
    assert "agents.yaml: defaults: field 'retries'" in result.err
