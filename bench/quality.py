"""Recall quality on the public sets, through the real CLI harness (no LLM).

Runs ``python -m amrita_plugin_cognition eval recall FILE --json`` on MADial-Bench zh and on
LoCoMo (``/work/shared/data``) and prints MADial R@5 and LoCoMo R@10, overall and per category,
next to the target (0.65 each) and the plain-retriever reference figures of
``/work/shared/data/README.md``, with ratios. ``--quick`` evaluates a slice of each file (the
first scope(s) only), so its figures are not comparable with the full ones.

    uv run python bench/quality.py [--quick] [--data DIR]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO_ROOT, machine_line, parse_args

TARGET = 0.65
#: name -> (file, metric, dense-only USE reference, best plain fusion reference)
SETS = {
    "MADial zh": ("madial/madial_zh_recall.jsonl", "recall@5", 0.540, 0.612),
    "LoCoMo": ("locomo/locomo_recall.jsonl", "recall@10", 0.317, 0.582),
}
DEFAULT_DATA = Path("/work/shared/data")


def quick_slice(source: Path, scopes: int, max_queries: int) -> Path:
    """The memories and queries of the first ``scopes`` scopes (at most ``max_queries`` queries)."""
    kept_scopes: list[str] = []
    memories: list[str] = []
    queries: list[str] = []
    with source.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            obj = json.loads(line)
            key = f"{obj['scope']['kind']}:{obj['scope']['id']}"
            if key not in kept_scopes:
                if len(kept_scopes) >= scopes:
                    continue
                kept_scopes.append(key)
            if obj["type"] == "memory":
                memories.append(line.rstrip("\n"))
            elif len(queries) < max_queries:
                queries.append(line.rstrip("\n"))
    target = Path(tempfile.mkdtemp(prefix="cognition-bench-quality-")) / source.name
    target.write_text("\n".join(memories + queries) + "\n", encoding="utf-8")
    return target


def run_eval(path: Path) -> tuple[dict, float]:
    started = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-m", "amrita_plugin_cognition", "eval", "recall", str(path), "--json"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
        check=False,
    )
    seconds = time.perf_counter() - started
    if completed.returncode != 0:
        raise SystemExit(f"eval failed on {path} (exit {completed.returncode}):\n{completed.stderr[-2000:]}")
    start = completed.stdout.find("{")
    return json.loads(completed.stdout[start:]), seconds


def main() -> None:
    args = parse_args(
        "recall quality on MADial zh and LoCoMo",
        lambda parser: parser.add_argument("--data", type=Path, default=DEFAULT_DATA),
    )
    print(f"# bench/quality.py  {machine_line()}{'  [quick: slices, not comparable]' if args.quick else ''}")
    for name, (relative, metric, dense_ref, fusion_ref) in SETS.items():
        source = args.data / relative
        path = quick_slice(source, scopes=1, max_queries=40) if args.quick else source
        report, seconds = run_eval(path)
        overall = report["overall"][metric]
        print(
            f"{name}: {metric} = {overall:.3f}  (queries {report['queries']}, memories {report['memories']}, "
            f"eval {seconds:.0f} s, recall latency p50 {report['latency_ms']['p50']} ms "
            f"p95 {report['latency_ms']['p95']} ms)"
        )
        print(
            f"  vs target {TARGET:.2f}: ratio {overall / TARGET:.3f} ({'OK' if overall >= TARGET else 'BELOW'}); "
            f"vs dense-only USE {dense_ref:.3f}: ratio {overall / dense_ref:.3f}; "
            f"vs best plain fusion {fusion_ref:.3f}: ratio {overall / fusion_ref:.3f}"
        )
        for category, figures in report["by_category"].items():
            value = figures[metric]
            print(
                f"  {category:<12} {metric} = {value:.3f}  (n={figures['queries']}, "
                f"ratio to target {value / TARGET:.3f}, R@1 {figures['recall@1']:.3f}, MRR {figures['mrr']:.3f})"
            )
        if report.get("leaks"):
            print(f"  LEAKS: {report['leaks']} in {report['leak_queries'][:10]}")


if __name__ == "__main__":
    main()
