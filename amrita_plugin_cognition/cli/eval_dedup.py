"""``eval dedup``: the LLM-free near-duplicate check against labelled pairs (format:
``docs/evaluation.md``).

Both texts of every pair are embedded with the default local embedder (in batches, progress on
stderr), the cosine of the two vectors is computed, and the same decision consolidation uses
(``judge_duplicate``: the facts' parts compared, then the wording of a pair whose parts agree by
the learned check, ``domain/pair_model.py``, fitted on that embedder's vectors) judges the pair.
Beside its precision and recall, the report gives what the cosine alone reaches at the same recall (the threshold that
keeps at least that recall, and the precision there), so the worth of the parts is visible.
Several files are read and checked first, embedded together, and reported one by one and pooled.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..api import DuplicatePairModel, build_embedder, judge_duplicate, pair_model_for
from ..config import EmbedderSettings
from .evaluation import EvalInputError, _require, _share, no_cases, read_jsonl, stderr_progress, wilson

MAX_FAILURE_DETAILS = 20
#: A pair's two vectors.
Vectors = tuple[np.ndarray, np.ndarray]
#: Texts embedded per call (progress is reported after each).
EMBED_BATCH = 64


@dataclass(frozen=True, slots=True)
class DedupPair:
    id: str
    first: str
    second: str
    duplicate: bool
    category: str


def _text(obj: dict[str, Any], key: str, number: int) -> str:
    value: str = _require(obj, key, str, number)
    if not value.strip():
        raise EvalInputError(number, f"field {key!r} is empty", f"字段 {key} 不能为空")
    return value


def parse_dedup_file(path: Path) -> list[DedupPair]:
    """Every pair of a dedup file; a malformed line or a file without pairs raises ``EvalInputError``."""
    pairs: list[DedupPair] = []
    for number, obj in read_jsonl(path):
        case_id = str(_require(obj, "id", (str, int), number))
        first, second = _text(obj, "a", number), _text(obj, "b", number)
        duplicate = _require(obj, "duplicate", bool, number)
        pairs.append(DedupPair(case_id, first, second, duplicate, str(obj.get("category") or "default")))
    if not pairs:
        raise no_cases()
    return pairs


def embed_texts(
    texts: list[str], progress: Callable[[int], None] | None = None
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Every distinct text's vector under the default local embedder (in batches), and that
    embedder's fingerprint."""
    distinct = list(dict.fromkeys(texts))
    embedder = build_embedder(EmbedderSettings())

    async def embed_all() -> np.ndarray:
        chunks = []
        for start in range(0, len(distinct), EMBED_BATCH):
            batch = distinct[start : start + EMBED_BATCH]
            chunks.append(await embedder.embed(batch))
            if progress is not None:
                progress(len(batch))
        return np.vstack(chunks) if chunks else np.zeros((0, 0), np.float32)

    vectors = asyncio.run(embed_all())
    return dict(zip(distinct, vectors, strict=True)), embedder.fingerprint.as_dict()


def pair_vectors(
    pairs: list[DedupPair], progress: Callable[[int], None] | None = None
) -> tuple[list[Vectors], dict[str, Any]]:
    """The two vectors of each pair (every distinct text embedded once) and the embedder's fingerprint."""
    vectors, fingerprint = embed_texts([text for pair in pairs for text in (pair.first, pair.second)], progress)
    return [(vectors[pair.first], vectors[pair.second]) for pair in pairs], fingerprint


def cosine_at_recall(scored: list[tuple[float, bool]], recall: float) -> dict[str, Any]:
    """Cosine similarity alone as the decision: the highest threshold whose recall is at least
    ``recall``, and the precision there (with its interval)."""
    positives = sorted((similarity for similarity, duplicate in scored if duplicate), reverse=True)
    if not positives or recall <= 0:
        return {"threshold": None, "precision": None, "recall": None, "intervals": {}}
    needed = max(1, int(np.ceil(recall * len(positives) - 1e-9)))
    threshold = positives[needed - 1]
    kept = [duplicate for similarity, duplicate in scored if similarity >= threshold]
    hits = sum(kept)
    return {
        "threshold": round(threshold, 4),
        "precision": _share(hits, len(kept)),
        "recall": _share(hits, len(positives)),
        "intervals": {"precision": wilson(hits, len(kept)), "recall": wilson(hits, len(positives))},
    }


def dedup_report(
    pairs: list[DedupPair], vectors: list[Vectors], model: DuplicatePairModel | None = None
) -> dict[str, Any]:
    """The report of judged ``pairs`` whose texts have ``vectors`` (``model``: the learned check
    of the wording, when it was fitted on their embedder)."""
    similarity = [float(first @ second) for first, second in vectors]
    true_positives = false_positives = false_negatives = 0
    failures: list[str] = []
    details: list[dict[str, Any]] = []
    by_category: dict[str, list[int]] = {}
    for pair, cosine, pair_vector in zip(pairs, similarity, vectors, strict=True):
        verdict = judge_duplicate(pair.first, pair.second, cosine, pair_vector, model)
        true_positives += verdict.duplicate and pair.duplicate
        false_positives += verdict.duplicate and not pair.duplicate
        false_negatives += pair.duplicate and not verdict.duplicate
        tally = by_category.setdefault(pair.category, [0, 0])
        tally[0] += verdict.duplicate == pair.duplicate
        tally[1] += 1
        if verdict.duplicate != pair.duplicate:
            failures.append(pair.id)
            if len(details) < MAX_FAILURE_DETAILS:
                details.append(
                    {
                        "id": pair.id,
                        "a": pair.first,
                        "b": pair.second,
                        "expected": pair.duplicate,
                        "reason": verdict.reason,
                        "detail": verdict.detail,
                        "similarity": round(cosine, 4),
                    }
                )
    judged = true_positives + false_positives
    duplicates = true_positives + false_negatives
    recall = true_positives / duplicates if duplicates else 0.0
    return {
        "kind": "dedup",
        "pairs": len(pairs),
        "precision": _share(true_positives, judged),
        "recall": _share(true_positives, duplicates),
        "failures": failures,
        "intervals": {"precision": wilson(true_positives, judged), "recall": wilson(true_positives, duplicates)},
        "cosine_only": cosine_at_recall(
            [(cosine, pair.duplicate) for pair, cosine in zip(pairs, similarity, strict=True)], recall
        ),
        "by_category": {
            name: {"pairs": tally[1], "accuracy": _share(tally[0], tally[1])}
            for name, tally in sorted(by_category.items())
        },
        "failure_details": details,
        "model": {
            "used": model is not None,
            "accept_from": model.accept_from if model is not None else None,
            "reject_below": model.reject_below if model is not None else None,
        },
        "counts": {
            "pairs": len(pairs),
            "duplicates": duplicates,
            "true_positives": true_positives,
            "false_positives": false_positives,
            "false_negatives": false_negatives,
        },
    }


def run_dedup_eval(parsed: dict[Path, list[DedupPair]]) -> dict[str, Any]:
    """The report on the pairs of every file (read by ``parse_dedup_file``, so that every file
    is checked before anything is embedded): one file's own, or the pooled one with each file's
    under ``files``."""
    everything = [pair for pairs in parsed.values() for pair in pairs]
    texts = len({text for pair in everything for text in (pair.first, pair.second)})
    vectors, fingerprint = pair_vectors(everything, stderr_progress(texts, "嵌入"))
    model = pair_model_for(fingerprint)
    if len(parsed) == 1:
        return dedup_report(everything, vectors, model)
    files: dict[str, dict[str, Any]] = {}
    offset = 0
    for path, pairs in parsed.items():
        files[str(path)] = dedup_report(pairs, vectors[offset : offset + len(pairs)], model)
        offset += len(pairs)
    return {**dedup_report(everything, vectors, model), "files": files}
