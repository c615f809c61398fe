"""Bad local input exits 2 with one error line naming the file, the entry or the option.

The CLI runs in-process (``main(argv)``); nothing here reaches an agent: every run stops at
the input before any request (the agent of ``-a`` is a closed port).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from a2a_anyio.cli import main

from .conftest import closed_port

NOWHERE = f"http://127.0.0.1:{closed_port()}"
SECRET = "s3cr3t-value"


@pytest.fixture(autouse=True)
def _quiet_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No registry or credentials of the user's; the working directory is a fresh one."""
    for name in list(os.environ):
        if name.startswith(("A2A_ANYIO_", "A2ACLI_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)


def usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run the CLI; check that it exits 2 with one ``error:`` line; return that line."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    others = [
        line for line in err.splitlines() if not line.startswith(("error: ", "hint: ", "usage: "))
    ]
    assert len(errors) == 1, err
    assert all(line.startswith(" ") for line in others), err  # only argparse's usage goes on
    assert "Traceback" not in err and out == ""
    return errors[0]


def sparse(path: Path, size: int) -> Path:
    with path.open("wb") as f:
        f.truncate(size)
    return path


# -- the registry file ---------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["--config", "env", "default"])
@pytest.mark.parametrize("kind", ["directory", "fifo", "too-large", "not-utf-8"])
def test_a_registry_that_is_not_a_small_regular_text_file(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    where: str,
    kind: str,
) -> None:
    path = tmp_path / "agents.yaml"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)  # nobody writes to it: reading it would wait forever
    elif kind == "too-large":
        sparse(path, 1024 * 1024 + 1)
    else:
        path.write_bytes(b"agents: [{name: caf\xe9, url: http://a.test}]")
    argv = ["agents"]
    if where == "--config":
        argv += ["--config", str(path)]
    elif where == "env":
        monkeypatch.setenv("A2A_ANYIO_CONFIG", str(path))
    line = usage_error(capsys, *argv)
    assert str(path.name) in line
    expected = {
        "directory": "is a directory, not a regular file",
        "fifo": "is a FIFO, not a regular file",
        "too-large": "is larger than 1 MiB",
        "not-utf-8": "not UTF-8 text",
    }[kind]
    assert expected in line


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("verify: maybe", ["agents[0] (a)", "'verify'", "no CA bundle file at 'maybe'"]),
        ('verify: "yes"', ["agents[0] (a)", "'verify'", "without quotes"]),
        ('timeout_seconds: "x"', ["'timeout_seconds'", "positive number"]),
        ("timeout_seconds: .nan", ["'timeout_seconds'", "positive number"]),
        ("timeout_seconds: .inf", ["'timeout_seconds'", "positive number"]),
        ("retries: many", ["'retries'", "whole number"]),
        ("headers: [X-Key]", ["'headers'", "must be a mapping"]),
        ("headers: X-Key", ["'headers'", "must be a mapping"]),
        ("headers: {X-Key: [1]}", ["'headers.X-Key'", "must be a string"]),
        ('headers: {X-Key: "a\\r\\nX-Evil: 1"}', ["'headers.X-Key'", "line break or NUL"]),
        ('headers: {X-Key: "a\\0b"}', ["'headers.X-Key'", "line break or NUL"]),
        ('headers: {"Bad Name": v}', ["'headers.Bad Name'", "not a valid header"]),
        ('cookies: {"a;b": v}', ["'cookies.a;b'", "not a valid header or cookie name"]),
        ('cookies: {session: "x\\ny"}', ["'cookies.session'", "line break or NUL"]),
        ("cookies: [session]", ["'cookies'", "must be a mapping"]),
    ],
)
def test_wrong_types_and_values_in_a_registry_entry(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, entry: str, expected: list[str]
) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(f"agents:\n  - name: a\n    url: {NOWHERE}\n    {entry}\n")
    line = usage_error(capsys, "--config", str(path), "-a", "a", "card")
    assert str(path) in line
    for part in expected:
        assert part in line, line


@pytest.mark.parametrize(
    ("variable", "field"),
    [("KEY", "'headers.X-Key'"), ("SESSION", "'cookies.session'"), ("TOKEN", "'token_env'")],
)
def test_a_variable_that_brings_a_line_break_into_a_header(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    variable: str,
    field: str,
) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(
        f"agents:\n  - name: a\n    url: {NOWHERE}\n    token_env: TOKEN\n"
        '    headers: {X-Key: "${KEY}"}\n    cookies: {session: "${SESSION}"}\n'
    )
    for name in ("KEY", "SESSION", "TOKEN"):
        monkeypatch.setenv(name, f"{SECRET}\r\nX-Evil: 1" if name == variable else "fine")
    line = usage_error(capsys, "--config", str(path), "-a", "a", "card")
    assert "agents[0] (a)" in line and field in line and "line break or NUL" in line
    assert SECRET not in line


@pytest.mark.parametrize(
    ("suffix", "text", "expected"),
    [
        (".yaml", "agents: [name: a", "not valid YAML: "),
        (".yaml", "agents: " + "[" * 5000, "not valid YAML: "),
        (".toml", "agents = [\n", "not valid TOML: "),
        (".toml", "a = " + "[" * 5000, "not valid TOML: "),
    ],
    ids=["yaml", "yaml-deep", "toml", "toml-deep"],
)
def test_a_registry_that_does_not_parse(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, suffix: str, text: str, expected: str
) -> None:
    path = tmp_path / f"agents{suffix}"
    path.write_text(text)
    line = usage_error(capsys, "--config", str(path), "agents")
    assert line.startswith(f"error: {path}: {expected}")


# -- options and the files they name -------------------------------------------------------------


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize("flag", ["--data", "--metadata"])
@pytest.mark.parametrize("levels", [101, 100_000])
def test_json_on_the_command_line_nested_too_deep(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, flag: str, levels: int
) -> None:
    value = deep(levels) if flag == "--data" else '{"a": ' * levels + "1" + "}" * levels
    line = usage_error(capsys, "-a", NOWHERE, "send", "hi", flag, value)
    assert line.startswith(f"error: {flag}: ") and "nested deeper than 100 levels" in line
    path = tmp_path / "deep.json"
    path.write_text(value)
    line = usage_error(capsys, "-a", NOWHERE, "send", "hi", flag, f"@{path}")
    assert str(path) in line and "nested deeper than 100 levels" in line
    assert main(["-a", NOWHERE, "--timeout", "2", "send", "hi", "--data", deep(100)]) == 3
    capsys.readouterr()  # 100 levels are fine: the run goes on, to the closed port


def test_json_params_nested_too_deep(capsys: pytest.CaptureFixture[str]) -> None:
    line = usage_error(capsys, "--endpoint", NOWHERE, "call", "X", "--params", deep(5000))
    assert line.startswith("error: --params: ") and "nested deeper" in line


@pytest.mark.parametrize("flag", ["--data", "--params", "--file", "-a"])
@pytest.mark.parametrize("kind", ["directory", "fifo", "too-large", "missing"])
def test_a_named_file_that_is_not_a_small_regular_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, flag: str, kind: str
) -> None:
    path = tmp_path / "input.json"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "too-large":
        sparse(path, (1 << 20) + 1 if flag == "-a" else (32 << 20) + 1)  # a card: 1 MiB
    ref = f"@{path}" if flag in ("--data", "--params") else str(path)
    argv = {
        "--data": ["-a", NOWHERE, "send", "hi", "--data", ref],
        "--params": ["--endpoint", NOWHERE, "call", "X", "--params", ref],
        "--file": ["-a", NOWHERE, "send", "hi", "--file", ref],
        "-a": ["-a", f"file://{path}", "card"],
    }[flag]
    line = usage_error(capsys, *argv)
    assert line.startswith(f"error: {flag}: ") and str(path) in line
    expected = {
        "directory": "is a directory, not a regular file",
        "fifo": "is a FIFO, not a regular file",
        "too-large": "is larger than",
        "missing": "No such file or directory",
    }[kind]
    assert expected in line, line


def test_a_card_file_that_is_not_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "card.json"
    path.write_text("<html>")
    line = usage_error(capsys, "-a", str(path), "card")
    assert f"the card file {path} is not JSON" in line
    path.write_text(deep(1000))
    assert "nested deeper" in usage_error(capsys, "-a", str(path), "card")


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--header", f"X-Key: {SECRET}\r\nX-Evil: 1"], "--header 'X-Key'"),
        (["--header", f"X-Key: {SECRET}\nmore"], "--header 'X-Key'"),
        (["--header", f"X-Key: {SECRET}\x00"], "--header 'X-Key'"),
        (["--header", f"Bad Name: {SECRET}"], "--header 'Bad Name': not a valid"),
        (["--header", SECRET], "--header wants 'Name: value'"),
        (["--cookie", f"session={SECRET}\r\nX-Evil: 1"], "--cookie 'session'"),
        (["--cookie", f"a b={SECRET}"], "--cookie 'a b': not a valid"),
        (["--bearer", f"{SECRET}\r\nX-Evil: 1"], "--bearer: the value holds a line break"),
        (["--api-key", f"{SECRET}\n"], "--api-key: the value holds a line break"),
        (["--api-key", f"{SECRET}\x00"], "--api-key: the value holds a line break"),
    ],
)
def test_credentials_and_headers_with_line_breaks(
    capsys: pytest.CaptureFixture[str], argv: list[str], named: str
) -> None:
    line = usage_error(capsys, "-a", NOWHERE, *argv, "card")
    assert named in line
    assert SECRET not in line  # a header's value may be a secret: never echoed


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999", "soon"])
def test_seconds_that_are_not_a_finite_number(
    capsys: pytest.CaptureFixture[str], value: str
) -> None:
    line = usage_error(capsys, "-a", NOWHERE, f"--timeout={value}", "card")
    assert "--timeout" in line
    line = usage_error(capsys, "-a", NOWHERE, "task", "get", "t", f"--poll-interval={value}")
    assert "--poll-interval" in line


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["-a", "http://[::1", "card"], "-a: "),
        (["-a", "http://agent.example:99999", "card"], "-a: "),
        (["--endpoint", "ftp://agent.example/rpc", "call", "X"], "--endpoint: "),
        (["-a", NOWHERE, "push-config", "create", "t", "javascript:alert(1)"], "argument URL: "),
        (["-a", NOWHERE, "push-config", "create", "t", "http://[::1/hook"], "argument URL: "),
    ],
)
def test_urls_given_that_are_not_http_urls(
    capsys: pytest.CaptureFixture[str], argv: list[str], named: str
) -> None:
    assert usage_error(capsys, *argv).startswith(f"error: {named}")


def test_json_mode_reports_a_usage_error_as_the_error_envelope(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["-o", "json", "-a", NOWHERE, "send", "hi", "--data", deep(200)]) == 2
    out, err = capsys.readouterr()
    error = json.loads(out)["error"]
    assert error["code"] == "A2ACLI_ERR_USAGE" and "--data" in error["message"]
    assert err.startswith(f"error: {error['message']}\n")
