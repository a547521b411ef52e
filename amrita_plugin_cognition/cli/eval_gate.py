"""``eval gate``: the absoluteness gate against labelled facts (format: ``docs/evaluation.md``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..api import check_fact
from .evaluation import _require, no_cases, read_jsonl, wilson

MAX_FAILURES = 20


def _rate(numerator: int, denominator: int) -> float:
    return round(numerator / denominator, 4) if denominator else 0.0


def run_gate_eval(path: Path) -> dict[str, Any]:
    """Judge every ``text``; ``absolute: true`` expects a pass, ``false`` expects a flag.

    false_positive_rate = absolute facts flagged / absolute facts;
    false_negative_rate = relative facts passed / relative facts (0.0 when a class is empty).
    """
    cases = correct = absolute_cases = relative_cases = false_positives = false_negatives = 0
    failures: list[dict[str, Any]] = []
    for number, obj in read_jsonl(path):
        case_id = str(_require(obj, "id", (str, int), number))
        text = _require(obj, "text", str, number)
        expected = _require(obj, "absolute", bool, number)
        verdict = check_fact(text)
        cases += 1
        if expected:
            absolute_cases += 1
            false_positives += not verdict.ok
        else:
            relative_cases += 1
            false_negatives += verdict.ok
        if verdict.ok == expected:
            correct += 1
        elif len(failures) < MAX_FAILURES:
            failures.append(
                {
                    "id": case_id,
                    "text": text,
                    "expected": expected,
                    "problems": [{"kind": problem.kind, "word": problem.word} for problem in verdict.problems],
                }
            )
    if cases == 0:
        raise no_cases()
    counts = {"cases": cases, "correct": correct, "absolute_cases": absolute_cases}
    counts |= {"relative_cases": relative_cases, "false_positives": false_positives, "false_negatives": false_negatives}
    return gate_report(counts, failures)


def gate_report(counts: dict[str, int], failures: list[dict[str, Any]]) -> dict[str, Any]:
    """The report of gate ``counts``: the three rates, their 95 % Wilson intervals, the counts."""
    return {
        "kind": "gate",
        "cases": counts["cases"],
        "accuracy": _rate(counts["correct"], counts["cases"]),
        "false_positive_rate": _rate(counts["false_positives"], counts["absolute_cases"]),
        "false_negative_rate": _rate(counts["false_negatives"], counts["relative_cases"]),
        "failures": failures,
        "intervals": {
            "accuracy": wilson(counts["correct"], counts["cases"]),
            "false_positive_rate": wilson(counts["false_positives"], counts["absolute_cases"]),
            "false_negative_rate": wilson(counts["false_negatives"], counts["relative_cases"]),
        },
        "counts": dict(counts),
    }
