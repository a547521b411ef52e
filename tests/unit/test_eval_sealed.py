"""A file recorded in the ``SEALED.json`` of its folder is measured without showing its texts:
every evaluator's report keeps the failing ids and the counts, and stderr says why. The files
here are written in a temporary folder with its own manifest (the real sealed split is never read
by a test)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from amrita_plugin_cognition.cli.commands import cognition
from amrita_plugin_cognition.cli.sealed import is_sealed, without_texts

pytestmark = pytest.mark.embedded_only

NOW = "2026-11-30T12:00:00+08:00"
SECRET_WORDS = ("独角兽牧场", "蓝鲸灯塔", "银杏邮局")


def _write(path: Path, *objects: object) -> Path:
    path.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in objects), encoding="utf-8")
    return path


def _seal(folder: Path, *names: str) -> None:
    files = {name: {"sha256": "0" * 64, "lines": 1, "added": "2026-12-06"} for name in names}
    (folder / "SEALED.json").write_text(json.dumps({"files": files}), encoding="utf-8")


def _files(folder: Path) -> dict[str, Path]:
    # every line fails, so that an unsealed report would print its text
    time_case = {"id": "t1", "now": NOW, "text": f"我昨天在{SECRET_WORDS[0]}", "expect_date": "2026-11-20"}
    gate_case = {"id": "g1", "text": f"他昨天去了{SECRET_WORDS[1]}", "absolute": True}
    admission_case = {"id": "a1", "text": f"我的密码是 hunter2x9，在{SECRET_WORDS[2]}", "admit": True}
    return {
        "time": _write(folder / "time_x.jsonl", time_case),
        "gate": _write(folder / "gate_x.jsonl", gate_case),
        "admission": _write(folder / "admission_x.jsonl", admission_case),
    }


@pytest.mark.parametrize("table", [False, True])
def test_a_sealed_file_is_reported_by_ids_and_counts(tmp_path: Path, table: bool) -> None:
    files = _files(tmp_path)
    _seal(tmp_path, *(path.name for path in files.values()))
    runner = CliRunner()
    for kind, path in files.items():
        result = runner.invoke(cognition, ["eval", kind, str(path), "--table" if table else "--json"])
        assert result.exit_code == 0, result.output
        assert not any(word in result.stdout for word in SECRET_WORDS), (kind, result.stdout)
        assert "封存" in result.stderr
        if not table:
            report = json.loads(result.stdout)
            assert report["texts_withheld"] == [str(path)]
            if kind != "admission":
                assert report["failures"] == [{"id": path.name[0] + "1"}]
                assert report["cases"] == 1


def test_a_file_not_in_the_manifest_keeps_its_texts(tmp_path: Path) -> None:
    files = _files(tmp_path)
    _seal(tmp_path, "something_else.jsonl")
    result = CliRunner().invoke(cognition, ["eval", "gate", str(files["gate"]), "--json"])
    assert result.exit_code == 0 and SECRET_WORDS[1] in result.stdout and "封存" not in result.stderr
    # pooled with a sealed file: the whole report is withheld
    other = _write(tmp_path / "gate_y.jsonl", {"id": "g2", "text": "她昨天去了公园", "absolute": True})
    _seal(tmp_path, other.name)
    pooled = CliRunner().invoke(cognition, ["eval", "gate", str(files["gate"]), str(other), "--json"])
    assert pooled.exit_code == 0, pooled.output
    report = json.loads(pooled.stdout)
    assert report["texts_withheld"] == [str(other)] and SECRET_WORDS[1] not in pooled.stdout
    assert report["failures"] == [{"file": str(files["gate"]), "id": "g1"}, {"file": str(other), "id": "g2"}]


def test_is_sealed_and_without_texts(tmp_path: Path) -> None:
    path = tmp_path / "dedup_x.jsonl"
    assert not is_sealed(path)
    _seal(tmp_path, path.name)
    assert is_sealed(path) and not is_sealed(tmp_path / "dedup_y.jsonl")
    (tmp_path / "SEALED.json").write_text("not json", encoding="utf-8")
    assert is_sealed(tmp_path / "dedup_y.jsonl")  # an unreadable manifest: withhold
    report = {
        "kind": "dedup",
        "precision": 0.5,
        "failures": ["d1"],
        "failure_details": [{"id": "d1", "a": "甲", "b": "乙", "detail": "甲 ≠ 乙", "similarity": 0.9}],
        "files": {"x": {"failures": [{"id": "t1", "file": "x", "text": "甲"}]}},
        "model": {"last_error": "甲", "errors": 1},
    }
    assert without_texts(report) == {
        "kind": "dedup",
        "precision": 0.5,
        "failures": ["d1"],
        "failure_details": [{"id": "d1"}],
        "files": {"x": {"failures": [{"id": "t1", "file": "x"}]}},
        "model": {"errors": 1},
    }
