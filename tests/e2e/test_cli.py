"""The CLI as a user runs it: ``python -m amrita_plugin_cognition …`` in a fresh process.

Each process that opens the engine costs seconds: assertions are batched into few of them."""

from __future__ import annotations

from pathlib import Path

import pytest
from processes import one_line_error, only_json, run_cli

# Every process here makes its own home (SQLite and embedded Chroma in tmp_path): the server run skips them.
pytestmark = pytest.mark.embedded_only

DATA = Path(__file__).parents[1] / "data"
CONFIG_PARTS = ("config", "amrita_plugin_cognition", "config.toml")


def eval_folders(tmp: Path) -> list[str]:
    return sorted(path.name for path in tmp.iterdir() if path.name.startswith("cognition-eval-"))


def test_eval_recall_reports_quality_isolation_and_staleness(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    result = run_cli("eval", "recall", str(DATA / "recall_small.jsonl"), "--json", env={"TMPDIR": str(tmp)})
    assert result.returncode == 0, result.stderr[-2000:]
    report = only_json(result.stdout)
    assert report["kind"] == "recall" and report["queries"] == 6
    assert report["leaks"] == 0 and report["leak_queries"] == []
    assert report["stale_above_relevant"] == 0
    assert report["overall"]["recall@5"] == 1.0
    assert set(report["by_category"]) == {"paraphrase", "update", "isolation", "private", "keyword"}
    assert report["latency_ms"]["p95"] > 0
    assert "写入记忆" in result.stderr  # progress is shown on stderr
    # q3 names only forbidden ids: it checks isolation, counted as leaks, and has no recall figures
    isolation = report["by_category"]["isolation"]
    assert isolation["queries"] == 1 and isolation["scored"] == 0 and isolation["leaks"] == 0
    assert isolation["recall@5"] is None and isolation["mrr"] is None
    assert report["scored_queries"] == 5 and report["isolation_checks"] == 6
    assert eval_folders(tmp) == []  # the throw-away folder is gone


def test_eval_refuses_a_bad_file_and_leaves_no_folder(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {"TMPDIR": str(tmp)}
    bad = tmp_path / "bad.jsonl"
    lines = (DATA / "recall_small.jsonl").read_text(encoding="utf-8").splitlines()[:3]
    bad.write_text(
        "\n".join([*lines, '{"type": "memory", "id": "x", "scope": {"kind": "channel", "id": "1"}}']), "utf-8"
    )
    result = run_cli("eval", "recall", str(bad), "--json", env=env)
    assert result.returncode == 2
    assert "第 4 行" in one_line_error(result) and str(bad) in result.stderr
    bad.write_text("{not json\n", "utf-8")
    result = run_cli("eval", "recall", str(bad), env=env)
    assert result.returncode == 2 and "第 1 行" in one_line_error(result)
    # a run that fails after its folder exists (a bad setting): one line, and the folder is removed
    result = run_cli("eval", "recall", str(DATA / "recall_small.jsonl"), env={**env, "COGNITION_RECALL__TOP_K": "x"})
    assert result.returncode == 1, result.stderr[-2000:]
    assert "COGNITION_RECALL__TOP_K" in one_line_error(result)
    assert eval_folders(tmp) == []


def test_eval_admission() -> None:
    result = run_cli("eval", "admission", str(DATA / "train/admission_small.jsonl"), "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    report = only_json(result.stdout)
    assert {key: report[key] for key in ("kind", "cases", "recall_by_reason", "false_rejection_rate")} == {
        "kind": "admission",
        "cases": 5,
        "recall_by_reason": {"credential": 1.0, "do_not_remember": 1.0},
        "false_rejection_rate": 0.0,
    }
    assert report["intervals"]["false_rejection_rate"] == [0.0, 0.6576]  # 0 of 2 lines to keep


def test_eval_time_and_gate_meet_their_targets_on_the_bundled_sets(tmp_path: Path) -> None:
    # the larger sets are checked in-process (test_timeresolve, test_gate); here: the command itself
    for name in ("train/time_zh_holdout.jsonl",):
        result = run_cli("eval", "time", str(DATA / name), "--json")
        assert result.returncode == 0, result.stderr[-2000:]
        report = only_json(result.stdout)
        assert report["kind"] == "time" and report["cases"] > 200
        assert report["accuracy"] >= 0.95 and report["false_resolutions"] <= 0.02 * report["cases"]
    for name in ("train/gate_zh_holdout.jsonl",):
        result = run_cli("eval", "gate", str(DATA / name), "--json")
        assert result.returncode == 0, result.stderr[-2000:]
        report = only_json(result.stdout)
        assert report["kind"] == "gate" and report["cases"] > 100
        assert report["false_positive_rate"] <= 0.03 and report["false_negative_rate"] <= 0.05


def test_eval_of_an_empty_file_is_bad_input_for_every_kind(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("# nothing\n\n", "utf-8")
    for kind in ("recall", "admission", "time", "gate", "dedup"):
        result = run_cli("eval", kind, str(empty), "--json")
        assert result.returncode == 2, (kind, result.stdout, result.stderr[-2000:])
        assert "没有可评测" in one_line_error(result), kind
        assert "正在" not in result.stderr  # refused before anything was loaded


def test_jobs_commands_on_a_standalone_home(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    result = run_cli("jobs", "list", "--home", home, "--table")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "没有任务" in result.stdout
    result = run_cli("jobs", "drop", "--home", home, "--yes")
    assert result.returncode == 2 and "任务编号" in result.stderr  # a usage error, refused at once


def test_status_on_a_standalone_home(tmp_path: Path) -> None:
    result = run_cli("status", "--home", str(tmp_path / "home"), "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    status = only_json(result.stdout)
    assert status["active_total"] == 0 and status["outbox"]["pending"] == 0
    assert status["index"]["healthy"] is True and status["configured_embedder"]["protocol"] == "local"
    assert "正在打开数据目录" in result.stderr


def test_a_bad_configuration_fails_in_one_line_naming_the_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = home.joinpath(*CONFIG_PARTS)
    config.parent.mkdir(parents=True)
    config.write_text('[embedder]\nprovder = "local"\n', encoding="utf-8")
    result = run_cli("status", "--home", str(home), "--json")
    assert result.returncode == 1
    line = one_line_error(result)
    assert str(config) in line and "embedder.provder" in line
    # a data folder that cannot be created: named, with the file that says where it is
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    config.write_text(f'data_dir = "{blocker / "data"}"\n', encoding="utf-8")
    result = run_cli("backup", "create", "--home", str(home))
    assert result.returncode == 1
    line = one_line_error(result)
    assert str(blocker / "data") in line and str(config) in line


def test_reindex_beside_a_process_holding_the_embedded_index_refuses_and_status_says_who(tmp_path: Path) -> None:
    """`ambot cognition reindex --yes` while the bot runs: the embedded folder is the bot's; the
    command says so and leaves it alone instead of dropping the bot's collections."""
    from processes import start_index_holder

    home = tmp_path / "home"
    folder = home / "data" / "amrita_plugin_cognition" / "chroma"
    holder = start_index_holder(folder)
    try:
        result = run_cli("reindex", "--yes", "--home", str(home))
        assert result.returncode == 1, result.stdout + result.stderr[-2000:]
        assert f"进程号 {holder.pid}" in one_line_error(result)
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
