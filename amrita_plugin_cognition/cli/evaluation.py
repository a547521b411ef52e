"""The LLM-free evaluation harness (``ambot cognition eval KIND FILE``): JSONL in, the plugin's
real code path (in a throw-away folder for ``recall``), a JSON report out. The formats of the
files and of the reports are documented in ``docs/evaluation.md``; ``time`` and ``gate`` live in
``eval_time.py`` and ``eval_gate.py``."""

from __future__ import annotations

import json
import math
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..api import ChatContext, Importance, MemoryDraft, Provenance, Scope, admit

EVAL_BOT_ID = "eval"
RECALL_TOP_K = 20


class EvalInputError(ValueError):
    """A file the harness cannot score: a malformed line (with its number), or no cases at all
    (line number 0). ``str()`` is English (``line N: reason``); ``zh`` is the same in Chinese."""

    def __init__(self, line_number: int, reason: str, zh: str | None = None) -> None:
        super().__init__(f"line {line_number}: {reason}")
        self.line_number = line_number
        self.reason = reason
        where = f"第 {line_number} 行：" if line_number > 0 else ""
        self.zh = f"{where}{zh or reason}"


def no_cases(what: str = "cases") -> EvalInputError:
    """The error for a file without a single case (blank and ``#`` lines only)."""
    return EvalInputError(
        0, f"no {what}", f"文件里没有可评测的{'查询' if what == 'queries' else '样例'}（只有空行或 # 注释）"
    )


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank, non-comment line; malformed lines raise."""
    with path.open("rb") as handle:
        for number, raw_bytes in enumerate(handle, start=1):
            try:
                raw = raw_bytes.decode("utf-8")
            except UnicodeDecodeError as error:
                raise EvalInputError(number, "not UTF-8 text", "不是 UTF-8 文本") from error
            line = raw.strip().lstrip("\ufeff")
            if not line or line.startswith("#"):
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as error:
                raise EvalInputError(
                    number, f"not valid JSON ({error.msg})", f"不是有效的 JSON（{error.msg}）"
                ) from error
            if not isinstance(value, dict):
                raise EvalInputError(number, "expected a JSON object", "应为一个 JSON 对象")
            yield number, value


def _require(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], number: int) -> Any:
    if key not in obj:
        raise EvalInputError(number, f"missing field {key!r}", f"缺少字段 {key}")
    value = obj[key]
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise EvalInputError(number, f"field {key!r} has the wrong type", f"字段 {key} 的类型不对")
    return value


def _time(obj: dict[str, Any], number: int, key: str = "time", label: str = "时间") -> datetime:
    """Field ``key`` as an aware moment (ISO 8601 with an offset); ``label`` names it in Chinese."""
    raw = _require(obj, key, str, number)
    try:
        # Python 3.10's fromisoformat does not read a trailing "Z"
        moment = datetime.fromisoformat(raw[:-1] + "+00:00" if raw.endswith(("Z", "z")) else raw)
    except ValueError as error:
        raise EvalInputError(number, f"{key} {raw!r} is not ISO 8601", f"{label} {raw} 不是 ISO 8601 格式") from error
    if moment.tzinfo is None:
        raise EvalInputError(number, f"{key} {raw!r} has no UTC offset", f"{label} {raw} 缺少时区偏移（如 +08:00）")
    return moment


def _scope(obj: dict[str, Any], number: int) -> Scope:
    raw = _require(obj, "scope", dict, number)
    try:
        return Scope(raw.get("kind"), str(raw.get("id", "")))  # type: ignore[arg-type]
    except ValueError as error:
        raise EvalInputError(
            number, f"bad scope: {error}", 'scope 应为 {"kind": "group" 或 "private", "id": "号码"}'
        ) from error


def _person(obj: dict[str, Any], key: str, number: int) -> tuple[str, str]:
    raw = obj.get(key) or {}
    if not isinstance(raw, dict):
        raise EvalInputError(number, f"field {key!r} must be an object", f"字段 {key} 应为对象")
    return str(raw.get("id", "")), str(raw.get("name", ""))


def _id_list(obj: dict[str, Any], key: str, number: int) -> list[str]:
    raw = obj.get(key) or []
    if not isinstance(raw, list):
        raise EvalInputError(number, f"field {key!r} must be a list", f"字段 {key} 应为列表")
    return [str(item) for item in raw]


@dataclass(slots=True)
class EvalMemory:
    id: str
    scope: Scope
    speaker: tuple[str, str]
    time: datetime
    text: str
    importance: Importance
    supersedes: str | None
    tags: list[str]


@dataclass(slots=True)
class EvalQuery:
    id: str
    scope: Scope
    asker: tuple[str, str]
    time: datetime
    text: str
    relevant: list[str]
    forbidden: list[str]
    stale: list[str]
    category: str


def parse_recall_file(path: Path) -> tuple[list[EvalMemory], list[EvalQuery]]:
    """Every memory and query of a recall file; a malformed line, or a file without memories or
    without queries, raises ``EvalInputError``."""
    memories: list[EvalMemory] = []
    queries: list[EvalQuery] = []
    line_of: dict[str, int] = {}
    for number, obj in read_jsonl(path):
        kind = obj.get("type")
        if kind == "memory":
            memory_id = str(_require(obj, "id", (str, int), number))
            if memory_id in line_of:
                raise EvalInputError(
                    number,
                    f"duplicate memory id {memory_id!r}",
                    f"记忆编号 {memory_id} 重复（第 {line_of[memory_id]} 行已用过）",
                )
            line_of[memory_id] = number
            importance_raw = obj.get("importance") or "medium"
            try:
                importance = Importance(importance_raw)
            except ValueError as error:
                raise EvalInputError(
                    number,
                    f"importance {importance_raw!r} is not low/medium/high",
                    f"importance {importance_raw} 应为 low、medium 或 high",
                ) from error
            tags = obj.get("tags") or []
            if not isinstance(tags, list):
                raise EvalInputError(number, "field 'tags' must be a list", "字段 tags 应为列表")
            supersedes = obj.get("supersedes")
            memories.append(
                EvalMemory(
                    id=memory_id,
                    scope=_scope(obj, number),
                    speaker=_person(obj, "speaker", number),
                    time=_time(obj, number),
                    text=_require(obj, "text", str, number),
                    importance=importance,
                    supersedes=None if supersedes is None else str(supersedes),
                    tags=[str(tag) for tag in tags],
                )
            )
        elif kind == "query":
            queries.append(
                EvalQuery(
                    id=str(_require(obj, "id", (str, int), number)),
                    scope=_scope(obj, number),
                    asker=_person(obj, "asker", number),
                    time=_time(obj, number),
                    text=_require(obj, "text", str, number),
                    relevant=_id_list(obj, "relevant", number),
                    forbidden=_id_list(obj, "forbidden", number),
                    stale=_id_list(obj, "stale", number),
                    category=str(obj.get("category") or "default"),
                )
            )
        else:
            raise EvalInputError(
                number,
                f"unknown type {kind!r} (expected 'memory' or 'query')",
                f"未知的 type {kind!r}（应为 memory 或 query）",
            )
    for memory in memories:
        if memory.supersedes is not None and memory.supersedes not in line_of:
            raise EvalInputError(
                line_of[memory.id],
                f"memory {memory.id!r} supersedes unknown id {memory.supersedes!r}",
                f"记忆 {memory.id} 的 supersedes 指向不存在的编号 {memory.supersedes}",
            )
    if not queries:
        raise no_cases("queries")
    if not memories:
        raise EvalInputError(0, "no memories", "文件里没有记忆（type 为 memory 的行），无从召回")
    return memories, queries


#: The quality figures of a recall report, in the order they are shown.
RECALL_METRICS = ("recall@1", "recall@5", "recall@10", "recall@20", "hit@5", "mrr")


@dataclass(slots=True)
class _Bucket:
    """The figures of a set of queries. Quality is averaged over the queries that name relevant
    ids (``scored``); a query with only ``forbidden`` ids checks isolation and counts as leaks."""

    recall_at: dict[int, list[float]] = field(default_factory=lambda: {1: [], 5: [], 10: [], 20: []})
    hit5: list[float] = field(default_factory=list)
    reciprocal_ranks: list[float] = field(default_factory=list)
    queries: int = 0
    leaks: int = 0
    leak_queries: list[str] = field(default_factory=list)

    @property
    def scored(self) -> int:
        return len(self.reciprocal_ranks)

    def add(self, query_id: str, ranked: list[str], relevant: set[str], leaked: set[str]) -> None:
        self.queries += 1
        if leaked:
            self.leaks += len(leaked)
            self.leak_queries.append(query_id)
        if not relevant:
            return
        for k, values in self.recall_at.items():
            values.append(len(relevant & set(ranked[:k])) / len(relevant))
        self.hit5.append(1.0 if relevant & set(ranked[:5]) else 0.0)
        first = next((rank for rank, item in enumerate(ranked, start=1) if item in relevant), None)
        self.reciprocal_ranks.append(1.0 / first if first else 0.0)

    def quality(self) -> dict[str, float | None]:
        """The averages; ``None`` (JSON null) when no query of the bucket names relevant ids."""

        def mean(values: list[float]) -> float | None:
            return round(sum(values) / len(values), 4) if values else None

        result = {f"recall@{k}": mean(values) for k, values in self.recall_at.items()}
        result["hit@5"] = mean(self.hit5)
        result["mrr"] = mean(self.reciprocal_ranks)
        return result

    def category_report(self) -> dict[str, Any]:
        return {
            **self.quality(),
            "queries": self.queries,
            "scored": self.scored,
            "leaks": self.leaks,
            "leak_queries": self.leak_queries,
        }


def _percentile(values: list[float], share: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
    return round(ordered[index], 2)


ProgressFactory = Callable[[int, str], Callable[[int], None]]


async def store_memories(
    engine: Any, bot_id: str, memories: list[EvalMemory], progress: ProgressFactory | None = None
) -> dict[str, int]:
    """Write every memory of a recall file through the real write path, as already-absolute
    facts of their origin chat; returns eval id -> record id (duplicates share one record)."""
    record_of: dict[str, int] = {}
    chunk = 500
    advance = progress(len(memories), "写入记忆") if progress else None
    for start in range(0, len(memories), chunk):
        batch = memories[start : start + chunk]
        drafts = [
            MemoryDraft(
                text=memory.text,
                scope=memory.scope,
                speaker_id=memory.speaker[0],
                speaker_name=memory.speaker[1],
                tags=memory.tags,
                importance=memory.importance,
                provenance=Provenance.IMPORTED,
                source={"eval_id": memory.id},
                happened_at=memory.time,
            )
            for memory in batch
        ]
        result = await engine.memories.remember(bot_id, drafts, now=max(memory.time for memory in batch))
        for index, record_id in result.record_ids.items():
            record_of[batch[index].id] = record_id
        if advance:
            advance(len(batch))
    return record_of


async def run_recall_eval(
    memories: list[EvalMemory],
    queries: list[EvalQuery],
    engine: Any,
    progress: ProgressFactory | None = None,
) -> dict[str, Any]:
    """Store every memory through the real write path, ask every query through the real recall."""
    record_of = await store_recall_memories(memories, engine, progress)
    report: dict[str, Any] = await ask_recall_queries(record_of, queries, engine, progress)
    report["memories"] = len(memories)
    return report


async def store_recall_memories(
    memories: list[EvalMemory], engine: Any, progress: ProgressFactory | None = None
) -> dict[str, int]:
    """A recall file's memories stored, superseded as it says and indexed: eval id -> record id."""
    record_of = await store_memories(engine, EVAL_BOT_ID, memories, progress)
    for memory in memories:
        if memory.supersedes and memory.id in record_of and memory.supersedes in record_of:
            old, new = record_of[memory.supersedes], record_of[memory.id]
            if old != new:
                await engine.memories.supersede(EVAL_BOT_ID, old, new, now=memory.time)
    await engine.index.drain()
    return record_of


async def ask_recall_queries(
    record_of: dict[str, int], queries: list[EvalQuery], engine: Any, progress: ProgressFactory | None = None
) -> dict[str, Any]:
    """Every query through the real recall over memories stored by ``store_recall_memories``:
    the report (the benches ask the same store again with other settings)."""
    eval_ids_of: dict[int, list[str]] = {}
    for eval_id, record_id in record_of.items():
        eval_ids_of.setdefault(record_id, []).append(eval_id)

    overall = _Bucket()
    by_category: dict[str, _Bucket] = {}
    stale_above = 0
    latencies: list[float] = []
    advance = progress(len(queries), "执行查询") if progress else None
    for query in queries:
        context = ChatContext(
            bot_id=EVAL_BOT_ID, scope=query.scope, user_id=query.asker[0] or query.scope.id, user_name=query.asker[1]
        )
        result = await engine.memories.recall(context, [query.text], now=query.time, top_k=RECALL_TOP_K)
        latencies.append(result.elapsed_ms)
        ranked: list[str] = []
        for hit in result.hits:
            ranked.extend(eval_ids_of.get(hit.record.id, []))
        ranked = ranked[:RECALL_TOP_K]
        relevant = set(query.relevant)
        leaked = set(query.forbidden) & set(ranked)
        overall.add(query.id, ranked, relevant, leaked)
        by_category.setdefault(query.category, _Bucket()).add(query.id, ranked, relevant, leaked)
        best_relevant = min((ranked.index(item) for item in relevant if item in ranked), default=len(ranked))
        stale_above += sum(1 for item in query.stale if item in ranked and ranked.index(item) < best_relevant)
        if advance:
            advance(1)
    return {
        "kind": "recall",
        "queries": len(queries),
        "scored_queries": overall.scored,
        "isolation_checks": sum(1 for query in queries if query.forbidden),
        "stored": len(set(record_of.values())),
        "overall": overall.quality(),
        "by_category": {name: bucket.category_report() for name, bucket in sorted(by_category.items())},
        "leaks": overall.leaks,
        "leak_queries": overall.leak_queries,
        "stale_above_relevant": stale_above,
        "latency_ms": {
            "p50": _percentile(latencies, 0.5),
            "p95": _percentile(latencies, 0.95),
            "mean": round(statistics.fmean(latencies), 2) if latencies else 0.0,
        },
    }


#: The normal quantile of a two-sided 95 % interval.
Z95 = 1.959963984540054


def wilson(successes: int, trials: int, z: float = Z95) -> list[float]:
    """The 95 % Wilson score interval of ``successes / trials``, rounded to 4 places; ``[0.0, 1.0]``
    when there are no trials. Unlike ``p ± z·√(p(1-p)/n)`` it stays inside [0, 1] and is not empty
    at 0 or 1 (0 of 180 false rejections still allows up to 2.1 %)."""
    if trials <= 0:
        return [0.0, 1.0]
    share = successes / trials
    denominator = 1 + z * z / trials
    centre = (share + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(share * (1 - share) / trials + z * z / (4 * trials * trials)) / denominator
    return [round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)]


def _share(numerator: int, denominator: int) -> float:
    return round(numerator / denominator, 4) if denominator else 0.0


def run_admission_eval(path: Path) -> dict[str, Any]:
    """Recall by expected reason and the false rejection rate. A line stored with a secret
    replaced (``[已隐去]``) is not stored as said: it counts as caught for a credential line, and
    as a false rejection for a line that should be stored as is. A do-not-remember line is caught
    only when refused outright. A file without cases raises ``EvalInputError``."""
    cases = false_rejections = to_keep = 0
    caught_by_reason: dict[str, list[int]] = {}
    for number, obj in read_jsonl(path):
        text = _require(obj, "text", str, number)
        expected = _require(obj, "admit", bool, number)
        cases += 1
        verdict = admit(text)
        if expected:
            to_keep += 1
            false_rejections += not verdict.stored_as_is
        else:
            reason = str(obj.get("reason") or "unspecified")
            caught = not verdict.admit or (reason == "credential" and verdict.redacted)
            tally = caught_by_reason.setdefault(reason, [0, 0])
            tally[0] += caught
            tally[1] += 1
    if cases == 0:
        raise no_cases()
    return admission_report(
        {"cases": cases, "caught_by_reason": caught_by_reason, "false_rejections": [false_rejections, to_keep]}
    )


def admission_report(counts: dict[str, Any]) -> dict[str, Any]:
    """The report of admission ``counts`` (``cases``; ``caught_by_reason``: reason -> [caught,
    lines]; ``false_rejections``: [refused or rewritten, lines to keep]): the rates, their 95 %
    Wilson intervals (``intervals``) and the counts themselves (so that reports can be pooled)."""
    by_reason = {reason: counts["caught_by_reason"][reason] for reason in sorted(counts["caught_by_reason"])}
    refused, to_keep = counts["false_rejections"]
    return {
        "kind": "admission",
        "cases": counts["cases"],
        "recall_by_reason": {reason: _share(*tally) for reason, tally in by_reason.items()},
        "false_rejection_rate": _share(refused, to_keep),
        "intervals": {
            "recall_by_reason": {reason: wilson(*tally) for reason, tally in by_reason.items()},
            "false_rejection_rate": wilson(refused, to_keep),
        },
        "counts": {
            "cases": counts["cases"],
            "caught_by_reason": by_reason,
            "false_rejections": [refused, to_keep],
        },
    }


def throwaway_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="cognition-eval-"))


def stderr_progress(total: int, label: str) -> Callable[[int], None]:
    state = {"done": 0, "last": -1}

    def advance(count: int) -> None:
        state["done"] += count
        percent = int(state["done"] * 100 / max(1, total))
        step = 1 if sys.stderr.isatty() else 10
        if percent // step != state["last"] // step or state["done"] >= total:
            state["last"] = percent
            bar = "#" * (percent // 5)
            sys.stderr.write(f"\r{label} [{bar:<20}] {state['done']}/{total}" + ("" if sys.stderr.isatty() else "\n"))
            if state["done"] >= total and sys.stderr.isatty():
                sys.stderr.write("\n")
            sys.stderr.flush()

    return advance
