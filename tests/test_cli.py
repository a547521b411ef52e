"""The CLI as a user runs it: ``python -m amrita_plugin_cognition …`` in a fresh process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).parent / "data"


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    for key in [key for key in env if key.startswith("COGNITION_")]:
        env.pop(key)
    return subprocess.run(
        [sys.executable, "-m", "amrita_plugin_cognition", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=cwd,
    )


def only_json(output: str) -> dict:  # type: ignore[type-arg]
    """``--json`` output is one JSON document and nothing else (migration messages go to stderr)."""
    return json.loads(output)


def test_eval_recall_reports_quality_isolation_and_staleness() -> None:
    result = run_cli("eval", "recall", str(DATA / "recall_small.jsonl"), "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    report = only_json(result.stdout)
    assert report["kind"] == "recall" and report["queries"] == 6
    assert report["leaks"] == 0 and report["leak_queries"] == []
    assert report["stale_above_relevant"] == 0
    assert report["overall"]["recall@5"] == 1.0
    assert set(report["by_category"]) == {"paraphrase", "update", "isolation", "private", "keyword"}
    assert report["latency_ms"]["p95"] > 0
    assert "写入记忆" in result.stderr  # progress is shown on stderr


def test_eval_refuses_a_malformed_file_with_the_line_number(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    lines = (DATA / "recall_small.jsonl").read_text(encoding="utf-8").splitlines()[:3]
    bad.write_text(
        "\n".join([*lines, '{"type": "memory", "id": "x", "scope": {"kind": "channel", "id": "1"}}']), "utf-8"
    )
    result = run_cli("eval", "recall", str(bad), "--json")
    assert result.returncode == 2
    assert "line 4" in result.stderr and result.stdout.strip() == ""
    bad.write_text("{not json\n", "utf-8")
    result = run_cli("eval", "recall", str(bad))
    assert result.returncode == 2 and "line 1" in result.stderr


def test_eval_admission() -> None:
    result = run_cli("eval", "admission", str(DATA / "admission_small.jsonl"), "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    report = only_json(result.stdout)
    assert report == {
        "kind": "admission",
        "cases": 5,
        "recall_by_reason": {"credential": 1.0, "do_not_remember": 1.0},
        "false_rejection_rate": 0.0,
    }


def test_status_on_a_standalone_home(tmp_path: Path) -> None:
    result = run_cli("status", "--home", str(tmp_path / "home"), "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    status = only_json(result.stdout)
    assert status["active_total"] == 0 and status["outbox"]["pending"] == 0
    assert status["index"]["healthy"] is True and status["configured_embedder"]["protocol"] == "local"


def test_reindex_beside_a_process_holding_the_embedded_index_refuses_and_status_says_who(tmp_path: Path) -> None:
    """`ambot cognition reindex --yes` while the bot runs: the embedded folder is the bot's; the
    command says so and leaves it alone instead of dropping the bot's collections."""
    from test_index_owner import _start_holder

    home = tmp_path / "home"
    folder = home / "data" / "amrita_plugin_cognition" / "chroma"
    holder = _start_holder(folder)
    try:
        result = run_cli("reindex", "--yes", "--home", str(home))
        assert result.returncode == 1, result.stdout + result.stderr[-2000:]
        assert f"进程号 {holder.pid}" in result.stderr
        status = run_cli("status", "--json", "--home", str(home))
        assert status.returncode == 0, status.stderr[-2000:]
        index = only_json(status.stdout)["index"]
        assert index["healthy"] is False and f"进程号 {holder.pid}" in index["error"]
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.flush()
        holder.wait(30)
    assert run_cli("reindex", "--yes", "--home", str(home)).returncode == 0  # free again
