"""An interleaved A/B of the client: two checkouts' ``A2AClient``, operation by operation.

    uv run --frozen python bench/ab.py ../before ../after           # ~4 min on 2 cores
    uv run --frozen python bench/ab.py A B --rounds 2 --calls 30 --streams 3 --bindings jsonrpc-1.0

A and B are two checkouts (their ``src/`` directories are used). One server process,
started once, serves ``FakeAgent``s (``a2a_anyio.testing``, from ``--server-src``, B's by
default) with hypercorn on 127.0.0.1: a v1.0 agent and a v0.3 agent, each on JSON-RPC and
HTTP+JSON, the same for A and B (and one more of each that holds only the tasks listed). Each (round, backend, checkout) is a fresh client process,
this interpreter with ``PYTHONPATH=<checkout>/src`` (it prints the ``a2a_anyio.__file__`` it
imported, and fails unless it is that checkout's). Rounds alternate the order of A and B (AB,
BA, AB...), so a drift of the machine's speed falls on both.

A child warms up (every operation, a few times, on every binding), then times each
operation with ``time.process_time()`` (its own CPU time: the server's and the waits are not
in it) around every call, after a ``gc.collect()`` per operation:

- send: ``send_message`` (blocking) to a skill that completes its task at once;
- get, list: ``get_task`` of one completed task; ``list_tasks`` of a context of 5 tasks
  (on the listing agent, whose answer does not slow down as the other tasks pile up);
- cancel: ``cancel_task`` of a working task (started, untimed, by a non-blocking send);
- push_set/get/list/delete: the four push-config calls, in turn, on a working task;
- ext_card: ``get_extended_card``;
- stream: ``stream_message`` read to its end (``--events`` events), per event;
- subscribe: ``subscribe`` to a working task (started untimed) that then streams
  ``--events`` events, per event.

Reported per binding, operation and backend: the medians over rounds of the microseconds of
client CPU per call (per event for the streams) of A and B, the median of the per-round
ratios B/A and their range, and each side's spread over rounds ((max - min) / median).
``--json`` prints the rounds too.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
from _table import grid, times

BINDINGS = ("jsonrpc-1.0", "rest-1.0", "jsonrpc-0.3", "rest-0.3")
OPS = (
    "send", "get", "list", "cancel", "push_set", "push_get", "push_list", "push_delete",
    "ext_card", "stream", "subscribe",
)  # fmt: skip
PER_EVENT = ("stream", "subscribe")
LIST_TASKS = 5
PUSH_URL = "http://127.0.0.1:9/push"  # never posted to: the task emits nothing while it has one
WAIT_LIMIT = 10.0  # seconds a skill waits for its subscriber


# -- the server -----------------------------------------------------------------------------


async def _serve() -> None:
    from a2a_anyio.testing import Emit, FakeAgent, SkillContext, artifact, status

    async def now(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield artifact("done", name="answer")

    async def hold(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("working")
        await ctx.wait_cancelled()

    async def chunks(n: int) -> AsyncIterator[Emit]:
        """``n`` chunks of one artifact."""
        for i in range(n):
            yield artifact(
                f" token {i}", name="report", artifact_id="r", append=i > 0, last_chunk=i == n - 1
            )

    async def stream(ctx: SkillContext) -> AsyncIterator[Emit]:
        """``n`` events: the snapshot, working, chunks, the completion."""
        yield status("working")
        async for emit in chunks(int(ctx.text) - 3):
            yield emit

    async def late(ctx: SkillContext) -> AsyncIterator[Emit]:
        """Working; once a subscriber follows the task, ``n`` events for it: the snapshot,
        chunks, the completion."""
        yield status("working")
        agent, task_id = ctx.agent, ctx.task_id
        assert task_id is not None
        with anyio.fail_after(WAIT_LIMIT):
            # The non-blocking send that started the task follows it until it has answered,
            # and the client subscribes only after that answer: so first none, then one.
            # The agent tells no event of a subscriber: it is polled.
            while agent.streams(task_id):
                await anyio.lowlevel.checkpoint()
            while not agent.streams(task_id):  # noqa: ASYNC110
                await anyio.sleep(0.0005)
        async for emit in chunks(int(ctx.text) - 2):
            yield emit

    skills = {"now": now, "hold": hold, "stream": stream, "late": late}
    # The tasks to list live on agents of their own: listing sorts all of an agent's tasks,
    # and the others pile up over a run, slowing the answer (and the client, woken colder).
    agents = {
        key: FakeAgent(dialect=d, binding="both", skills=skills, extended_card={"name": "extended"})
        for d in ("1.0", "0.3")
        for key in (d, f"{d} list")
    }
    async with contextlib.AsyncExitStack() as stack:
        for agent in agents.values():
            await stack.enter_async_context(agent.serve())
        print(json.dumps({key: agent.url for key, agent in agents.items()}), flush=True)
        async with anyio.create_task_group() as tg:

            async def forget() -> None:  # the requests' records would only grow
                while True:
                    await anyio.sleep(2)
                    for agent in agents.values():
                        agent.clear_requests()

            tg.start_soon(forget)
            await anyio.wrap_file(sys.stdin).read()  # until the bench closes the pipe
            tg.cancel_scope.cancel()


# -- one client process ---------------------------------------------------------------------


Call = Callable[[], Awaitable[int]]  # one timed unit; returns how many items it counted


async def _suite(
    client: Any, lister: Any, n_events: int
) -> dict[str, tuple[Call, Callable[[], Awaitable[None]] | None]]:
    """Each operation: the call timed, and an untimed preparation before each call."""
    from a2a_anyio import Task, TaskState

    async def send(skill: str, text: str = "hello", **kw: Any) -> Task:
        task = await client.send_message(text, metadata={"skillId": skill}, **kw)
        assert isinstance(task, Task), task
        return task

    done = await send("now")
    assert done.status.state is TaskState.COMPLETED, done.status
    first = await lister.send_message("hello", metadata={"skillId": "now"})
    ctx = first.context_id
    for _ in range(LIST_TASKS - 1):
        await lister.send_message("hello", metadata={"skillId": "now"}, context_id=ctx)
    held = await send("hold", blocking=False)
    state: dict[str, Any] = {"n": 0}

    async def c_send() -> int:
        task = await send("now")
        assert task.status.state is TaskState.COMPLETED
        return 1

    async def c_get() -> int:
        task = await client.get_task(done.id)
        assert task.id == done.id
        return 1

    async def c_list() -> int:
        page = await lister.list_tasks(ctx)
        assert len(page.tasks) == LIST_TASKS, page
        return 1

    async def p_cancel() -> None:
        state["working"] = await send("hold", blocking=False)

    async def c_cancel() -> int:
        task = await client.cancel_task(state["working"].id)
        assert task.status.state is TaskState.CANCELED, task.status
        return 1

    async def c_push_set() -> int:
        state["n"] += 1
        state["config"] = f"c{state['n']}"
        await client.create_push_config(held.id, PUSH_URL, config_id=state["config"], token="t")
        return 1

    async def c_push_get() -> int:
        config = await client.get_push_config(held.id, state["config"])
        assert config.url == PUSH_URL, config
        return 1

    async def c_push_list() -> int:
        configs = await client.list_push_configs(held.id)
        assert len(configs) == 1, configs
        return 1

    async def c_push_delete() -> int:
        await client.delete_push_config(held.id, state["config"])
        return 1

    async def c_ext_card() -> int:
        card = await client.get_extended_card()
        assert card.name == "extended", card.name
        return 1

    async def read(stream: Any) -> int:
        n = 0
        async with stream as s:
            async for _ in s:
                n += 1
        assert s.task.status.state is TaskState.COMPLETED, s.task.status
        return n

    async def c_stream() -> int:
        return await read(client.stream_message(str(n_events), metadata={"skillId": "stream"}))

    async def p_subscribe() -> None:
        state["late"] = await send("late", str(n_events), blocking=False)

    async def c_subscribe() -> int:
        return await read(client.subscribe(state["late"].id))

    return {
        "send": (c_send, None),
        "get": (c_get, None),
        "list": (c_list, None),
        "cancel": (c_cancel, p_cancel),
        "push_set": (c_push_set, None),
        "push_get": (c_push_get, None),
        "push_list": (c_push_list, None),
        "push_delete": (c_push_delete, None),
        "ext_card": (c_ext_card, None),
        "stream": (c_stream, None),
        "subscribe": (c_subscribe, p_subscribe),
    }


async def _measure(
    suite: dict[str, tuple[Call, Callable[[], Awaitable[None]] | None]],
    ops: list[str],
    reps: dict[str, int],
) -> dict[str, list[float]]:
    """CPU seconds and items of each operation's ``reps`` calls."""
    out: dict[str, list[float]] = {}
    push = [op for op in ops if op.startswith("push_")]
    for op in ops:
        if op in push[1:]:
            continue  # measured with the first: they go in turn (set, get, list, delete)
        group = push if op in push else [op]
        cpu = dict.fromkeys(group, 0.0)
        items = dict.fromkeys(group, 0)
        gc.collect()
        for _ in range(reps[op]):
            prepare = suite[op][1]
            if prepare is not None:
                await prepare()
            for name in group:
                t0 = time.process_time()
                n = await suite[name][0]()
                cpu[name] += time.process_time() - t0
                items[name] += n
        for name in group:
            out[name] = [cpu[name], items[name]]
    return out


async def _child(cfg: dict[str, Any]) -> dict[str, Any]:
    import a2a_anyio
    from a2a_anyio import A2AClient

    out: dict[str, Any] = {"file": a2a_anyio.__file__, "results": {}, "items": {}}
    suites = {}
    ops = cfg["ops"]
    async with contextlib.AsyncExitStack() as stack:
        for binding in cfg["bindings"]:
            wire, version = binding.split("-")
            client, lister = [
                await stack.enter_async_context(
                    A2AClient(cfg["urls"][key], protocol=version, bindings=(wire,))
                )
                for key in (version, f"{version} list")
            ]
            await client.get_card()
            await lister.get_card()
            suites[binding] = await _suite(client, lister, cfg["events"])
        warm = {op: 2 if op in PER_EVENT else 10 for op in ops}
        for binding in cfg["bindings"]:
            await _measure(suites[binding], ops, warm)
        reps = {op: cfg["streams"] if op in PER_EVENT else cfg["calls"] for op in ops}
        for binding in cfg["bindings"]:
            res = await _measure(suites[binding], ops, reps)
            out["results"][binding] = {op: cpu / n * 1e6 for op, (cpu, n) in res.items()}
            out["items"][binding] = {op: n for op, (_, n) in res.items()}
    return out


# -- the parent -----------------------------------------------------------------------------


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _src(tree: str) -> Path:
    src = Path(tree).resolve() / "src"
    if not (src / "a2a_anyio" / "__init__.py").is_file():
        raise SystemExit(f"{tree}: no src/a2a_anyio there")
    return src


def _env(src: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1"}


def _commit(tree: str) -> str:
    r = subprocess.run(
        ["git", "-C", tree, "describe", "--always", "--dirty"], capture_output=True, text=True
    )
    return r.stdout.strip() or "?"


def _check_items(items: dict[str, dict[str, int]], cfg: dict[str, Any]) -> None:
    """Every call counted, every stream read whole."""
    for binding, counted in items.items():
        for op, n in counted.items():
            want = cfg["streams"] * cfg["events"] if op in PER_EVENT else cfg["calls"]
            if n != want:
                raise SystemExit(f"{binding} {op}: {n} items, not {want}")


def _spread(xs: list[float]) -> float:
    return (max(xs) - min(xs)) / statistics.median(xs)


def _rows(res: dict[str, Any]) -> list[str]:
    rows: list[tuple[str, ...]] = [
        ("binding", "operation", "backend", "A us", "B us", "B/A", "B/A range", "A spread", "B spread")
    ]  # fmt: skip
    for binding in res["bindings"]:
        for op in res["ops"]:
            for backend in res["backends"]:
                a = [r[binding][op] for r in res["rounds"][backend]["A"]]
                b = [r[binding][op] for r in res["rounds"][backend]["B"]]
                ratios = [y / x for x, y in zip(a, b, strict=True)]
                unit = "/event" if op in PER_EVENT else ""
                rows.append((
                    binding, op + unit, backend,
                    f"{statistics.median(a):.1f}", f"{statistics.median(b):.1f}",
                    times(statistics.median(ratios)), f"{min(ratios):.2f}-{max(ratios):.2f}",
                    f"{_spread(a):.0%}", f"{_spread(b):.0%}",
                ))  # fmt: skip
    return grid(rows, left=(0, 1, 2))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="interleaved A/B of two checkouts' client")
    ap.add_argument("a", help="checkout A (its src/ is used)")
    ap.add_argument("b", help="checkout B")
    ap.add_argument("--rounds", type=int, default=8, help="A and B once each per round and backend")
    ap.add_argument("--calls", type=int, default=150, help="calls per unary operation per child")
    ap.add_argument("--streams", type=int, default=15, help="streams (and subscriptions) per child")
    ap.add_argument("--events", type=int, default=200, help="events per stream")
    ap.add_argument("--backends", default="asyncio,trio")
    ap.add_argument("--bindings", default=",".join(BINDINGS), help=f"of {','.join(BINDINGS)}")
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--server-src", help="the src/ of the server's a2a_anyio (default: B's)")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args = ap.parse_args(argv)
    backends = args.backends.split(",")
    bindings = args.bindings.split(",")
    ops = args.ops.split(",")
    if set(backends) - {"asyncio", "trio"} or set(bindings) - set(BINDINGS) or set(ops) - set(OPS):
        ap.error("unknown backend, binding or operation")
    trees = {"A": _src(args.a), "B": _src(args.b)}
    server_src = Path(args.server_src).resolve() if args.server_src else trees["B"]
    me = str(Path(__file__).resolve())
    start = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, me, "--serve"], env=_env(server_src),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        urls = json.loads(server.stdout.readline())
        cfg = {"urls": urls, "bindings": bindings, "ops": ops, "calls": args.calls,
               "streams": args.streams, "events": args.events}  # fmt: skip
        _log(f"server ({server_src}): {urls}")
        rounds: dict[str, dict[str, list[Any]]] = {b: {"A": [], "B": []} for b in backends}
        files: dict[str, str] = {}
        for r in range(args.rounds):
            for backend in backends:
                for side in "AB" if r % 2 == 0 else "BA":
                    t0 = time.perf_counter()
                    proc = subprocess.run(
                        [sys.executable, me, "--child", json.dumps(cfg | {"backend": backend})],
                        env=_env(trees[side]), capture_output=True, text=True,
                    )  # fmt: skip
                    if proc.returncode:
                        raise SystemExit(f"{side} on {backend} failed:\n{proc.stderr}")
                    out = json.loads(proc.stdout)
                    _check_items(out["items"], cfg)
                    if not out["file"].startswith(str(trees[side]) + os.sep):
                        raise SystemExit(f"{side} imported {out['file']}, not {trees[side]}'s")
                    if side not in files:
                        files[side] = out["file"]
                        _log(f"{side}: a2a_anyio from {out['file']}")
                    rounds[backend][side].append(out["results"])
                    _log(f"round {r + 1} {backend} {side}: {time.perf_counter() - t0:.1f} s")
    finally:
        if server.stdin:
            server.stdin.close()
        server.wait(10)
    res = {
        "a": {"tree": args.a, "commit": _commit(args.a), "file": files["A"]},
        "b": {"tree": args.b, "commit": _commit(args.b), "file": files["B"]},
        "bindings": bindings, "ops": ops, "backends": backends, "params": cfg | {"urls": None},
        "rounds": rounds, "load_avg_end": os.getloadavg(), "elapsed_s": time.perf_counter() - start,
    }  # fmt: skip
    if args.json:
        print(json.dumps(res, indent=1))
        return 0
    print(
        f"A = {args.a} ({res['a']['commit']}), B = {args.b} ({res['b']['commit']}); "
        f"{args.rounds} rounds, {args.calls} calls / {args.streams} x {args.events}-event streams "
        f"per child; client CPU per call (per event)"
    )
    print("\n".join(_rows(res)))
    print(f"({res['elapsed_s']:.0f} s, load average {res['load_avg_end'][0]:.2f} at the end)")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        anyio.run(_serve)
    elif sys.argv[1:2] == ["--child"]:
        child_cfg = json.loads(sys.argv[2])
        print(json.dumps(anyio.run(_child, child_cfg, backend=child_cfg["backend"])))
    else:
        sys.exit(main())
