"""``completion SHELL``: scripts made from the parser, driven by the real shells."""

from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path

import pytest

from a2a_anyio.cli._completion import script
from a2a_anyio.cli._grammar import build_parser

from .conftest import clean_env, run

BASH_CASES = [
    (["task", "d"], ["download"]),
    (["-o", "j"], ["json"]),
    (["--config", "agents.yaml", "task", "download", "--d"], ["--dir", "--debug"]),
    (["-a", "x", "task", "push-config", "c"], ["create"]),
    (["completion", ""], ["bash", "zsh", "fish"]),
    (["task", "list", "--state", "inp"], ["input-required"]),
    (["send", "--protocol", ""], ["auto", "1.0", "0.3", "0.2", "legacy"]),
    (["card", "--valid"], ["--validate"]),
    (["agents", "--header", "--"], []),  # a value is expected: no option offered
]


def bash_complete(source: str, words: list[str], cwd: Path) -> list[str]:
    """What bash completes for ``a2a-anyio WORDS`` (the last word being typed)."""
    (cwd / "completion.bash").write_text(source)
    program = (
        "source completion.bash\n"
        f"COMP_WORDS=(a2a-anyio {' '.join(repr(w) for w in words)})\n"
        f"COMP_CWORD={len(words)}\n"
        "_a2a_anyio\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", program],
        capture_output=True, text=True, cwd=cwd, timeout=30, check=True,
    )  # fmt: skip
    return done.stdout.split()


@pytest.mark.anyio
async def test_bash_completes_commands_options_and_values(
    anyio_backend: str, tmp_path: Path
) -> None:
    made = await run(anyio_backend, "completion", "bash")
    assert made.code == 0, made.err
    assert made.out.startswith("# a2a-anyio completion for bash")
    for words, expected in BASH_CASES:
        assert bash_complete(made.out, words, tmp_path) == expected, words


def test_bash_completes_paths_for_options_that_take_one(tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    (tmp_path / "agents.yaml").write_text("")
    source = script("bash", build_parser(), "a2a-anyio")
    assert bash_complete(source, ["task", "download", "t", "--dir", "rep"], tmp_path) == ["reports"]
    assert bash_complete(source, ["--config", "age"], tmp_path) == ["agents.yaml"]


def test_a_new_command_or_option_is_in_the_next_script(tmp_path: Path) -> None:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    added = commands.add_parser("frobnicate")
    added.add_argument("--level", choices=("low", "high"))
    source = script("bash", parser, "a2a-anyio")
    assert bash_complete(source, ["frob"], tmp_path) == ["frobnicate"]
    assert bash_complete(source, ["frobnicate", "--le"], tmp_path) == ["--level"]
    assert bash_complete(source, ["frobnicate", "--level", "h"], tmp_path) == ["high"]


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completes_from_its_script(tmp_path: Path) -> None:
    path = tmp_path / "a2a-anyio.fish"
    path.write_text(script("fish", build_parser(), "a2a-anyio"))

    def complete(line: str) -> list[str]:
        done = subprocess.run(
            ["fish", "--no-config", "-c", f"source {path}; complete -C {line!r}"],
            capture_output=True, text=True, cwd=tmp_path, timeout=30, check=True,
            env=clean_env(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path)),
        )  # fmt: skip
        return [row.split("\t")[0] for row in done.stdout.splitlines()]

    assert complete("a2a-anyio task d") == ["download"]
    assert complete("a2a-anyio -o ") == ["json", "text"]
    assert sorted(complete("a2a-anyio completion ")) == ["bash", "fish", "zsh"]
    assert complete("a2a-anyio task download t --d") == ["--debug", "--dir"]


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_loads_its_script_through_bashcompinit(tmp_path: Path) -> None:
    path = tmp_path / "_a2a-anyio"
    path.write_text(script("zsh", build_parser(), "a2a-anyio"))
    # What zsh's _bash_complete does for `a2a-anyio task d<TAB>` and `-o <TAB>`, short of
    # compadd (which needs a live line editor, and filters the candidates by the word typed).
    ask = (
        'words=({words}); CURRENT=${{#words}}; COMP_WORDS=("${{words[@]}}")\n'
        "COMP_CWORD=$((CURRENT - 1)); print -r -- $(compgen -F _a2a_anyio -- {word})\n"
    )
    program = (
        "autoload -U +X compinit && compinit -u -D\n"
        f"source {path}\n"
        "print -r -- ${_comps[a2a-anyio]}\n"
        + ask.format(words="a2a-anyio task d", word="d")
        + ask.format(words="a2a-anyio -o ''", word="''")
    )
    done = subprocess.run(
        ["zsh", "-f", "-c", program],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=30,
        env=clean_env(HOME=str(tmp_path)),
    )
    assert done.returncode == 0, done.stderr
    registered, actions, formats = done.stdout.splitlines()
    assert "_a2a_anyio" in registered
    assert actions.split() == ["get", "cancel", "list", "subscribe", "download", "push-config"]
    assert formats.split() == ["text", "json"]


def test_every_shell_script_parses(tmp_path: Path) -> None:
    for shell, check in (
        ("bash", ["bash", "-n"]),
        ("zsh", ["zsh", "-n"]),
        ("fish", ["fish", "-n"]),
    ):
        if shutil.which(check[0]) is None:
            continue
        subprocess.run(
            check, input=script(shell, build_parser(), "a2a-anyio"), text=True, check=True,
            timeout=30, env=clean_env(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path)),
        )  # fmt: skip
