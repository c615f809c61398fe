"""The targets of issue 17, PASS or FAIL per backend, from one run's results (``run.py``).

- unary (loopback, client CPU per call): a2a-anyio at most 1.05x the raw httpx floor, and
  below every other contender (a2a-sdk, fasta2a);
- streaming (loopback, client CPU per event): at most 1.25x the httpx-sse + json floor, and
  a2a-sdk at least 3x slower; fasta2a's client, which skips SSE framing, is a note: how much
  faster or slower it is;
- fan-out: every case of ``fanout.py``: a2a-anyio's extra RSS under its bound with every
  stream complete (the floor's per stream beside it), and for the 1,000 streams none waiting
  for a connection (the server saw all of them open at once);
- import: ``import a2a_anyio`` at most 1.3x ``import httpx, httpx_sse, anyio``.

The ratios are medians of per-round ratios (``loopback.aggregate``, ``imports.run``). A target
whose measurement did not run is left out; one whose figure is missing (a contender that
could not run) is ``n/a``.
"""

from __future__ import annotations

from typing import Any

from _table import times

UNARY_MAX = 1.05
STREAM_MAX = 1.25
SDK_STREAM_MIN = 3.0
IMPORT_MAX = 1.3

#: What a contender's client skips that a2a-anyio does, said beside its streaming note.
NO_SSE_FRAMING = "reads `data:` lines with aiter_lines: no SSE framing rules, no limits"


def verdict(t: dict[str, Any]) -> str:
    """``PASS``, ``FAIL``, ``n/a`` (no figure) or ``note`` (a figure with no limit)."""
    if t["limit"] is None:
        return "note"
    if t["pass"] is None:
        return "n/a"
    return "PASS" if t["pass"] else "FAIL"


_OPS = {"<=": float.__le__, ">=": float.__ge__, ">": float.__gt__}


def _ratio_target(
    name: str, backend: str, value: float | None, op: str, limit: float, shown: str = ""
) -> dict[str, Any]:
    """A ratio against its limit: ``value op limit`` passes (``op``: ``<=``, ``>=``, ``>``)."""
    return {
        "target": name,
        "backend": backend,
        "value": value,
        "limit": limit,
        "pass": None if value is None else _OPS[op](value, limit),
        "shown": shown or times(value),
        "limit_shown": f"{op} {times(limit)}",
    }


#: The loopback targets: name, metric, ratio (``aggregate``'s key), comparison, limit.
LOOPBACK = (
    (f"unary: a2a-anyio <= {UNARY_MAX}x raw httpx", "unary_us", "a2a-anyio/floor", "<=", UNARY_MAX),
    ("unary: a2a-anyio below a2a-sdk", "unary_us", "a2a-sdk/a2a-anyio", ">", 1.0),
    ("unary: a2a-anyio below fasta2a", "unary_us", "fasta2a/a2a-anyio", ">", 1.0),
    (f"stream: a2a-anyio <= {STREAM_MAX}x httpx-sse + json", "stream_us", "a2a-anyio/floor", "<=", STREAM_MAX),
    (f"stream: a2a-sdk >= {SDK_STREAM_MIN:.0f}x slower", "stream_us", "a2a-sdk/a2a-anyio", ">=", SDK_STREAM_MIN),
)  # fmt: skip


def _faster(peer: str, ratio: float | None) -> str:
    """``peer``'s time over a2a-anyio's, in words."""
    if ratio is None:
        return "n/a"
    if ratio < 1:
        return f"{peer} {ratio:.2f}x of a2a-anyio: {1 / ratio:.2f}x faster"
    return f"{peer} {ratio:.2f}x of a2a-anyio: a2a-anyio {ratio:.2f}x faster"


def loopback_targets(lb: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    results = lb["results"]
    for name, metric, key, op, limit in LOOPBACK:
        for backend, b in results.items():
            value = b["ratios"][metric].get(key)
            num, den = key.split("/")
            shown = f"{num} {times(value)} of a2a-anyio" if den == "a2a-anyio" else ""
            out.append(_ratio_target(name, backend, value, op, limit, shown))
    for backend, b in results.items():
        ratio = b["ratios"]["stream_us"].get("fasta2a/a2a-anyio")
        out.append(
            {
                "target": "stream: fasta2a (no SSE framing)",
                "backend": backend,
                "value": ratio,
                "limit": None,
                "pass": None,
                "shown": _faster("fasta2a", ratio),
                "limit_shown": NO_SSE_FRAMING,
            }
        )
    return out


def _per_stream(r: dict[str, Any]) -> str:
    """A run's extra RSS per stream, when every stream got that far (a cut run's is of fewer)."""
    if "failed" in r or r["timed_out"]:
        return "n/a"
    return f"{r['extra_rss_mb'] * 1024 / r['streams']:.0f} KB a stream"


def fanout_targets(fan: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    floors = {
        (r["streams"], r["backend"]): _per_stream(r)
        for r in fan["runs"]
        if r.get("impl") == "floor"
    }
    for r in fan["runs"]:
        if r.get("impl") == "floor":
            continue
        case, backend = r["case"], r["backend"]
        n = case["streams"]
        pools = f" ({case['pools']} pools)" if case.get("pools", 1) > 1 else ""
        name = f"fan-out {n:,}{pools}: extra RSS, all {n:,} complete"
        limit = case["rss_max_mb"]
        limit_shown = f"< {limit:.0f} MB, {n:,}/{n:,}"
        if "failed" in r:
            out.append(
                {"target": name, "backend": backend, "value": None, "limit": limit,
                 "pass": False, "shown": "failed: " + r["failed"][-80:], "limit_shown": limit_shown}
            )  # fmt: skip
            continue
        whole = r["completed"] == n and r["errors"] == 0 and not r["timed_out"]
        cut = f"cut at {r['wall_s']:.0f} s: " if r["timed_out"] else ""
        errors = f", {r['errors']} errors ({r['first_error'][:60]})" if r["errors"] else ""
        floor = floors.get((n, backend))
        per_stream = f" ({_per_stream(r)}; floor {floor})" if floor else f" ({_per_stream(r)})"
        peak = r["server"]["peak"]
        together = f", at most {peak:,} open at once" if peak < n else ""
        out.append(
            {
                "target": name,
                "backend": backend,
                "value": r["extra_rss_mb"],
                "limit": limit,
                "pass": r["extra_rss_mb"] < limit and whole,
                "shown": f"{cut}{r['extra_rss_mb']:.0f} MB{per_stream}, "
                f"{r['completed']:,}/{n:,} complete{together}{errors}",
                "limit_shown": limit_shown,
            }
        )
        if not case["no_wait"]:
            continue
        wait = r["connection_wait_s"]
        waits = (
            f"; wait for a connection p50 {wait['p50'] * 1000:.0f} ms, max {wait['max'] * 1000:.0f} ms"
            if wait["max"] is not None
            else ""
        )
        out.append(
            {
                "target": f"fan-out {n:,}: none waiting for a connection",
                "backend": backend,
                "value": peak,
                "limit": n,
                "pass": peak == n and whole,
                "shown": f"{peak:,} of {n:,} open at once{waits}",
                "limit_shown": f"{n:,} open at once",
            }
        )
    return out


def import_targets(imp: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        _ratio_target(
            f"import a2a_anyio <= {IMPORT_MAX}x import httpx, httpx_sse, anyio",
            "-",
            imp["ratio_anyio_floor"],
            "<=",
            IMPORT_MAX,
            f"{times(imp['ratio_anyio_floor'])} ({imp['a2a-anyio']['cpu_ms']:.0f} / "
            f"{imp['floor']['cpu_ms']:.0f} ms of CPU; wall {times(imp['ratio_anyio_floor_wall'])})",
        )
    ]


def targets(res: dict[str, Any]) -> list[dict[str, Any]]:
    """Every target whose measurement is in ``res``."""
    out: list[dict[str, Any]] = []
    if "loopback" in res:
        out += loopback_targets(res["loopback"])
    if "fanout" in res:
        out += fanout_targets(res["fanout"])
    if "imports" in res:
        out += import_targets(res["imports"])
    return out
