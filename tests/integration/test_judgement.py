"""The consolidation cycle's judgement step on a real engine (``engine/judgement.py``): when it runs
and why not (recorded, shown by ``status``), its token budget across the cycles of one bot account
in a day, a yield to a message, an unavailable model, what it leaves (summary, a message for a
private chat's user) and what a forget or a delete-all does to that.

The agent itself is driven by a runner written here (it satisfies ``llm/agent_types.AgentRunner``:
it calls the given tools' handlers in a fixed order, then returns an outcome spending what it was
told) over a tiny tool list of its own: the real driver (``llm/agent.py``) and the real tools
(``engine/cycle_tools``) are tested where they live, and end to end by the lead's check.

Runs on SQLite + embedded Chroma by default and on PostgreSQL + a Chroma server with
COGNITION_TEST_BACKEND=server.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from engine_helpers import NOW, group, make_engine, new_bot, private
from fake_openai import FakeOpenAI, tool_call
from pydantic import BaseModel
from sqlalchemy import select

from amrita_plugin_cognition.domain.cycle_offer import ALWAYS, offered
from amrita_plugin_cognition.domain.erasure import ErasureTarget
from amrita_plugin_cognition.domain.job_kinds import CONSOLIDATION_JOB
from amrita_plugin_cognition.domain.permissions import Operator
from amrita_plugin_cognition.domain.records import MemoryDraft, Scope
from amrita_plugin_cognition.engine import judgement
from amrita_plugin_cognition.errors import LLMUnavailable
from amrita_plugin_cognition.llm.agent_types import STOP_TOOL, AgentBudget, AgentOutcome, AgentTool, ToolCallRecord
from amrita_plugin_cognition.store.models import CycleRunRow

#: The fake model's preset (``model`` fixture) for the one test through the real driver.
PRESET = "cognition-judgement-test"
GROUP, OTHER, THIRD = Scope("group", "20001"), Scope("group", "20002"), Scope("group", "20003")
U = "10001"
DM = Scope("private", U)
FACTS = ["QQ号10001（昵称小明）每周六上午去图书馆。", "QQ号10001（昵称小明）喜欢吃辣。"]


# ---------------------------------------------------------------------------- the test's agent


@dataclass
class Desk:
    """What the tiny tools share (the engine's ``CycleDesk`` has these and more)."""

    scope: Scope
    near: int
    allow_send_to_user: bool
    changes: Counter[str] = field(default_factory=Counter)
    message_to_user: str | None = None


class NoArguments(BaseModel):
    pass


class Change(BaseModel):
    kind: str


class Message(BaseModel):
    text: str


def tiny_tools(desk: Desk) -> list[AgentTool]:
    async def context(_: BaseModel) -> str:
        return f"会话 {desk.scope.key}，相近的记忆 {desk.near} 组"

    async def change(arguments: BaseModel) -> str:
        assert isinstance(arguments, Change)
        desk.changes[arguments.kind] += 1
        return "好"

    async def message(arguments: BaseModel) -> str:
        assert isinstance(arguments, Message)
        if not desk.allow_send_to_user:
            return "拒绝：这个会话不能给用户留消息"
        desk.message_to_user = arguments.text
        return "好"

    return [
        AgentTool("cycle_context", "整理的上下文", NoArguments, context),
        AgentTool("test_change", "记一次改动", Change, change),
        AgentTool("test_message", "给用户留言", Message, message),
    ]


def use_tiny_tools(engine, report, now, last, last_cycle, work=()):  # type: ignore[no-untyped-def]
    """``judgement._desk_and_tools`` over the tiny tools (the desk's allowance as the engine sets it)."""
    allowed = engine.config.consolidation.allow_send_to_user and not report.scope.is_group
    desk = Desk(report.scope, len(report.near), allowed)
    return desk, tiny_tools(desk)


@dataclass
class Runner:
    """An ``AgentRunner``: each round calls one tool of ``script`` (``should_stop`` asked before
    every round after the first), then ends ``ended`` having spent ``spend`` tokens (all of its
    budget when None), a fifth of them completion."""

    script: list[tuple[str, dict[str, Any]]] = field(default_factory=lambda: [("cycle_context", {})])
    spend: int | None = None
    summary: str = "整理完毕，没有改动"
    ended: str = "stopped"
    error: Exception | None = None
    hold: float = 0.0
    runs: list[dict[str, Any]] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)

    async def __call__(
        self,
        purpose: str,
        system: str,
        kickoff: str,
        tools: Sequence[AgentTool],
        budget: AgentBudget,
        should_stop: Callable[[], Awaitable[bool]] | None = None,
    ) -> AgentOutcome:
        self.runs.append(
            {
                "purpose": purpose,
                "system": system,
                "kickoff": kickoff,
                "budget": budget,
                "tools": [t.name for t in tools],
            }
        )
        if self.error is not None:
            raise self.error
        by_name = {tool.name: tool for tool in tools}
        calls: list[ToolCallRecord] = []
        spent = budget.max_tokens if self.spend is None else min(self.spend, budget.max_tokens)
        for number, (name, arguments) in enumerate(self.script, 1):
            if number > 1 and should_stop is not None and await should_stop():
                return _outcome("yielded", "", number - 1, spent, calls)
            tool = by_name[name]
            answer = await tool.handler(tool.arguments.model_validate(arguments))
            self.answers.append(answer)
            calls.append(ToolCallRecord(number, name, not answer.startswith("拒绝"), len(answer)))
            await asyncio.sleep(self.hold)
        return _outcome(self.ended, self.summary, len(self.script), spent, calls)


def _outcome(ended: str, summary: str, rounds: int, spent: int, calls: list[ToolCallRecord]) -> AgentOutcome:
    completion = spent // 5
    return AgentOutcome(ended, summary, rounds, spent - completion, completion, calls)  # type: ignore[arg-type]


async def _engine(tmp_root, chroma_port, monkeypatch, runner: Runner, **consolidation):  # type: ignore[no-untyped-def]
    engine = await make_engine(tmp_root, chroma_port, consolidation=consolidation)
    monkeypatch.setattr(engine.llm, "run_agent", runner)
    monkeypatch.setattr(judgement, "_desk_and_tools", use_tiny_tools)
    return engine


async def _write(engine, bot: str, scope: Scope, *texts: str, at=None) -> list[int]:  # type: ignore[no-untyped-def]
    drafts = [MemoryDraft(text=text, scope=scope, speaker_id=U, speaker_name="小明") for text in texts]
    result = await engine.memories.remember(bot, drafts, now=at or NOW - timedelta(days=1))
    assert len(result.written) == len(texts), result.refused
    await engine.index.drain()
    return [record.id for record in result.written]


async def _rows(engine, bot: str) -> list[CycleRunRow]:  # type: ignore[no-untyped-def]
    async with engine.session() as session:
        found = await session.execute(select(CycleRunRow).where(CycleRunRow.bot_id == bot).order_by(CycleRunRow.id))
        return list(found.scalars())


def _bot_usage(usage: dict[str, Any], bot: str) -> dict[str, Any]:
    (found,) = [item for item in usage["bots"] if item["bot"] == bot]
    return found


# ---------------------------------------------------------------------------- budgets and usage


async def test_a_bot_accounts_cycles_share_the_days_budget_and_status_shows_it(
    tmp_root, chroma_port, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    runner = Runner(script=[("cycle_context", {}), ("test_change", {"kind": "tags"})], summary="统一了一个标签")
    engine = await _engine(
        tmp_root, chroma_port, monkeypatch, runner, daily_token_budget=5000, cycle_token_budget=3000,
        agent_max_iterations=7,
    )  # fmt: skip
    bot = new_bot()
    for scope in (GROUP, OTHER, THIRD):
        await _write(engine, bot, scope, *FACTS)

    first = (await engine.consolidation.run_now(Operator(), bot, GROUP, now=NOW)).model_step
    assert first is not None and first.ended == "stopped" and first.ran
    assert (first.budget_tokens, first.tokens, first.rounds, first.tool_calls) == (3000, 3000, 2, 2)
    assert first.changes == {"tags": 1} and first.summary == "统一了一个标签" and first.work == ("new_memories",)
    assert runner.runs[0]["budget"] == AgentBudget(7, 3000) and runner.runs[0]["purpose"] == "consolidation"
    # the second cycle of the day gets what is left, under its own cap
    second = (await engine.consolidation.run_now(Operator(), bot, OTHER, now=NOW + timedelta(minutes=5))).model_step
    assert second is not None and (second.budget_tokens, second.tokens) == (2000, 2000)
    # the day is spent: the third chat's pre-pass runs, the model is not called, and it says why
    third = (await engine.consolidation.run_now(Operator(), bot, THIRD, now=NOW + timedelta(minutes=9))).model_step
    assert third is not None and (third.ended, third.reason, third.tokens) == ("skipped", "daily_budget_spent", 0)
    assert third.reason_zh == "本机器人账号今天的整理 token 预算已用完" and len(runner.runs) == 2

    # status shows it (``usage`` is what status reads, asked here on the test's clock)
    shown = (await engine.index.status(check_ids=False))["cycles"]["judgement"]
    assert shown["daily_token_budget"] == 5000 and shown["recent"][0]["bot"] == bot
    usage = await engine.consolidation.usage(now=NOW)
    assert usage["daily_token_budget"] == 5000 and usage["day"] == "2026-11-30"  # 20:00 in Asia/Shanghai
    assert _bot_usage(usage, bot) == {
        "bot": bot, "tokens_today": 5000, "runs_today": 3, "judged_today": 2, "left_today": 0,
    }  # fmt: skip
    recent = [run for run in usage["recent"] if run["bot"] == bot]
    assert [(run["chat"], run["ended"], run["rounds"], run["tokens"]) for run in recent] == [
        (THIRD.key, "skipped", 0, 0), (OTHER.key, "stopped", 2, 2000), (GROUP.key, "stopped", 2, 3000),
    ]  # fmt: skip
    assert recent[0]["reason_zh"] == third.reason_zh and recent[2]["changes"] == {"tags": 1}
    # a new day (in the configured zone) brings a new budget; another bot account never shared it
    await _write(engine, bot, THIRD, "QQ号10001（昵称小明）下周去杭州出差。", at=NOW + timedelta(hours=1))
    tomorrow = NOW + timedelta(hours=5)  # 01:00 on 12-01 in Asia/Shanghai
    fourth = (await engine.consolidation.run_now(Operator(), bot, THIRD, now=tomorrow)).model_step
    assert fourth is not None and fourth.budget_tokens == 3000 and fourth.ended == "stopped"
    other_bot = new_bot()
    await _write(engine, other_bot, GROUP, *FACTS)
    fifth = (await engine.consolidation.run_now(Operator(), other_bot, GROUP, now=NOW)).model_step
    assert fifth is not None and fifth.budget_tokens == 3000


async def test_concurrent_cycles_never_spend_the_same_tokens(tmp_root, chroma_port, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    runner = Runner(hold=0.3)
    engine = await _engine(tmp_root, chroma_port, monkeypatch, runner, daily_token_budget=5000, cycle_token_budget=3000)
    bot = new_bot()
    for scope in (GROUP, OTHER):
        await _write(engine, bot, scope, *FACTS)
    reports = await asyncio.gather(
        *(engine.consolidation.run_now(Operator(), bot, scope, now=NOW) for scope in (GROUP, OTHER))
    )
    budgets = sorted(report.model_step.budget_tokens for report in reports)
    assert budgets == [2000, 3000]  # the second reservation saw the first one's while it ran
    assert sum(row.prompt_tokens + row.completion_tokens for row in await _rows(engine, bot)) == 5000


async def test_a_daily_budget_of_zero_leaves_the_pre_pass_merging_without_the_model(
    tmp_root, chroma_port, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    runner = Runner()
    engine = await _engine(tmp_root, chroma_port, monkeypatch, runner, daily_token_budget=0)
    bot = new_bot()
    await _write(engine, bot, GROUP, FACTS[0], FACTS[0].replace("。", "！"), FACTS[1])
    report = await engine.consolidation.run_now(Operator(), bot, GROUP, now=NOW)
    assert len(report.merged) == 1  # the exact pair
    step = report.model_step
    assert step is not None and (step.ended, step.reason, step.tokens) == ("skipped", "budget_off", 0)
    assert step.work == ("new_memories",) and runner.runs == []
    (row,) = await _rows(engine, bot)
    assert (row.ended, row.reason, row.outcome, row.merged, row.trigger) == (
        "skipped",
        "budget_off",
        "done",
        1,
        "command",
    )
    usage = await engine.consolidation.usage(now=NOW)
    assert _bot_usage(usage, bot)["tokens_today"] == 0 and usage["daily_token_budget"] == 0


async def test_through_the_real_driver_the_step_records_what_the_model_used(
    tmp_root, chroma_port, model: FakeOpenAI, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """``engine.llm.run_agent`` itself (``llm/agent.py``) against the fake model: the invariant
    prompt and kickoff go out as the first two messages, the provider's usage is what the row holds."""

    def answer(name: str, arguments: dict[str, Any], prompt: int, completion: int) -> dict[str, Any]:
        usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        return {**tool_call(name, arguments, f"call_{name}"), "__usage__": usage}

    model.script.extend(
        [
            answer("cycle_context", {}, 900, 20),
            answer("test_change", {"kind": "tags"}, 1000, 30),
            answer(STOP_TOOL, {"summary": "统一了一个标签。"}, 1100, 25),
        ]
    )
    engine = await make_engine(
        tmp_root, chroma_port, llm={"preset": PRESET, "timeout_seconds": 10.0, "max_retries": 0},
    )  # fmt: skip
    monkeypatch.setattr(judgement, "_desk_and_tools", use_tiny_tools)
    bot = new_bot()
    await _write(engine, bot, GROUP, *FACTS)
    step = (await engine.consolidation.run_now(Operator(), bot, GROUP, now=NOW)).model_step
    assert step is not None and (step.ended, step.summary, step.rounds) == ("stopped", "统一了一个标签。", 3)
    assert (step.prompt_tokens, step.completion_tokens, step.tool_calls, step.changes) == (3000, 75, 3, {"tags": 1})
    # the step keeps each call with what the model sent and read back, for the caller to show
    assert [(call.name, call.arguments, call.answer) for call in step.calls] == [
        ("cycle_context", "{}", f"会话 {GROUP.key}，相近的记忆 0 组"),
        ("test_change", '{"kind": "tags"}', "好"),
        (STOP_TOOL, '{"summary": "统一了一个标签。"}', "已结束。"),
    ]
    first = model.chat_requests[0]
    prompt = judgement.cycle_prompt()
    assert [(message["role"], message["content"]) for message in first["messages"]] == [
        ("system", prompt.system), ("user", prompt.user),
    ]  # fmt: skip
    assert {tool["function"]["name"] for tool in first["tools"]} >= {"cycle_context", "test_change", STOP_TOOL}
    (row,) = await _rows(engine, bot)
    assert (row.prompt_tokens, row.completion_tokens, row.reserved_tokens, row.ended) == (3000, 75, 0, "stopped")
    usage = await engine.consolidation.usage(now=NOW)
    assert _bot_usage(usage, bot)["tokens_today"] == 3075


# ---------------------------------------------------------------------------- why not, and dry runs


async def test_a_near_cluster_the_model_has_seen_asks_for_no_new_judgement_until_it_changes(
    tmp_root, chroma_port, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """Every cycle proposes the near clusters again; only one with a member newer than the last
    judged run counts as work, so a pair the model left apart costs no tokens night after night."""
    runner = Runner()
    engine = await _engine(tmp_root, chroma_port, monkeypatch, runner)
    bot = new_bot()
    pair = ["阿杰每周三晚上去健身房。", "阿杰每个星期三晚上去健身房。"]
    await _write(engine, bot, GROUP, *pair)
    first = await engine.consolidation.run_now(Operator(), bot, GROUP, now=NOW)
    assert len(first.near) == 1 and first.model_step is not None
    assert first.model_step.ran and first.model_step.work == ("near_clusters", "new_memories")
    # the model saw the pair and merged nothing: the next night the pair is proposed, not judged again
    second = await engine.consolidation.run_now(Operator(), bot, GROUP, now=NOW + timedelta(hours=1))
    assert len(second.near) == 1 and second.model_step is not None
    assert (second.model_step.ended, second.model_step.reason) == ("skipped", "nothing_to_judge")
    # a third wording joins the cluster: it is new, so the cluster is judged again
    await _write(engine, bot, GROUP, "阿杰每周三晚上都去健身房。", at=NOW + timedelta(hours=2))
    third = await engine.consolidation.run_now(Operator(), bot, GROUP, now=NOW + timedelta(hours=3))
    assert [len(cluster) for cluster in third.near] == [3]
    assert third.model_step is not None and third.model_step.ran
    assert third.model_step.work == ("near_clusters", "new_memories") and len(runner.runs) == 2


async def test_each_reason_not_to_call_the_model_is_recorded_and_a_dry_run_calls_nothing(
    tmp_root, chroma_port, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    runner = Runner()
    engine = await _engine(tmp_root, chroma_port, monkeypatch, runner)
    bot = new_bot()
    await _write(engine, bot, GROUP, FACTS[0])

    dry = await engine.consolidation.dry_run(Operator(), bot, GROUP, now=NOW)
    assert dry.model_step is not None and dry.model_step.would_run and dry.model_step.budget_tokens == 45000
    assert dry.model_step.work == ("new_memories",) and runner.runs == [] and await _rows(engine, bot) == []

    assert (await engine.consolidation.run_now(Operator(), bot, GROUP, now=NOW)).model_step.ran
    # nothing new since that cycle (its own end is the mark), nothing else to judge
    later = NOW + timedelta(hours=1)
    again = (await engine.consolidation.run_now(Operator(), bot, GROUP, now=later)).model_step
    assert (again.ended, again.reason, again.reason_zh) == ("skipped", "nothing_to_judge", "没有需要模型判断的内容")
    dry = (await engine.consolidation.dry_run(Operator(), bot, GROUP, now=later)).model_step
    assert not dry.would_run and dry.reason == "nothing_to_judge"
    # a pending suggestion filed in the chat is work again
    await engine.knowledge.suggest(group(bot, GROUP.id, U), "群里的活动通知统一发在公告里。", now=later)
    assert (await engine.consolidation.dry_run(Operator(), bot, GROUP, now=later)).model_step.work == ("suggestions",)

    # the chat switched off after the pre-pass: the step says so
    report = await engine.consolidation.dry_run(Operator(), bot, GROUP, now=later)
    await engine.governance.set_chat_memory(bot, GROUP, False, Operator(), now=later)
    off = await judgement.judge(engine, report, trigger="command", now=later)
    assert (off.ended, off.reason) == ("skipped", "memory_off")
    await engine.governance.set_chat_memory(bot, GROUP, True, Operator(), now=later)

    # no model in this engine
    monkeypatch.setattr(engine, "llm", None)
    await _write(engine, bot, GROUP, FACTS[1], at=later)
    none = (await engine.consolidation.run_now(Operator(), bot, GROUP, now=later + timedelta(hours=1))).model_step
    assert (none.ended, none.reason, none.reason_zh) == ("skipped", "no_model", "没有配置语言模型")
    assert len(runner.runs) == 1
    assert [(row.ended, row.reason) for row in await _rows(engine, bot)] == [
        ("stopped", ""), ("skipped", "nothing_to_judge"), ("skipped", "memory_off"), ("skipped", "no_model"),
    ]  # fmt: skip


async def test_the_prompt_is_the_same_bytes_for_every_run_and_holds_no_variable(
    tmp_root, chroma_port, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    runner = Runner()
    engine = await _engine(tmp_root, chroma_port, monkeypatch, runner)
    bot = new_bot()
    for scope in (GROUP, DM):
        await _write(engine, bot, scope, *FACTS)
    await engine.consolidation.run_now(Operator(), bot, GROUP, now=NOW)
    await engine.consolidation.run_now(Operator(), bot, DM, now=NOW + timedelta(hours=3))
    first, second = runner.runs
    assert first["system"].encode() == second["system"].encode() and first["kickoff"] == second["kickoff"]
    assert first["kickoff"] == "开始整理：先调用 cycle_context。"
    system = first["system"]
    assert "cycle_context" in system and "cycle_stop" in system and "不编造" in system
    for variable in ("2026", "20001", U, bot, "Asia/Shanghai"):
        assert variable not in system
    # the tools it names are offered to every run: what a run is offered varies, the prompt does not
    assert set(re.findall(r"cycle_[a-z_]+", system)) <= {*ALWAYS, STOP_TOOL}


async def test_a_run_is_offered_the_tools_its_work_needs(tmp_root, chroma_port, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The real tools (``engine/cycle_tools``) through ``judgement._desk_and_tools``: the step's
    work picks them (``domain/cycle_offer``); a group chat's first cycle has new memories, so the
    cards and the knowledge base, but neither the memo nor the suggestions."""
    runner = Runner()
    engine = await make_engine(tmp_root, chroma_port)
    monkeypatch.setattr(engine.llm, "run_agent", runner)
    bot = new_bot()
    await _write(engine, bot, GROUP, *FACTS)
    step = (await engine.consolidation.run_now(Operator(), bot, GROUP, now=NOW)).model_step
    assert step is not None and "new_memories" in step.work and "memo_full" not in step.work
    names = set(runner.runs[0]["tools"])
    expected = offered(step.work, group=True)
    assert expected is not None and names == expected - {"cycle_send_to_user"}  # never in a group
    assert {"cycle_card_update", "cycle_knowledge_write"} <= names
    assert not names & {"cycle_memo_update", "cycle_suggestion_review", "cycle_knowledge_delete"}


# ---------------------------------------------------------------------------- yielding, failures


async def test_a_message_during_the_model_step_makes_the_cycle_yield(tmp_root, chroma_port, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    runner = Runner(script=[("cycle_context", {}), ("test_change", {"kind": "merged"})], spend=1200)
    engine = await _engine(tmp_root, chroma_port, monkeypatch, runner)
    bot = new_bot()
    await _write(engine, bot, GROUP, *FACTS)
    await engine.consolidation.refresh(now=NOW)
    (job,) = [item for item in await engine.jobs.queued() if item.bot_id == bot and item.kind == CONSOLIDATION_JOB]
    due = job.next_attempt_at
    engine.idle_windows.observe(bot, GROUP, U, due + timedelta(minutes=1))  # someone talks as it runs
    await engine.jobs.run_until_idle(now=due, flush=False)
    (row,) = await _rows(engine, bot)
    assert (row.outcome, row.ended, row.rounds, row.tool_calls) == ("yielded", "yielded", 1, 1)
    assert row.prompt_tokens + row.completion_tokens == 1200  # a yielded step's tokens still count
    (again,) = [item for item in await engine.jobs.queued() if item.bot_id == bot and item.kind == CONSOLIDATION_JOB]
    assert again.id != job.id and again.state == "pending" and again.payload == {"runs": 1, "merged": 0}
    assert (await engine.idle_windows.state(bot, GROUP)).last_cycle_at is None  # not a finished cycle

    await engine.jobs.run_until_idle(now=again.next_attempt_at, flush=False)  # quiet now: it runs to its end
    assert [(row.outcome, row.ended) for row in await _rows(engine, bot)] == [
        ("yielded", "yielded"),
        ("done", "stopped"),
    ]
    assert (await engine.idle_windows.state(bot, GROUP)).last_cycle_at is not None


async def test_an_unavailable_model_is_recorded_and_the_cycle_is_still_done(tmp_root, chroma_port, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    runner = Runner(error=LLMUnavailable("语言模型暂不可用", en="llm unavailable: timeout after 60 s"))
    engine = await _engine(tmp_root, chroma_port, monkeypatch, runner)
    bot = new_bot()
    await _write(engine, bot, GROUP, *FACTS)
    await engine.consolidation.refresh(now=NOW)
    (job,) = [item for item in await engine.jobs.queued() if item.bot_id == bot and item.kind == CONSOLIDATION_JOB]
    await engine.jobs.run_until_idle(now=job.next_attempt_at, flush=False)
    (row,) = await _rows(engine, bot)
    assert (row.outcome, row.ended, row.prompt_tokens, row.reserved_tokens) == ("done", "unavailable", 0, 0)
    assert "timeout after 60 s" in row.reason
    assert [item for item in await engine.jobs.queued() if item.bot_id == bot] == []  # completed, not failed
    assert (await engine.idle_windows.state(bot, GROUP)).last_cycle_at is not None

    # any other failure is recorded and raised (the job's retry handles it)
    runner.error = RuntimeError("boom")
    await _write(engine, bot, OTHER, *FACTS)
    with pytest.raises(RuntimeError):
        await engine.consolidation.run_now(Operator(), bot, OTHER, now=NOW)
    failed = (await _rows(engine, bot))[-1]
    assert (failed.ended, failed.reason, failed.reserved_tokens) == ("failed", "RuntimeError: boom", 0)


# ---------------------------------------------------------------------------- what a run leaves


async def test_a_message_is_kept_for_a_private_chat_only_while_allowed_and_offered_once(
    tmp_root, chroma_port, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    runner = Runner(script=[("cycle_context", {}), ("test_message", {"text": "周六记得带借书卡。"})])
    engine = await _engine(tmp_root, chroma_port, monkeypatch, runner, allow_send_to_user=True)
    bot = new_bot()
    for scope in (GROUP, DM):
        await _write(engine, bot, scope, *FACTS)
    in_group = (await engine.consolidation.run_now(Operator(), bot, GROUP, now=NOW)).model_step
    assert in_group.message_to_user is None and runner.answers[-1].startswith("拒绝")  # never in a group
    in_private = (await engine.consolidation.run_now(Operator(), bot, DM, now=NOW)).model_step
    assert in_private.message_to_user == "周六记得带借书卡。"

    (message,) = [item for item in await engine.consolidation.undelivered_messages(now=NOW) if item.bot_id == bot]
    assert (message.user_id, message.text) == (U, "周六记得带借书卡。")
    # switched off at delivery time: nothing is offered
    allowed = engine.config
    engine.config = allowed.model_copy(
        update={"consolidation": allowed.consolidation.model_copy(update={"allow_send_to_user": False})}
    )
    assert await engine.consolidation.undelivered_messages(now=NOW) == []
    engine.config = allowed
    # nor to a user who opted out since, nor a day later
    await engine.governance.set_opt_out(bot, U, True, Operator(), now=NOW)
    assert [item for item in await engine.consolidation.undelivered_messages(now=NOW) if item.bot_id == bot] == []
    await engine.governance.set_opt_out(bot, U, False, Operator(), now=NOW)
    late = NOW + timedelta(hours=25)
    assert [item for item in await engine.consolidation.undelivered_messages(now=late) if item.bot_id == bot] == []
    # sent once
    assert await engine.consolidation.mark_message_sent(message.run_id, now=NOW)
    assert not await engine.consolidation.mark_message_sent(message.run_id, now=NOW)
    assert [item for item in await engine.consolidation.undelivered_messages(now=NOW) if item.bot_id == bot] == []


async def test_a_forget_in_a_chat_blanks_its_summaries_and_its_unsent_message(
    tmp_root, chroma_port, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    runner = Runner(
        script=[("cycle_context", {}), ("test_message", {"text": "小明，周六去图书馆吗？"})],
        summary="合并了小明去图书馆的两条记忆",
    )
    engine = await _engine(tmp_root, chroma_port, monkeypatch, runner, allow_send_to_user=True)
    bot = new_bot()
    ids = await _write(engine, bot, DM, *FACTS)
    await _write(engine, bot, GROUP, *FACTS)
    await engine.consolidation.run_now(Operator(), bot, DM, now=NOW)
    await engine.consolidation.run_now(Operator(), bot, GROUP, now=NOW)
    assert [(row.summary, row.message_to_user) for row in await _rows(engine, bot)] == [
        ("合并了小明去图书馆的两条记忆", "小明，周六去图书馆吗？"), ("合并了小明去图书馆的两条记忆", None),
    ]  # fmt: skip

    await engine.governance.forget(private(bot, U), ids[0], now=NOW)
    private_row, group_row = await _rows(engine, bot)
    assert (private_row.summary, private_row.message_to_user) == ("", None)  # it may have quoted the fact
    assert (private_row.ended, private_row.rounds) == ("stopped", 2)  # the usage stays
    assert group_row.summary == "合并了小明去图书馆的两条记忆"  # another chat's run is not touched
    assert [item for item in await engine.consolidation.undelivered_messages(now=NOW) if item.bot_id == bot] == []


async def test_a_delete_all_takes_the_chats_runs_and_a_users_name_from_the_others(
    tmp_root, chroma_port, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    runner = Runner(summary="整理了 QQ号10002 的两条记忆")
    engine = await _engine(tmp_root, chroma_port, monkeypatch, runner)
    bot = new_bot()
    for scope in (GROUP, OTHER, Scope("private", "10002")):
        await _write(engine, bot, scope, *FACTS)
        await engine.consolidation.run_now(Operator(), bot, scope, now=NOW)
    runner.summary = "没有改动"
    await _write(engine, bot, THIRD, *FACTS)
    await engine.consolidation.run_now(Operator(), bot, THIRD, now=NOW)

    await engine.governance.delete_all(ErasureTarget.chat(bot, OTHER), Operator(), now=NOW)
    assert [row.scope_id for row in await _rows(engine, bot)] == [GROUP.id, "10002", THIRD.id]
    await engine.governance.delete_all(ErasureTarget.user(bot, "10002"), Operator(), now=NOW)
    rows = await _rows(engine, bot)
    assert [(row.scope_id, row.summary) for row in rows] == [(GROUP.id, ""), (THIRD.id, "没有改动")]
    assert rows[0].rounds == 1  # blanked, not forgotten: the day's usage still counts
    await engine.governance.delete_all(ErasureTarget.bot(bot), Operator(), now=NOW)
    assert await _rows(engine, bot) == []
