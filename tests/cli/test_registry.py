"""AgentRegistry: the file formats, validation messages, env interpolation, default locations,
and registry names wherever the library takes a URL (AgentPool, fan_out, fan_out_stream)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from a2a_anyio import (
    A2AClientError,
    A2AHTTPError,
    AgentEntry,
    AgentPool,
    AgentRegistry,
    AgentRegistryError,
    MethodNotFoundError,
    RetryPolicy,
    Task,
    TaskState,
    fan_out,
    fan_out_stream,
    no_retry_delays,
)
from a2a_anyio._registry import MAX_REGISTRY_BYTES
from a2a_anyio.testing import serve_app

ISSUE_YAML = """\
defaults: {timeout_seconds: 30, retries: 3}
agents:
  - name: security-policy
    url: https://security.example.com
    token_env: SECURITY_TOKEN          # Bearer token read from this variable
    tags: [reviewers]
  - name: local
    url: http://localhost:8100
    headers: {X-Api-Key: "${LOCAL_KEY}"}
groups:
  reviewers: [security-policy, local]
"""

ISSUE_TOML = """\
[defaults]
timeout_seconds = 30
retries = 3

[[agents]]
name = "security-policy"
url = "https://security.example.com"
token_env = "SECURITY_TOKEN"
tags = ["reviewers"]

[[agents]]
name = "local"
url = "http://localhost:8100"
headers = { X-Api-Key = "${LOCAL_KEY}" }

[groups]
reviewers = ["security-policy", "local"]
"""

ENV = {"SECURITY_TOKEN": "sec-token", "LOCAL_KEY": "local-key"}


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


@pytest.mark.parametrize(
    ("name", "text"), [("agents.yaml", ISSUE_YAML), ("agents.toml", ISSUE_TOML)]
)
def test_the_issue_example_in_yaml_and_toml(tmp_path: Path, name: str, text: str) -> None:
    reg = AgentRegistry.from_file(write(tmp_path, name, text))
    assert reg.names() == ["security-policy", "local"]
    assert [e.name for e in reg.group("reviewers")] == ["security-policy", "local"]
    sec = reg.entry("security-policy")
    assert sec.url == "https://security.example.com"
    assert (sec.token_env, sec.timeout_seconds, sec.retries, sec.tags) == (
        "SECURITY_TOKEN", 30.0, 3, ("reviewers",),
    )  # fmt: skip
    assert reg.entry("local").headers == {"X-Api-Key": "${LOCAL_KEY}"}  # not substituted yet

    opts = sec.client_options(ENV)
    assert opts["auth"] == "Bearer sec-token"
    assert opts["retry"] == RetryPolicy(attempts=3)  # retries: 3 means 3 tries in all
    assert opts["timeout"] == 30.0
    assert reg.entry("local").client_options(ENV)["headers"] == {"X-Api-Key": "local-key"}


@pytest.mark.anyio
async def test_client_is_configured_from_the_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for k, v in ENV.items():
        monkeypatch.setenv(k, v)
    reg = AgentRegistry.from_file(write(tmp_path, "agents.yaml", ISSUE_YAML))
    async with reg.client("security-policy") as client:
        assert client.url == "https://security.example.com"
        assert client.timeout == 30.0
        assert client.retry.attempts == 3
        assert client._credentials.headers["Authorization"] == "Bearer sec-token"
    async with reg.client("local", timeout=5.0) as client:  # overrides win
        assert client.timeout == 5.0
        assert client._credentials.headers["X-Api-Key"] == "local-key"


def test_tags_form_groups_and_explicit_groups_come_first(tmp_path: Path) -> None:
    reg = AgentRegistry.from_dict(
        {
            "agents": [
                {"name": "a", "url": "http://a.test", "tags": ["ops", "x"]},
                {"name": "b", "url": "http://b.test", "tags": ["ops"]},
                {"name": "c", "url": "http://c.test"},
            ],
            "groups": {"ops": ["c"]},
        }
    )
    assert [e.name for e in reg.group("ops")] == ["c", "a", "b"]
    assert [e.name for e in reg.group("x")] == ["a"]
    assert reg.group_names() == ["ops", "x"]
    assert [e.name for e in reg.resolve("b")] == ["b"]
    assert "ops" in reg and "a" in reg and "nope" not in reg


def test_options_are_normalised_and_defaults_merge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "ca.pem").write_text("a CA bundle")  # verify: ~/ca.pem is checked to exist
    path = write(
        tmp_path,
        "agents.yaml",
        """\
        defaults:
          headers: {X-Team: blue, X-Env: prod}
          protocol: 1.0
          verify: false
        agents:
          - name: one
            url: https://one.test
            headers: {X-Env: dev}
            binding: HTTP+JSON
            timeout_seconds: null
          - name: two
            endpoint: https://two.test/rpc
            protocol: "0.3"
            verify: ~/ca.pem
        """,
    )
    reg = AgentRegistry.from_file(path)
    one, two = reg.entry("one"), reg.entry("two")
    assert one.headers == {"X-Team": "blue", "X-Env": "dev"}
    assert (one.protocol, one.binding, one.verify, one.timeout_seconds) == (
        "1.0",
        "rest",
        False,
        None,
    )
    assert one.retries is None and "retry" not in one.client_options({})
    assert two.url is None and two.endpoint == "https://two.test/rpc"
    assert two.protocol == "0.3"
    assert isinstance(two.verify, str) and two.verify.endswith("ca.pem") and "~" not in two.verify
    assert two.client_options({})["endpoint"] == "https://two.test/rpc"


def test_interpolation_defaults_escapes_and_urls() -> None:
    reg = AgentRegistry.from_dict(
        {
            "agents": [
                {
                    "name": "a",
                    "url": "https://${HOST:-a.test}/base",
                    "headers": {"X-Price": "$$5", "X-Key": "k-${KEY}"},
                    "cookies": {"session": "${SESSION:-anon}"},
                }
            ]
        }
    )
    opts = reg.entry("a").client_options({"KEY": "42"})
    assert opts["url"] == "https://a.test/base"
    assert opts["headers"] == {"X-Price": "$5", "X-Key": "k-42"}
    assert opts["cookies"] == {"session": "anon"}
    assert reg.entry("a").secrets({"KEY": "42"}) == ["42"]


def test_a_missing_variable_names_itself_the_file_the_entry_and_the_field(tmp_path: Path) -> None:
    reg = AgentRegistry.from_file(write(tmp_path, "agents.yaml", ISSUE_YAML))
    with pytest.raises(AgentRegistryError) as info:
        reg.entry("local").client_options({})
    msg = str(info.value)
    assert "LOCAL_KEY" in msg and "agents.yaml" in msg and "local" in msg and "X-Api-Key" in msg
    assert info.value.variable == "LOCAL_KEY"
    with pytest.raises(AgentRegistryError, match="SECURITY_TOKEN is not set") as info:
        reg.entry("security-policy").auth({})
    assert info.value.field == "token_env"
    # Another agent's missing variable does not matter.
    assert (
        reg.entry("security-policy").client_options({"SECURITY_TOKEN": "t"})["auth"] == "Bearer t"
    )
    assert isinstance(info.value, A2AClientError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "agents: [{name: a, url: http://a.test, tokn_env: X}]",
            ["agents[0] (a)", "'tokn_env'", "did you mean 'token_env'"],
        ),
        (  # an option of A2AClient that a file does not give
            "agents: [{name: a, url: http://a.test, idle_timeout: 5}]",
            ["agents[0] (a)", "'idle_timeout'", "unknown field", "allowed: name"],
        ),
        (
            "defaults: {http_client: x}",
            ["defaults", "'http_client'", "unknown field", "allowed: path"],
        ),
        (
            "agents: [{name: a, url: http://a.test, timeout_seconds: soon}]",
            ["agents[0] (a)", "'timeout_seconds'", "positive number"],
        ),
        (
            "agents: [{name: a, url: http://a.test, timeout_seconds: -1}]",
            ["'timeout_seconds'", "-1"],
        ),
        ("agents: [{name: a, url: http://a.test, retries: 1.5}]", ["'retries'", "whole number"]),
        ("agents: [{name: a, url: http://a.test, retries: 0}]", ["'retries'", "1: no retry"]),
        ("agents: [{name: a, url: http://a.test, path: cstp}]", ["'path'", "starting with '/'"]),
        (
            "agents: [{name: a, endpoint: http://a.test/rpc, path: /cstp}]",
            ["'path'", "give one of them"],
        ),
        (
            "agents: [{name: a, url: http://a.test, protocol: 2.0}]",
            ["'protocol'", "auto, 1.0, 0.3, 0.2 or legacy"],
        ),
        (
            "agents: [{name: a, url: http://a.test, binding: soap}]",
            ["'binding'", "jsonrpc, rest or grpc"],
        ),
        ("agents: [{name: a, url: http://a.test, verify: 3}]", ["'verify'", "CA bundle"]),
        ("agents: [{name: a, url: http://a.test, headers: [x]}]", ["'headers'", "mapping"]),
        (
            "agents: [{name: a, url: http://a.test, headers: {X: '${1BAD}'}}]",
            ["'headers.X'", "does not name a variable"],
        ),
        (
            "agents: [{name: a, url: http://a.test, token_env: 'my token'}]",
            ["'token_env'", "variable's name"],
        ),
        ("agents: [{name: a}]", ["agents[0] (a)", "'url'", "needs a url"]),
        ("agents: [{name: a, url: ftp://a.test}]", ["'url'", "http(s)"]),
        ("agents: [{url: http://a.test}]", ["agents[0]", "'name'", "needs a name"]),
        ("agents: [{name: 'a b', url: http://a.test}]", ["'name'", "letters"]),
        (
            "agents: [{name: a, url: http://a.test}, {name: a, url: http://b.test}]",
            ["agents[1] (a)", "duplicate"],
        ),
        (
            "agents: [{name: a, url: http://a.test}]\ngroups: {g: [a, b]}",
            ["groups.g", "unknown agent 'b'"],
        ),
        (
            "agents: [{name: a, url: http://a.test}]\ngroups: {a: [a]}",
            ["groups.a", "name of an agent"],
        ),
        ("agents: [{name: a, url: http://a.test, tags: [a]}]", ["'tags'", "also an agent's name"]),
        ("agents: [{name: a, url: http://a.test}]\nextra: 1", ["top level", "'extra'"]),
        ("defaults: {url: http://a.test}", ["defaults", "'url'"]),
        ("agents: 3", ["agents", "list or a mapping"]),
        ("- just\n- a list", ["must hold a mapping"]),
        ("agents: [name: a", ["not valid YAML"]),
        # values PyYAML reads into types that refuse them
        (
            "agents: [{name: a, url: http://a.test, timeout_seconds: 2001-13-45}]",
            ["not valid YAML", "month must be in 1..12"],
        ),
        ("agents: [{name: a, url: http://a.test, retries: !!int x}]", ["not valid YAML"]),
        (f"defaults: {{retries: {'9' * 5000}}}", ["not valid YAML", "4300 digits"]),
        (f"agents: {'[' * 2000}{']' * 2000}", ["not valid YAML", "nested too deep"]),
    ],
)
def test_validation_errors_name_the_file_the_entry_and_the_field(
    tmp_path: Path, text: str, expected: list[str]
) -> None:
    path = write(tmp_path, "agents.yaml", text)
    with pytest.raises(AgentRegistryError) as info:
        AgentRegistry.from_file(path)
    msg = str(info.value)
    assert msg.startswith(str(path)), msg
    for part in expected:
        assert part in msg, msg


#: An alias bomb: 9 lists, the last of them 10**8 strings, written in a few hundred bytes.
ALIAS_BOMB = (
    "[&a0 [x, x, x, x, x, x, x, x, x, x], "
    + ", ".join(f"&a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9))
    + "]"
)


@pytest.mark.parametrize(
    "field", ["path", "token_env", "protocol", "binding", "timeout_seconds", "retries", "verify"]
)
def test_an_alias_bomb_in_a_field_is_refused_at_once_and_quoted_short(
    tmp_path: Path, field: str
) -> None:
    text = f"agents:\n  - name: a\n    url: http://a.test\n    {field}: {ALIAS_BOMB}\n"
    with pytest.raises(AgentRegistryError) as info:
        AgentRegistry.from_file(write(tmp_path, "agents.yaml", text))
    assert info.value.field == field
    assert len(info.value.message) < 300


def test_toml_errors_and_the_mapping_form(tmp_path: Path) -> None:
    with pytest.raises(AgentRegistryError, match="not valid TOML"):
        AgentRegistry.from_file(write(tmp_path, "bad.toml", "agents = [\n"))
    with pytest.raises(AgentRegistryError, match=r"not valid TOML: .*4300 digits"):
        AgentRegistry.from_file(write(tmp_path, "big.toml", f"defaults.retries = {'9' * 5000}"))
    reg = AgentRegistry.from_file(
        write(
            tmp_path,
            "agents.toml",
            """\
            [agents.alpha]
            url = "http://alpha.test"
            [agents.beta]
            url = "http://beta.test"
            retries = 1
            """,
        )
    )
    assert reg.names() == ["alpha", "beta"]
    assert reg.entry("beta").client_options({})["retry"] == RetryPolicy(attempts=1)
    with pytest.raises(AgentRegistryError, match="cannot read the registry"):
        AgentRegistry.from_file(tmp_path / "missing.yaml")


# The agents.yaml of the JSON-RPC client with retries, registry and CLI, as its users have it
# (its blank lines between agents hold four spaces).
SEED_YAML = """\
agents:
  - name: "security-policy"
    url: "https://security.example.com"
    token_env: "CSTP_TOKEN_SECURITY"
{blank}
  - name: "claude-ops"
    url: "https://claude-ops.example.com"
    token_env: "CSTP_TOKEN_CLAUDE"
{blank}
  - name: "local"
    url: "http://localhost:8100"
    token_env: "CSTP_TOKEN_LOCAL"

defaults:
  timeout_seconds: 30
  retries: 3
""".format(blank="    ")


def test_the_seed_registry_file_loads_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "config" / "agents.yaml"
    path.parent.mkdir()
    path.write_text(SEED_YAML)
    reg = AgentRegistry(path)  # that registry's constructor: AgentRegistry(config_path)
    assert reg.list() == reg.names() == ["security-policy", "claude-ops", "local"]
    assert AgentRegistry(str(path)).list() == reg.list()
    assert reg.get("nope") is None  # get() as there; entry() raises
    with pytest.raises(AgentRegistryError, match="no agent named 'nope'"):
        reg.entry("nope")
    local = reg.get("local")
    assert local is not None and reg.entry("local") is local
    opts = local.client_options({"CSTP_TOKEN_LOCAL": "tok"})
    assert (opts["url"], opts["auth"], opts["timeout"]) == (
        "http://localhost:8100",
        "Bearer tok",
        30.0,
    )
    assert opts["retry"] == RetryPolicy(attempts=3)  # 3 tries in all, as its loop makes them
    with pytest.raises(TypeError, match="from the file"):
        AgentRegistry(path, groups={})


def test_a_path_makes_the_url_a_json_rpc_endpoint() -> None:
    reg = AgentRegistry.from_dict(
        {
            "defaults": {"path": "/cstp"},
            "agents": [
                {"name": "a", "url": "https://a.test/"},
                {"name": "b", "url": "https://b.test/base", "path": "/rpc"},
                {"name": "c", "endpoint": "https://c.test/jsonrpc"},  # its own endpoint wins
            ],
        }
    )
    a, b, c = (reg.entry(n).client_options({}) for n in "abc")
    assert (a["url"], a["endpoint"]) == ("https://a.test/", "https://a.test/cstp")
    assert b["endpoint"] == "https://b.test/base/rpc"
    assert c["endpoint"] == "https://c.test/jsonrpc" and reg.entry("c").path is None


@contextlib.asynccontextmanager
async def cstp_service() -> AsyncIterator[tuple[str, list[str]]]:
    """A plain JSON-RPC service at /cstp on 127.0.0.1: no card, no A2A. ``cstp.busy`` is
    answered with HTTP 429; every request is noted as "VERB /path"."""
    seen: list[str] = []

    async def rpc(request: Request) -> Response:
        seen.append(f"{request.method} {request.url.path}")
        body = await request.json()
        if body["method"] == "cstp.busy":
            return PlainTextResponse("slow down", 429)
        if body["method"] != "cstp.queryDecisions":
            error = {"code": -32601, "message": "Method not found"}
            return JSONResponse({"jsonrpc": "2.0", "id": body["id"], "error": error})
        decisions = [{"id": "d-1", "title": f"about {body['params']['query']}"}]
        auth = request.headers.get("authorization")
        result = {"decisions": decisions, "auth": auth}
        return JSONResponse({"jsonrpc": "2.0", "id": body["id"], "result": result})

    async def elsewhere(request: Request) -> Response:
        seen.append(f"{request.method} {request.url.path}")
        return PlainTextResponse("Not Found", 404)

    app = Starlette(
        routes=[
            Route("/cstp", rpc, methods=["POST"]),
            Route("/{rest:path}", elsewhere, methods=["GET", "POST"]),
        ]
    )
    async with serve_app(app) as url:
        yield url, seen


@pytest.mark.anyio
async def test_a_plain_json_rpc_service_is_called_by_naming_its_path_once(tmp_path: Path) -> None:
    """The seed's file, its url pointing at a real service without a card, and one line
    added (``path: /cstp`` in ``defaults``): call() reaches it, and ``retries: 3`` makes 3
    tries in all."""
    async with cstp_service() as (url, seen):
        text = SEED_YAML.replace("http://localhost:8100", url)
        text = text.replace("defaults:\n", "defaults:\n  path: /cstp\n")
        reg = AgentRegistry(write(tmp_path, "agents.yaml", text))
        async with reg.entry("local").client({"CSTP_TOKEN_LOCAL": "tok"}) as client:
            result = await client.call("cstp.queryDecisions", {"query": "db"})
            with pytest.raises(MethodNotFoundError):
                await client.call("cstp.unknown", {})
            served = list(seen)
            with no_retry_delays(), pytest.raises(A2AHTTPError) as info:
                await client.call("cstp.busy", {})
    assert result == {"decisions": [{"id": "d-1", "title": "about db"}], "auth": "Bearer tok"}
    assert served == ["POST /cstp", "POST /cstp"]  # no card asked for
    assert (info.value.status_code, info.value.attempts) == (429, 3)
    assert seen[2:] == ["POST /cstp"] * 3


def test_unknown_names_list_what_exists() -> None:
    reg = AgentRegistry.from_dict({"agents": [{"name": "alpha", "url": "http://a.test"}]})
    with pytest.raises(
        AgentRegistryError, match=r"no agent named 'alpa'.*known: alpha.*did you mean 'alpha'"
    ):
        reg.entry("alpa")
    assert reg.get("alpa") is None
    with pytest.raises(AgentRegistryError, match="no group named 'ops'"):
        reg.group("ops")
    assert AgentEntry("x", url="http://x.test").client_options({})["url"] == "http://x.test"


def test_default_locations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("A2A_ANYIO_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    assert AgentRegistry.load().names() == []  # nothing anywhere: empty
    assert AgentRegistry.load().path is None

    user = tmp_path / "xdg" / "a2a-anyio"
    user.mkdir(parents=True)
    (user / "agents.yaml").write_text("agents: [{name: user, url: http://u.test}]")
    assert AgentRegistry.load().names() == ["user"]

    (tmp_path / "agents.yaml").write_text("agents: [{name: here, url: http://h.test}]")
    assert AgentRegistry.load().names() == ["here"]  # ./agents.yaml comes first

    named = write(tmp_path, "named.toml", '[[agents]]\nname = "named"\nurl = "http://n.test"\n')
    monkeypatch.setenv("A2A_ANYIO_CONFIG", str(named))
    assert AgentRegistry.load().names() == ["named"]  # $A2A_ANYIO_CONFIG comes first
    assert AgentRegistry.load(tmp_path / "agents.yaml").names() == ["here"]  # unless a path

    monkeypatch.setenv("A2A_ANYIO_CONFIG", str(tmp_path / "gone.yaml"))
    with pytest.raises(AgentRegistryError, match="A2A_ANYIO_CONFIG"):
        AgentRegistry.load()


# -- registry names wherever the library takes a URL (real servers, both backends) ----------


@pytest.fixture
def sdk_registry(strict_server: str, compat_server: str) -> AgentRegistry:
    return AgentRegistry.from_dict(
        {
            "agents": [
                {"name": "strict", "url": strict_server, "tags": ["sdk"]},
                {"name": "compat", "url": compat_server, "protocol": 0.3, "tags": ["sdk"]},
            ],
            "groups": {"pair": ["strict", "compat"]},
        }
    )


@pytest.mark.anyio
async def test_pool_and_fan_out_take_names_and_groups(sdk_registry: AgentRegistry) -> None:
    async with AgentPool(registry=sdk_registry) as pool:
        client = pool.client("compat")
        assert client.protocol == "0.3" and client is pool.client("compat")
        assert await pool.send("strict", text="hello") == {"text": "echo: hello"}
        results = await pool.fan_out(["pair"], "hello")
        assert [r.agent for r in results] == ["strict", "compat"]
        assert all(
            isinstance(r.value, Task) and r.value.state is TaskState.COMPLETED for r in results
        )
        with pytest.raises(AgentRegistryError, match="group"):
            pool.client("sdk")
        async with pool.fan_out_stream("sdk", "stream") as merged:
            agents = {item.agent async for item in merged if item.error is None}
        assert agents == {"strict", "compat"}


@pytest.mark.anyio
async def test_fan_out_reads_the_default_registry(
    sdk_registry: AgentRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = ["agents:"] + [
        f"  - {{name: {e.name}, url: '{e.url}', protocol: '{e.protocol}', tags: [sdk]}}"
        for e in sdk_registry
    ]
    monkeypatch.setenv("A2A_ANYIO_CONFIG", str(write(tmp_path, "agents.yaml", "\n".join(lines))))
    results = await fan_out("sdk", "message hi")
    assert [r.agent for r in results] == ["strict", "compat"]
    assert [r.ok for r in results] == [True, True]
    async with fan_out_stream(["strict"], "stream") as merged:
        events = [item async for item in merged]
    assert events and all(item.agent == "strict" and item.error is None for item in events)


@pytest.mark.anyio
async def test_pool_gives_an_entry_with_other_tls_settings_its_own_connections() -> None:
    reg = AgentRegistry.from_dict(
        {
            "agents": [
                {"name": "plain", "url": "https://plain.test"},
                {"name": "lab", "url": "https://lab.test", "verify": False, "timeout_seconds": 3},
            ]
        }
    )
    async with AgentPool(registry=reg, auth="Bearer pool") as pool:
        plain = pool.client("plain")
        with pytest.warns(UserWarning, match="not verified"):  # verify: false says so
            lab = pool.client("lab")
        assert plain._http.client is pool.http_client
        assert lab._http.client is not pool.http_client and lab.timeout == 3.0
        assert plain._credentials.headers["Authorization"] == "Bearer pool"  # pool options apply
        assert pool.client("https://plain.test") is not plain  # a URL is its own client


def test_a_registry_file_is_read_only_when_small_and_regular(tmp_path: Path) -> None:
    directory, fifo, large = tmp_path / "dir.yaml", tmp_path / "fifo.yaml", tmp_path / "big.yaml"
    directory.mkdir()
    os.mkfifo(fifo)  # reading it would wait for a writer forever
    with large.open("wb") as f:
        f.truncate(MAX_REGISTRY_BYTES + 1)
    for path, why in ((directory, "a directory"), (fifo, "a FIFO"), (large, "larger than")):
        with pytest.raises(AgentRegistryError, match=why) as info:
            AgentRegistry.from_file(path)
        assert info.value.path == str(path)


def test_header_and_ca_bundle_values_are_checked(tmp_path: Path) -> None:
    with pytest.raises(AgentRegistryError, match="line break or NUL") as info:
        AgentRegistry.from_dict(
            {"agents": [{"name": "a", "url": "http://a.test", "headers": {"X": "1\n2"}}]}
        )
    assert info.value.field == "headers.X"
    entry = AgentRegistry.from_dict(
        {
            "agents": [
                {"name": "a", "url": "http://a.test", "headers": {"X": "${V}"}, "verify": "ca.pem"}
            ]
        }
    ).entry("a")
    with pytest.raises(AgentRegistryError, match="no CA bundle file") as info:
        entry.client_options({"V": "ok"})
    assert info.value.field == "verify"
    bundle = tmp_path / "ca.pem"
    bundle.write_text("a CA bundle")
    entry = dataclasses.replace(entry, verify=str(bundle))
    assert entry.client_options({"V": "ok"})["headers"] == {"X": "ok"}
    with pytest.raises(AgentRegistryError, match="line break or NUL") as info:
        entry.client_options({"V": "ok\r\nX-Evil: 1"})
    assert info.value.field == "headers.X" and "X-Evil" not in str(info.value)


@pytest.mark.parametrize(
    ("binding", "order"),
    [
        ("jsonrpc", ("jsonrpc", "rest", "grpc")),
        ("rest", ("rest", "jsonrpc", "grpc")),
        ("grpc", ("grpc", "jsonrpc", "rest")),
        ("gRPC", ("grpc", "jsonrpc", "rest")),
    ],
)
def test_the_binding_comes_first_and_the_others_follow(
    binding: str, order: tuple[str, ...]
) -> None:
    reg = AgentRegistry.from_dict(
        {"agents": [{"name": "a", "url": "http://a.test", "binding": binding}]}
    )
    assert reg.entry("a").client_options({})["bindings"] == order
