"""The card merges in the demo, driven by the simulated clock.

A historian job that writes facts queues one merge per card the facts touch
(``engine/profile_queue.py``), due ``profiles.merge_window_seconds`` after the first of them: the
jobs for one card within the window become one merge. The demo does not wait for that: after the
day's historian run it moves the simulated clock to the end of the window (the latest due time
of the pending merges) and lets the historian's workers run what is due then, the real merge
(``engine/profile_merge.py``, its prompt, its model call, its checks, the conditional save).
Then it reads the cards the script follows (``cards`` in ``demo_conversation.json``) as stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING

from ..api import UTC
from .demo_script import FollowedCard

if TYPE_CHECKING:
    from ..api import Card, CognitionEngine


@dataclass(frozen=True, slots=True)
class MergeJob:
    job_id: int
    entity_type: str
    entity_id: str
    #: Part -> the ids of the new facts the job carries.
    parts: dict[str, list[int]]
    rebuild: tuple[str, ...] = ()
    #: "done", or the state the job was left in ("pending" to be retried later, "failed").
    state: str = "done"
    error: str = ""


@dataclass(slots=True)
class CardRun:
    #: When the day's historian run ended (the merges were queued then), local time.
    queued_at: datetime
    #: The simulated time the merges ran at (the end of the coalescing window), local time.
    ran_at: datetime
    window_seconds: float
    enabled: bool = True
    merges: list[MergeJob] = field(default_factory=list)
    #: The followed cards as stored after the merges (None: no such card yet).
    cards: list[tuple[FollowedCard, Card | None]] = field(default_factory=list)


async def _merge_jobs(engine: CognitionEngine) -> list[tuple[MergeJob, datetime | None]]:
    """The pending merge jobs with their due times."""
    from ..api import MERGE_JOB

    return [
        (
            MergeJob(
                job_id=job.id,
                entity_type=str(job.payload.get("entity_type", "")),
                entity_id=str(job.payload.get("entity_id", "")),
                parts=job.merge_parts(),
                rebuild=tuple(job.rebuild_parts()),
            ),
            job.next_attempt_at,
        )
        for job in await engine.jobs.queued("pending")
        if job.kind == MERGE_JOB
    ]


async def read_cards(
    engine: CognitionEngine, bot_id: str, followed: list[FollowedCard]
) -> list[tuple[FollowedCard, Card | None]]:
    """The followed cards as stored: a user's card in the part its group sees under the scope
    policy in force."""
    from ..api import group_part

    read = []
    for card in followed:
        part = group_part(engine.config.scope_policy, card.chat_id) if card.chat_id else "group"
        read.append((card, await engine.profiles.get(bot_id, card.entity_type, card.entity_id, part)))
    return read


async def run_merges(engine: CognitionEngine, bot_id: str, now: datetime, followed: list[FollowedCard]) -> CardRun:
    """Every merge the day queued, run at the end of its coalescing window in simulated time;
    then the followed cards as they are."""
    settings = engine.config.profiles
    run = CardRun(queued_at=now, ran_at=now, window_seconds=settings.merge_window_seconds, enabled=settings.merge)
    pending = await _merge_jobs(engine)
    if pending:
        # in UTC, as the engine stores and compares times (see ``demo_historian.run_historian``)
        due = max([now.astimezone(UTC), *(due for _, due in pending if due is not None)])
        run.ran_at = due.astimezone(now.tzinfo)
        run.merges = [job for job, _ in pending]
        # Only what is due at the window's end runs: the simulated clock moves, nothing sleeps.
        await engine.jobs.run_until_idle(now=due, flush=False)
        ids = {job.job_id for job in run.merges}
        left = {queued.id: queued for queued in await engine.jobs.queued() if queued.id in ids}
        for index, job in enumerate(run.merges):
            queued = left.get(job.job_id)
            if queued is not None:
                run.merges[index] = replace(job, state=queued.state, error=queued.last_error)
    run.cards = await read_cards(engine, bot_id, followed)
    return run


def card_lines(card: Card) -> list[str]:
    """The body's lines (blank ones left out)."""
    return [line.strip() for line in card.body.splitlines() if line.strip()]


def describe_parts(job: MergeJob) -> str:
    """``新事实：记忆#3、#4`` (the new facts of a merge job), with the rebuilt parts named."""
    ids = sorted({memory_id for part_ids in job.parts.values() for memory_id in part_ids})
    text = ("新事实：记忆" + "、".join(f"#{memory_id}" for memory_id in ids)) if ids else "没有新事实"
    if job.rebuild:
        text += "；重建：" + "、".join(job.rebuild)
    return text
