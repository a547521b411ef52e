"""Whether a chat's consolidation cycle goes on to the judgement step (the model agent) after its
pre-pass, and why not (pure policy; the engine gathers the facts, ``engine/judgement.py``).

The step runs only when all of these hold, checked in this order (the first that fails is the
reason recorded, and shown to the bot owner by ``status`` and the cycle's report):

* ``no_model``: the engine has an LLM gateway;
* ``memory_off``: the chat's memory is on (it may have been switched off since the pre-pass);
* ``budget_off``: ``consolidation.daily_token_budget`` is above 0 (0 turns the step off);
* ``daily_budget_spent``: the bot account's cycles left at least :data:`MIN_STEP_TOKENS` of it
  today (a round costs about that much: the prompt and the context; the driver checks the budget
  before each round, so a day ends at most about one round past its budget);
* ``nothing_to_judge``: something in the chat needs judgement (:data:`WORK`): near clusters the
  pre-pass proposed, clusters it proposed as "可能相同，措辞不同" (pairs its rules rejected only for
  their wording), memories new since the last cycle, stale knowledge entries citing the chat,
  suggestions filed in it, a pinned memo at :data:`MEMO_FULL_SHARE` of its limit or more, cards of
  the chat changed since the last cycle by someone other than the cycle.

What is cheap is left out on purpose: a chat with none of these gets no model call at all.
"""

from __future__ import annotations

from dataclasses import dataclass

#: A pinned memo at this share of ``memo_max_chars`` or more asks for a tidy-up (details move to
#: memories, a pointer stays).
MEMO_FULL_SHARE = 0.8

#: The least a step starts with (capped by the cycle's own budget): with less left of the day, it
#: does not start.
MIN_STEP_TOKENS = 2000

#: What the judgement step can be asked to look at, in the order the report names them.
WORK = (
    "near_clusters",
    "wording_clusters",
    "new_memories",
    "stale_knowledge",
    "suggestions",
    "memo_full",
    "cards_touched",
)

#: Why the step did not run, in Chinese (the chat's ``/memory dmn``, the CLI and ``status``).
SKIP_REASONS_ZH = {
    "no_model": "没有配置语言模型",
    "memory_off": "本会话的记忆已关闭",
    "budget_off": "每日 token 预算为 0（consolidation.daily_token_budget）",
    "daily_budget_spent": "本机器人账号今天的整理 token 预算已用完",
    "nothing_to_judge": "没有需要模型判断的内容",
    "prepass_yielded": "会话里有新消息，整理已让出，稍后继续",
}

#: How a judgement step ended (``llm/agent_types.Ended`` and the engine's own), in Chinese.
ENDED_ZH = {
    "stopped": "模型完成并停止",
    "iterations": "轮数用完",
    "tokens": "token 预算用完",
    "yielded": "会话有新消息，已让出",
    "no_tool_call": "模型没有调用工具，提前结束",
    "failed": "出错结束",
    "unavailable": "语言模型暂不可用",
    "skipped": "未调用模型",
    "running": "进行中",
}

#: What the step's tools changed, by kind (``engine/cycle_tools``' ``CHANGE_KINDS``), in Chinese; a
#: kind not named here is shown as it is.
CHANGES_ZH = {
    "merged": "合并",
    "updated": "修改",
    "forgotten": "遗忘",
    "written": "新写",
    "cards": "画像",
    "memo": "备忘录",
    "knowledge": "知识库",
    "suggestions": "建议",
}

#: The work items in Chinese.
WORK_ZH = {
    "near_clusters": "相近的记忆",
    "wording_clusters": "措辞不同的相近记忆",
    "new_memories": "新记忆",
    "stale_knowledge": "待重写的知识库条目",
    "suggestions": "待审阅的知识库建议",
    "memo_full": "接近上限的置顶备忘录",
    "cards_touched": "更新过的画像",
}


@dataclass(frozen=True, slots=True)
class JudgementSignals:
    """What the decision reads of one chat, gathered by the engine just after the pre-pass."""

    model_configured: bool
    memory_on: bool
    daily_token_budget: int
    cycle_token_budget: int
    tokens_today: int
    near_clusters: int = 0
    wording_clusters: int = 0
    new_memories: int = 0
    stale_knowledge: int = 0
    suggestions: int = 0
    memo_chars: int = 0
    memo_max_chars: int = 0
    cards_touched: int = 0

    @property
    def memo_full(self) -> bool:
        return self.memo_max_chars > 0 and self.memo_chars >= MEMO_FULL_SHARE * self.memo_max_chars


@dataclass(frozen=True, slots=True)
class JudgementDecision:
    """``run`` or the ``reason`` it does not (a code of :data:`SKIP_REASONS_ZH`); ``work`` is what
    needs judgement (named even when the budget says no, so the owner sees what waits)."""

    run: bool
    reason: str
    work: tuple[str, ...]
    #: Tokens left of today's budget (0 when none is left or the budget is 0).
    tokens_left: int
    #: The step's token budget were it to start now (:func:`step_tokens`).
    tokens: int

    @property
    def reason_zh(self) -> str:
        return SKIP_REASONS_ZH.get(self.reason, self.reason)


def work_of(signals: JudgementSignals) -> tuple[str, ...]:
    """What in the chat needs judgement, in :data:`WORK` order."""
    present = {
        "near_clusters": signals.near_clusters > 0,
        "wording_clusters": signals.wording_clusters > 0,
        "new_memories": signals.new_memories > 0,
        "stale_knowledge": signals.stale_knowledge > 0,
        "suggestions": signals.suggestions > 0,
        "memo_full": signals.memo_full,
        "cards_touched": signals.cards_touched > 0,
    }
    return tuple(item for item in WORK if present[item])


def decide(signals: JudgementSignals) -> JudgementDecision:
    """Whether the judgement step runs (see the module's docstring for the order of the checks)."""
    work = work_of(signals)
    left = max(0, signals.daily_token_budget - signals.tokens_today)
    tokens = step_tokens(signals.cycle_token_budget, left)
    checks = (
        ("no_model", signals.model_configured),
        ("memory_off", signals.memory_on),
        ("budget_off", signals.daily_token_budget > 0),
        ("daily_budget_spent", tokens > 0),
        ("nothing_to_judge", bool(work)),
    )
    for reason, holds in checks:
        if not holds:
            return JudgementDecision(False, reason, work, left, 0)
    return JudgementDecision(True, "", work, left, tokens)


def step_tokens(cycle_token_budget: int, tokens_left: int) -> int:
    """The token budget of one judgement step: the cycle's, at most what is left of the day; 0 (no
    step) when less than :data:`MIN_STEP_TOKENS` (or the cycle's budget, if smaller) is left."""
    if tokens_left < min(MIN_STEP_TOKENS, cycle_token_budget):
        return 0
    return min(cycle_token_budget, tokens_left)


def changes_zh(changes: dict[str, int]) -> str:
    """``{"merged": 1, "cards": 2}`` → ``合并 1，画像 2`` (in :data:`CHANGES_ZH`'s order); ``无`` when empty."""
    order = {kind: index for index, kind in enumerate(CHANGES_ZH)}
    kinds = sorted((kind for kind, count in changes.items() if count), key=lambda kind: (order.get(kind, 99), kind))
    return "，".join(f"{CHANGES_ZH.get(kind, kind)} {changes[kind]}" for kind in kinds) or "无"
