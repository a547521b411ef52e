"""Importing another memory plugin's records through the normal write paths.

An importer (``amrita_plugin_cognition/importers/``) reads a foreign format into
``domain.imports.ImportItem``s; this module writes them as any other caller would: facts through
``writes.remember_within`` (admission, chat switches, opt-out, the forget barrier, dedupe, the
per-chat limit), memos and pins through ``notes``, cards through ``profiles.save``, entries
through ``knowledge.create``. Each written record leaves its source fingerprint
(``store/imports.py``): facts in the same transaction as the fact, the others right after their
write, which itself skips content already present, so a run that stopped half-way resumes where
it stopped and a second run writes nothing new. A dry run goes through the same checks and
rolls the facts' transactions back. One audit row per run that wrote something."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from ..domain.clock import aware_or_now
from ..domain.imports import ImportItem, ImportReport
from ..domain.records import MemoryDraft, Provenance, Scope
from ..errors import CognitionError
from ..logs import log_event
from ..store import audit
from ..store import imports as store
from . import import_records
from .writes import remember_within

if TYPE_CHECKING:
    from .service import CognitionEngine

#: Facts written per transaction (one chat's; a failure loses at most this batch, which a re-run redoes).
MEMORY_BATCH = 100

Progress = Callable[[int], None]


class ImportFailed(CognitionError):
    """A record could not be written for a reason that is not a refusal (the database went away,
    a bug): names the record; what was imported before it stays, and a re-run resumes."""

    zh_default = "导入中断"
    en_default = "import failed"


async def run_import(
    engine: CognitionEngine,
    bot_id: str,
    importer: str,
    source: str,
    items: Sequence[ImportItem],
    *,
    dry_run: bool = False,
    actor: str = "cli",
    now: datetime | None = None,
    progress: Progress | None = None,
) -> ImportReport:
    """Write ``items`` (or, with ``dry_run``, find what would be written) and report per kind."""
    moment = aware_or_now(now)
    report = ImportReport(importer=importer, source=source, dry_run=dry_run)
    step = progress or (lambda done: None)
    async with engine.unit_of_work() as uow:
        seen = await store.seen(uow.session, bot_id, importer, [item.fingerprint for item in items])
    pending: list[ImportItem] = []
    for item in items:
        if item.fingerprint in seen:
            report.count(item.kind, "skipped")
            step(1)
        elif item.payload is None:
            report.count(item.kind, "refused", item.refusal or "not_mapped", item.record)
            step(1)
        else:
            pending.append(item)
    try:
        await _write_all(engine, bot_id, importer, pending, report, dry_run, moment, step)
    finally:  # a run that stopped half-way is audited with what it wrote
        if not dry_run and report.imported:
            async with engine.unit_of_work() as uow:
                audit.record(uow.session, bot_id, "import", actor, importer, report.imported, moment)
                await uow.commit()
    log_event("import", bot=bot_id, importer=importer, dry_run=dry_run, imported=report.imported, items=len(items))
    return report


async def _write_all(
    engine: CognitionEngine,
    bot_id: str,
    importer: str,
    pending: Sequence[ImportItem],
    report: ImportReport,
    dry_run: bool,
    now: datetime,
    step: Progress,
) -> None:
    facts = [item for item in pending if isinstance(item.payload, MemoryDraft)]
    for scope, batch in _fact_batches(facts):
        await _write_facts(engine, bot_id, importer, scope, batch, report, dry_run, now)
        step(len(batch))
    for item in pending:
        if isinstance(item.payload, MemoryDraft):
            continue
        try:
            await import_records.write(engine, bot_id, importer, item, report, dry_run, now)
        except CognitionError:
            raise
        except Exception as error:
            raise _failed(item, error) from error
        step(1)


def _fact_batches(items: Sequence[ImportItem]) -> list[tuple[Scope, list[ImportItem]]]:
    by_scope: dict[Scope, list[ImportItem]] = {}
    for item in items:
        assert isinstance(item.payload, MemoryDraft)
        by_scope.setdefault(item.payload.scope, []).append(item)
    return [
        (scope, chunk[start : start + MEMORY_BATCH])
        for scope, chunk in by_scope.items()
        for start in range(0, len(chunk), MEMORY_BATCH)
    ]


def _failed(item: ImportItem, error: Exception) -> ImportFailed:
    return ImportFailed(
        f"导入 {item.record} 时出错（{type(error).__name__}）：之前的记录已导入，修复后重新运行即可接着导入",
        en=f"import failed at {item.record}: {error!r}; earlier records are kept, a re-run resumes",
    )


async def _write_facts(
    engine: CognitionEngine,
    bot_id: str,
    importer: str,
    scope: Scope,
    batch: list[ImportItem],
    report: ImportReport,
    dry_run: bool,
    now: datetime,
) -> None:
    """One chat's facts in one transaction with their fingerprints (rolled back on a dry run)."""
    current = batch[0]
    try:
        async with engine.unit_of_work() as uow:
            await uow.lock_scope(bot_id, scope)
            for item in batch:
                current = item
                # each fact keeps when the source recorded it (its decay clock starts there)
                draft, recorded = _imported(item, now)
                result = await remember_within(engine, uow, bot_id, scope, [draft], recorded)
                reason = result.refused[0][2] if result.refused else None
                if reason is None or (reason == "duplicate" and 0 in result.record_ids):
                    target = f"memory:{result.record_ids[0]}"
                    store.add(uow.session, bot_id, importer, item.kind, item.fingerprint, target, now)
                    report.count(item.kind, "imported" if reason is None else "skipped")
                else:
                    report.count(item.kind, "refused", reason, item.record)
            if not dry_run:
                await uow.commit()
    except CognitionError:
        raise
    except Exception as error:  # the batch is rolled back whole: a re-run writes it again
        raise _failed(current, error) from error


def _imported(item: ImportItem, now: datetime) -> tuple[MemoryDraft, datetime]:
    """The draft as an import writes it (provenance ``imported``, whatever the reader set) and
    when it counts as recorded: the source's time (``source["recorded_at"]``), never later than now."""
    assert isinstance(item.payload, MemoryDraft)
    draft = dataclasses.replace(item.payload, provenance=Provenance.IMPORTED)
    draft.source = {**draft.source, "via": "import"}
    recorded = now
    stamp = draft.source.get("recorded_at")
    if isinstance(stamp, str):
        with contextlib.suppress(ValueError):
            recorded = min(aware_or_now(datetime.fromisoformat(stamp)), now)
    return draft, recorded
