"""The short form of ``bench/chaos.py``: 5 rounds of SIGKILL of a worker engine mid-workload, then
the invariants after the restart's repair (0 jobs lost, 0 facts twice, vectors equal to the active
SQL rows). SQLite + embedded Chroma; PostgreSQL + a Chroma server of the bench's own when the suite
runs on the server backend."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from processes import bench_env

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_five_rounds_of_sigkill_lose_no_job_duplicate_no_fact_and_leave_the_vectors_equal(tmp_path: Path) -> None:
    backend = "postgres" if os.environ.get("COGNITION_TEST_BACKEND") == "server" else "sqlite"
    report = tmp_path / "chaos.json"
    completed = subprocess.run(
        [sys.executable, str(BENCH / "chaos.py"), "--rounds", "5", "--backend", backend, "--seed", "23",
         "--time-limit", "240", "--json", str(report), "--log", str(tmp_path / "workers.log")],
        cwd=BENCH.parent, capture_output=True, text=True, timeout=600, env=bench_env(), check=False,
    )  # fmt: skip
    log = (
        (tmp_path / "workers.log").read_text(encoding="utf-8", errors="replace")
        if (tmp_path / "workers.log").exists()
        else ""
    )
    assert completed.returncode == 0, f"{completed.stdout[-3000:]}\n{completed.stderr[-2000:]}\n{log[-3000:]}"
    (outcome,) = json.loads(report.read_text(encoding="utf-8"))
    assert outcome["violations"] == []
    assert outcome["rounds"] == 5 and outcome["kills"] == 5  # every round ended in a SIGKILL
    result = outcome["result"]
    assert result["steps_done"] > 0 and result["jobs_enqueued"] > 0  # the workload ran between kills
    assert result["lost"] == [] and result["duplicates"] == [] and result["vector_mismatches"] == []
    assert result["active_facts"] > 0 and result["vector_missing"] == result["vector_extra"] == 0
