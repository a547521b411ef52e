"""A damaged backup is refused as a whole, naming the file and the line (issue 20, item 15): a row
without its content hash, a time that is no time, a line that is no JSON (each raised a bare
KeyError / ValueError / JSONDecodeError), a row past the limits of a normal write (a fact of
200,000 characters was restored), and their kind. The bank is left as it was, and the CLI answers
with exit code 2 and one line."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import NOW, group, make_engine, new_bot

from amrita_plugin_cognition.errors import InvalidInput

Row = dict[str, Any]


def _memory(table: str, change: Callable[[Row], None]) -> Callable[[list[Any]], None]:
    """Apply ``change`` to the first row of ``table``."""

    def damage(items: list[Any]) -> None:
        change(next(item["row"] for item in items if isinstance(item, dict) and item.get("table") == table))

    return damage


def _first_row_line(items: list[Any], table: str) -> int:
    return next(index for index, item in enumerate(items, 1) if isinstance(item, dict) and item.get("table") == table)


#: (case, how the file is damaged, the table of the damaged line or None for the line itself, words of the error)
DAMAGES: list[tuple[str, Callable[[list[Any]], None], str, str]] = [
    ("missing_hash", _memory("memory", lambda row: row.pop("content_hash")), "memory", "content_hash"),
    ("bad_date", _memory("memory", lambda row: row.update(recorded_at="昨天下午")), "memory", "recorded_at"),
    ("too_long", _memory("memory", lambda row: row.update(text="长" * 200_000)), "memory", "memory_max_chars"),
    ("bad_status", _memory("memory", lambda row: row.update(status="deleted")), "memory", "status"),
    ("bad_id", _memory("memory", lambda row: row.update(id=10**20)), "memory", "id"),
    ("bad_tags", _memory("memory", lambda row: row.update(tags="不是 JSON")), "memory", "tags"),
    ("long_pin", _memory("pin", lambda row: row.update(content="提" * 201)), "pin", "content"),
    ("long_memo", _memory("memo", lambda row: row.update(content="备" * 1001)), "memo", "memo_max_chars"),
    ("long_body", _memory("profile", lambda row: row.update(body="正" * 801)), "profile", "body_max_chars"),
    ("long_name", _memory("memory", lambda row: row.update(speaker_name="名" * 129)), "memory", "speaker_name"),
    # a card key no card can have (a group's card has only the part ``group``)
    ("bad_part", _memory("profile", lambda row: row.update(part="group:abc")), "profile", "画像键"),
]


async def _bank(engine: Any) -> tuple[Any, ...]:
    """Everything a restore would replace, as plain values (to compare before and after)."""
    from sqlalchemy import select

    from amrita_plugin_cognition.store.backup import TABLES, encode

    bank = []
    async with engine.session() as session:
        for model in TABLES.values():
            rows = (await session.execute(select(model))).scalars()
            bank.append(sorted(json.dumps(encode(row), ensure_ascii=False, default=str) for row in rows))
    return tuple(bank)


def _rewrite(source: Path, target: Path, damage: Callable[[list[Any]], None]) -> list[Any]:
    with gzip.open(source, "rt", encoding="utf-8") as handle:
        items = [json.loads(line) for line in handle]
    damage(items)
    with gzip.open(target, "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(item, ensure_ascii=False) + "\n" for item in items)
    return items


async def _banked(tmp_root: Path, chroma_port: int | None, folder: Path) -> tuple[Any, Path]:
    """An engine with a fact, a memo, a pin and a card, and a good backup of it in ``folder``."""
    from amrita_plugin_cognition.domain.profiles import Card
    from amrita_plugin_cognition.engine import backup, notes, profiles

    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    context = group(bot, "20001", "10001", role="admin")
    fact = await engine.memories.write(context, "group", "群20001每周日晚上有读书会。", now=NOW)
    await notes.update_memo(engine, context, "本群是读书群。")
    await notes.add_pin(engine, context, "周日提醒大家读书会")
    await profiles.save(engine, Card(bot, "group", "20001", "group", body="读书群。", source_ids=[fact.id]), now=NOW)
    info = await backup.create_backup(engine, folder / "good.jsonl.gz")
    return engine, info.path


@pytest.mark.parametrize(("name", "damage", "table", "words"), DAMAGES, ids=[case[0] for case in DAMAGES])
async def test_a_damaged_row_refuses_the_file_naming_its_line(  # type: ignore[no-untyped-def]
    tmp_root, chroma_port, tmp_path, name, damage, table, words
) -> None:
    from amrita_plugin_cognition.engine import backup

    engine, good = await _banked(tmp_root, chroma_port, tmp_path)
    damaged = tmp_path / f"cognition-{name}.jsonl.gz"
    items = _rewrite(good, damaged, damage)
    before = await _bank(engine)
    with pytest.raises(InvalidInput) as refused:
        await backup.restore_backup(engine, damaged)
    line = _first_row_line(items, table)
    assert getattr(refused.value, "line", None) == line
    assert str(damaged) in refused.value.zh and f"第 {line} 行" in refused.value.zh and words in refused.value.zh
    assert await _bank(engine) == before  # nothing half-restored


async def test_a_line_that_is_no_json_or_a_broken_file_is_refused_the_same_way(tmp_root, chroma_port, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from amrita_plugin_cognition.engine import backup

    engine, good = await _banked(tmp_root, chroma_port, tmp_path)
    before = await _bank(engine)
    with gzip.open(good, "rt", encoding="utf-8") as handle:
        lines = handle.readlines()
    not_json = tmp_path / "not-json.jsonl.gz"
    with gzip.open(not_json, "wt", encoding="utf-8") as handle:
        handle.writelines([*lines[:2], '{"table": "memory", "row": {"id": 1,\n', *lines[2:]])
    truncated = tmp_path / "truncated.jsonl.gz"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    dropped = tmp_path / "dropped.jsonl.gz"  # a row left out: the closing counts say otherwise
    with gzip.open(dropped, "wt", encoding="utf-8") as handle:
        handle.writelines([lines[0], *lines[2:]])
    for path, line, words in ((not_json, 3, "JSON"), (truncated, None, "损坏"), (dropped, len(lines) - 1, "结尾记录")):
        with pytest.raises(InvalidInput) as refused:
            await backup.restore_backup(engine, path)
        assert str(path) in refused.value.zh and words in refused.value.zh, refused.value.zh
        assert line is None or f"第 {line} 行" in refused.value.zh
    assert await _bank(engine) == before
    report = await backup.restore_backup(engine, good)  # the good file still restores
    assert report["memory"] >= 1 and report["pin"] >= 1


@pytest.mark.slow  # starts another process: runs with tests/e2e (-m slow)
@pytest.mark.embedded_only  # its processes use their own SQLite home: the backend does not reach them
def test_the_cli_answers_a_damaged_backup_with_exit_code_2_and_one_line(tmp_path: Path) -> None:
    header = {"format": "amrita_plugin_cognition.backup", "version": 1, "created_at": "2026-11-30T12:00:00+00:00"}
    damaged = tmp_path / "damaged.jsonl.gz"
    with gzip.open(damaged, "wt", encoding="utf-8") as handle:
        handle.write(json.dumps(header) + "\n" + '{"table": "memory", "row": {"id": 1}}\n' + '{"end": {"memory": 1}}\n')
    env = {key: value for key, value in os.environ.items() if not key.startswith("COGNITION_")}
    result = subprocess.run(
        [sys.executable, "-m", "amrita_plugin_cognition", "backup", "restore", str(damaged), "--yes"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, "COGNITION_HOME": str(tmp_path / "home"), "ANONYMIZED_TELEMETRY": "False"},
    )
    errors = [line for line in result.stderr.splitlines() if line.startswith("错误:")]
    assert result.returncode == 2, result.stderr[-2000:]
    assert len(errors) == 1 and str(damaged) in errors[0] and "第 2 行" in errors[0], result.stderr[-2000:]
    assert "Traceback" not in result.stderr and result.stdout == ""
