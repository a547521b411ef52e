"""The LLM-free evaluation harness (``ambot cognition eval KIND FILE``), as ../shared/EVAL.md
specifies: JSONL in, the plugin's real code path in a throw-away folder, a JSON report out."""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..domain.admission import admit
from ..domain.records import ChatContext, Importance, MemoryDraft, Provenance, Scope

EVAL_BOT_ID = "eval"
RECALL_TOP_K = 20


class EvalInputError(ValueError):
    """A malformed line; carries the line number."""

    def __init__(self, line_number: int, reason: str) -> None:
        super().__init__(f"line {line_number}: {reason}")
        self.line_number = line_number


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank, non-comment line; malformed lines raise."""
    with path.open(encoding="utf-8") as handle:
        for number, raw in enumerate(handle, start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as error:
                raise EvalInputError(number, f"not valid JSON ({error.msg})") from error
            if not isinstance(value, dict):
                raise EvalInputError(number, "expected a JSON object")
            yield number, value


def _require(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], number: int) -> Any:
    if key not in obj:
        raise EvalInputError(number, f"missing field {key!r}")
    value = obj[key]
    if not isinstance(value, kind):
        raise EvalInputError(number, f"field {key!r} has the wrong type")
    return value


def _time(obj: dict[str, Any], number: int) -> datetime:
    raw = _require(obj, "time", str, number)
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError as error:
        raise EvalInputError(number, f"time {raw!r} is not ISO 8601") from error
    if moment.tzinfo is None:
        raise EvalInputError(number, f"time {raw!r} has no UTC offset")
    return moment


def _scope(obj: dict[str, Any], number: int) -> Scope:
    raw = _require(obj, "scope", dict, number)
    try:
        return Scope(raw.get("kind"), str(raw.get("id", "")))  # type: ignore[arg-type]
    except ValueError as error:
        raise EvalInputError(number, f"bad scope: {error}") from error


def _person(obj: dict[str, Any], key: str, number: int) -> tuple[str, str]:
    raw = obj.get(key) or {}
    if not isinstance(raw, dict):
        raise EvalInputError(number, f"field {key!r} must be an object")
    return str(raw.get("id", "")), str(raw.get("name", ""))


def _id_list(obj: dict[str, Any], key: str, number: int) -> list[str]:
    raw = obj.get(key) or []
    if not isinstance(raw, list):
        raise EvalInputError(number, f"field {key!r} must be a list")
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
    memories: list[EvalMemory] = []
    queries: list[EvalQuery] = []
    seen: set[str] = set()
    for number, obj in read_jsonl(path):
        kind = obj.get("type")
        if kind == "memory":
            memory_id = str(_require(obj, "id", (str, int), number))
            if memory_id in seen:
                raise EvalInputError(number, f"duplicate memory id {memory_id!r}")
            seen.add(memory_id)
            importance_raw = obj.get("importance") or "medium"
            try:
                importance = Importance(importance_raw)
            except ValueError as error:
                raise EvalInputError(number, f"importance {importance_raw!r} is not low/medium/high") from error
            tags = obj.get("tags") or []
            if not isinstance(tags, list):
                raise EvalInputError(number, "field 'tags' must be a list")
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
            raise EvalInputError(number, f"unknown type {kind!r} (expected 'memory' or 'query')")
    for memory in memories:
        if memory.supersedes is not None and memory.supersedes not in seen:
            raise EvalInputError(0, f"memory {memory.id!r} supersedes unknown id {memory.supersedes!r}")
    return memories, queries


@dataclass(slots=True)
class _Bucket:
    recall_at: dict[int, list[float]] = field(default_factory=lambda: {1: [], 5: [], 10: [], 20: []})
    hit5: list[float] = field(default_factory=list)
    reciprocal_ranks: list[float] = field(default_factory=list)
    queries: int = 0

    def add(self, ranked: list[str], relevant: set[str]) -> None:
        self.queries += 1
        if not relevant:
            return
        for k, values in self.recall_at.items():
            values.append(len(relevant & set(ranked[:k])) / len(relevant))
        self.hit5.append(1.0 if relevant & set(ranked[:5]) else 0.0)
        first = next((rank for rank, item in enumerate(ranked, start=1) if item in relevant), None)
        self.reciprocal_ranks.append(1.0 / first if first else 0.0)

    def report(self) -> dict[str, float]:
        def mean(values: list[float]) -> float:
            return round(sum(values) / len(values), 4) if values else 0.0

        result = {f"recall@{k}": mean(values) for k, values in self.recall_at.items()}
        result["hit@5"] = mean(self.hit5)
        result["mrr"] = mean(self.reciprocal_ranks)
        return result


def _percentile(values: list[float], share: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
    return round(ordered[index], 2)


ProgressFactory = Callable[[int, str], Callable[[int], None]]


async def run_recall_eval(
    memories: list[EvalMemory],
    queries: list[EvalQuery],
    engine: Any,
    progress: ProgressFactory | None = None,
) -> dict[str, Any]:
    """Store every memory through the real write path, ask every query through the real recall."""
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
        result = await engine.remember(EVAL_BOT_ID, drafts, now=max(memory.time for memory in batch))
        for index, record_id in result.record_ids.items():
            record_of[batch[index].id] = record_id
        if advance:
            advance(len(batch))
    for memory in memories:
        if memory.supersedes and memory.id in record_of and memory.supersedes in record_of:
            old, new = record_of[memory.supersedes], record_of[memory.id]
            if old != new:
                await engine.supersede(EVAL_BOT_ID, old, new, now=memory.time)
    await engine.drain_outbox()
    eval_ids_of: dict[int, list[str]] = {}
    for eval_id, record_id in record_of.items():
        eval_ids_of.setdefault(record_id, []).append(eval_id)

    overall = _Bucket()
    by_category: dict[str, _Bucket] = {}
    leaks = 0
    leak_queries: list[str] = []
    stale_above = 0
    latencies: list[float] = []
    advance = progress(len(queries), "执行查询") if progress else None
    for query in queries:
        context = ChatContext(
            bot_id=EVAL_BOT_ID, scope=query.scope, user_id=query.asker[0] or query.scope.id, user_name=query.asker[1]
        )
        result = await engine.recall(context, [query.text], now=query.time, top_k=RECALL_TOP_K)
        latencies.append(result.elapsed_ms)
        ranked: list[str] = []
        for hit in result.hits:
            ranked.extend(eval_ids_of.get(hit.record.id, []))
        ranked = ranked[:RECALL_TOP_K]
        relevant = set(query.relevant)
        overall.add(ranked, relevant)
        by_category.setdefault(query.category, _Bucket()).add(ranked, relevant)
        leaked = set(query.forbidden) & set(ranked)
        if leaked:
            leaks += len(leaked)
            leak_queries.append(query.id)
        best_relevant = min((ranked.index(item) for item in relevant if item in ranked), default=len(ranked))
        stale_above += sum(1 for item in query.stale if item in ranked and ranked.index(item) < best_relevant)
        if advance:
            advance(1)
    return {
        "kind": "recall",
        "queries": len(queries),
        "memories": len(memories),
        "stored": len(set(record_of.values())),
        "overall": overall.report(),
        "by_category": {
            name: {**bucket.report(), "queries": bucket.queries} for name, bucket in sorted(by_category.items())
        },
        "leaks": leaks,
        "leak_queries": leak_queries,
        "stale_above_relevant": stale_above,
        "latency_ms": {
            "p50": _percentile(latencies, 0.5),
            "p95": _percentile(latencies, 0.95),
            "mean": round(statistics.fmean(latencies), 2) if latencies else 0.0,
        },
    }


def run_admission_eval(path: Path) -> dict[str, Any]:
    """Recall by expected reason and the false rejection rate. A line stored with a secret
    replaced (``[已隐去]``) is not stored as said: it counts as caught for a credential line, and
    as a false rejection for a line that should be stored as is. A do-not-remember line is caught
    only when refused outright."""
    cases = 0
    refused_by_reason: dict[str, list[float]] = {}
    false_rejections: list[float] = []
    for number, obj in read_jsonl(path):
        text = _require(obj, "text", str, number)
        expected = _require(obj, "admit", bool, number)
        cases += 1
        verdict = admit(text)
        if expected:
            false_rejections.append(0.0 if verdict.stored_as_is else 1.0)
        else:
            reason = str(obj.get("reason") or "unspecified")
            caught = not verdict.admit or (reason == "credential" and verdict.redacted)
            refused_by_reason.setdefault(reason, []).append(1.0 if caught else 0.0)
    return {
        "kind": "admission",
        "cases": cases,
        "recall_by_reason": {
            reason: round(sum(values) / len(values), 4) for reason, values in sorted(refused_by_reason.items())
        },
        "false_rejection_rate": round(sum(false_rejections) / len(false_rejections), 4) if false_rejections else 0.0,
    }


def throwaway_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="cognition-eval-"))


def render_table(report: dict[str, Any]) -> str:
    """Human-readable form of a report (used when stdout is a terminal)."""
    lines = [f"kind: {report['kind']}"]
    if report["kind"] == "recall":
        header = ["category", "queries", "recall@1", "recall@5", "recall@10", "recall@20", "hit@5", "mrr"]
        rows = [["overall", str(report["queries"])] + [f"{report['overall'][key]:.3f}" for key in header[2:]]]
        for name, values in report["by_category"].items():
            rows.append([name, str(values["queries"])] + [f"{values[key]:.3f}" for key in header[2:]])
        widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
        for row in [header, *rows]:
            lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
        lines.append(f"leaks: {report['leaks']} {report['leak_queries'][:10]}")
        lines.append(f"stale_above_relevant: {report['stale_above_relevant']}")
        lines.append(f"latency_ms: p50 {report['latency_ms']['p50']} p95 {report['latency_ms']['p95']}")
    else:
        for key, value in report.items():
            if key == "failures":
                lines.append(f"failures (first {len(value)}):")
                lines.extend(f"  {json.dumps(item, ensure_ascii=False)}" for item in value)
            elif key != "kind":
                lines.append(f"{key}: {value}")
    return "\n".join(lines)


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
