"""``import amrita-plugin-memory`` as a user runs it, on data amrita-plugin-memory writes today:
the fixture is made afresh by the plugin itself (``tests/apm_fixture.py``, in its own process),
then checked, imported, imported again (nothing new) and given a broken source (one line)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from processes import one_line_error, only_json, run_cli

pytestmark = pytest.mark.embedded_only

FIXTURE = Path(__file__).parents[1] / "apm_fixture.py"


def _make_apm_data(out: Path) -> dict[str, str]:
    if sys.version_info < (3, 11):
        pytest.skip("amrita-plugin-memory needs Python 3.11 or later")
    made = subprocess.run(
        [sys.executable, str(FIXTURE), str(out)], capture_output=True, text=True, timeout=300, check=False
    )
    assert made.returncode == 0, made.stderr[-3000:]
    return json.loads(made.stdout.strip().splitlines()[-1])


def test_import_amrita_plugin_memory_from_the_command_line(tmp_path: Path) -> None:
    made = _make_apm_data(tmp_path / "apm")
    home = str(tmp_path / "home")
    common = ("--from", made["data_dir"], "--bot", "123456", "--profile-user", "10001", "--home", home)

    checked = run_cli("import", "amrita-plugin-memory", *common, "--dry-run", "--table")
    assert checked.returncode == 0, checked.stderr[-3000:]
    assert "检查（未写入）" in checked.stdout and "含密钥或口令 1" in checked.stdout
    assert "检查" in checked.stderr and "9/9" in checked.stderr  # the progress bar, on stderr

    first = only_json(run_cli("import", "amrita-plugin-memory", *common, "--json").stdout)
    assert first["kinds"]["memory"] == {"imported": 3, "skipped": 0, "refused": {"credential": 1}}
    assert first["kinds"]["memo"]["imported"] == 2 and first["kinds"]["knowledge"]["imported"] == 1
    second = only_json(run_cli("import", "amrita-plugin-memory", *common, "--json").stdout)
    assert {kind: tally["imported"] for kind, tally in second["kinds"].items()} == dict.fromkeys(second["kinds"], 0)
    assert second["kinds"]["memory"]["skipped"] == 3

    facts = only_json(run_cli("inspect", "--home", home, "--bot", "123456", "--json").stdout)
    by_chat = sorted((memory["chat"], memory["provenance"]) for memory in facts["memories"])
    assert by_chat == [("group:20001", "imported"), ("private:10001", "imported"), ("private:10002", "imported")]
    audit = only_json(run_cli("audit", "--home", home, "--json").stdout)
    assert [(entry["action"], entry["count"]) for entry in audit] == [("import", 7)]

    index = Path(made["data_dir"]) / "knowledge_index.json"
    index.write_text("[{", encoding="utf-8")
    broken = run_cli("import", "amrita-plugin-memory", *common, "--json")
    assert broken.returncode != 0
    assert "knowledge_index.json" in one_line_error(broken)


def test_import_undefined_from_the_command_line(tmp_path: Path) -> None:
    from undefined_fixture import make

    cognitive = make(tmp_path / "undefined")
    home = str(tmp_path / "home")
    common = ("--from", str(cognitive), "--bot", "123456", "--pins-chat", "private:40001", "--home", home)
    checked = only_json(run_cli("import", "undefined", *common, "--dry-run", "--json").stdout)
    first = only_json(run_cli("import", "undefined", *common, "--json").stdout)
    assert first["kinds"] == checked["kinds"] and not first["dry_run"] and checked["dry_run"]
    assert first["kinds"]["job"]["imported"] == 1 and first["kinds"]["note"]["imported"] == 3
    jobs = only_json(run_cli("jobs", "list", "--home", home, "--json").stdout)
    assert [(job["scope"], job["state"]) for job in jobs] == [("group:30001", "pending")]
    second = only_json(run_cli("import", "undefined", *common, "--json").stdout)
    assert sum(tally["imported"] for tally in second["kinds"].values()) == 0

    missing = run_cli("import", "undefined", "--from", str(tmp_path / "nowhere"), "--bot", "123456", "--home", home)
    assert missing.returncode == 2 and "nowhere" in one_line_error(missing)
