"""``--save-files DIR``: the files of an answer written into DIR, from a real agent.

The agent is the testing kit's FakeAgent, served on 127.0.0.1 behind a ``FileServer``, which
also serves files on the agent's own origin; a second ``FileServer`` is another origin. Both
record the headers each file request came with, so that the tests see which credentials
went where.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from a2a_anyio import FilePart
from a2a_anyio.cli._files import MAX_NAME_BYTES, safe_name
from a2a_anyio.testing import FakeAgent, SkillContext, artifact, reply
from a2a_anyio.testing._skills import Emit

from .conftest import FileServer, Run, run

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
        ("\u202eevil\u200b.txt\x00", "evil.txt"),
        ("x" * 300 + ".pdf", "x" * (MAX_NAME_BYTES - 4) + ".pdf"),
        ("é" * 300, "é" * (MAX_NAME_BYTES // 2)),  # cut on a character, not in one
    ],
)
def test_safe_name_keeps_a_plain_name(given: str, kept: str) -> None:
    assert safe_name(given) == kept
