"""The historian's CPU stages on long text: linear, and a 100 kB answer in under 50 ms.

Two tables, medians of several runs each:

1. Each rule-based stage on raw text of 1k / 10k / 100k characters, in four shapes (chat-like
   Chinese facts, English, a text without punctuation, a run of digits): the time resolver
   (``resolve_times``), the gate (``check_fact``) and admission (``admit``), with the ratio
   100k / 10k (10 is linear; the gate took 21 s at 100k when it was quadratic).
2. The historian's own path on a model answer of one fact of that many characters: reading and
   cutting it to the fact limit, the gate, the final facts (the resolver on the sources), the
   drafts and admission, as ``engine/historian.py`` runs them (on a worker thread, not the loop).
   Target: the total under 50 ms at 100k.

``uv run python bench/historian_cpu.py [--quick]``. No network, no database.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import code_version, init_engine_only, machine_line, median, parse_args, remove_home, throwaway_home

SIZES = (1_000, 10_000, 100_000)
TARGET_MS = 50.0
NOW = datetime(2026, 11, 30, 20, 0, tzinfo=timezone(timedelta(hours=8)))
SHAPES = {
    "chat zh": "QQ号10001（昵称小明）于2026-11-29在成都吃了火锅，当天他很开心，“我们明天见”，周五再去。"
    "我昨天下午三点到的成都，下周五回来，密码是abc123，春节前把房子租好。",
    "english": "Caroline went to a support group yesterday and she said it was powerful; "
    "on 7 May 2023 Melanie painted a sunrise there with her kids. ",
    "no punctuation": "我昨天去了成都明天去重庆下周五回来春节前把房子租好他说这里很好",
    "digits": "1234567890",
}


def shaped(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def timed(stage: Callable[[str], object], text: str, runs: int) -> float:
    values = []
    for _ in range(runs):
        started = time.perf_counter()
        stage(text)
        values.append((time.perf_counter() - started) * 1000.0)
    return median(values)


def stage_table(runs: int, sizes: tuple[int, ...]) -> None:
    from amrita_plugin_cognition.api import admit, check_fact
    from amrita_plugin_cognition.domain.timeresolve import resolve_times

    stages: dict[str, Callable[[str], object]] = {
        "resolver": lambda text: resolve_times(text, NOW),
        "gate": check_fact,
        "admission": admit,
    }
    print(f"raw stages, median of {runs} runs (ms); ratio = last size / the one before (10 is linear)")
    print(f"{'shape':<16}{'stage':<11}" + "".join(f"{size:>11,}" for size in sizes) + "   ratio")
    for shape, unit in SHAPES.items():
        for name, stage in stages.items():
            figures = [timed(stage, shaped(unit, size), runs) for size in sizes]
            ratio = figures[-1] / figures[-2] if len(figures) > 1 and figures[-2] > 0 else float("nan")
            print(f"{shape:<16}{name:<11}" + "".join(f"{value:>11.2f}" for value in figures) + f"   {ratio:5.1f}")


def historian_path(size: int, runs: int) -> dict[str, float]:
    from amrita_plugin_cognition.api import Scope, admit
    from amrita_plugin_cognition.engine import historian_facts as facts
    from amrita_plugin_cognition.engine.historian import _drafts_and_people
    from amrita_plugin_cognition.engine.historian_sources import numbered_source
    from amrita_plugin_cognition.store.jobs import Lease

    limit = 500
    sources = [
        numbered_source(
            1, "QQ号10001（昵称小明）昨晚在春熙路吃了火锅，下周五要去成都出差", "10001", "小明", NOW, ["m1"]
        )
    ]
    answer = facts.RewriteAnswer(facts=[facts.RewrittenFact(text=shaped(SHAPES["chat zh"], size), sources=[1])])
    held = Lease(1, "t", "observations", "b1", Scope("group", "30001"), {}, 0, NOW)
    figures: dict[str, list[float]] = {"read and cut": [], "gate": [], "final facts": [], "drafts": [], "admission": []}
    for _ in range(runs):
        started = time.perf_counter()
        read, _ = facts.read(answer, sources, limit)
        cut = time.perf_counter()
        checks = facts.check(read, sources, limit)
        gated = time.perf_counter()
        final = facts.final_facts(read, checks, sources, False, False, limit)
        finished = time.perf_counter()
        drafts, _ = _drafts_and_people(held, final, sources)
        drafted = time.perf_counter()
        for draft in drafts:
            admit(draft.text)
        admitted = time.perf_counter()
        for name, begin, end in (
            ("read and cut", started, cut),
            ("gate", cut, gated),
            ("final facts", gated, finished),
            ("drafts", finished, drafted),
            ("admission", drafted, admitted),
        ):
            figures[name].append((end - begin) * 1000.0)
    result = {name: median(values) for name, values in figures.items()}
    result["total"] = sum(result.values())
    return result


def path_table(runs: int, sizes: tuple[int, ...]) -> None:
    print(f"\nthe historian's path on one answer (one fact of N characters), median of {runs} runs (ms)")
    rows = {size: historian_path(size, runs) for size in sizes}
    names = list(next(iter(rows.values())))
    print(f"{'stage':<14}" + "".join(f"{size:>11,}" for size in sizes))
    for name in names:
        print(f"{name:<14}" + "".join(f"{rows[size][name]:>11.2f}" for size in sizes))
    total = rows[sizes[-1]]["total"]
    verdict = "OK" if total < TARGET_MS else "OVER"
    print(f"total at {sizes[-1]:,} characters: {total:.2f} ms: {verdict} (target < {TARGET_MS:.0f} ms)")


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    home = throwaway_home("historian-cpu")
    try:
        init_engine_only(home)
        print(machine_line(), code_version())
        sizes = SIZES[:2] if args.quick else SIZES
        stage_table(3 if args.quick else 5, sizes)
        path_table(3 if args.quick else 7, SIZES)
    finally:
        remove_home(home)


if __name__ == "__main__":
    main()
