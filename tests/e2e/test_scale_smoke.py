"""The short form of ``bench/scale.py`` (``--smoke``): a few thousand memories on PostgreSQL and a
Chroma server of the bench's own, grown in two steps and measured at each; the bank holds exactly
what was written (SQL rows, keyword rows and vectors by id agree, the outbox is empty), and the
standalone CLI's ``status`` and ``inspect`` answer on it. Timing targets are not asserted (machines
are shared and noisy). Server backend only: it needs PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from processes import bench_env

BENCH = Path(__file__).resolve().parents[2] / "bench"

pytestmark = pytest.mark.skipif(
    os.environ.get("COGNITION_TEST_BACKEND") != "server", reason="needs PostgreSQL (COGNITION_TEST_BACKEND=server)"
)


def test_the_smoke_bank_grows_in_two_steps_and_holds_what_was_written(tmp_path: Path) -> None:
    report = tmp_path / "scale.json"
    completed = subprocess.run(
        [sys.executable, str(BENCH / "scale.py"), "--smoke", "--json", str(report)],
        cwd=BENCH.parent, capture_output=True, text=True, timeout=300, env=bench_env(), check=False,
    )  # fmt: skip
    assert completed.returncode == 0, f"{completed.stdout[-3000:]}\n{completed.stderr[-3000:]}"
    result = json.loads(report.read_text(encoding="utf-8"))
    small, large = result["stages"]
    assert (small["memories"], small["chats"], large["memories"], large["chats"]) == (1_000, 10, 3_000, 30)
    for stage in (small, large):
        checks = stage["checks"]
        # the loaded bank plus the measured writes, each in SQL, in the keyword index and as a vector
        assert checks["active_rows"] > stage["memories"]
        assert checks["keyword_rows"] == checks["vectors"] == checks["active_rows"]
        assert checks["outbox_rows"] == checks["missing_by_id"] == checks["extra_by_id"] == 0
        assert stage["recalled_nothing"] < 10  # of 20 turns: a chat's turns find its facts
        assert stage["recall"][1] > 0 and stage["write"][1] > 0 and stage["end"][1] > 0
        assert stage["cli"]["status"] > 0 and stage["cli"]["inspect"] > 0
    assert large["load"]["rows"] == 2_000
    assert result["reindex"]["rows"] > 0 and result["reindex"]["model_texts_per_second"] > 0
    assert "recall p95" in completed.stdout and "checks at 3,000: ok" in completed.stdout
