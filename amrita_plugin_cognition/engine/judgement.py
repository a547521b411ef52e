"""The consolidation cycle's judgement step: after the model-free pre-pass
(``engine/consolidation.py``), a budgeted model agent over the cycle's own tools judges what needs
judgement in one chat (near clusters, importance and tags, cards, the memo, knowledge, suggestions).

* **Whether** (``domain/judgement.decide``, pure): a model configured, the chat's memory on,
  ``consolidation.daily_token_budget`` above 0 and not spent today by this bot account's cycles (a
  sum over its ``cognition_cycle_run`` rows of the day in ``timezone``), and something needing
  judgement. Otherwise the run is recorded with why (0 tokens): ``status`` shows it.
* **Budget**: ``AgentBudget(agent_max_iterations, min(cycle_token_budget, what is left today))``,
  reserved on the run's row under the bot account's budget lock before the agent starts
  (``store/cycle_runs.py``), so concurrent cycles never spend the same tokens twice.
* **The agent**: ``engine.llm.run_agent("consolidation", system, kickoff, tools, budget,
  should_stop)`` with the invariant system prompt (``prompt/cycle_system.jinja``, rendered once per
  process: byte-identical for every run, so provider prefix caches hit), its constant kickoff
  message, the cycle's tools (``engine/cycle_tools``, whose ``cycle_context`` gives every
  variable: time, gap, last summary, counts, clusters) and ``should_stop`` (the chat talked since
  the run began: the step yields, what its tools did stays). An unavailable model is recorded
  (``unavailable``) and the cycle is still done; any other failure is recorded (``failed``) and
  raised (the job retries).
* **What it left**: rounds, tokens, tool calls (on the returned step with their arguments and
  answers, for the caller to show), the changes its tools counted, its summary
  (≤ 500 characters) and, in a private chat with ``allow_send_to_user``, one message for the user
  (delivered by the bot: ``engine/cycle_runs.py``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ..domain.judgement import (
    SKIP_REASONS_ZH,
    JudgementDecision,
    JudgementSignals,
    decide,
    step_tokens,
)
from ..errors import LLMUnavailable
from ..llm.agent_types import AgentBudget, AgentOutcome, AgentTool, ToolCallRecord
from ..llm.prompts import RenderedPrompt, default_templates
from ..logs import log_event
from ..store import cycle_runs, cycle_signals
from ..store import cycles as cycle_store
from . import idle_windows
from .cycle_runs import day_bounds
from .cycle_tools import CycleDesk, cycle_tools
from .switches import chat_switches

if TYPE_CHECKING:
    from .consolidation import PrepassReport
    from .service import CognitionEngine

#: The agent's system prompt and first message (invariants only: every variable comes from the
#: ``cycle_context`` tool).
PROMPT_TEMPLATE = "cycle_system.jinja"
#: The longest message to a user kept (the tool asks for a short one).
MESSAGE_MAX_CHARS = 500


@dataclass(slots=True)
class ModelStep:
    """What the judgement step of one cycle did, or why it did not run. ``ended`` is how the agent
    ended (``llm/agent_types.Ended``), ``skipped`` (``reason`` is a code of
    ``domain/judgement.SKIP_REASONS_ZH``), ``unavailable`` (the model could not be reached;
    ``reason`` says why, in English) or ``dry_run`` (nothing ran; ``reason`` empty when it would)."""

    ended: str
    reason: str = ""
    work: tuple[str, ...] = ()
    budget_tokens: int = 0
    rounds: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tool_calls: int = 0
    changes: dict[str, int] = field(default_factory=dict)
    summary: str = ""
    message_to_user: str | None = None
    run_id: int | None = None
    #: The run's tool calls in order, with their arguments and answers (this process only: the
    #: run's row keeps their count).
    calls: tuple[ToolCallRecord, ...] = ()

    @property
    def ran(self) -> bool:
        return self.ended not in ("skipped", "dry_run") and self.rounds > 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def yielded(self) -> bool:
        return self.ended == "yielded"

    @property
    def would_run(self) -> bool:
        """A dry run's verdict: the step would run now."""
        return self.ended == "dry_run" and not self.reason

    @property
    def reason_zh(self) -> str:
        if self.ended == "unavailable":
            return "语言模型暂不可用"
        return SKIP_REASONS_ZH.get(self.reason, self.reason)

    def as_dict(self) -> dict[str, Any]:
        """The step as JSON (the CLI's ``--json``)."""
        return {
            "ran": self.ran,
            "ended": self.ended,
            "reason": self.reason or None,
            "reason_zh": self.reason_zh or None,
            "work": list(self.work),
            "budget_tokens": self.budget_tokens,
            "rounds": self.rounds,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "tool_calls": self.tool_calls,
            "changes": dict(self.changes),
            "summary": self.summary,
            "message_to_user": self.message_to_user,
        }


@lru_cache(maxsize=1)
def cycle_prompt() -> RenderedPrompt:
    """The agent's system prompt and kickoff message: the same bytes for every run of this process."""
    return default_templates().render(PROMPT_TEMPLATE)


@dataclass(frozen=True, slots=True)
class _ChatFacts:
    """What the decision and the run read of the chat, once: the signals, the last judged run
    (its summary is the next run's context), the last cycle's time."""

    signals: JudgementSignals
    last_judged: cycle_runs.CycleRun | None
    last_cycle: datetime | None


async def _facts(engine: CognitionEngine, report: PrepassReport, now: datetime) -> _ChatFacts:
    bot_id, scope = report.bot_id, report.scope
    last_cycle = (await idle_windows.state(engine, bot_id, scope)).last_cycle_at
    start, end = day_bounds(engine, now)
    settings = engine.config.consolidation
    async with engine.session() as session:
        due = await cycle_store.chats_due(session, bot_id, scope, limit=1)
        judged = await cycle_runs.last_finished(session, bot_id, scope)
        since = judged.started_at if judged is not None else None
        signals = JudgementSignals(
            model_configured=engine.llm is not None,
            memory_on=await chat_switches(engine, bot_id, scope) is not None,
            daily_token_budget=settings.daily_token_budget,
            cycle_token_budget=settings.cycle_token_budget,
            tokens_today=await cycle_runs.tokens_between(session, bot_id, start, end, now),
            near_clusters=await cycle_signals.unjudged_clusters(session, report.near, since),
            wording_clusters=await cycle_signals.unjudged_clusters(session, report.wording, since),
            new_memories=due[0].new if due else 0,
            stale_knowledge=await cycle_signals.stale_knowledge(session, bot_id, scope),
            suggestions=await cycle_signals.pending_suggestions(session, bot_id, scope),
            memo_chars=await cycle_signals.memo_chars(session, bot_id, scope),
            memo_max_chars=engine.config.memo_max_chars,
            cards_touched=await cycle_signals.cards_touched(session, bot_id, scope, last_cycle),
        )
    return _ChatFacts(signals, judged, last_cycle)


async def decision(engine: CognitionEngine, report: PrepassReport, now: datetime) -> JudgementDecision:
    """Whether the judgement step would run after this pre-pass now, and why not."""
    return decide((await _facts(engine, report, now)).signals)


async def would_judge(engine: CognitionEngine, report: PrepassReport, now: datetime) -> ModelStep:
    """A dry run's answer: whether the step would run and why not, changing nothing."""
    verdict = await decision(engine, report, now)
    return ModelStep("dry_run", verdict.reason, verdict.work, budget_tokens=verdict.tokens)


async def skipped(
    engine: CognitionEngine, report: PrepassReport, reason: str, trigger: str, now: datetime, work: tuple[str, ...] = ()
) -> ModelStep:
    """A run whose judgement step did not run, recorded with why (0 tokens)."""
    outcome = "yielded" if report.stopped else "done"
    async with engine.unit_of_work() as uow:
        row = cycle_runs.add(
            uow.session, report.bot_id, report.scope, trigger=trigger, started_at=now, finished_at=now,
            outcome=outcome, merged=len(report.merged), near=len(report.near), wording=len(report.wording),
            ended="skipped", reason=reason,
        )  # fmt: skip
        await uow.session.flush()
        run_id = row.id
        await uow.commit()
    log_event("cycle_judgement", scope=report.scope.key, ended="skipped", reason=reason, work=",".join(work))
    return ModelStep("skipped", reason, work, run_id=run_id)


async def _reserve(
    engine: CognitionEngine, report: PrepassReport, trigger: str, now: datetime
) -> tuple[int, int] | str:
    """The step's row and token budget, reserved against today's under the bot account's lock;
    ``daily_budget_spent`` when nothing is left (another cycle took it meanwhile)."""
    settings = engine.config.consolidation
    start, end = day_bounds(engine, now)
    async with engine.unit_of_work() as uow:
        await cycle_runs.lock_budget(uow.session, report.bot_id)
        spent = await cycle_runs.tokens_between(uow.session, report.bot_id, start, end, now)
        tokens = step_tokens(settings.cycle_token_budget, settings.daily_token_budget - spent)
        if tokens <= 0:
            return "daily_budget_spent"
        row = cycle_runs.add(
            uow.session, report.bot_id, report.scope, trigger=trigger, started_at=now, outcome="running",
            merged=len(report.merged), near=len(report.near), wording=len(report.wording), ended="running",
            reserved_tokens=tokens,
        )  # fmt: skip
        await uow.session.flush()
        run_id = row.id
        await uow.commit()
    return run_id, tokens


def _desk_and_tools(
    engine: CognitionEngine,
    report: PrepassReport,
    now: datetime,
    last: cycle_runs.CycleRun | None,
    last_cycle: datetime | None,
    work: tuple[str, ...] = (),
) -> tuple[CycleDesk, Sequence[AgentTool]]:
    """The cycle's desk (what its tools share: the context, the changes counted, a message queued)
    and the tools ``work`` needs (``engine/cycle_tools``); a message only in a private chat, while allowed."""
    desk = CycleDesk(
        bot_id=report.bot_id,
        scope=report.scope,
        now=now,
        last_cycle_at=last_cycle,
        last_summary=last.summary if last is not None else "",
        prepass=report,
        allow_send_to_user=engine.config.consolidation.allow_send_to_user and not report.scope.is_group,
    )
    return desk, cycle_tools(engine, desk, work)


async def judge(
    engine: CognitionEngine,
    report: PrepassReport,
    *,
    trigger: str,
    now: datetime,
    should_stop: Callable[[], Awaitable[bool]] | None = None,
) -> ModelStep:
    """The judgement step after ``report``'s pre-pass (see the module's docstring)."""
    if report.stopped:
        return await skipped(engine, report, "prepass_yielded", trigger, now)
    facts = await _facts(engine, report, now)
    verdict = decide(facts.signals)
    if not verdict.run:
        return await skipped(engine, report, verdict.reason, trigger, now, verdict.work)
    reserved = await _reserve(engine, report, trigger, now)
    if isinstance(reserved, str):
        return await skipped(engine, report, reserved, trigger, now, verdict.work)
    run_id, tokens = reserved
    budget = AgentBudget(engine.config.consolidation.agent_max_iterations, tokens)
    step = ModelStep("running", work=verdict.work, budget_tokens=tokens, run_id=run_id)
    started = time.perf_counter()
    try:
        desk, tools = _desk_and_tools(engine, report, now, facts.last_judged, facts.last_cycle, verdict.work)
        assert engine.llm is not None  # decide() said a model is configured
        prompt = cycle_prompt()
        outcome: AgentOutcome = await engine.llm.run_agent(
            "consolidation", prompt.system, prompt.user, tools, budget, should_stop=should_stop
        )
    except LLMUnavailable as error:  # LLMNotConfigured too: recorded, the cycle is still done
        step.ended, step.reason = "unavailable", str(error)[:200]
    except Exception as error:  # recorded, then the job's retry (a cancellation leaves the reservation to expire)
        step.ended, step.reason = "failed", f"{type(error).__name__}: {error}"[:200]
        await _finish(engine, step, now + timedelta(seconds=time.perf_counter() - started))
        raise
    else:
        _take(step, outcome, desk)
    await _finish(engine, step, now + timedelta(seconds=time.perf_counter() - started))
    log_event(
        "cycle_judgement",
        started,
        level=logging.INFO,
        scope=report.scope.key,
        ended=step.ended,
        rounds=step.rounds,
        prompt_tokens=step.prompt_tokens,
        completion_tokens=step.completion_tokens,
        budget=tokens,
        tool_calls=step.tool_calls,
        changes=",".join(f"{key}:{value}" for key, value in sorted(step.changes.items())),
        **({"reason": step.reason} if step.reason else {}),
    )
    return step


def _take(step: ModelStep, outcome: AgentOutcome, desk: CycleDesk) -> None:
    """What the agent's run and its tools left, into the step."""
    step.ended = outcome.ended
    step.reason = outcome.error[:200]
    step.rounds = outcome.rounds
    step.prompt_tokens = outcome.prompt_tokens
    step.completion_tokens = outcome.completion_tokens
    step.tool_calls = len(outcome.calls)
    step.calls = tuple(outcome.calls)
    step.changes = {str(key): int(value) for key, value in desk.changes.items() if value}
    step.summary = outcome.summary.strip()[: cycle_runs.SUMMARY_MAX_CHARS]
    message = (desk.message_to_user or "").strip() if desk.allow_send_to_user else ""
    step.message_to_user = message[:MESSAGE_MAX_CHARS] or None


async def _finish(engine: CognitionEngine, step: ModelStep, finished_at: datetime) -> None:
    assert step.run_id is not None
    async with engine.unit_of_work() as uow:
        await cycle_runs.finish(
            uow.session, step.run_id, finished_at=finished_at,
            outcome="yielded" if step.yielded else "done", ended=step.ended, reason=step.reason,
            rounds=step.rounds, prompt_tokens=step.prompt_tokens, completion_tokens=step.completion_tokens,
            tool_calls=step.tool_calls, changes=step.changes, summary=step.summary,
            message_to_user=step.message_to_user,
        )  # fmt: skip
        await uow.commit()


async def set_outcome(engine: CognitionEngine, run_id: int | None, outcome: str) -> None:
    """The cycle's outcome on its run row, when it differs from what the step wrote (``lost``)."""
    if run_id is None:
        return
    async with engine.unit_of_work() as uow:
        await cycle_runs.set_outcome(uow.session, run_id, outcome)
        await uow.commit()
