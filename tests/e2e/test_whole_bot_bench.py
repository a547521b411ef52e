"""The short form of ``bench/whole_bot.py`` (``--smoke``): two real ``ambot run`` bots (memory on,
memory off) with the fake QQ client and the fake model on 127.0.0.1, a few seconds of phases each.

No target is asserted (a smoke run measures too little, on a shared machine); what must hold is
that every figure was measured: both bots answered, the memory bot's hook and ``end`` ran and were
timed, its queue was sampled and drained, its RSS was read, and the facts planted on both paths
(``end`` and the transcript) were found by recall in their chats."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

# The bench's two bots keep their own SQLite home whatever backend the suite runs on (it is
# started without the suite's settings): the server run would only repeat it.
pytestmark = pytest.mark.embedded_only

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_the_whole_bot_bench_measures_both_bots_and_finds_the_planted_facts(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("COGNITION_")}
    env["ANONYMIZED_TELEMETRY"] = "False"
    report = tmp_path / "whole_bot.json"
    completed = subprocess.run(
        [sys.executable, str(BENCH / "whole_bot.py"), "--smoke", "--json", str(report)],
        cwd=BENCH.parent, capture_output=True, text=True, timeout=600, env=env, check=False,
    )  # fmt: skip
    assert completed.returncode == 0, f"{completed.stdout[-3000:]}\n{completed.stderr[-4000:]}"
    figures = json.loads(report.read_text(encoding="utf-8"))
    turns = figures["throughput"]
    assert turns["on_turns_per_s"] > 0 and turns["off_turns_per_s"] > 0, turns
    assert math.isfinite(turns["ratio"]) and turns["phases"] >= 2, turns
    timed = figures["timings"]
    assert timed["hook"]["count"] > 0 and timed["end"]["count"] > 0, timed
    queue = figures["queue"]
    assert queue["samples"] > 0 and queue["drain_after_load_s"] is not None, queue
    assert queue["dead_jobs"] == 0, queue
    rss = figures["rss"]["on"]
    assert rss["start_mb"] > 0 and rss["max_mb"] >= rss["start_mb"], rss
    fresh = figures["freshness"]
    for route in ("end", "transcript"):
        assert fresh[route]["planted"] > 0, fresh
        assert fresh[route]["found"] == fresh[route]["planted"], fresh  # every planted fact recalled in its chat
    calls = figures["model_calls"]
    assert calls.get("turn_end", 0) > 0 and calls.get("historian", 0) > 0 and calls.get("transcript", 0) > 0, calls
    assert figures["probe_errors"] == [], figures["probe_errors"]
    assert "turns/s: memory on" in completed.stdout and "freshness end" in completed.stdout, completed.stdout
