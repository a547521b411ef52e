"""What one consolidation cycle costs in model calls and tokens, against the seed's way.

One group chat of 1,000 memories of about 30 members (``_cycle_chat.py``: template facts, 40
planted exact copies, 60 planted rewordings written by hand, 20 near-misses that must never be
merged), built through the real write path three times per run:

* **ours**: the real cycle (``engine.consolidation.run_now``: the model-free pre-pass, then the
  judgement step over the cycle's tools with the default budgets) with a fake model that plays a
  sensible agent and is a perfect judge (``_fake_agent.py``): ``cycle_context``, the near
  clusters page by page, a merge for each planted pair a cluster shows, ``cycle_stop``;
* **the seed's way** (amrita-plugin-memory's cycle: the agent reads every memory of the chat,
  40 per page by default, then merges what it found): the same driver (``engine.llm.run_agent``)
  with the same system prompt over a tool set written here — ``list_memories(cursor, limit)``
  (one line per memory, as our tools write them), ``merge(ids, text)`` (the engine's merge use
  case) and the driver's stop tool — on a fresh copy of the same chat, with a budget that lets it
  read to the end; the fake model pages to the end, then merges every planted pair it saw;
* the seed's way with its largest page (200): the least the seed's way could cost.

Every request the model server receives is counted from its body (messages + tool schemas, as
JSON) with the project's estimator, ``estimate_tokens``, and so is every answer; the fake model
reports these as the usage, so the driver's budget acts as it would with a provider. Prefix
caches make the repeated system prompt and schemas cheaper at most providers; they are counted
in full here. Checked from storage after each run: planted duplicates merged (by the pre-pass or
the model) / planted, near-misses merged (must be 0), every memory still reachable by lineage.

    uv run python bench/cycle_tokens.py [--quick] [--runs N] [--missed] [--cycle-budget TOKENS]

``--missed`` lists the rewordings the pre-pass did not propose (cosine, the parts check's
verdict) and counts the chat's pairs that the parts check rejects only for their wording.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import Counter
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
from _common import (
    init_engine_only,
    machine_line,
    median,
    open_engine,
    parse_args,
    quiet_cognition_logs,
    register_loopback_preset,
    remove_home,
    throwaway_home,
)
from _corpus import CachedTextEmbedder
from _cycle_chat import FULL, QUICK, build, layout
from _fake_agent import FakeAgent, Request, Truth
from _lineage import heads, joined_pairs, merged_pairs
from pydantic import BaseModel, ConfigDict, Field

PRESET = "cognition-bench-cycle"
TARGET_RATIO = 0.20
TARGET_FOUND = 0.90
SEED_BUDGET = (500, 100_000_000)  # rounds, tokens: the seed's way reads to the end
_LABELS = {"high": "高", "medium": "中", "low": "低"}
_RANK = {"low": 0, "medium": 1, "high": 2}


class ListArguments(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    cursor: str = Field("", max_length=20, description="续页游标：原样传回上一页给出的 cursor；第一页不填")
    limit: int = Field(40, ge=1, le=200, description="本页条数，默认 40，最多 200")


class MergeArguments(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    ids: list[int] = Field(min_length=2, max_length=20, description="说同一件事的记忆编号")
    text: str = Field(min_length=1, max_length=5000, description="合并后的文字，保留所有来源的信息")


def seed_tools(engine: Any, bot_id: str, scope: Any) -> list[Any]:
    """The seed's way as tools: every memory read page by page, then merges."""
    from amrita_plugin_cognition.api import AgentTool, CognitionError, Importance, inert_line

    where = ZoneInfo(engine.config.timezone)

    def line(record: Any) -> str:
        tags = f"标签: {'、'.join(inert_line(tag, 20) for tag in record.tags)}; " if record.tags else ""
        day = record.when.astimezone(where).strftime("%Y-%m-%d")
        return f"#{record.id} [{_LABELS[record.importance.value]}] {inert_line(record.text, 120)} ({tags}{day})"

    async def list_memories(args: BaseModel) -> str:
        assert isinstance(args, ListArguments)
        offset = int(args.cursor) if args.cursor.isdigit() else 0
        records: list[Any] = []
        while True:  # the engine pages by 50 at most
            page, total = await engine.memories.chat_page(
                bot_id, scope, offset=offset + len(records), limit=min(50, args.limit - len(records))
            )
            records += page
            if not page or len(records) >= args.limit:
                break
        more = f"；下一页 cursor={offset + len(records)}" if offset + len(records) < total else "；已是最后一页"
        footer = f"（共 {total} 条，本页第 {offset + 1}-{offset + len(records)} 条{more}）"
        return "\n".join([*(line(record) for record in records), footer])

    async def merge(args: BaseModel) -> str:
        assert isinstance(args, MergeArguments)
        found = await engine.memories.in_chat(bot_id, scope, args.ids)
        importance = max(
            (record.importance.value for record in found.values()), key=_RANK.__getitem__, default="medium"
        )
        tags = list(dict.fromkeys(tag for record in found.values() for tag in record.tags))
        try:
            done = await engine.consolidation.merge(bot_id, scope, args.ids, args.text, Importance(importance), tags)
        except CognitionError as error:
            return f"拒绝：{error.zh}"
        return f"已合并 {'、'.join(f'#{number}' for number in done.source_ids)} → #{done.merged_id}"

    return [
        AgentTool(
            "list_memories", "分页列出本会话的全部记忆（每条一行），用 cursor 翻页。", ListArguments, list_memories
        ),
        AgentTool("merge", "把说同一件事的几条记忆合并成一条（来源被取代，可追溯）。", MergeArguments, merge),
    ]


async def why_missed(embedder: Any, missed: list[tuple[str, str]]) -> list[tuple[str, str, float, str]]:
    """Each rewording the pre-pass did not propose: its stored vectors' cosine and what the
    parts check (``judge_duplicate``) says of the pair (``same_parts``: it would be accepted, so
    it was never a candidate pair)."""
    from amrita_plugin_cognition.api import judge_duplicate

    found = []
    for first, second in missed:
        vectors = np.asarray(await embedder.embed([first, second]), dtype=np.float64)
        cosine = float(vectors[0] @ vectors[1] / (np.linalg.norm(vectors[0]) * np.linalg.norm(vectors[1])))
        verdict = judge_duplicate(first, second, cosine)
        found.append((first, second, cosine, verdict.reason if not verdict.duplicate else "same_parts"))
    return found


async def wording_only(embedder: Any, run: int, sizes: tuple[int, int, int, int]) -> Counter[str]:
    """Every pair of the run's chat at the pre-pass's candidate cosine (0.70) or above that the
    parts check rejects only for its wording (no part in conflict), by what the pair is: what the
    pre-pass would add to its proposals if such pairs went to the model too."""
    from amrita_plugin_cognition.api import judge_duplicate

    entries, where = layout(1000 + run, *sizes)
    texts = [entry.text for entry in entries]
    vectors = np.asarray(await embedder.embed(texts), dtype=np.float64)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    kinds = {frozenset(pair): kind for kind in ("exact", "reworded", "near") for pair in where[kind]}
    found: Counter[str] = Counter()
    for first, second in np.argwhere(np.triu(vectors @ vectors.T >= 0.70, 1)):
        cosine = float(vectors[first] @ vectors[second])
        if judge_duplicate(texts[first], texts[second], cosine).reason == "wording":
            found[kinds.get(frozenset((int(first), int(second))), "template facts")] += 1
    return found


def totals(requests: list[Request]) -> dict[str, Any]:
    parts: Counter[str] = Counter()
    for request in requests:
        parts.update(request.parts)
    prompt = sum(request.prompt for request in requests)
    completion = sum(request.completion for request in requests)
    return {
        "calls": len(requests),
        "prompt": prompt,
        "completion": completion,
        "tokens": prompt + completion,
        "parts": dict(parts),
        "per_call": [(request.prompt, Counter(request.calls)) for request in requests],
    }


async def outcome(engine: Any, bot_id: str, scope: Any, planted: Any) -> dict[str, int]:
    current = await heads(engine, bot_id, scope)
    return {
        "found": merged_pairs(current, planted.duplicates, planted.texts),
        "found_exact": merged_pairs(current, planted.exact, planted.texts),
        "found_reworded": merged_pairs(current, planted.reworded, planted.texts),
        "near_merged": joined_pairs(current, planted.near),
        "reachable": sum(1 for memory_id in planted.ids if current(memory_id) is not None),
        "memories": len(planted.ids),
    }


async def run_once(engine: Any, model: FakeAgent, run: int, sizes: tuple[int, int, int, int]) -> dict[str, Any]:
    from amrita_plugin_cognition.api import AgentBudget, Operator, Scope

    entries, where = layout(1000 + run, *sizes)
    bot_id = f"bench-cycle-{run}"  # a bot account per run: each cycle has the whole daily budget
    result: dict[str, Any] = {}
    for way, page in (("ours", 0), ("seed", 40), ("seed200", 200)):
        scope = Scope("group", f"73{run:02d}{page:03d}")
        planted = await build(engine, bot_id, scope, entries, where)
        truth = Truth(planted.duplicates, planted.texts, planted.tags)
        if way == "ours":
            model.begin("ours", truth)
            report = await engine.consolidation.run_now(Operator(), bot_id, scope)
            step = report.model_step
            assert step is not None
            offered = [*report.near, *report.wording]
            covered = sum(1 for pair in planted.reworded if any(set(pair) <= set(cluster) for cluster in report.near))
            by_wording = sum(
                1 for pair in planted.reworded if any(set(pair) <= set(cluster) for cluster in report.wording)
            )
            misses = sum(1 for pair in planted.near if any(set(pair) <= set(cluster) for cluster in offered))
            current = await heads(engine, bot_id, scope)
            missed = [
                (planted.texts[first], planted.texts[second])
                for first, second in planted.reworded
                if merged_pairs(current, [(first, second)], planted.texts) == 0
            ]
            extra = {
                "missed": missed,
                "ended": step.ended,
                "driver_tokens": step.tokens,
                "prepass_merged": len(report.merged),
                "near_clusters": len(report.near),
                "wording_clusters": len(report.wording),
                "reworded_proposed": covered,
                "reworded_wording": by_wording,
                "near_misses_proposed": misses,
            }
        else:
            model.begin("seed", truth, page)
            prompt = engine.llm.render("cycle_system.jinja")
            kickoff = "开始整理：用 list_memories 逐页读完本会话的全部记忆，再合并说同一件事的记忆。"
            ran = await engine.llm.run_agent(
                "bench_seed", prompt.system, kickoff, seed_tools(engine, bot_id, scope), AgentBudget(*SEED_BUDGET)
            )
            extra = {"ended": ran.ended, "driver_tokens": ran.tokens}
        result[way] = {**totals(model.end()), **extra, **await outcome(engine, bot_id, scope, planted), "run": run}
    return result


def report(results: list[dict[str, Any]], sizes: tuple[int, int, int, int], missed: list[Any]) -> dict[str, Any]:
    total, exact, reworded, near = sizes
    planted = exact + reworded
    ways = ("ours", "seed", "seed200")

    def mid(way: str, key: str) -> float:
        return median([result[way][key] for result in results])

    ratio = median([result["ours"]["tokens"] / result["seed"]["tokens"] for result in results])
    ratio200 = median([result["ours"]["tokens"] / result["seed200"]["tokens"] for result in results])
    print(
        f"one group chat of {total:,} memories, ~30 members: {planted} planted duplicates ({exact} exact copies, "
        f"{reworded} rewordings), {near} near-misses; {len(results)} runs, medians"
    )
    print(f"{'':<27}{'calls':>6}{'prompt':>10}{'completion':>12}{'tokens':>10}{'found':>10}{'near-misses merged':>20}")
    labels = ("ours (pre-pass + agent)", "seed's way, 40 per page", "seed's way, 200 per page")
    for way, label in zip(ways, labels, strict=True):
        print(
            f"{label:<27}{mid(way, 'calls'):>6.0f}{mid(way, 'prompt'):>10,.0f}{mid(way, 'completion'):>12,.0f}"
            f"{mid(way, 'tokens'):>10,.0f}{mid(way, 'found'):>6.0f}/{planted:<3}{mid(way, 'near_merged'):>20.0f}"
        )
    per_run = {way: [result[way]["tokens"] for result in results] for way in ways}
    spread = "; ".join(f"{way} {min(values):,}-{max(values):,}" for way, values in per_run.items())
    print(f"tokens per run, lowest-highest: {spread}")
    found = min(result["ours"]["found"] for result in results) / planted
    reach = min(result[way]["reachable"] for result in results for way in ways)
    near_merged = max(result[way]["near_merged"] for result in results for way in ways)
    print(
        f"ratio ours / seed's way (40 per page): {ratio:.3f}: {'OK' if ratio <= TARGET_RATIO else 'OVER'} "
        f"(target <= {TARGET_RATIO:g}); ours / seed's way at 200 per page: {ratio200:.3f}"
    )
    print(
        f"ours found {found:.0%} of the planted duplicates (worst run; {'OK' if found >= TARGET_FOUND else 'UNDER'}, "
        f"target >= {TARGET_FOUND:.0%}): exact copies {mid('ours', 'found_exact'):.0f}/{exact} by the pre-pass, "
        f"rewordings {mid('ours', 'found_reworded'):.0f}/{reworded} by the model; the pre-pass proposed "
        f"{mid('ours', 'reworded_proposed'):.0f}/{reworded} rewordings in {mid('ours', 'near_clusters'):.0f} near "
        f"clusters and {mid('ours', 'reworded_wording'):.0f} more in {mid('ours', 'wording_clusters'):.0f} wording "
        f"clusters (可能相同，措辞不同); near-misses offered to the model {mid('ours', 'near_misses_proposed'):.0f}/"
        f"{near}, merged {near_merged} "
        f"(must be 0); memories reachable by lineage {reach:,}/{total:,} (worst of every run and way)"
    )
    causes = Counter(cause for _, _, _, cause in missed)
    if missed:
        print(
            f"rewordings the pre-pass did not offer (median run): {len(missed)}; the parts check says "
            + ", ".join(f"{cause} {count}" for cause, count in causes.most_common())
            + f" ('same_parts': accepted, but never a candidate pair); cosine median "
            f"{median([cosine for _, _, cosine, _ in missed]):.2f}"
        )
    ours = sorted((result["ours"] for result in results), key=lambda item: item["tokens"])[len(results) // 2]
    parts = ours["parts"]
    fixed = parts.get("system prompt", 0) + parts.get("tool schemas", 0)
    print(
        f"ours, where the prompt tokens go (the median run: {ours['calls']} calls, ended {ours['ended']}; "
        f"the driver counted {ours['driver_tokens']:,} tokens, the server {ours['tokens']:,}):"
    )
    rounds = [
        f"{prompt:,} → " + " + ".join(f"{name}×{count}" if count > 1 else name for name, count in calls.items())
        for prompt, calls in ours["per_call"]
    ]
    print("  per call (prompt tokens → what the model called): " + "; ".join(rounds))
    for part, value in sorted(parts.items(), key=lambda item: -item[1]):
        print(f"  {part:<32}{value:>8,}  {value / ours['prompt']:>6.1%}")
    print(
        f"  system prompt + tool schemas {fixed:,} = {fixed / ours['prompt']:.1%} (sent every round; a provider's "
        "prefix cache makes them cheaper, counted in full here)"
    )
    daily = 200_000
    print(f"the default daily budget ({daily:,} tokens) pays for {daily / mid('ours', 'tokens'):.1f} such cycles a day")
    if found < TARGET_FOUND or ratio > TARGET_RATIO or near_merged or reach != total:
        print("NOT MET: see above (what was found, and what the tokens are spent on)")
    return {
        "memories": total,
        "planted": planted,
        "runs": len(results),
        "ours_calls": mid("ours", "calls"),
        "ours_prompt_tokens": mid("ours", "prompt"),
        "ours_completion_tokens": mid("ours", "completion"),
        "seed_calls": mid("seed", "calls"),
        "seed_prompt_tokens": mid("seed", "prompt"),
        "seed_completion_tokens": mid("seed", "completion"),
        "seed200_calls": mid("seed200", "calls"),
        "seed200_tokens": mid("seed200", "tokens"),
        "ratio": round(ratio, 4),
        "ratio_seed200": round(ratio200, 4),
        "found": round(found, 4),
        "near_merged": near_merged,
        "near_misses_offered": mid("ours", "near_misses_proposed"),
        "wording_clusters": mid("ours", "wording_clusters"),
        "reachable": reach,
        "fixed_share": round(fixed / ours["prompt"], 4),
    }


async def main() -> None:
    def extra(parser: Any) -> None:
        parser.add_argument("--runs", type=int, default=None, help="runs (default 3; 1 with --quick)")
        parser.add_argument("--missed", action="store_true", help="list the rewordings the pre-pass did not propose")
        parser.add_argument(
            "--cycle-budget", type=int, default=None, help="consolidation.cycle_token_budget (default: the default)"
        )

    args = parse_args(__doc__ or "", extra)
    sizes = QUICK if args.quick else FULL
    runs = args.runs or (1 if args.quick else 3)
    init_engine_only(HOME)
    quiet_cognition_logs()
    model = FakeAgent()
    register_loopback_preset(PRESET, model.server.base_url)
    embedder = CachedTextEmbedder()
    budget = {} if args.cycle_budget is None else {"consolidation": {"cycle_token_budget": args.cycle_budget}}
    engine = await open_engine(
        HOME, embedder=embedder, llm={"preset": PRESET, "timeout_seconds": 60.0, "max_retries": 0}, **budget
    )
    try:
        await engine.index.check_fingerprint()
        results = [await run_once(engine, model, run, sizes) for run in range(runs)]
        ours = sorted((result["ours"] for result in results), key=lambda item: item["tokens"])[len(results) // 2]
        missed = await why_missed(embedder, ours["missed"])
        loose = await wording_only(embedder, ours["run"], sizes) if args.missed else None
    finally:
        await engine.close()
        model.stop()
    print(f"cycle tokens — {machine_line()}, load average {os.getloadavg()[0]:.1f}")
    figures = report(results, sizes, missed)
    if args.missed:
        for first, second, cosine, cause in missed:
            print(f"  {cosine:.2f} {cause:<12} {first} | {second}")
        assert loose is not None
        print(
            "pairs of that chat at cosine >= 0.70 the parts check rejects only for their wording: "
            + (", ".join(f"{kind} {count}" for kind, count in loose.most_common()) or "none")
        )
    print(json.dumps(figures, ensure_ascii=False))
    if figures["near_merged"] or figures["reachable"] != sizes[0]:
        raise SystemExit("FAILED: a near-miss was merged or a fact lost")


HOME = throwaway_home("cycle")

if __name__ == "__main__":
    try:
        asyncio.run(main())
    finally:
        remove_home(HOME)
