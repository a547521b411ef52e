"""What a person reads: sentences and tables instead of dict reprs, and one line per failure."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from amrita_plugin_cognition.cli import failures, render, render_eval
from amrita_plugin_cognition.cli.commands import cognition
from amrita_plugin_cognition.cli.evaluation import EvalInputError
from amrita_plugin_cognition.engine.backup import BackupInfo
from amrita_plugin_cognition.errors import ConfigurationError, EngineUnavailable, InvalidInput

pytestmark = pytest.mark.embedded_only

EMBEDDER = {"protocol": "local", "model": "universal-sentence-encoder-multilingual-v3", "url": "", "dimension": 512}
STATUS = {
    "fingerprint": dict(EMBEDDER),
    "configured_embedder": dict(EMBEDDER),
    "memories": {"group": {"active": 3, "superseded": 1}, "private": {"active": 2, "forgotten": 4}},
    "active_total": 5,
    "top_scopes": [{"bot": "123456", "scope": "group:20001", "active": 3}],
    "outbox": {"pending": 2, "oldest": "2026-11-30T01:02:03+00:00", "failing": 0, "dead": 1, "last_error": None},
    "jobs": {"pending": 0, "processing": 0, "dead": 1, "oldest_pending": None, "last_error": "boom"},
    "index": {
        "backend": "embedded /bot/data/chroma",
        "generation": 2,
        "vectors": 4,
        "missing": 1,
        "stale": 0,
        "missing_ids": {"123456 group:20001": [7]},
        "stale_ids": {},
        "healthy": True,
    },
    "llm": {"preset": "", "purposes": {}, "total": {"calls": 0}},
}
RECALL = {
    "kind": "recall",
    "queries": 3,
    "scored_queries": 2,
    "isolation_checks": 3,
    "memories": 4,
    "stored": 4,
    "overall": {"recall@1": 0.5, "recall@5": 1.0, "recall@10": 1.0, "recall@20": 1.0, "hit@5": 1.0, "mrr": 0.75},
    "by_category": {
        "isolation": {
            **dict.fromkeys(("recall@1", "recall@5", "recall@10", "recall@20", "hit@5", "mrr")),
            "queries": 1,
            "scored": 0,
            "leaks": 2,
            "leak_queries": ["q3"],
        },
        "paraphrase": {
            "recall@1": 0.5,
            "recall@5": 1.0,
            "recall@10": 1.0,
            "recall@20": 1.0,
            "hit@5": 1.0,
            "mrr": 0.75,
            "queries": 2,
            "scored": 2,
            "leaks": 0,
            "leak_queries": [],
        },
    },
    "leaks": 2,
    "leak_queries": ["q3"],
    "stale_above_relevant": 0,
    "latency_ms": {"p50": 10.0, "p95": 20.0, "mean": 12.0},
}


def test_status_reads_as_sentences(capsys: pytest.CaptureFixture[str]) -> None:
    render.status(STATUS)
    out = capsys.readouterr().out
    assert "{'" not in out and "{" not in out
    assert "记忆：有效 5 条（群聊 3 条，私聊 2 条；已被取代 1 条，已遗忘 4 条）" in out
    assert "嵌入模型：local 模型 universal-sentence-encoder-multilingual-v3（512 维）；与已存向量一致" in out
    assert "缺 1 条" in out and "#7" in out and "repair" in out
    assert "已放弃 1 条" in out and "outbox retry" in out
    # the job queue says the outbox's word: dead (given up after its last attempt)
    assert "处理中 0 个，已放弃 1 个" in out and "jobs list --state dead" in out
    assert "group:20001" in out
    assert "向量副本" not in out  # complete (or a report from before the copy): nothing to say
    render.status({**STATUS, "index": {**STATUS["index"], "copy_complete": False}})  # type: ignore[dict-item]
    assert "向量副本：尚未补齐" in capsys.readouterr().out


def test_backup_list_shows_size_time_and_counts(capsys: pytest.CaptureFixture[str]) -> None:
    info = BackupInfo(
        Path("/bot/data/backups/cognition-20261130-010203.jsonl.gz"),
        "2026-11-30T01:02:03+00:00",
        {"memory": 12, "memo": 1, "memo_revision": 3, "pin": 2, "barrier": 0},
        1536,
    )
    render.backup_list([info])
    out = capsys.readouterr().out
    assert "cognition-20261130-010203.jsonl.gz" in out and "1.5 KiB" in out
    assert render.local_time("2026-11-30T01:02:03+00:00") in out
    assert "记忆" in out and "12" in out and "遗忘屏障" in out
    assert "画像卡片" in out and "画像历史" in out  # a backup made before cards: 0 of each
    with_cards = BackupInfo(info.path, info.created_at, {**info.counts, "profile": 77, "profile_revision": 55}, 2048)
    render.backup_list([with_cards])
    row = next(line for line in capsys.readouterr().out.splitlines() if "cognition-" in line)
    assert "77" in row and "55" in row
    assert "画像卡片 77 条" in render.backup_counts(with_cards.counts)
    render.backup_list([])
    assert "还没有备份" in capsys.readouterr().out


def test_recall_report_counts_isolation_leaks_instead_of_a_zero_recall(capsys: pytest.CaptureFixture[str]) -> None:
    render_eval.eval_report(RECALL)
    out = capsys.readouterr().out
    isolation = next(line for line in out.splitlines() if line.startswith("isolation"))
    assert "0.000" not in isolation and "—" in isolation and "2 条" in isolation
    assert "泄漏 2 条" in out and "q3" in out
    overall = next(line for line in out.splitlines() if line.startswith("总体"))
    assert "1.000" in overall and "0.750" in overall


def test_failures_are_one_line_with_the_right_exit_code(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = ConfigurationError("配置文件 /bot/config/cognition.toml：未知配置项 embedder.provder")
    assert failures.translate(config).exit_code == 1
    assert failures.translate(config).message == config.zh
    assert failures.translate(InvalidInput("备份文件不完整")).exit_code == 2
    assert "/bot/config/cognition.toml" in failures.translate(EngineUnavailable(config.zh)).message
    missing = failures.translate(FileNotFoundError(2, "No such file or directory", "/bot/data/x"))
    assert missing.exit_code == 1 and "/bot/data/x" in missing.message
    assert failures.translate(EvalInputError(3, "missing field 'text'", "缺少字段 text")).exit_code == 2
    # an unexpected error: one line that says where its traceback went
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    try:
        raise RuntimeError("something odd\nsecond line")
    except RuntimeError as error:
        unexpected = failures.translate(error)
    log = tmp_path / failures.ERROR_LOG_NAME
    assert unexpected.exit_code == 1 and "\n" not in unexpected.message
    assert "something odd" in unexpected.message and str(log) in unexpected.message
    assert "Traceback" in log.read_text(encoding="utf-8")


def test_usage_errors_exit_2_in_process(tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(cognition, ["jobs", "drop", "--yes"]).exit_code == 2
    assert runner.invoke(cognition, ["memo", "history", "1", "channel:2"]).exit_code == 2
    not_a_backup = tmp_path / "x.jsonl.gz"
    not_a_backup.write_text("plain text", encoding="utf-8")
    result = runner.invoke(cognition, ["backup", "restore", str(not_a_backup), "--yes"])
    assert result.exit_code == 2 and "不是本插件的备份文件" in result.stderr
