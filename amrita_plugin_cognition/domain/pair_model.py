"""The learned half of the near-duplicate check: a logistic model over two facts' vectors that
decides the wording step once every part the rules read agrees. Pure (numpy); the weights are a
data file of the package, read once.

The rules (``duplicates.judge_parts``) stay in front: a different person, day, amount, negation,
plan or role rejects a pair whatever its wording. What the rules cannot tell is whether the words
left over are the same fact said otherwise (打太极 / 练太极拳, 群里 / 本群) or another thing put in
the place of one (游泳 / 跑步, 成都 / 重庆): only a thesaurus of the whole language could, and
the vectors know more of it than any word list here. The model reads, for a pair of unit vectors
``u`` and ``v``, their product and their difference element by element (which directions of
meaning they share and where they part), their cosine and what the rules said of the wording
(nothing left, a word in the place of another, words added), and gives the probability that the
pair is one fact. It was fitted (``scripts/train_dedup_model.py``) on the hand-written pairs of
``tests/data/train`` that reach the wording step, with the bundled local embedder's vectors; it
applies only to vectors of that embedder (``applies_to``), any other leaves the rules alone.

Retrain it when the rules or the bundled embedder change: its inputs include the rules' verdict.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

#: The data file beside this module the weights live in (written by the training script).
MODEL_FILE = "dedup_pair_model.json"
#: What the rules said of the wording, as the model's inputs (in this order).
WORDING_SIGNALS = ("same_parts", "slot", "extra")


def wording_signals(reason: str, detail: str) -> tuple[float, float, float]:
    """The rules' verdict on the wording as three flags: nothing left to tell the facts apart, a
    word put in the place of another (``a ≠ b``), or words added on one side (``+…``)."""
    if reason == "same_parts":
        return 1.0, 0.0, 0.0
    return 0.0, float("≠" in detail), float(detail.startswith("+"))


def features(first: np.ndarray, second: np.ndarray, similarity: float, reason: str, detail: str) -> np.ndarray:
    """The model's inputs for one pair: ``first * second``, ``|first - second|``, the cosine, the
    wording signals, and 1 (the bias)."""
    first = np.asarray(first, dtype=np.float64)
    second = np.asarray(second, dtype=np.float64)
    return np.concatenate(
        [first * second, np.abs(first - second), [similarity], wording_signals(reason, detail), [1.0]]
    )


@dataclass(frozen=True, slots=True)
class PairModel:
    """Fitted weights (one per input of ``features``), the two probabilities that overrule the
    rules, and the fingerprint (``Fingerprint.as_dict()``) of the embedder whose vectors it read.

    ``accept_from``: a pair the rules reject for its wording only is one fact from this
    probability on. ``reject_below``: a pair the rules find alike in every part is not one fact
    below this one. The rules' yes is right far more often than their no, so the first is high
    and the second low."""

    weights: np.ndarray
    accept_from: float
    reject_below: float
    embedder: dict[str, Any]

    def says_duplicate(self, probability: float, rules_said_same: bool) -> bool:
        """The decision on a pair whose parts all agree, from the model's ``probability`` and
        whether the rules found nothing left in the wording (``same_parts``)."""
        return probability >= (self.reject_below if rules_said_same else self.accept_from)

    @property
    def dimension(self) -> int:
        return (len(self.weights) - 1 - 1 - len(WORDING_SIGNALS)) // 2

    def applies_to(self, fingerprint: dict[str, Any]) -> bool:
        """Whether vectors of the embedder with ``fingerprint`` are what the model was fitted on
        (protocol, model and dimension; the URL of a local model means nothing)."""
        return all(fingerprint.get(key) == self.embedder.get(key) for key in ("protocol", "model", "dimension"))

    def probability(self, first: np.ndarray, second: np.ndarray, similarity: float, reason: str, detail: str) -> float:
        """How likely the pair is one fact."""
        score = float(features(first, second, similarity, reason, detail) @ self.weights)
        return float(1.0 / (1.0 + np.exp(-max(-30.0, min(30.0, score)))))

    def to_dict(self, **about: Any) -> dict[str, Any]:
        return {
            "weights": [round(float(weight), 7) for weight in self.weights],
            "accept_from": self.accept_from,
            "reject_below": self.reject_below,
            "embedder": self.embedder,
            **about,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PairModel:
        return cls(
            np.asarray(data["weights"], dtype=np.float64),
            float(data["accept_from"]),
            float(data["reject_below"]),
            dict(data["embedder"]),
        )


@lru_cache(maxsize=1)
def bundled() -> PairModel | None:
    """The model shipped with the package, or None when its file is missing or unreadable (the
    rules then decide alone)."""
    try:
        text = resources.files(__package__).joinpath(MODEL_FILE).read_text(encoding="utf-8")
        return PairModel.from_dict(json.loads(text))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def for_vectors_of(fingerprint: dict[str, Any]) -> PairModel | None:
    """The shipped model when vectors of the embedder with ``fingerprint`` are what it was fitted
    on; None (the rules decide alone) for any other embedder, or when no model is shipped."""
    model = bundled()
    return model if model is not None and model.applies_to(fingerprint) else None
