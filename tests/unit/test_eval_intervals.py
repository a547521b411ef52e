"""``cognition eval time|gate|admission``: every rate with its 95 % Wilson interval, several files
or a folder at once (each file's report and the pooled one), and the keys of a one-file report
kept as they were."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from amrita_plugin_cognition.cli import render_eval
from amrita_plugin_cognition.cli.commands import cognition
from amrita_plugin_cognition.cli.eval_command import evaluation_files, pooled
from amrita_plugin_cognition.cli.eval_gate import run_gate_eval
from amrita_plugin_cognition.cli.eval_time import run_time_eval
from amrita_plugin_cognition.cli.evaluation import run_admission_eval, wilson

pytestmark = pytest.mark.embedded_only

NOW = "2026-11-30T12:00:00+08:00"


def _write(path: Path, *objects: object) -> Path:
    path.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in objects), encoding="utf-8")
    return path


def test_wilson_interval_values() -> None:
    assert wilson(0, 180) == [0.0, 0.0209]  # none of 180 still allows about 2 %
    assert wilson(180, 180) == [0.9791, 1.0]
    assert wilson(5, 10) == [0.2366, 0.7634]
    assert wilson(1069, 1080) == [0.9819, 0.9943]
    assert wilson(0, 0) == [0.0, 1.0]  # nothing measured: nothing known
    lower, upper = wilson(3, 300)
    assert lower < 0.01 < upper


def test_one_file_reports_keep_their_keys_and_add_intervals(tmp_path: Path) -> None:
    admission = _write(
        tmp_path / "admission_a.jsonl",
        {"id": "1", "text": "我的密码是 hunter2，别告诉别人", "admit": False, "reason": "credential"},
        {"id": "2", "text": "我最近在学 Python 的 asyncio", "admit": True},
    )
    report = run_admission_eval(admission)
    assert {"kind", "cases", "recall_by_reason", "false_rejection_rate"} <= set(report)
    assert report["intervals"] == {
        "recall_by_reason": {"credential": wilson(1, 1)},
        "false_rejection_rate": wilson(0, 1),
    }
    time = _write(
        tmp_path / "time_a.jsonl",
        {"id": "a", "now": NOW, "text": "昨天到的", "expect_date": "2026-11-29"},
        {"id": "b", "now": NOW, "text": "明天见", "expect_date": None},
    )
    report = run_time_eval(time)
    assert {"kind", "cases", "accuracy", "false_resolutions", "misses", "wrong_dates"} <= set(report)
    assert report["intervals"] == {"accuracy": wilson(1, 2)}
    gate = _write(
        tmp_path / "gate_a.jsonl",
        {"id": "a", "text": "QQ号10001（昵称小明）于2026-11-29在成都吃了火锅。", "absolute": True},
        {"id": "b", "text": "他昨天在这里吃了火锅。", "absolute": False},
    )
    report = run_gate_eval(gate)
    assert {"kind", "cases", "accuracy", "false_positive_rate", "false_negative_rate"} <= set(report)
    assert report["intervals"] == {
        "accuracy": wilson(2, 2),
        "false_positive_rate": wilson(0, 1),
        "false_negative_rate": wilson(0, 1),
    }


def test_pooled_report_adds_up_the_counts_of_every_file(tmp_path: Path) -> None:
    first = _write(
        tmp_path / "time_1.jsonl",
        {"id": "a", "now": NOW, "text": "昨天到的", "expect_date": "2026-11-29"},
        {"id": "b", "now": NOW, "text": "明天见", "expect_date": None},
    )
    second = _write(
        tmp_path / "time_2.jsonl",
        {"id": "c", "now": NOW, "text": "明天见", "expect_date": "2026-12-01"},
        {"id": "d", "now": NOW, "text": "最近好累", "expect_date": "2026-11-29"},
        {"id": "e", "now": NOW, "text": "前天到的", "expect_date": "2026-11-28"},
    )
    _write(tmp_path / "gate_x.jsonl", {"id": "x", "text": "他来了", "absolute": False})
    assert evaluation_files("time", (tmp_path,)) == [first, second]  # a folder: its time*.jsonl only
    report = pooled("time", {str(path): run_time_eval(path) for path in (first, second)})
    assert report["cases"] == 5 and report["accuracy"] == 0.6
    assert (report["false_resolutions"], report["misses"], report["wrong_dates"]) == (1, 1, 0)
    assert report["intervals"] == {"accuracy": wilson(3, 5)}
    assert set(report["files"]) == {str(first), str(second)}
    assert [item["file"] for item in report["failures"]] == [str(first), str(second)]


def test_eval_command_takes_files_and_folders(tmp_path: Path) -> None:
    for name, lines in (("admission_1", 2), ("admission_2", 3)):
        _write(
            tmp_path / f"{name}.jsonl",
            *(
                {"id": str(i), "text": f"我的密码是 hunter{i}x9，别告诉别人", "admit": False, "reason": "credential"}
                for i in range(lines)
            ),
            {"id": "k", "text": "我最近在学 Python 的 asyncio", "admit": True},
        )
    runner = CliRunner()
    result = runner.invoke(cognition, ["eval", "admission", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)  # stdout alone: the JSON document
    assert report["cases"] == 7 and report["counts"]["caught_by_reason"] == {"credential": [5, 5]}
    assert report["intervals"]["recall_by_reason"]["credential"] == wilson(5, 5)
    assert list(report["files"]) == [str(tmp_path / "admission_1.jsonl"), str(tmp_path / "admission_2.jsonl")]
    table = runner.invoke(
        cognition, ["eval", "admission", str(tmp_path / "admission_1.jsonl"), str(tmp_path), "--table"]
    )
    assert table.exit_code == 0, table.output
    assert "合计（2 个文件）" in table.output and "95 %" in table.output  # a file named twice counts once
    assert f"1.000 [{wilson(5, 5)[0]:.3f}, 1.000]" in table.output  # the pooled credential recall
    empty = tmp_path / "nothing"
    empty.mkdir()
    refused = runner.invoke(cognition, ["eval", "gate", str(empty), "--json"])
    assert refused.exit_code == 2
    one_recall = runner.invoke(cognition, ["eval", "recall", str(tmp_path), "--json"])
    assert one_recall.exit_code == 2


def test_the_table_shows_each_rate_with_its_interval(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    gate = _write(
        tmp_path / "gate.jsonl",
        *({"id": str(i), "text": "QQ号10001（昵称小明）于2026-11-29吃了火锅。", "absolute": True} for i in range(10)),
    )
    render_eval.eval_report(run_gate_eval(gate))
    out = capsys.readouterr().out
    assert f"1.000 [{wilson(10, 10)[0]:.3f}, 1.000]" in out and "0.000 [0.000, 1.000]" in out
