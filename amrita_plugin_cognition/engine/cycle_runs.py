"""The consolidation cycles' runs as recorded (``store/cycle_runs.py``): what ``status`` shows of
them (each bot account's tokens today against ``consolidation.daily_token_budget``, runs today, the
last runs with how their judgement step ended or why it did not run) and the messages runs left
for private chats' users, which the bot delivers (``bot/jobs.cycle_check``).

A message goes only to the private chat whose cycle left it, once, and only while
``consolidation.allow_send_to_user`` is on, the chat's memory is on and its user has not opted out;
one older than :data:`MESSAGE_KEEP_HOURS` is no longer sent (it would come out of the blue)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from ..domain.clock import aware_or_now
from ..domain.judgement import SKIP_REASONS_ZH
from ..store import cycle_runs as store
from .switches import chat_switches

if TYPE_CHECKING:
    from .service import CognitionEngine


def day_bounds(engine: CognitionEngine, now: datetime) -> tuple[datetime, datetime]:
    """The start and end of ``now``'s day in the configured ``timezone`` (a budget's day)."""
    zone = ZoneInfo(engine.config.timezone)
    local = now.astimezone(zone)
    start = local.replace(hour=0, minute=0, second=0, microsecond=0)
    return start, start + timedelta(days=1)  # wall-clock arithmetic: the next midnight, DST or not


#: Runs listed by ``status``.
RECENT_RUNS = 5
#: A message waits this long for delivery at most.
MESSAGE_KEEP_HOURS = 24


@dataclass(frozen=True, slots=True)
class CycleMessage:
    """A message a cycle left for the user of a private chat, to be sent there."""

    run_id: int
    bot_id: str
    user_id: str
    text: str


def _run(run: store.CycleRun) -> dict[str, Any]:
    return {
        "id": run.id,
        "bot": run.bot_id,
        "chat": run.scope.key,
        "trigger": run.trigger,
        "started_at": run.started_at.isoformat(),
        "outcome": run.outcome,
        "merged": run.merged,
        "near": run.near,
        "wording": run.wording,
        "ended": run.ended,
        "reason": run.reason or None,
        "reason_zh": SKIP_REASONS_ZH.get(run.reason) if run.ended == "skipped" else None,
        "rounds": run.rounds,
        "tokens": run.tokens,
        "tool_calls": run.tool_calls,
        "changes": run.changes,
    }


async def usage(engine: CognitionEngine, now: datetime | None = None) -> dict[str, Any]:
    """What ``status`` shows of the cycles' model use: per bot account with runs today, its tokens
    against the daily budget and its runs; the newest runs of every account."""
    moment = aware_or_now(now)
    start, end = day_bounds(engine, moment)
    settings = engine.config.consolidation
    async with engine.session() as session:
        today = await store.usage_between(session, start, end, moment)
        recent = await store.recent(session, RECENT_RUNS)
    return {
        "day": start.date().isoformat(),
        "daily_token_budget": settings.daily_token_budget,
        "cycle_token_budget": settings.cycle_token_budget,
        "agent_max_iterations": settings.agent_max_iterations,
        "allow_send_to_user": settings.allow_send_to_user,
        "bots": [
            {
                "bot": found.bot_id,
                "tokens_today": found.tokens,
                "runs_today": found.runs,
                "judged_today": found.judged,
                "left_today": max(0, settings.daily_token_budget - found.tokens),
            }
            for found in today
        ],
        "recent": [_run(run) for run in recent],
    }


async def undelivered(engine: CognitionEngine, now: datetime | None = None) -> list[CycleMessage]:
    """The messages to send now (see the module's docstring); none while sending is off."""
    if not engine.config.consolidation.allow_send_to_user:
        return []
    moment = aware_or_now(now)
    async with engine.session() as session:
        runs = await store.undelivered(session, moment - timedelta(hours=MESSAGE_KEEP_HOURS))
    messages: list[CycleMessage] = []
    for run in runs:
        if run.scope.is_group or not run.message_to_user:  # never a group
            continue
        switches = await chat_switches(engine, run.bot_id, run.scope)
        if switches is None or switches.is_opted_out(run.scope.id):
            continue
        messages.append(CycleMessage(run.id, run.bot_id, run.scope.id, run.message_to_user))
    return messages


async def mark_sent(engine: CognitionEngine, run_id: int, now: datetime | None = None) -> bool:
    """The run's message was delivered: it is never sent again."""
    async with engine.unit_of_work() as uow:
        done = await store.mark_sent(uow.session, run_id, aware_or_now(now))
        await uow.commit()
    return done
