"""How much slower the machine runs the first few milliseconds after it has been idle.

A chat turn arrives after seconds of quiet, so a recall turn never starts on a busy CPU. On a
shared virtual machine that costs time no code of ours spends: the same fixed piece of work
(pure Python plus a small numpy product, about 1 ms on a busy core) and the same hand-off to a
worker thread (``asyncio.to_thread`` of a no-op, as every SQLite and Chroma call makes) are
timed back to back and after 50 ms and 500 ms of sleep. The ratios to back-to-back are the
physical limit to read ``recall_latency.py``'s cold figures against. No network, no store.

    uv run python bench/idle_wakeup.py [--quick]
"""

from __future__ import annotations

import asyncio
import time

import numpy as np
from _common import machine_line, median, ms_since, p50_p95, parse_args

IDLES = (0.0, 0.05, 0.5)
MATRIX = np.random.default_rng(1).random((300, 300))


def fixed_work() -> float:
    begin = time.perf_counter()
    total = 0
    for index in range(20_000):
        total += index * index
    MATRIX @ MATRIX
    return ms_since(begin)


async def measure(samples: int, rounds: int) -> dict[float, dict[str, tuple[float, float]]]:
    figures: dict[float, dict[str, list[tuple[float, float]]]] = {idle: {"work": [], "hop": []} for idle in IDLES}
    for _ in range(rounds):
        for idle in IDLES:
            work, hop = [], []
            for _ in range(samples):
                if idle:
                    await asyncio.sleep(idle)
                work.append(fixed_work())
                if idle:
                    await asyncio.sleep(idle)
                begin = time.perf_counter()
                await asyncio.to_thread(lambda: None)
                hop.append(ms_since(begin))
            figures[idle]["work"].append(p50_p95(work))
            figures[idle]["hop"].append(p50_p95(hop))
    return {
        idle: {
            name: (median([pair[0] for pair in pairs]), median([pair[1] for pair in pairs]))
            for name, pairs in by_name.items()
        }
        for idle, by_name in figures.items()
    }


def main() -> None:
    args = parse_args("slow-down of work and thread hand-offs after the machine was idle")
    samples, rounds = (10, 1) if args.quick else (30, 3)
    print(f"# bench/idle_wakeup.py  {machine_line()}{'  [quick]' if args.quick else ''}")
    result = asyncio.run(measure(samples, rounds))
    base = result[0.0]
    for idle, by_name in result.items():
        work, hop = by_name["work"], by_name["hop"]
        print(
            f"after {idle * 1000:5.0f} ms idle: fixed work p50 {work[0]:6.3f} p95 {work[1]:6.3f} ms "
            f"(x{work[0] / base['work'][0]:.2f} / x{work[1] / base['work'][1]:.2f}); "
            f"thread hand-off p50 {hop[0]:6.3f} p95 {hop[1]:6.3f} ms "
            f"(x{hop[0] / base['hop'][0]:.2f} / x{hop[1] / base['hop'][1]:.2f})"
        )
    print(f"(median of {rounds} round(s) x {samples} samples; ratios to back-to-back, p50 / p95)")


if __name__ == "__main__":
    main()
