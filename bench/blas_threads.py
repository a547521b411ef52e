"""CPU the bot's process burns while chats recall: recall turns (``engine.turns.context``, the
local model embedding each query) every ``--interval`` seconds for ``--seconds`` in one chat of
a few hundred facts, each run in a fresh process; CPU time of the whole process (every thread)
per second of wall time, and per turn.

The local model is numpy: its matrix products run on OpenBLAS, whose worker threads spin on a
core for a while after each product they share. Three ways, alternating, median of ``--runs``:

* ``plugin``: as installed (``embedder.threads`` = 1 holds the model's products to one BLAS
  thread, through threadpoolctl, a dependency of the plugin);
* ``unlimited``: the same without that hold (threadpoolctl hidden from the model, as before
  it was a dependency): OpenBLAS uses every core for each product;
* ``floor``: ``OPENBLAS_NUM_THREADS=1`` in the environment before numpy loads, so no BLAS
  thread exists to spin (the physical floor of this work on one thread).

Target: ``plugin`` within 1.5x of the floor's CPU per turn.

    uv run python bench/blas_threads.py [--quick] [--runs N] [--seconds S] [--interval S]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import time

from _common import (
    child_json,
    clean_env,
    init_engine_only,
    machine_line,
    median,
    open_engine,
    p50_p95,
    parse_args,
    quiet_cognition_logs,
    remove_home,
    throwaway_home,
    verdict,
)

MODES = ("plugin", "unlimited", "floor")
FACTS = 300
TARGET_RATIO = 1.5
#: The environment's BLAS thread limits, taken out of the children's environment but the floor's.
BLAS_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _child(seconds: float, interval: float) -> dict[str, float]:
    from amrita_plugin_cognition.api import ChatContext, MemoryDraft, Provenance, Scope

    home = throwaway_home("blas")
    try:
        init_engine_only(home)
        quiet_cognition_logs()
        engine = await open_engine(home)
        scope = Scope("group", "52001")
        context = ChatContext("bench-blas", scope, "40001", "小明")
        drafts = [
            MemoryDraft(text=f"QQ号{40001 + n % 7}喜欢第{n}种口味的火锅，常去第{n % 13}家店", scope=scope,
                        provenance=Provenance.IMPORTED)
            for n in range(FACTS)
        ]  # fmt: skip
        await engine.memories.remember("bench-blas", drafts)
        await engine.index.drain()
        for number in range(20):  # warm-up: the model loaded, the chat's index read
            await engine.turns.context(context, [f"热身第{number}次吃什么"])
        turns: list[float] = []
        cpu_before, started = _cpu_seconds(), time.perf_counter()
        while time.perf_counter() - started < seconds:
            began = time.perf_counter()
            await engine.turns.context(context, [f"上次说的第{len(turns)}家火锅店在哪"])
            turns.append((time.perf_counter() - began) * 1000)
            await asyncio.sleep(interval)
        wall = time.perf_counter() - started
        cpu = _cpu_seconds() - cpu_before
        await engine.close()
    finally:
        remove_home(home)
    p50, p95 = p50_p95(turns)
    per_turn = cpu * 1000 / len(turns)
    return {"turns": len(turns), "cpu_share": cpu / wall, "cpu_ms_per_turn": per_turn, "p50": p50, "p95": p95}


def _run_child(mode: str, seconds: float, interval: float) -> dict[str, float]:
    env = clean_env()
    for name in BLAS_VARIABLES:  # a limit set where the bench is started would hide the difference
        env.pop(name, None)
    if mode == "floor":
        env["OPENBLAS_NUM_THREADS"] = "1"
    return dict(child_json(__file__, "--child", mode, "--seconds", str(seconds), "--interval", str(interval), env=env))


def main() -> None:
    args = parse_args(
        __doc__ or "",
        lambda parser: (
            parser.add_argument("--runs", type=int, default=3),
            parser.add_argument("--seconds", type=float, default=10.0),
            parser.add_argument("--interval", type=float, default=0.05),
            parser.add_argument("--child", choices=MODES, help=argparse.SUPPRESS),
        ),
    )
    if args.child:
        if args.child == "unlimited":
            sys.modules["threadpoolctl"] = None  # type: ignore[assignment]  # the model then cannot hold BLAS
        print(json.dumps(asyncio.run(_child(args.seconds, args.interval))))
        return
    runs, seconds = (1, 3.0) if args.quick else (args.runs, args.seconds)
    results: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
    for _ in range(runs):
        for mode in MODES:
            results[mode].append(_run_child(mode, seconds, args.interval))
    print(f"# bench/blas_threads.py  {machine_line()}")
    print(
        f"recall turns every {args.interval * 1000:.0f} ms for {seconds:.0f} s in one chat of {FACTS} facts; "
        f"medians of {runs} runs"
    )
    figures = {}
    for mode in MODES:
        share = median([run["cpu_share"] for run in results[mode]])
        per_turn = median([run["cpu_ms_per_turn"] for run in results[mode]])
        p50 = median([run["p50"] for run in results[mode]])
        p95 = median([run["p95"] for run in results[mode]])
        turns = median([run["turns"] for run in results[mode]])
        figures[mode] = per_turn
        print(
            f"{mode:>9}: CPU {share * 100:.0f}% of a core, {per_turn:.1f} ms CPU per turn, "
            f"turn p50 / p95 {p50:.1f} / {p95:.1f} ms, {turns:.0f} turns"
        )
    ratio = figures["plugin"] / figures["floor"]
    print(
        f"CPU per turn, plugin / floor: {ratio:.2f} {verdict(ratio, TARGET_RATIO)}; "
        f"unlimited / floor: {figures['unlimited'] / figures['floor']:.2f}"
    )


if __name__ == "__main__":
    main()
