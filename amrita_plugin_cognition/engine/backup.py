"""Backups of the authority store: every memory (history included), memo and its revisions, pin,
forget barrier, profile card and card revision, knowledge entry, entry revision and suggestion,
chat switch, opt-out and audit record in one
gzipped JSON-lines file. Restore replaces this plugin's rows, keeps every barrier (those in the
backup and those made since: nothing forgotten comes back), merges the switches, opt-outs and
audit records with today's, replays every delete-all made since the backup
(``store/restore_erasures.py``: nothing erased comes back), rebuilds the keyword index and
re-embeds everything with the current model. A file of version 1 has no switches, opt-outs or
audit records: today's stay as they are.

Cards are replaced like the rest: a file made before cards existed has no card lines, and
restoring it leaves no cards. A card whose every source was forgotten, and a revision with any
forgotten source, is not restored; other cards lose the forgotten ids from their sources
(``store/backup.py``). Knowledge entries likewise: one whose every source was forgotten is not
restored, one that lost some comes back hidden until re-derived, as a forget leaves it; a file made
before the knowledge base existed restores none.

The file is written and read on a worker thread, a page at a time: the event loop never waits on
the disk or on gzip.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..domain.clock import UTC
from ..domain.events import IndexWorkQueued, StoreReplaced
from ..domain.knowledge import SUGGESTION_MAX_CHARS, SUMMARY_MAX_CHARS
from ..errors import BackupInvalid, InvalidInput
from ..logs import log_event
from ..store import backup as store_backup
from ..store import restore_erasures, sqlite
from ..store.backup_check import BackupCheck, RowLimits, is_time
from .knowledge import sources_removed as knowledge_sources_removed
from .notes import PIN_MAX_CHARS
from .profile_queue import queue_part_rebuilds, queue_rebuilds
from .reindex import reindex

if TYPE_CHECKING:
    from .service import CognitionEngine

FORMAT = "amrita_plugin_cognition.backup"
#: 2: the chat switches, opt-outs and audit records are in the file too.
VERSION = 2
PAGE = 2000


@dataclass(slots=True)
class BackupInfo:
    path: Path
    created_at: str
    counts: dict[str, int]
    #: Size of the file in bytes.
    size: int = 0


def backup_dir(engine: CognitionEngine) -> Path:
    if engine.data_dir is None:
        raise InvalidInput("这个实例没有数据目录，无法备份")
    return engine.data_dir / "backups"


def _write_lines(handle: IO[str], items: list[dict[str, Any]]) -> None:
    handle.write("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items))


async def create_backup(engine: CognitionEngine, destination: Path | None = None) -> BackupInfo:
    created = datetime.now(UTC)
    folder = backup_dir(engine)
    await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
    path = destination or folder / f"cognition-{created:%Y%m%d-%H%M%S}.jsonl.gz"
    partial = path.with_name(path.name + ".partial")
    counts: dict[str, int] = {}
    handle = await asyncio.to_thread(gzip.open, partial, "wt", encoding="utf-8")
    try:
        header = {"format": FORMAT, "version": VERSION, "created_at": created.isoformat()}
        await asyncio.to_thread(_write_lines, handle, [header])  # type: ignore[arg-type]
        for table in store_backup.TABLES:
            counts[table] = 0
            position = 0
            while True:
                async with engine.unit_of_work() as uow:
                    rows, position = await store_backup.page(uow.session, table, position, PAGE)
                if not rows:
                    break
                lines = [{"table": table, "row": row} for row in rows]
                await asyncio.to_thread(_write_lines, handle, lines)  # type: ignore[arg-type]
                counts[table] += len(rows)
        await asyncio.to_thread(_write_lines, handle, [{"end": counts}])  # type: ignore[arg-type]
    finally:
        await asyncio.to_thread(handle.close)
    await asyncio.to_thread(partial.replace, path)
    log_event("backup", path=path, **counts)
    return BackupInfo(path, created.isoformat(), counts, path.stat().st_size)


def row_limits(engine: CognitionEngine) -> RowLimits:
    """The text limits a normal write keeps, which every restored row keeps too."""
    config = engine.config
    memo = (config.memo_max_chars, "memo_max_chars")
    profiles = config.profiles
    sections = {
        "evaluation": (profiles.evaluation_max_chars, "profiles.evaluation_max_chars"),
        "body": (profiles.body_max_chars, "profiles.body_max_chars"),
        "roast": (profiles.roast_max_chars, "profiles.roast_max_chars"),
    }
    return RowLimits(
        {
            ("memory", "text"): (config.memory_max_chars, "memory_max_chars"),
            ("memo", "content"): memo,
            ("memo_revision", "content"): memo,
            ("pin", "content"): (PIN_MAX_CHARS, "提醒的字数上限"),
            **{(table, section): limit for table in store_backup.CARD_TABLES for section, limit in sections.items()},
            **{
                (table, column): limit
                for table in store_backup.KNOWLEDGE_TABLES
                for column, limit in (
                    ("body", (config.consolidation.knowledge_max_chars, "consolidation.knowledge_max_chars")),
                    ("summary", (SUMMARY_MAX_CHARS, "知识条目摘要的字数上限")),
                )
            },
            ("knowledge_suggestion", "content"): (SUGGESTION_MAX_CHARS, "知识库建议的字数上限"),
        }
    )


def _json_line(path: Path, number: int, line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError as error:
        raise BackupInvalid(path, number, f"不是有效的 JSON（{error}）", f"not JSON: {error}") from error


def _check_end(path: Path, number: int, end: Any, check: BackupCheck | None) -> dict[str, int]:
    if not isinstance(end, dict) or not all(isinstance(count, int) for count in end.values()):
        raise BackupInvalid(path, number, "结尾记录的条数不是整数", "the closing counts are not integers")
    if check is not None:
        for table in store_backup.TABLES:
            said, found = end.get(table, 0), check.counts.get(table, 0)
            if said != found:
                raise BackupInvalid(
                    path, number, f"结尾记录说 {table} 有 {said} 行，文件里有 {found} 行", f"{table}: {said} != {found}"
                )
    return end


def read_header(path: Path, check: BackupCheck | None = None) -> tuple[dict[str, Any], dict[str, int] | None]:
    """The header and the closing counts (None when the file is truncated). With ``check``, every
    row is checked too (``store.backup_check``): the first problem raises ``BackupInvalid``
    naming the file and the line, as does a line that is no JSON or a file gzip cannot read.
    Blocking."""
    number = 0
    end = None
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            number = 1
            header = _json_line(path, 1, handle.readline())
            if not isinstance(header, dict) or header.get("format") != FORMAT:
                raise InvalidInput(f"{path.name} 不是本插件的备份文件")
            if not is_time(header.get("created_at")):
                raise BackupInvalid(path, 1, "创建时间不是 ISO 8601 时间", "created_at is not an ISO 8601 time")
            version = header.get("version", 1)
            if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= VERSION:
                raise BackupInvalid(
                    path, 1, f"格式版本 {version!r} 不是本插件能读的（1 到 {VERSION}）", f"unknown version {version!r}"
                )
            for number, line in enumerate(handle, start=2):
                item = _json_line(path, number, line)
                if isinstance(item, dict) and "end" in item:
                    end = _check_end(path, number, item["end"], check)
                    break
                if check is None:
                    continue
                if not isinstance(item, dict) or not isinstance(item.get("table"), str) or "row" not in item:
                    raise BackupInvalid(path, number, "不是一行记录（缺少 table 或 row）", "no table and row")
                problem = check.row(item["table"], item["row"])
                if problem is not None:
                    raise BackupInvalid(path, number, problem.zh, problem.en)
    except (gzip.BadGzipFile, EOFError, zlib.error, UnicodeDecodeError) as error:
        raise BackupInvalid(
            path, number or None, f"文件已损坏，无法读取（{type(error).__name__}）", f"unreadable: {error!r}"
        ) from error
    return header, end


def _list_backups(folder: Path) -> list[BackupInfo]:
    infos = []
    for path in sorted(folder.glob("cognition-*.jsonl.gz")):
        try:
            header, end = read_header(path)
        except (OSError, ValueError, InvalidInput):
            continue
        if end is not None:
            infos.append(BackupInfo(path, header["created_at"], end, path.stat().st_size))
    return infos


async def list_backups(engine: CognitionEngine) -> list[BackupInfo]:
    return await asyncio.to_thread(_list_backups, backup_dir(engine))


def _rows(path: Path) -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """The file's rows in chunks of ``PAGE`` (read on a worker thread by the caller)."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        handle.readline()
        chunk: list[tuple[str, dict[str, Any]]] = []
        for line in handle:
            item = json.loads(line)
            if "end" in item:
                break
            chunk.append((item["table"], item["row"]))
            if len(chunk) >= PAGE:
                yield chunk
                chunk = []
        if chunk:
            yield chunk


async def restore_backup(
    engine: CognitionEngine, path: Path, progress: Callable[[int, int], None] | None = None
) -> dict[str, int]:
    """Replace this plugin's data with the backup's, then rebuild both indices."""
    # the whole file is checked before anything changes: a damaged one is refused, naming the line
    header, end = await asyncio.to_thread(read_header, path, BackupCheck(row_limits(engine)))
    if end is None:
        raise BackupInvalid(path, None, "不完整（缺少结尾记录）", "truncated (no closing record)")
    # the vectors are rebuilt after the rows are replaced: make sure the index answers first
    await asyncio.to_thread(engine.vectors.heartbeat)
    chunks = _rows(path)
    now = datetime.now(UTC)
    async with engine.unit_of_work() as uow:
        await sqlite.secure_delete_now(uow.session)  # a replayed erasure deletes as a live one does
        restore = store_backup.Restore(uow.session)
        await restore.begin()
        while chunk := await asyncio.to_thread(next, chunks, None):
            restore.add(chunk)
        count = await restore.finish()
        # a card kept without its forgotten sources still says what they said: rebuilt like after a forget
        await queue_part_rebuilds(uow, restore.trimmed, now)
        backup_time = datetime.fromisoformat(header["created_at"])
        replayed = await restore_erasures.replay(uow.session, backup_time, restore.forgotten_names, now)
        for erased in replayed:  # the cards built from a fact the replay removed: as after a delete-all
            await queue_rebuilds(engine, uow, erased.target.bot_id, erased.counts.memory_ids, now)
            await knowledge_sources_removed(uow, erased.target.bot_id, erased.counts.memory_ids, now)
        if replayed:
            await sqlite.scrub_deleted(uow.session)
        uow.record(StoreReplaced(), IndexWorkQueued())
        await uow.commit()
    if replayed:
        async with engine.unit_of_work() as uow:
            await sqlite.truncate_log(uow.session)
    report = await reindex(engine, progress=progress)
    dropped = {
        "cards_dropped": restore.cards_dropped,
        "cards_trimmed": restore.cards_trimmed,
        "knowledge_dropped": restore.knowledge_dropped,
        "knowledge_hidden": restore.knowledge_hidden,
    }
    log_event(
        "restore",
        path=path,
        memories=count,
        skipped_forgotten=restore.skipped_forgotten,
        cards=restore.restored["profile"],
        **dropped,
        erasures_replayed=len(replayed),
        vectors=report.vectors_after,
    )
    return {
        **restore.restored,
        "skipped_forgotten": restore.skipped_forgotten,
        **dropped,
        "erasures_replayed": len(replayed),
        "vectors": report.vectors_after,
    }
