"""The learned check of the near-duplicate wording (``domain/pair_model.py``): the shipped model is
fitted on the current rules and training files, applies to the bundled embedder only, decides
only pairs whose parts all agree (with its two cut points), and the pre-pass consults it only for
pairs whose two facts have stored vectors; its training reads ``tests/data/train`` only."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from script_modules import load_script

from amrita_plugin_cognition.config import EmbedderSettings
from amrita_plugin_cognition.domain import clusters as clusters_module
from amrita_plugin_cognition.domain.clusters import StoredFact, blocking, find_clusters
from amrita_plugin_cognition.domain.duplicates import SAME, WORDING, DuplicateVerdict, decide_wording, judge_pair
from amrita_plugin_cognition.domain.pair_model import WORDING_SIGNALS, PairModel, bundled, features, for_vectors_of
from amrita_plugin_cognition.index.embedders import build_embedder

ROOT = Path(__file__).resolve().parents[2]
RETRAIN = "uv run python scripts/train_dedup_model.py (then commit the model and dedup_training.json)"


training = load_script("train_dedup_model")


def _unit(seed: int, size: int = 512) -> np.ndarray:
    vector = np.random.default_rng(seed).normal(size=size)
    return vector / np.linalg.norm(vector)


def test_the_shipped_model_was_fitted_on_the_current_rules_and_training_files() -> None:
    record = json.loads((training.PACKAGE / training.RECORD_FILE).read_text(encoding="utf-8"))
    assert record["input_hash"] == training.input_hash(), f"the rules or the training files changed: {RETRAIN}"
    model = bundled()
    assert model is not None
    assert (model.accept_from, model.reject_below) == (record["accept_from"], record["reject_below"])
    assert 0.5 <= model.accept_from < 1.0 and 0.0 <= model.reject_below <= model.accept_from
    assert len(model.weights) == 2 * model.dimension + 1 + len(WORDING_SIGNALS) + 1


def test_out_of_the_targets_reach_the_cut_points_come_nearest_to_it() -> None:
    assert training._shortfall(0.95, 0.80) == 0.0 == training._shortfall(0.99, 0.90)
    # nearer the corner wins, whichever figure falls short
    assert training._shortfall(0.92, 0.79) < training._shortfall(0.94, 0.76)
    assert training._shortfall(0.93, 0.80) < training._shortfall(0.90, 0.80)
    # a precision of 0.95 bought with half the recall is far from the target
    assert training._shortfall(0.95, 0.46) > training._shortfall(0.90, 0.78)
    record = json.loads((training.PACKAGE / training.RECORD_FILE).read_text(encoding="utf-8"))
    chosen = next(entry for entry in record["cross_validation"] if entry["l2"] == record["l2"])
    assert chosen["precision_floor"] == training.TARGET_PRECISION  # not the rules' own precision


def test_it_applies_to_the_bundled_embedder_only() -> None:
    model = bundled()
    assert model is not None
    local = build_embedder(EmbedderSettings()).fingerprint.as_dict()
    assert model.applies_to(local)
    assert model.applies_to({**local, "url": "/elsewhere"})  # where a local model lives changes nothing
    assert not model.applies_to({**local, "model": "another-model"})
    assert not model.applies_to({"protocol": "openai", "model": "text-embedding-3-small", "url": "", "dimension": 512})


def test_the_features_are_the_products_the_differences_the_cosine_and_the_rules_signals() -> None:
    first, second = _unit(1), _unit(2)
    similarity = float(first @ second)
    row = features(first, second, similarity, WORDING, "成都 ≠ 重庆")
    assert row.shape == (2 * 512 + 1 + len(WORDING_SIGNALS) + 1,)
    assert np.allclose(row[:512], first * second) and np.allclose(row[512:1024], np.abs(first - second))
    assert row[1024] == pytest.approx(similarity)
    assert list(row[1025:]) == [0.0, 1.0, 0.0, 1.0]
    assert list(features(first, second, similarity, WORDING, "+电脑")[1025:]) == [0.0, 0.0, 1.0, 1.0]
    assert list(features(first, second, similarity, SAME, "")[1025:]) == [1.0, 0.0, 0.0, 1.0]


def _constant(probability: float, accept_from: float, reject_below: float) -> PairModel:
    """A model that says ``probability`` of every pair (its bias alone)."""
    weights = np.zeros(2 * 512 + 1 + len(WORDING_SIGNALS) + 1)
    weights[-1] = float(np.log(probability / (1 - probability)))
    return PairModel(weights, accept_from, reject_below, {"protocol": "local", "model": "m", "dimension": 512})


@pytest.mark.parametrize(
    ("verdict", "probability", "expected"),
    [
        (DuplicateVerdict(False, WORDING, ("who",), "打 ≠ 练"), 0.8, True),  # the rules' no overruled
        (DuplicateVerdict(False, WORDING, ("who",), "游泳 ≠ 跑步"), 0.6, False),  # below accept_from
        (DuplicateVerdict(True, SAME, ("who", WORDING)), 0.4, True),  # the rules' yes kept
        (DuplicateVerdict(True, SAME, ("who", WORDING)), 0.2, False),  # below reject_below
    ],
)
def test_the_model_overrules_the_rules_wording_only_past_its_cut_points(
    verdict: DuplicateVerdict, probability: float, expected: bool
) -> None:
    model = _constant(probability, accept_from=0.7, reject_below=0.3)
    decided = decide_wording(verdict, (_unit(1), _unit(2)), 0.8, model)
    assert decided.duplicate is expected
    assert decided.reason == (SAME if expected else WORDING)
    assert f"(model {probability:.2f})" in decided.detail
    assert "who" in decided.matched


def test_a_part_that_differs_is_never_overruled() -> None:
    model = _constant(0.99, accept_from=0.5, reject_below=0.0)
    vectors = (_unit(1), _unit(1))
    for first, second in (
        ("小明于2026-11-29在成都吃了火锅。", "小明于2026-11-30在成都吃了火锅。"),  # when
        ("小明借给小红三百元。", "小明借给小红五百元。"),  # how much
        ("小明喜欢吃火锅。", "小明不喜欢吃火锅。"),  # whether
        ("小马请阿凯吃了午饭。", "阿凯请小马吃了午饭。"),  # roles
    ):
        verdict = judge_pair(first, second, 0.95, vectors, model)
        assert not verdict.duplicate and verdict.reason not in (SAME, WORDING), verdict


def test_the_pre_pass_asks_the_model_only_for_pairs_with_both_vectors(monkeypatch: pytest.MonkeyPatch) -> None:
    facts = [
        StoredFact(1, "小明每天去公园打太极。", "h1"),
        StoredFact(2, "小明天天到公园练太极。", "h2"),
        StoredFact(3, "每天去公园打太极，小明。", "h3"),  # no stored vector: paired by its words
    ]
    vectors = np.stack([_unit(5), _unit(5)]).astype(np.float32)
    asked: list[tuple[bool, bool]] = []
    model = _constant(0.99, accept_from=0.5, reject_below=0.0)
    real = clusters_module.judge_read

    def spy(first, second, similarity, pair_vectors=None, pair_model=None):  # type: ignore[no-untyped-def]
        asked.append((pair_vectors is not None, pair_model is not None))
        return real(first, second, similarity, pair_vectors, pair_model)

    monkeypatch.setattr(clusters_module, "judge_read", spy)
    found = find_clusters(facts, blocking(facts), vectors, [0, 1, None], model=model)
    # the two embedded facts: the model read their vectors; a pair with the third: the rules alone
    assert (True, True) in asked and (False, True) in asked
    assert any({1, 2} <= set(cluster.member_ids) for cluster in found.clusters)


def test_training_reads_the_training_split_only(tmp_path: Path) -> None:
    for folder in (ROOT / "tests" / "data" / "dev", ROOT / "tests" / "data" / "train" / ".." / "test", tmp_path):
        with pytest.raises(training.RefusedFolder):
            training.load_pairs(folder)
    names = set(training.load_pairs())
    assert names and all(name.startswith("dedup_") for name in names)
    assert {path.name for path in training.training_inputs() if path.suffix == ".jsonl"} == names


def test_the_model_is_offered_for_the_bundled_embedders_vectors_only() -> None:
    local = build_embedder(EmbedderSettings()).fingerprint.as_dict()
    assert for_vectors_of(local) is bundled() is not None
    assert for_vectors_of({**local, "model": f"{local['model']}+multilingual-e5-small", "dimension": 896}) is None
    assert (
        for_vectors_of({"protocol": "openai", "model": "text-embedding-3-small", "url": "", "dimension": 512}) is None
    )
