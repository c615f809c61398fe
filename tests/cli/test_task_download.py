"""``task download``: a task's files saved into a directory by ``--save-files``' rules, run
as a process against a real agent."""

from __future__ import annotations

from pathlib import Path

import pytest

from a2a_anyio.testing import artifact

from .conftest import run
from .test_save_files import CREDENTIALS, CSV, PDF, TOKEN, files_agent, listing, served

pytestmark = pytest.mark.anyio


async def test_a_tasks_files_are_downloaded_safely_and_twice_without_overwriting(
    anyio_backend: str, tmp_path: Path
) -> None:
    agent = files_agent(
        [
            lambda base: artifact(file=PDF, media_type="application/pdf", filename="../report.pdf"),
            lambda base: artifact(url=f"{base}/files/data", media_type="text/csv", name="data"),
            lambda base: artifact(url=f"{base}/files/gone", filename="gone.txt"),
        ]
    )
    async with served(agent) as (own, _):
        own.files["/files/data"] = (200, CSV, {})
        own.files["/files/gone"] = (404, b"no", {})
        a = ["-a", own.url, *CREDENTIALS]
        sent = await run(anyio_backend, *a, "send", "--no-wait", "files please")
        task_id = sent.out.splitlines()[0].removeprefix("Task ID: ")
        await run(anyio_backend, *a, "task", "get", task_id, "--wait")
        out = tmp_path / "dl"
        first = await run(anyio_backend, *a, "task", "download", task_id, "--dir", str(out))
        again = await run(
            anyio_backend, *a, "-o", "json", "task", "download", task_id, "-d", str(out)
        )
        unknown = await run(anyio_backend, *a, "task", "download", "no-such-task", "-d", str(out))
    assert sent.code == 0, sent.err
    # A file that cannot be fetched is reported, the others are saved, and the status is 1.
    assert first.code == 1, first.err
    assert first.out.splitlines() == [
        f"Saved: {out / 'report.pdf'} ({len(PDF)} bytes, application/pdf)",
        f"Saved: {out / 'data.csv'} ({len(CSV)} bytes, text/csv)",
    ]
    assert "not saved: " in first.err and "/files/gone" in first.err
    assert TOKEN not in first.err
    assert own.seen["/files/data"]["authorization"] == f"Bearer {TOKEN}"
    assert again.code == 1
    doc = again.json()
    assert doc["taskId"] == task_id
    assert [Path(f["path"]).name for f in doc["savedFiles"][:2]] == ["report-1.pdf", "data-1.csv"]
    assert "error" in doc["savedFiles"][2]
    assert listing(out) == {
        "report.pdf": PDF, "data.csv": CSV, "report-1.pdf": PDF, "data-1.csv": CSV,
    }  # fmt: skip
    assert unknown.code == 1 and "Task not found" in unknown.err


async def test_a_file_in_place_of_the_directory_is_a_usage_error(
    anyio_backend: str, tmp_path: Path
) -> None:
    (tmp_path / "taken").write_text("x")
    result = await run(
        anyio_backend, "-a", "http://127.0.0.1:9", "task", "download", "t", "-d",
        str(tmp_path / "taken"),
    )  # fmt: skip
    assert result.code == 2
    assert f"--dir: {tmp_path / 'taken'} is not a directory" in result.err
