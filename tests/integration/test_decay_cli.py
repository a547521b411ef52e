"""``ambot cognition sweep``, ``expired list | restore`` and the sweep in ``status``: the commands
in another process on a fresh home, and what a person reads."""

from __future__ import annotations

import pytest

from amrita_plugin_cognition.cli import render, render_decay


@pytest.mark.slow  # starts other processes: runs with tests/e2e (-m slow)
@pytest.mark.embedded_only  # its processes use their own SQLite home: the backend does not reach them
def test_the_cli_sweeps_lists_and_refuses_to_restore_what_is_not_there(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from processes import one_line_error, only_json, run_cli

    home = str(tmp_path / "home")
    swept = run_cli("sweep", "--home", home, "--json")
    assert swept.returncode == 0, swept.stderr[-2000:]
    report = only_json(swept.stdout)
    assert (report["scanned"], report["expired"], report["finished"], report["cursor"]) == (0, 0, True, 0)
    listed = run_cli("expired", "list", "--home", home, "--chat", "group:20001", "--json")
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert only_json(listed.stdout) == {"page": 1, "per_page": 20, "total": 0, "memories": []}
    missing = run_cli("expired", "restore", "5", "--home", home)
    assert missing.returncode == 1 and "没有找到编号为 5 的记忆" in one_line_error(missing)
    status = run_cli("status", "--home", home, "--json")
    assert status.returncode == 0, status.stderr[-2000:]
    decay = only_json(status.stdout)["decay"]
    assert decay["cursor"] == 0 and decay["last_pass"]["scanned"] == 0 and decay["last_finished_at"]


SEED = """
from amrita_plugin_cognition.api import Importance, MemoryDraft, Scope

draft = MemoryDraft(
    "小明把伞落在了羽毛球馆。", Scope("group", "20001"), speaker_id="10001", importance=Importance.LOW
)
now = datetime.now(timezone.utc)
(memory_id,) = (await engine.memories.remember("90001", [draft], now=now - timedelta(days=8))).record_ids.values()
report = await engine.decay.sweep(now=now)
print("seeded", memory_id, report.expired)
"""


@pytest.mark.slow  # starts other processes: runs with tests/e2e (-m slow)
@pytest.mark.embedded_only  # its processes use their own SQLite home: the backend does not reach them
def test_the_cli_lists_and_restores_an_expired_memory(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from processes import only_json, run_cli, seed_home

    home = tmp_path / "home"
    memory_id = int(seed_home(home, SEED).split("seeded")[1].split()[0])
    listed = run_cli("expired", "list", "--home", str(home), "--chat", "group:20001", "--json")
    assert listed.returncode == 0, listed.stderr[-2000:]
    (memory,) = only_json(listed.stdout)["memories"]
    assert (memory["id"], memory["status"], memory["text"]) == (memory_id, "expired", "小明把伞落在了羽毛球馆。")
    assert memory["purge_at"] > memory["invalid_at"]
    table = run_cli("expired", "list", "--home", str(home), "--table", env={"COLUMNS": "200"})
    assert f"#{memory_id}" in table.stdout and "小明把伞落在了羽毛球馆" in table.stdout
    restored = run_cli("expired", "restore", str(memory_id), "--home", str(home), "--json")
    assert restored.returncode == 0, restored.stderr[-2000:]
    assert only_json(restored.stdout)["chat"] == "group:20001"
    again = run_cli("expired", "restore", str(memory_id), "--home", str(home))
    assert again.returncode != 0 and "没有过期" in again.stderr
    status = only_json(run_cli("status", "--home", str(home), "--json").stdout)
    assert status["memories"]["group"] == {"active": 1} and status["decay"]["last_pass"]["expired"] == 1


def test_sweep_expired_and_status_read_as_sentences_and_tables(capsys: pytest.CaptureFixture[str]) -> None:
    render_decay.swept(
        {
            "scanned": 2000,
            "demoted": 3,
            "expired": 5,
            "purged": 1,
            "batches": 2,
            "finished": False,
            "cursor": 2417,
            "elapsed_seconds": 0.42,
        }
    )
    memory = {
        "id": 7,
        "chat": "group:20001",
        "text": "小明把伞落在了羽毛球馆。",
        "invalid_at": "2026-12-08T04:00:00+00:00",
        "purge_at": "2027-01-07T04:00:00+00:00",
    }
    render_decay.expired({"page": 1, "per_page": 20, "total": 1, "memories": [memory]})
    render_decay.restored({"id": 7, "chat": "group:20001", "text": memory["text"]})
    decay = {
        "cursor": 0,
        "last_finished_at": "2026-12-08T04:00:00+00:00",
        "last_pass": {"scanned": 100000, "demoted": 10, "expired": 20, "purged": 30},
        "interval_hours": 24.0,
    }
    print(render._decay_sentence(decay))
    out = capsys.readouterr().out
    assert "读了 2000 条（2 批），降级 3 条，过期 5 条，永久删除 1 条；停在编号 #2417 之后" in out
    assert "#7" in out and "小明把伞落在了羽毛球馆" in out and "2027-01-07" in out and "expired restore" in out
    assert "已恢复记忆 #7（group:20001）" in out
    assert "上一轮完成于 2026-12-08" in out and "读 100000 条，降级 10，过期 20，永久删除 30" in out
    assert "每 24 小时一轮" in out
