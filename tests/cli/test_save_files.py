"""``--save-files DIR``: the files of an answer written into DIR, from a real agent.

The agent is the testing kit's FakeAgent, served on 127.0.0.1 behind a ``FileServer``, which
also serves files on the agent's own origin; a second ``FileServer`` is another origin. Both
record the headers each file request came with, so that the tests see which credentials
went where.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path, PureWindowsPath
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_anyio import A2AClient, Artifact, FilePart, Part, Task, TaskState, TaskStatus
from a2a_anyio.cli._files import MAX_NAME_BYTES, _write, is_device_name, safe_name, save_files
from a2a_anyio.testing import FakeAgent, SkillContext, artifact, reply
from a2a_anyio.testing._skills import Emit

from .conftest import FileServer, Run, clean_env, run

pytestmark = pytest.mark.anyio

TOKEN = "file-token-123"
CREDENTIALS = ("--bearer", TOKEN, "--api-key", "key-456", "--cookie", "sid=cookie-789")
SECRETS = ("authorization", "x-api-key", "cookie")
PDF = b"%PDF-1.7 a report\n"
CSV = b"a,b\n1,2\n"


@asynccontextmanager
async def served(agent: FakeAgent) -> AsyncIterator[tuple[FileServer, FileServer]]:
    """The agent (behind a FileServer of its origin) and another origin, both served."""
    async with agent, FileServer(agent).serve() as own, FileServer().serve() as other:
        yield own, other


def files_agent(answers: list[Any]) -> FakeAgent:
    """An agent (that wants ``Bearer TOKEN``) whose skill yields what ``answers`` holds,
    each a function of the agent's base URL."""
    agent = FakeAgent(auth=f"Bearer {TOKEN}")

    @agent.skill("files")
    async def files(ctx: SkillContext) -> AsyncIterator[Emit]:
        base = f"http://{ctx.headers['host']}"
        for answer in answers:
            yield answer(base)

    return agent


def listing(root: Path, *, files: bool = True) -> dict[str, bytes]:
    """What ``root`` holds: each file's name and content (with ``files=False``, every
    entry's name)."""
    return {p.name: p.read_bytes() if files else b"" for p in root.iterdir()}


def saved_lines(result: Run) -> list[str]:
    return [line for line in result.out.splitlines() if line.startswith("Saved: ")]


async def test_inline_and_url_files_are_saved_with_credentials_only_on_the_agents_origin(
    anyio_backend: str, tmp_path: Path
) -> None:
    other_url: list[str] = []
    agent = files_agent(
        [
            lambda base: artifact(file=PDF, media_type="application/pdf", filename="report.pdf"),
            lambda base: artifact(url=f"{base}/files/data", media_type="text/csv", name="data"),
            lambda base: artifact(url=f"{other_url[0]}/elsewhere.bin", filename="elsewhere.bin"),
            lambda base: artifact(url=f"{base}/files/moved", filename="moved.txt"),
        ]
    )
    async with served(agent) as (own, other):
        other_url.append(other.url)
        own.files["/files/data"] = (200, CSV, {})
        own.files["/files/moved"] = (302, b"", {"Location": f"{other.url}/moved"})
        other.files["/elsewhere.bin"] = (200, b"\x00\x01", {})
        other.files["/moved"] = (200, b"moved here", {"Content-Type": "text/plain"})
        out = tmp_path / "out" / "new"  # created, parents too
        a = ["-a", own.url, *CREDENTIALS]
        sent = await run(anyio_backend, *a, "send", "get them", "--save-files", str(out))
        as_json = await run(
            anyio_backend, *a, "-o", "json", "send", "again", "--save-files", str(tmp_path / "j")
        )
        task_id = sent.out.splitlines()[0].removeprefix("Task ID: ")
        got = await run(
            anyio_backend, *a, "task", "get", task_id, "--save-files", str(tmp_path / "g")
        )
    assert sent.code == 0, sent.err
    files = {"report.pdf": PDF, "data.csv": CSV, "elsewhere.bin": b"\x00\x01"}
    files["moved.txt"] = b"moved here"
    assert listing(out) == files
    assert saved_lines(sent) == [
        f"Saved: {out / 'report.pdf'} ({len(PDF)} bytes, application/pdf)",
        f"Saved: {out / 'data.csv'} ({len(CSV)} bytes, text/csv)",
        f"Saved: {out / 'elsewhere.bin'} (2 bytes, application/octet-stream)",
        f"Saved: {out / 'moved.txt'} (10 bytes, text/plain)",
    ]
    # The agent's origin got the credentials; the other origin none, redirected to or not.
    assert own.seen["/files/data"]["authorization"] == f"Bearer {TOKEN}"
    assert own.seen["/files/data"]["x-api-key"] == "key-456"
    assert own.seen["/files/moved"]["authorization"] == f"Bearer {TOKEN}"
    for path in ("/elsewhere.bin", "/moved"):
        assert not set(other.seen[path]) & set(SECRETS), other.seen[path]
    assert as_json.code == 0, as_json.err
    doc = as_json.json()
    assert set(doc) == {"task", "savedFiles"}
    assert [f["path"] for f in doc["savedFiles"]] == [str(tmp_path / "j" / name) for name in files]
    first = doc["savedFiles"][0]
    assert first["size"] == len(PDF) and first["mediaType"] == "application/pdf"
    assert first["artifactId"] == doc["task"]["artifacts"][0]["artifactId"]
    assert doc["savedFiles"][1]["url"].endswith("/files/data")
    assert got.code == 0, got.err
    assert listing(tmp_path / "g") == files


async def test_hostile_names_stay_inside_the_directory_and_overwrite_nothing(
    anyio_backend: str, tmp_path: Path
) -> None:
    names = [
        "../../etc/passwd",
        "/abs",
        "a/b",
        "..\\..\\win.ini",
        "con\x1b[2J\x07trol\u202e.txt",
        "",
        ".",
        "..",
        ".hidden",
        "NUL.txt",
        "report.txt",  # exists
        "link.txt",  # a symlink out of the directory
        "CON",
        "NUL .txt",
        "CONIN$",
        "COM\u00b9.log",
        "aux. . ",
    ]
    agent = files_agent(
        [
            (
                lambda base, n=n: artifact(
                    file=n.encode() or b"-", filename=n, media_type="text/plain"
                )
            )
            for n in names
        ]
    )
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.txt").write_bytes(b"mine")
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"outside")
    (out / "link.txt").symlink_to(outside)
    async with served(agent) as (own, _):
        sent = await run(
            anyio_backend, "-a", own.url, *CREDENTIALS, "send", "x", "--save-files", str(out)
        )
    assert sent.code == 0, sent.err
    assert sorted(listing(tmp_path, files=False)) == ["out", "outside.txt"]
    assert outside.read_bytes() == b"outside"
    found = listing(out)
    assert found.pop("report.txt") == b"mine"
    assert found.pop("link.txt") == b"outside"  # read through the link: untouched
    assert found == {
        "passwd": b"../../etc/passwd",
        "abs": b"/abs",
        "b": b"a/b",
        "win.ini": b"..\\..\\win.ini",
        "con[2Jtrol.txt": "con\x1b[2J\x07trol\u202e.txt".encode(),
        "artifact-6.txt": b"-",
        "artifact-7.txt": b".",
        "artifact-8.txt": b"..",
        "hidden": b".hidden",
        "_NUL.txt": b"NUL.txt",
        "report-1.txt": b"report.txt",
        "link-1.txt": b"link.txt",
        "_CON": b"CON",
        "_NUL .txt": b"NUL .txt",
        "_CONIN$": b"CONIN$",
        "_COM\u00b9.log": "COM\u00b9.log".encode(),
        "_aux": b"aux. . ",
    }
    assert all(not (out / name).is_symlink() for name in found)


async def test_a_url_that_fails_is_reported_and_the_other_files_are_saved(
    anyio_backend: str, tmp_path: Path
) -> None:
    huge = [b"x" * (1 << 20)] * 33  # over the client's 32 MiB response limit
    agent = files_agent(
        [
            lambda base: artifact(url=f"{base}/files/missing", filename="missing.txt"),
            lambda base: artifact(url=f"{base}/files/huge", filename="huge.bin"),
            lambda base: artifact(url="file:///etc/passwd", filename="passwd"),
            lambda base: artifact(file=b"fine", filename="fine.txt"),
            lambda base: artifact(url=f"{base}/files/ok", filename="ok.txt"),
        ]
    )
    async with served(agent) as (own, _):
        own.files["/files/missing"] = (404, b"no such file", {})
        own.files["/files/huge"] = (200, huge, {})
        own.files["/files/ok"] = (200, b"ok", {})
        a = ["-a", own.url, *CREDENTIALS]
        sent = await run(anyio_backend, *a, "send", "x", "--save-files", str(tmp_path / "t"))
        as_json = await run(
            anyio_backend, *a, "-o", "json", "send", "x", "--save-files", str(tmp_path / "j")
        )
    for result, where in ((sent, tmp_path / "t"), (as_json, tmp_path / "j")):
        assert result.code == 1, result.err
        assert listing(where) == {"fine.txt": b"fine", "ok.txt": b"ok"}
        errors = [line for line in result.err.splitlines() if line.startswith("error: ")]
        assert errors == [
            f"error: not saved: {own.url}/files/missing: HTTP 404: no such file",
            f"error: not saved: {own.url}/files/huge: response from {own.url}/files/huge "
            "exceeds 33554432 bytes",
            "error: not saved: file:///etc/passwd: the URL is not an absolute http(s) URL",
        ]
    assert "Saved: " in sent.out and TOKEN not in sent.err
    listed = as_json.json()["savedFiles"]
    assert [("path" in f, f["url"]) for f in listed] == [
        (False, f"{own.url}/files/missing"),
        (False, f"{own.url}/files/huge"),
        (False, "file:///etc/passwd"),
        (True, None),
        (True, f"{own.url}/files/ok"),
    ]
    assert listed[0]["error"] == "HTTP 404: no such file"


async def test_streamed_tasks_and_message_replies_have_their_files_saved(
    anyio_backend: str, tmp_path: Path
) -> None:
    agent = files_agent(
        [
            lambda base: artifact(file=b"one", filename="one.txt", media_type="text/plain"),
            lambda base: artifact(url=f"{base}/files/two", filename="two.txt"),
        ]
    )

    @agent.skill("message")
    async def message(ctx: SkillContext) -> AsyncIterator[Emit]:
        named = FilePart(data=b"note", media_type="text/plain", name="note")
        unnamed = FilePart(data=CSV, media_type="text/csv")
        yield reply("here", parts=[named, unnamed])

    async with served(agent) as (own, _):
        own.files["/files/two"] = (200, b"two", {"Content-Type": "text/plain"})
        a = ["-a", own.url, *CREDENTIALS]
        streamed = await run(
            anyio_backend, *a, "send", "--stream", "x", "--save-files", str(tmp_path / "s")
        )
        lines = await run(
            anyio_backend, *a, "-o", "json", "send", "--stream", "x",
            "--save-files", str(tmp_path / "l"),
        )  # fmt: skip
        replied = await run(
            anyio_backend, *a, "send", "x", "--metadata", json.dumps({"skillId": "message"}),
            "--save-files", str(tmp_path / "m"),
        )  # fmt: skip
    assert streamed.code == 0, streamed.err
    assert listing(tmp_path / "s") == {"one.txt": b"one", "two.txt": b"two"}
    assert saved_lines(streamed)[-1] == f"Saved: {tmp_path / 's' / 'two.txt'} (3 bytes, text/plain)"
    assert lines.code == 0, lines.err
    last = lines.jsonl()[-1]
    assert [f["path"] for f in last["savedFiles"]] == [
        str(tmp_path / "l" / "one.txt"),
        str(tmp_path / "l" / "two.txt"),
    ]
    assert replied.code == 0, replied.err
    assert listing(tmp_path / "m") == {"note": b"note", "artifact-2.csv": CSV}


def test_a_directory_that_cannot_be_made_is_a_usage_error(tmp_path: Path) -> None:
    from .conftest import cli

    (tmp_path / "file").write_text("x")
    result = cli("-a", "http://127.0.0.1:1", "send", "x", "--save-files", str(tmp_path / "file"))
    assert result.code == 2
    assert f"error: --save-files: {tmp_path / 'file'} is not a directory" in result.err


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("../../etc/passwd", "passwd"),
        ("C:\\Windows\\win.ini", "win.ini"),
        ("...", ""),
        (" spaced . ", "spaced"),
        ('a<b>c:d|e?f*g".txt', "a_b_c_d_e_f_g_.txt"),
        ("com1.tar.gz", "_com1.tar.gz"),
        ("lpt9", "_lpt9"),
        ("NUL .txt", "_NUL .txt"),
        ("conin$", "_conin$"),
        ("COM\u00b9.log", "_COM\u00b9.log"),
        ("lpt\u00b3  .a.b", "_lpt\u00b3  .a.b"),
        ("Con. . .", "_Con"),
        ("CONSOLE.txt", "CONSOLE.txt"),
        ("x" * 199 + " .", "x" * 199),
        ("a" * 199 + " " + "b" * 10, "a" * 199),  # cut after a space: dropped
        ("\u202eevil\u200b.txt\x00", "evil.txt"),
        ("x" * 300 + ".pdf", "x" * (MAX_NAME_BYTES - 4) + ".pdf"),
        ("é" * 300, "é" * (MAX_NAME_BYTES // 2)),  # cut on a character, not in one
    ],
)
def test_safe_name_keeps_a_plain_name(given: str, kept: str) -> None:
    assert safe_name(given) == kept


DEVICES = ["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"]
DEVICES += [f"{port}{n}" for port in ("COM", "LPT") for n in "123456789\u00b9\u00b2\u00b3"]


@pytest.mark.parametrize("device", DEVICES)
def test_device_names_are_made_safe_in_every_form_windows_reads(device: str) -> None:
    forms = [device, device.lower(), device.title(), f"{device}.txt", f"{device} .txt",
             f"{device}  .tar.gz", f"{device}.", f"{device} . .", f" {device}", f"{device}:x"]  # fmt: skip
    for form in forms:
        if PureWindowsPath(form).is_reserved() and ":" not in form:
            assert is_device_name(form), form  # what Python knows, the rule knows
        kept = safe_name(form)
        assert kept.startswith("_") or ":" in form, (form, kept)
        assert not is_device_name(kept) and not PureWindowsPath(kept).is_reserved(), kept


@given(st.text(st.sampled_from("CONULXaux$PRT123\u00b9\u00b2. :/\\"), max_size=12))
@settings(max_examples=2000)
def test_no_safe_name_is_one_windows_reserves(name: str) -> None:
    kept = safe_name(name)
    assert not is_device_name(kept)
    assert not kept or not PureWindowsPath(kept).is_reserved(), kept
    assert kept == kept.strip(" ") and not kept.endswith(".") and not kept.startswith(".")


def many_of_one_name(count: int) -> Task:
    parts: list[Part] = [
        FilePart(data=str(n).encode(), media_type="text/plain", name="report.txt")
        for n in range(count)
    ]
    artifacts = [Artifact(artifact_id="a", parts=parts)]
    return Task(id="t", context_id="c", status=TaskStatus(TaskState.COMPLETED), artifacts=artifacts)


async def test_many_files_of_one_name_take_one_try_each_and_overwrite_nothing(
    anyio_backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for taken in ("report.txt", "report-1.txt", "report-5.txt"):
        (tmp_path / taken).write_bytes(b"mine")
    tries: list[str] = []
    link = os.link

    def counted(src: Any, dst: Any) -> None:
        tries.append(Path(dst).name)
        link(src, dst)

    monkeypatch.setattr(os, "link", counted)
    count = 1500  # more than the 1,000 numbered names the first writer tried
    async with A2AClient("http://127.0.0.1:1") as client:  # inline files: never asked
        saved = await save_files(client, many_of_one_name(count), tmp_path)
    assert all(item.error is None for item in saved)
    assert len(tries) == count + 3  # a try per file, and one per name that was taken
    found = listing(tmp_path)
    assert len(found) == count + 3
    for taken in ("report.txt", "report-1.txt", "report-5.txt"):
        assert found.pop(taken) == b"mine"
    assert sorted(found.values()) == sorted(str(n).encode() for n in range(count))
    assert found["report-2.txt"] == b"0" and found[f"report-{count + 2}.txt"] == b"1499"
    again = await save_files(client, many_of_one_name(2), tmp_path)  # the disk is checked
    assert [item.path.name for item in again if item.path] == [
        f"report-{count + 3}.txt",
        f"report-{count + 4}.txt",
    ]


def test_without_hard_links_a_name_is_taken_and_then_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(src: Any, dst: Any) -> None:  # as on FAT or some network shares
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    (tmp_path / "a.txt").write_bytes(b"mine")
    (tmp_path / "a-1.txt").symlink_to(tmp_path / "elsewhere")
    numbers: dict[str, int] = {}
    assert _write(tmp_path, "a.txt", b"one", numbers) == "a-2.txt"
    assert _write(tmp_path, "a.txt", b"two", numbers) == "a-3.txt"
    assert listing(tmp_path, files=False).keys() == {"a.txt", "a-1.txt", "a-2.txt", "a-3.txt"}
    assert (tmp_path / "a.txt").read_bytes() == b"mine"
    assert not (tmp_path / "elsewhere").exists()
    assert [(tmp_path / n).read_bytes() for n in ("a-2.txt", "a-3.txt")] == [b"one", b"two"]


#: The command line, under a limit of the size of any file it writes.
LIMITED = """\
import resource, sys
resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))
from a2a_anyio.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX's")
async def test_a_write_that_fails_leaves_nothing_under_the_name(
    anyio_backend: str, tmp_path: Path
) -> None:
    agent = files_agent(
        [
            lambda base: artifact(file=b"x" * 200_000, filename="big.bin"),
            lambda base: artifact(file=b"small", filename="small.txt"),
        ]
    )
    out = tmp_path / "out"
    async with served(agent) as (own, _):
        args = ["--backend", anyio_backend, "-a", own.url, *CREDENTIALS]
        args += ["send", "x", "--save-files", str(out)]
        done = await anyio.to_thread.run_sync(
            partial(
                subprocess.run,
                [sys.executable, "-c", LIMITED, *args],
                capture_output=True,
                text=True,
                env=clean_env(),
                stdin=subprocess.DEVNULL,
                timeout=60,
            )
        )
    assert done.returncode == 1, done.stderr
    assert "error: not saved: a file: File too large" in done.stderr.splitlines()
    assert listing(out, files=False).keys() == {"small.txt"}  # nothing aside left either
