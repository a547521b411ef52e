"""Evaluation of the relative-time resolver (``domain.timeresolve``) on a JSONL file.

Each line: ``{"id": "t1", "now": "2026-11-30T12:00:00+08:00", "text": "我昨天下午三点到的",
"expect_date": "2026-11-29"}``; ``expect_date`` is the date of the first relative expression, or null when
nothing relative should be resolved (the key must be present). See ``docs/evaluation.md``.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from ..api import first_date
from .evaluation import EvalInputError, _require, _time, no_cases, read_jsonl, wilson

MAX_FAILURES = 20


def _expected(obj: dict[str, Any], number: int) -> date | None:
    if "expect_date" not in obj:
        raise EvalInputError(number, "missing field 'expect_date'", "缺少字段 expect_date（无相对时间时写 null）")
    raw = obj["expect_date"]
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise EvalInputError(
            number,
            "field 'expect_date' must be a YYYY-MM-DD string or null",
            "字段 expect_date 应为 YYYY-MM-DD 或 null",
        )
    try:
        return date.fromisoformat(raw)
    except ValueError as error:
        raise EvalInputError(
            number, f"expect_date {raw!r} is not YYYY-MM-DD", f"expect_date {raw} 不是 YYYY-MM-DD 格式"
        ) from error


def run_time_eval(path: Path) -> dict[str, Any]:
    """Accuracy of ``first_date`` against the expected dates of every line of ``path``."""
    cases = correct = false_resolutions = misses = wrong_dates = 0
    failures: list[dict[str, Any]] = []
    for number, obj in read_jsonl(path):
        case_id = str(_require(obj, "id", (str, int), number))
        now = _time(obj, number, "now", "now")
        text = _require(obj, "text", str, number)
        expected = _expected(obj, number)
        got = first_date(text, now)
        cases += 1
        if got == expected:
            correct += 1
            continue
        if expected is None:
            false_resolutions += 1
        elif got is None:
            misses += 1
        else:
            wrong_dates += 1
        if len(failures) < MAX_FAILURES:
            failures.append(
                {
                    "id": case_id,
                    "text": text,
                    "expected": expected.isoformat() if expected else None,
                    "got": got.isoformat() if got else None,
                }
            )
    if cases == 0:
        raise no_cases()
    counts = {"cases": cases, "correct": correct, "false_resolutions": false_resolutions, "misses": misses}
    return time_report({**counts, "wrong_dates": wrong_dates}, failures)


def time_report(counts: dict[str, int], failures: list[dict[str, Any]]) -> dict[str, Any]:
    """The report of time ``counts`` (``cases``, ``correct``, ``false_resolutions``, ``misses``,
    ``wrong_dates``): accuracy with its 95 % Wilson interval, and the counts (for pooling)."""
    cases = counts["cases"]
    return {
        "kind": "time",
        "cases": cases,
        "accuracy": round(counts["correct"] / cases, 4),
        "false_resolutions": counts["false_resolutions"],
        "misses": counts["misses"],
        "wrong_dates": counts["wrong_dates"],
        "failures": failures,
        "intervals": {"accuracy": wilson(counts["correct"], cases)},
        "counts": dict(counts),
    }
