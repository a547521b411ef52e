"""``--help``, usage errors and the pure evaluations answer without loading the bot.

The click group named by the ``ambot.commands`` entry point is invoked in a fresh interpreter,
as ambot would after resolving the entry point; afterwards NoneBot must not be initialised and
neither the engine, nor the Amrita chat plugin, nor the storage libraries may have been imported.
(A timed assertion would be flaky on a busy machine: what is loaded is what costs the time.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tomli

# Nothing here opens storage: the server run skips it.
pytestmark = pytest.mark.embedded_only

ROOT = Path(__file__).parents[2]
DATA = Path(__file__).parents[1] / "data"

PROBE = r"""
import importlib, json, sys
from click.testing import CliRunner

target, empty, cases = sys.argv[1:4]
module, attribute = target.split(":")
group = getattr(importlib.import_module(module), attribute)
calls = {
    "help": ["--help"],
    "status_help": ["status", "--help"],
    "eval_help": ["eval", "--help"],
    "typo": ["statsu"],
    "bad_kind": ["eval", "nope", cases],
    "missing_file": ["eval", "time", "/no/such/file.jsonl"],
    "bad_option": ["backup", "list", "--bogus"],
    "empty_recall": ["eval", "recall", empty],
    "empty_gate": ["eval", "gate", empty],
    "time": ["eval", "time", cases, "--json"],
}
results = {}
for name, args in calls.items():
    result = CliRunner().invoke(group, args, prog_name="ambot cognition")
    results[name] = {"code": result.exit_code, "stdout": result.stdout, "stderr": result.stderr}
import nonebot
try:
    nonebot.get_driver()
    ready = True
except ValueError:
    ready = False
heavy = ("amrita_plugin_cognition.engine", "amrita_plugin_cognition.runtime", "amrita.plugins.chat",
         "chromadb", "sqlalchemy", "nonebot_plugin_orm", "rich")
print(json.dumps({"results": results, "ready": ready, "loaded": [name for name in heavy if name in sys.modules]}))
"""


def entry_point_target() -> str:
    project = tomli.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return str(project["entry-points"]["ambot.commands"]["cognition"])


def test_help_and_usage_errors_do_not_load_the_bot(tmp_path: Path) -> None:
    target = entry_point_target()
    assert "[" not in target  # no ``[full_load]``: ambot would load the whole bot before --help
    empty = tmp_path / "empty.jsonl"
    empty.write_text("# nothing\n", encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("COGNITION_")}
    completed = subprocess.run(
        [sys.executable, "-c", PROBE, target, str(empty), str(DATA / "train/time_zh_holdout.jsonl")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    probe = json.loads(completed.stdout)
    results = probe["results"]
    assert probe["ready"] is False and probe["loaded"] == [], probe
    assert results["help"]["code"] == 0 and "status" in results["help"]["stdout"]
    assert "退出码" in results["help"]["stdout"]
    assert results["status_help"]["code"] == 0 and "--json" in results["status_help"]["stdout"]
    eval_help = results["eval_help"]["stdout"]
    for kind, words in {"recall": "召回", "admission": "准入", "time": "时间解析", "gate": "绝对化"}.items():
        assert f"{kind}" in eval_help and words in eval_help
    assert "docs/evaluation.md" in eval_help
    for name in ("typo", "bad_kind", "missing_file", "bad_option"):
        assert results[name]["code"] == 2, (name, results[name])
    for name in ("empty_recall", "empty_gate"):
        assert results[name]["code"] == 2 and results[name]["stdout"] == "", (name, results[name])
        assert results[name]["stderr"].startswith("错误:") and len(results[name]["stderr"].splitlines()) == 1
    assert results["time"]["code"] == 0 and json.loads(results["time"]["stdout"])["kind"] == "time"


def test_module_help_answers_without_a_data_folder(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "amrita_plugin_cognition", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert completed.returncode == 0 and "python -m amrita_plugin_cognition" in completed.stdout
    assert completed.stderr == "" and list(tmp_path.iterdir()) == []
