"""``cognition eval dedup``: the near-duplicate check on labelled pairs with the bundled local
embedder: the report's keys, cosine alone at the same recall, several files pooled, the table,
and files it refuses (line number, Chinese reason, exit 2, nothing embedded)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from amrita_plugin_cognition.cli.commands import cognition
from amrita_plugin_cognition.cli.evaluation import wilson

pytestmark = pytest.mark.embedded_only

BASE = "QQ号10001（昵称小明）于2026-11-29在成都吃了火锅。"
#: A tiny fixed fixture: three rewordings, and five facts that differ in one part.
PAIRS = [
    {"id": "d1", "a": BASE, "b": "小明（QQ号10001）2026年11月29日在成都吃火锅。", "duplicate": True},
    {"id": "d2", "a": BASE, "b": "2026-11-29，QQ号10001（昵称小明）在成都吃了火锅。", "duplicate": True},
    {"id": "d3", "a": "阿杰每周三晚上去健身房。", "b": "阿杰每个星期三晚上去健身房。", "duplicate": True},
    {"id": "n1", "a": BASE, "b": "QQ号10001（昵称小明）于2026-11-30在成都吃了火锅。", "duplicate": False},
    {"id": "n2", "a": BASE, "b": "QQ号10002（昵称小明）于2026-11-29在成都吃了火锅。", "duplicate": False},
    {"id": "n3", "a": BASE, "b": "QQ号10001（昵称小明）于2026-11-29在重庆吃了火锅。", "duplicate": False},
    {"id": "n4", "a": BASE, "b": "QQ号10001（昵称小明）于2026-11-29没有在成都吃火锅。", "duplicate": False},
    {"id": "n5", "a": "阿杰每周三晚上去健身房。", "b": "阿杰每周五晚上去健身房。", "duplicate": False},
]


def _write(path: Path, lines: list[object], head: str = "") -> Path:
    path.write_text(head + "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return path


def test_the_report_scores_the_parts_and_cosine_alone(tmp_path: Path) -> None:
    file = _write(tmp_path / "dedup_small.jsonl", PAIRS, head="# a comment line\n\n")
    result = CliRunner().invoke(cognition, ["eval", "dedup", str(file), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert {key: report[key] for key in ("kind", "pairs", "precision", "recall", "failures")} == {
        "kind": "dedup",
        "pairs": 8,
        "precision": 1.0,
        "recall": 1.0,
        "failures": [],
    }
    assert report["intervals"] == {"precision": wilson(3, 3), "recall": wilson(3, 3)}
    assert report["counts"] == {
        "pairs": 8,
        "duplicates": 3,
        "true_positives": 3,
        "false_positives": 0,
        "false_negatives": 0,
    }
    cosine = report["cosine_only"]
    assert cosine["recall"] == 1.0 and 0 < cosine["threshold"] < 1
    # the pairs differing in one part are as close as the rewordings: cosine alone keeps some
    assert cosine["precision"] < 1.0
    assert "嵌入" in result.stderr  # progress on stderr, stdout is the report alone


def test_several_files_are_pooled_and_shown_as_a_table(tmp_path: Path) -> None:
    folder = tmp_path / "sets"
    folder.mkdir()
    _write(folder / "dedup_a.jsonl", PAIRS[:4])
    wrong = {**PAIRS[4], "id": "mislabelled", "duplicate": True}  # a label the check disagrees with
    _write(folder / "dedup_b.jsonl", [*PAIRS[4:], wrong])
    runner = CliRunner()
    result = runner.invoke(cognition, ["eval", "dedup", str(folder), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["pairs"] == 9 and report["failures"] == ["mislabelled"]
    assert sorted(Path(name).name for name in report["files"]) == ["dedup_a.jsonl", "dedup_b.jsonl"]
    assert report["recall"] == 0.75 and report["precision"] == 1.0
    details = report["failure_details"][0]
    assert details["id"] == "mislabelled" and details["reason"] == "who" and details["expected"] is True
    table = runner.invoke(cognition, ["eval", "dedup", str(folder), "--table"])
    assert table.exit_code == 0, table.output
    assert "近似重复评测" in table.stdout and "只看余弦相似度" in table.stdout and "mislabelled" in table.stdout


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"id": "x", "a": BASE, "duplicate": True}, "缺少字段 b"),
        ({"id": "x", "a": BASE, "b": "  ", "duplicate": True}, "字段 b 不能为空"),
        ({"id": "x", "a": BASE, "b": BASE, "duplicate": "yes"}, "字段 duplicate 的类型不对"),
        ("{not json", "不是有效的 JSON"),
    ],
)
def test_a_bad_line_is_refused_with_its_number(tmp_path: Path, line: object, message: str) -> None:
    file = tmp_path / "dedup_bad.jsonl"
    raw = line if isinstance(line, str) else json.dumps(line, ensure_ascii=False)
    file.write_text(json.dumps(PAIRS[0], ensure_ascii=False) + "\n" + raw + "\n", encoding="utf-8")
    result = CliRunner().invoke(cognition, ["eval", "dedup", str(file), "--json"])
    assert result.exit_code == 2
    assert "第 2 行" in result.stderr and message in result.stderr and str(file) in result.stderr
    assert "嵌入" not in result.stderr  # refused before anything was embedded


def test_an_empty_file_is_bad_input(tmp_path: Path) -> None:
    file = tmp_path / "dedup_empty.jsonl"
    file.write_text("# nothing\n\n", encoding="utf-8")
    result = CliRunner().invoke(cognition, ["eval", "dedup", str(file), "--json"])
    assert result.exit_code == 2 and "没有可评测" in result.stderr


def test_a_sealed_file_is_reported_by_ids_and_counts(tmp_path: Path) -> None:
    """A file recorded in its folder's SEALED.json: the failing pairs by id, no text, said on stderr."""
    wrong = [{**pair, "duplicate": not pair["duplicate"]} for pair in PAIRS[:2]]
    file = _write(tmp_path / "dedup_sealed_x.jsonl", wrong)
    manifest = {"files": {file.name: {"sha256": "0" * 64, "lines": 2, "added": "2026-12-06"}}}
    (tmp_path / "SEALED.json").write_text(json.dumps(manifest), encoding="utf-8")
    for output in ("--json", "--table"):
        result = CliRunner().invoke(cognition, ["eval", "dedup", str(file), output])
        assert result.exit_code == 0, result.output
        assert "小明" not in result.stdout and "成都" not in result.stdout and "封存" in result.stderr
    report = json.loads(CliRunner().invoke(cognition, ["eval", "dedup", str(file), "--json"]).stdout)
    assert report["failures"] == ["d1", "d2"] and report["failure_details"] == [{"id": "d1"}, {"id": "d2"}]
    assert report["counts"]["false_negatives"] == 0 and report["counts"]["false_positives"] == 2
