"""Backups of the authority store: every memory (history included), memo, pin and forget barrier
in one gzipped JSON-lines file. Restore replaces this plugin's rows, keeps every barrier (those in
the backup and those made since: nothing forgotten comes back), rebuilds the keyword index and
re-embeds everything with the current model."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import delete, func, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.records import MemoryStatus
from ..errors import InvalidInput
from ..store import keyword, repository
from ..store.models import BarrierRow, MemoRow, MemoryRow, OutboxRow, PinRow
from .service import CognitionEngine, log_event

FORMAT = "amrita_plugin_cognition.backup"
VERSION = 1
PAGE = 2000
TABLES: dict[str, Any] = {"memory": MemoryRow, "memo": MemoRow, "pin": PinRow, "barrier": BarrierRow}


@dataclass(slots=True)
class BackupInfo:
    path: Path
    created_at: str
    counts: dict[str, int]


def _encode(row: Any) -> dict[str, Any]:
    values = {}
    for column in row.__table__.columns:
        value = getattr(row, column.key)
        values[column.key] = value.isoformat() if isinstance(value, datetime) else value
    return values


def _decode(model: Any, values: dict[str, Any]) -> Any:
    decoded = {}
    for column in model.__table__.columns:
        if column.key not in values:
            continue
        value = values[column.key]
        if value is not None and column.type.python_type is datetime:
            value = datetime.fromisoformat(value)
        decoded[column.key] = value
    return model(**decoded)


def backup_dir(engine: CognitionEngine) -> Path:
    if engine.data_dir is None:
        raise InvalidInput("这个实例没有数据目录，无法备份")
    return engine.data_dir / "backups"


async def create_backup(engine: CognitionEngine, destination: Path | None = None) -> BackupInfo:
    created = datetime.now(UTC)
    folder = backup_dir(engine)
    folder.mkdir(parents=True, exist_ok=True)
    path = destination or folder / f"cognition-{created:%Y%m%d-%H%M%S}.jsonl.gz"
    partial = path.with_name(path.name + ".partial")
    counts: dict[str, int] = {}
    with gzip.open(partial, "wt", encoding="utf-8") as handle:
        handle.write(json.dumps({"format": FORMAT, "version": VERSION, "created_at": created.isoformat()}) + "\n")
        for table, model in TABLES.items():
            counts[table] = 0
            last_id = 0
            while True:
                async with engine.session() as session:
                    rows = list(
                        (
                            await session.execute(
                                select(model).where(model.id > last_id).order_by(model.id).limit(PAGE)
                            )
                        ).scalars()
                    )
                if not rows:
                    break
                for row in rows:
                    handle.write(json.dumps({"table": table, "row": _encode(row)}, ensure_ascii=False) + "\n")
                counts[table] += len(rows)
                last_id = rows[-1].id
        handle.write(json.dumps({"end": counts}) + "\n")
    partial.replace(path)
    log_event("backup", path=path, **counts)
    return BackupInfo(path, created.isoformat(), counts)


def read_header(path: Path) -> tuple[dict[str, Any], dict[str, int] | None]:
    """The header and the closing counts (None when the file is truncated)."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        header = json.loads(handle.readline())
        if header.get("format") != FORMAT:
            raise InvalidInput(f"{path.name} 不是本插件的备份文件")
        end = None
        for line in handle:
            item = json.loads(line)
            if "end" in item:
                end = item["end"]
    return header, end


def list_backups(engine: CognitionEngine) -> list[BackupInfo]:
    infos = []
    for path in sorted(backup_dir(engine).glob("cognition-*.jsonl.gz")):
        try:
            header, end = read_header(path)
        except (OSError, ValueError, InvalidInput):
            continue
        if end is not None:
            infos.append(BackupInfo(path, header["created_at"], end))
    return infos


async def _reset_sequences(session: AsyncSession) -> None:
    if repository.dialect_name(session) != "postgresql":
        return
    for model in (*TABLES.values(), OutboxRow):
        table = model.__tablename__
        highest = f"COALESCE((SELECT MAX(id) FROM {table}), 0)"
        if model is MemoryRow:  # ids of forgotten memories are never handed out again
            highest = f"GREATEST({highest}, COALESCE((SELECT MAX(memory_id) FROM cognition_barrier), 0))"
        await session.execute(text(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), {highest} + 1, false)"))


async def restore_backup(
    engine: CognitionEngine, path: Path, progress: Callable[[int, int], None] | None = None
) -> dict[str, int]:
    """Replace this plugin's data with the backup's, then rebuild both indices."""
    _, end = read_header(path)
    if end is None:
        raise InvalidInput(f"{path.name} 不完整（缺少结尾记录），拒绝恢复")
    restored = {table: 0 for table in TABLES}
    skipped_forgotten = 0
    async with engine.session() as session:
        current_barriers = list((await session.execute(select(BarrierRow))).scalars())
        barred_hashes = {row.content_hash for row in current_barriers}
        barred_ids = {row.memory_id for row in current_barriers if row.memory_id is not None}
        for model in (OutboxRow, MemoryRow, MemoRow, PinRow, BarrierRow):
            await session.execute(delete(model))
        await keyword.clear(session)
        kept_barriers: set[tuple[int | None, str]] = set()
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            handle.readline()
            for line in handle:
                item = json.loads(line)
                if "end" in item:
                    break
                table, values = item["table"], item["row"]
                if table == "memory" and (values["content_hash"] in barred_hashes or values["id"] in barred_ids):
                    skipped_forgotten += 1
                    continue
                if table == "barrier":
                    kept_barriers.add((values.get("memory_id"), values["content_hash"]))
                session.add(_decode(TABLES[table], values))
                restored[table] += 1
        for barrier in current_barriers:  # forgets made after the backup stay in force
            if (barrier.memory_id, barrier.content_hash) not in kept_barriers:
                session.add(
                    BarrierRow(
                        memory_id=barrier.memory_id,
                        content_hash=barrier.content_hash,
                        bot_id=barrier.bot_id,
                        reason=barrier.reason,
                        created_at=barrier.created_at,
                    )
                )
        await session.flush()
        active = list(
            (
                await session.execute(
                    select(MemoryRow).where(MemoryRow.status == MemoryStatus.ACTIVE.value).order_by(MemoryRow.id)
                )
            ).scalars()
        )
        await repository.index_keywords(session, active)
        await _reset_sequences(session)
        count = (await session.execute(select(func.count()).select_from(MemoryRow))).scalar_one()
        await session.commit()
    engine.forget_emptiness()
    engine.notes_cache.clear()
    report = await engine.reindex(progress=progress)
    log_event("restore", path=path, memories=count, skipped_forgotten=skipped_forgotten, vectors=report.vectors_after)
    return {**restored, "skipped_forgotten": skipped_forgotten, "vectors": report.vectors_after}
