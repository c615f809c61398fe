"""Import time in a clean environment: ``import a2a_anyio`` against ``import httpx, httpx_sse,
anyio``, each command a fresh interpreter.

    uv run --frozen python bench/imports.py --runs 21
    uv run --frozen python bench/imports.py --src ../old/src   # another checkout

The environment is ``bench/.venv-import``: a virtualenv (``uv venv``, this interpreter's
version) holding a2a-anyio installed from the tree measured, without extras, and so only its
core dependencies, at the versions of ``uv.lock`` (``uv export --no-dev`` as constraints). It
is made once (again when the pins change); a2a-anyio is installed again from the tree on
every run, with its bytecode compiled, as pip installs a wheel.

Each round runs ``python -I -c "import a2a_anyio"`` and ``python -I -c "import httpx,
httpx_sse, anyio"`` back to back (their order alternating), each command timed whole:
interpreter start-up included, nothing subtracted. The target's figure is the command's CPU
time (user + system, from ``wait4``), which other work on a shared machine does not inflate;
the wall time is reported beside it. The ratios are medians of the per-round ratios. A bare
``python -I -c pass`` is timed too, for scale only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
VENV = HERE / ".venv-import"
COMMANDS = {
    "floor": "import httpx, httpx_sse, anyio",
    "a2a-anyio": "import a2a_anyio",
    "bare": "pass",
}
#: The modules a command loads; where a2a_anyio comes from; what the environment holds.
_PROBE = """import sys
n = len(sys.modules)
{code}
k = len(sys.modules) - n
import json, a2a_anyio, importlib.metadata as m
names = sorted(d.metadata["Name"] for d in m.distributions())
print(json.dumps({{"modules": k, "a2a_anyio": a2a_anyio.__file__, "environment": names}}))
"""


def _uv() -> list[str]:
    found = shutil.which("uv")
    if found:
        return [found]
    return [shutil.which("python3") or "python3", "-m", "uv"]


def _run(cmd: list[str], cwd: Path | None = None) -> str:
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])}: {out.stderr.strip()[-500:]}")
    return out.stdout


def clean_python(project: Path) -> Path:
    """The clean virtualenv's interpreter, a2a-anyio just installed into it from ``project``.

    Raises:
        RuntimeError: a step failed (its error output is in the message).
    """
    uv = _uv()
    root = HERE.parent
    pins = _run([*uv, "export", "--frozen", "--no-dev", "--no-emit-project", "--no-hashes",
                 "--no-header", "--no-annotate"], cwd=root)  # fmt: skip
    wanted = f"{sys.version}\n{pins}"
    python = VENV / "bin" / "python"
    stamp = VENV / "bench-constraints.txt"
    if not (python.exists() and stamp.exists() and stamp.read_text() == wanted):
        print(f"imports: creating {VENV.name}", file=sys.stderr, flush=True)
        shutil.rmtree(VENV, ignore_errors=True)
        _run([*uv, "venv", "--quiet", "--python", sys.executable, str(VENV)])
        stamp.write_text(wanted)
    constraints = VENV / "constraints.txt"
    constraints.write_text(pins)
    _run([*uv, "pip", "install", "--quiet", "--python", str(python), "--compile-bytecode",
          "--reinstall-package", "a2a-anyio", "--constraint", str(constraints), str(project)])  # fmt: skip
    return python


def _timed(python: Path, code: str) -> tuple[float, float]:
    """One fresh interpreter running ``code``: its wall time and its CPU time (user + system,
    from ``wait4``), in milliseconds."""
    argv = [str(python), "-I", "-c", code]
    t = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{code!r} failed in {python}")
    return wall * 1000, (usage.ru_utime + usage.ru_stime) * 1000


def _ratio(a: list[float], b: list[float]) -> float:
    return statistics.median(x / y for x, y in zip(a, b, strict=True))


def run(runs: int, src: str | None = None) -> dict[str, Any]:
    """Median milliseconds per command over ``runs`` rounds, and the ratios."""
    project = Path(src).resolve().parent if src else HERE.parent
    python = clean_python(project)
    probes = {}
    for name in ("floor", "a2a-anyio"):  # also writes any missing bytecode, warms the caches
        code = _PROBE.format(code=COMMANDS[name])
        probes[name] = json.loads(_run([str(python), "-I", "-c", code]))
    wall: dict[str, list[float]] = {k: [] for k in COMMANDS}
    cpu: dict[str, list[float]] = {k: [] for k in COMMANDS}
    for r in range(runs):
        order = list(COMMANDS) if r % 2 == 0 else list(reversed(COMMANDS))
        for name in order:
            w, c = _timed(python, COMMANDS[name])
            wall[name].append(w)
            cpu[name].append(c)
    out: dict[str, Any] = {
        "runs": runs,
        "environment": probes["a2a-anyio"]["environment"],
        "a2a_anyio_path": probes["a2a-anyio"]["a2a_anyio"],
    }
    for name, code in COMMANDS.items():
        out[name] = {
            "command": f"python -I -c {code!r}",
            "cpu_ms": statistics.median(cpu[name]),
            "wall_ms": statistics.median(wall[name]),
        }
        if name in probes:
            out[name]["modules"] = probes[name]["modules"]
    out["ratio_anyio_floor"] = _ratio(cpu["a2a-anyio"], cpu["floor"])
    out["ratio_anyio_floor_wall"] = _ratio(wall["a2a-anyio"], wall["floor"])
    return out


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--runs", type=int, default=21)
    p.add_argument("--src", metavar="PATH", help="the src/ directory of another checkout")
    a = p.parse_args()
    print(json.dumps(run(a.runs, a.src), indent=1))
