"""The night after the demo's last simulated day (``night`` in the script): one night's
consolidation on the simulated clock, through the engine's public services, and its checks.

At the start the demo takes the night's timing into its own hands (``hold_the_night``): the bot's
scheduled cycles and sweeps are off (they would plan and sweep on the real clock), and the low
tier's lifetime is the script's (``short_term_days``: the simulated span is days, not weeks).
After the last day, the night runs at the planner's window for the script's chat
(``engine.consolidation.window`` as of the last turn: the real idle-window planner over the
messages the demo sent):

1. the decay sweep (``engine.decay.sweep``) at that time; what it demoted or retired is read
   back from the script's chats (their active memories before, the same memories after);
2. the chat's cycle (``engine.consolidation.run_now``): the model-free pre-pass (exact duplicates
   merged, lineage written), then the judgement step, the model over the cycle's tools;
3. what the night left: the chat's memories and each merge's sources (``merged_from``), the
   group's card before and after, the knowledge entries written, and the script's checks
   (``NIGHT_CHECK_KINDS``) evaluated on all that.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from ..api import UTC, MemoryStatus, Operator, Scope
from .demo_cards import read_cards
from .demo_script import Check, DemoScript, FollowedCard, Night, ScriptError

if TYPE_CHECKING:
    from ..api import (
        Card,
        CognitionEngine,
        IdleWindow,
        KnowledgeEntry,
        MemoryRecord,
        PrepassReport,
        SweepReport,
    )

#: Who runs the night's cycle (the audit and the barriers name it).
NIGHT_ACTOR = "demo"
#: Active memories read per page (``engine.memories.chat_page``'s largest).
PAGE = 50


def hold_the_night(engine: CognitionEngine, night: Night | None) -> float:
    """The bot's own cycles and sweeps off (the demo runs the night by hand, on the simulated
    clock), the low tier's lifetime the script's; returns the configured lifetime it replaced."""
    settings = engine.config.consolidation
    configured = settings.short_term_days
    settings.cycle = False
    settings.sweep_interval_hours = 0
    if night is not None:
        if night.short_term_days > settings.long_term_days:
            raise ScriptError("night: short_term_days 不能超过 consolidation.long_term_days")
        settings.short_term_days = night.short_term_days
    return configured


@dataclass(slots=True)
class SweepSeen:
    """The sweep's report, and which of the script's memories it demoted (with the new tier) or retired."""

    report: SweepReport
    demoted: list[tuple[MemoryRecord, MemoryRecord]] = field(default_factory=list)
    retired: list[MemoryRecord] = field(default_factory=list)


@dataclass(slots=True)
class NightRun:
    night: Night
    scope: Scope
    window: IdleWindow
    #: When the night ran (the window's start), local time.
    now: datetime
    configured_short_term_days: float
    long_term_days: float
    sweep: SweepSeen
    cycle: PrepassReport
    #: The chat's active memories before the night, and the same ones (and the merged ones) after.
    before: dict[int, MemoryRecord]
    after: dict[int, MemoryRecord]
    #: Merged memory id -> the ids it was built from (its lineage).
    lineage: dict[int, list[int]]
    card: FollowedCard
    card_before: Card | None
    card_after: Card | None
    #: Knowledge entries the night wrote.
    entries: list[KnowledgeEntry]
    #: Each check (its text rendered) and whether the night shows it.
    checks: list[tuple[Check, bool]] = field(default_factory=list)

    @property
    def prepass_merges(self) -> set[int]:
        return {done.merged_id for done in self.cycle.merged}


async def _active(engine: CognitionEngine, bot_id: str, scope: Scope) -> dict[int, MemoryRecord]:
    """Every active memory of one chat."""
    found: dict[int, MemoryRecord] = {}
    offset = 0
    while True:
        page, total = await engine.memories.chat_page(bot_id, scope, offset=offset, limit=PAGE)
        found.update((record.id, record) for record in page)
        offset += len(page)
        if not page or offset >= total:
            return found


async def _swept(engine: CognitionEngine, script: DemoScript, now: datetime) -> SweepSeen:
    """The sweep at ``now``, and what it did to the script's chats' active memories."""
    bot_id = str(script.bot_id)
    scopes = [Scope(chat.kind, str(chat.id)) for chat in script.chats.values()]
    before = {scope: await _active(engine, bot_id, scope) for scope in scopes}
    seen = SweepSeen(await engine.decay.sweep(now))
    for scope, records in before.items():
        after = await engine.memories.in_chat(bot_id, scope, list(records))
        for memory_id, record in sorted(records.items()):
            now_record = after.get(memory_id)
            if now_record is None:
                continue
            if now_record.status == MemoryStatus.EXPIRED:
                seen.retired.append(record)
            elif now_record.importance != record.importance:
                seen.demoted.append((record, now_record))
    return seen


async def run_night(engine: CognitionEngine, script: DemoScript, configured_short_term_days: float) -> NightRun:
    """The night (see the module's docstring)."""
    night = script.night
    if night is None:
        raise ScriptError("脚本没有 night")
    bot_id = str(script.bot_id)
    scope = Scope("group", str(night.chat.id))
    zone = ZoneInfo(engine.config.timezone)
    last = script.moment(script.turns[-1]).astimezone(UTC)
    # The engine is handed UTC, as the bot's own clock gives it (see ``demo_historian``).
    window = await engine.consolidation.window(bot_id, scope, last)
    moment = window.start.astimezone(UTC)
    sweep = await _swept(engine, script, moment)
    before = await _active(engine, bot_id, scope)
    followed = next(
        (card for card in script.cards if card.entity_type == "group" and card.entity_id == scope.id),
        FollowedCard("group", scope.id, f"{night.chat.title}的画像"),
    )
    [(_, card_before)] = await read_cards(engine, bot_id, [followed])
    known = {item.entry.id for item in await engine.knowledge.list(bot_id)}
    cycle = await engine.consolidation.run_now(Operator(NIGHT_ACTOR), bot_id, scope, moment)
    await engine.settle()  # the merges' and the entries' index work
    # what replaced the chat's memories tonight (the pre-pass's merges, the model's), and their lineage
    sources = await engine.memories.in_chat(bot_id, scope, list(before))
    newer = sorted({record.superseded_by for record in sources.values() if record.superseded_by is not None})
    after = await engine.memories.in_chat(bot_id, scope, [*before, *newer])
    lineage = await engine.memories.merged_from(newer)
    [(_, card_after)] = await read_cards(engine, bot_id, [followed])
    entries = [item.entry for item in await engine.knowledge.list(bot_id) if item.entry.id not in known]
    run = NightRun(
        night=night,
        scope=scope,
        window=window,
        now=window.start.astimezone(zone),
        configured_short_term_days=configured_short_term_days,
        long_term_days=engine.config.consolidation.long_term_days,
        sweep=sweep,
        cycle=cycle,
        before=before,
        after=after,
        lineage=lineage,
        card=followed,
        card_before=card_before,
        card_after=card_after,
        entries=entries,
    )
    last_turn = script.turns[-1]
    for check in night.checks:
        rendered = Check(check.kind, script.render(last_turn, check.text), check.note)
        run.checks.append((rendered, await evaluate(engine, bot_id, run, rendered)))
    return run


def _planted(records: dict[int, MemoryRecord], text: str) -> list[int]:
    return sorted(memory_id for memory_id, record in records.items() if text in record.text)


def merged_into(run: NightRun, ids: list[int]) -> int | None:
    """The one memory all of ``ids`` were merged into, its lineage naming every one of them; else None."""
    targets = {run.after[memory_id].superseded_by if memory_id in run.after else None for memory_id in ids}
    if len(ids) < 2 or len(targets) != 1:
        return None
    target = targets.pop()
    if target is None or target not in run.after or run.after[target].status != MemoryStatus.ACTIVE:
        return None
    superseded = all(run.after[memory_id].status == MemoryStatus.SUPERSEDED for memory_id in ids)
    return target if superseded and set(ids) <= set(run.lineage.get(target, [])) else None


async def evaluate(engine: CognitionEngine, bot_id: str, run: NightRun, check: Check) -> bool:
    """Whether the night shows what ``check`` asks for (its text already rendered)."""
    if check.kind == "retired":
        retired = {record.id for record in run.sweep.retired}
        found = [record.id for record in [*run.sweep.retired, *run.before.values()] if check.text in record.text]
        return bool(found) and set(found) <= retired
    if check.kind in ("merged_exact", "merged_by_model"):
        target = merged_into(run, _planted(run.before, check.text))
        by_prepass = target in run.prepass_merges
        return target is not None and by_prepass == (check.kind == "merged_exact")
    if check.kind == "card_has":
        before = run.card_before.body if run.card_before is not None else ""
        return run.card_after is not None and check.text in run.card_after.body and check.text not in before
    if check.kind == "knowledge_found":
        written = {entry.id for entry in run.entries}
        result = await engine.knowledge.search(bot_id, check.text)
        return any(hit.entry.id in written for hit in result.hits)
    raise ScriptError(f"未知的夜间检查 {check.kind}")


def describe(check: Check, chat: str) -> str:
    detail = {
        "retired": f"含「{check.text}」的记忆已过期",
        "merged_exact": f"含「{check.text}」的完全重复由预整理合并，每条来源都能经合并链找回",
        "merged_by_model": f"含「{check.text}」的相近记忆由模型合并，每条来源都能经合并链找回",
        "card_has": f"{chat}的画像新增「{check.text}」",
        "knowledge_found": f"在知识库搜索「{check.text}」找到今夜写入的条目",
    }[check.kind]
    return f"{check.note}（{detail}）" if check.note else detail
