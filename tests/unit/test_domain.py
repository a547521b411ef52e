"""Pure logic: tokens, query views, admission, scoring and the MMR kernel, configuration."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from amrita_plugin_cognition.config import ConfigurationError, load_config
from amrita_plugin_cognition.domain.admission import admit
from amrita_plugin_cognition.domain.clock import UTC
from amrita_plugin_cognition.domain.query import query_views
from amrita_plugin_cognition.domain.records import (
    ChatContext,
    Importance,
    Scope,
    content_hash,
    is_conversation_turn,
    normalise_text,
)
from amrita_plugin_cognition.domain.scoring import (
    RankingWeights,
    feedback_factors,
    mmr_select,
    mmr_select_numpy,
    recency_factor,
    score_fusion,
)
from amrita_plugin_cognition.domain.tokenize import estimate_tokens, keyword_tokens, query_terms, stem
from amrita_plugin_cognition.domain.visibility import visibility_for


def test_chinese_text_is_indexed_as_unigrams_and_bigrams() -> None:
    assert keyword_tokens("吃火锅") == ["吃", "火", "锅", "吃火", "火锅"]
    assert "火锅" in query_terms("我想吃火锅了")
    assert "我" not in query_terms("我想吃火锅了") and "的" not in query_terms("我的火锅")


def test_english_words_are_stemmed_and_stop_words_dropped() -> None:
    assert stem("painted") == "paint" and stem("running") == "run" and stem("stories") == "story"
    assert keyword_tokens("Caroline went to the LGBTQ support group") == ["caroline", "lgbtq", "support", "group"]


def test_stored_text_keeps_every_character_and_the_hash_folds_widths() -> None:
    assert normalise_text("  QQ号10001（小明）\n 去了成都 ") == "QQ号10001（小明） 去了成都"
    scope = Scope("group", "1")
    assert content_hash("b", scope, "QQ号10001（小明）") == content_hash("b", scope, "QQ号10001(小明)")
    assert content_hash("b", scope, "x") != content_hash("b", Scope("group", "2"), "x")


def test_transcripts_become_three_views_and_plain_text_one() -> None:
    transcript = '<Bart>:"我要表演魔术！"\n<Assistant>:"太棒了"\n<Bart>:"我有点紧张"'
    assert query_views([transcript]) == [transcript, "我要表演魔术！ 我有点紧张", "我有点紧张"]
    assert query_views(["我之前说要去哪出差来着？"]) == ["我之前说要去哪出差来着？"]
    assert query_views(["第一条", "第二条"]) == ["第一条\n第二条", "第一条", "第二条"]
    assert query_views(["  ", ""]) == []


def test_conversation_turns_are_recognised_by_their_speaker_prefix() -> None:
    assert is_conversation_turn("Caroline: I went to a support group.", "Caroline")
    assert is_conversation_turn("小明：我今天加班", "小明")
    assert not is_conversation_turn("QQ号10001（昵称小明）计划去成都。", "小明")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("我的密码是 hunter2，别告诉别人", "credential"),
        ("我的QQ密码是 hunter2abc", "credential"),
        ("验证码 583920 五分钟内有效", "credential"),
        ("我的 api key 是 sk-abcdefghijklmnopqrstuvwx", "credential"),
        ("身份证号 11010519491231002X", "credential"),
        ("这个别记下来：我下周要去医院复查", "do_not_remember"),
        ("don't remember this, I'm moving next week", "do_not_remember"),
    ],
)
def test_admission_refuses_secrets_and_requests_to_forget(text: str, reason: str) -> None:
    verdict = admit(text)
    assert not verdict.admit and verdict.reason == reason and verdict.message


@pytest.mark.parametrize(
    "text", ["我最近在学 Python 的 asyncio", "小明下周三去成都出差", "我的生日是 1998 年 3 月 2 日"]
)
def test_admission_keeps_ordinary_facts(text: str) -> None:
    assert admit(text).admit


def test_visibility_rules() -> None:
    group_context = ChatContext("b", Scope("group", "1"), "u1")
    private_context = ChatContext("b", Scope("private", "u1"), "u1")
    strict_group = visibility_for(group_context, "strict")
    open_group = visibility_for(group_context, "open")
    strict_private = visibility_for(private_context, "strict")

    def record(scope: Scope, speaker: str = "u2", bot: str = "b"):  # type: ignore[no-untyped-def]
        from amrita_plugin_cognition.domain.records import MemoryRecord, MemoryStatus

        now = datetime.now(UTC)
        return MemoryRecord(1, bot, scope, "t", speaker, "", speaker, "", "fact", [], Importance.MEDIUM, "user_stated",
                            {}, None, now, now, MemoryStatus.ACTIVE, None, None, "h")  # fmt: skip

    assert strict_group.allows(record(Scope("group", "1")))
    assert not strict_group.allows(record(Scope("group", "2")))
    assert open_group.allows(record(Scope("group", "2")))
    assert not open_group.allows(record(Scope("private", "u1"), speaker="u1"))
    assert strict_private.allows(record(Scope("private", "u1")))
    assert strict_private.allows(record(Scope("group", "2"), speaker="u1"))
    assert not strict_private.allows(record(Scope("group", "2"), speaker="u3"))
    assert not strict_private.allows(record(Scope("private", "u3"), speaker="u1"))
    assert not strict_group.allows(record(Scope("group", "1"), bot="other"))


def test_score_fusion_weights_and_methods() -> None:
    vector = {1: 0.9, 2: 0.5, 3: 0.1}
    keyword = {2: 8.0, 4: 2.0}
    weights = RankingWeights()
    fused = score_fusion(vector, keyword, weights)
    assert set(fused) == {1, 2, 3, 4} and all(0.0 <= value <= 1.0 for value in fused.values())
    vector_only = score_fusion(vector, keyword, RankingWeights(keyword_weight=0.0))
    assert max(vector_only, key=vector_only.get) == 1  # type: ignore[arg-type]
    keyword_only = score_fusion(vector, keyword, RankingWeights(vector_weight=0.0))
    assert set(keyword_only) == {2, 4} and keyword_only[2] == 1.0
    rrf = score_fusion(vector, keyword, RankingWeights(fusion="rrf"))
    assert rrf[2] > rrf[3] and max(rrf.values()) <= 1.0


def test_recency_is_bounded_and_needs_similarity() -> None:
    weights = RankingWeights(recency_floor=0.8, recency_min_similarity=0.3)
    now = datetime(2026, 11, 30, tzinfo=UTC)
    fresh = recency_factor(now, now, Importance.MEDIUM, 0.9, weights)
    ancient = recency_factor(now - timedelta(days=5000), now, Importance.MEDIUM, 0.9, weights)
    unrelated = recency_factor(now, now, Importance.MEDIUM, 0.1, weights)
    assert fresh == pytest.approx(1.0) and ancient == pytest.approx(0.8, abs=1e-3) and unrelated == 0.8
    slow = recency_factor(now - timedelta(days=180), now, Importance.HIGH, 0.9, weights)
    fast = recency_factor(now - timedelta(days=180), now, Importance.LOW, 0.9, weights)
    assert slow > fast


def test_mmr_kernel_matches_the_numpy_reference() -> None:
    rng = np.random.default_rng(7)
    for count, dim, top_k in ((50, 16, 10), (300, 128, 20), (1500, 256, 20)):
        matrix = rng.standard_normal((count, dim)).astype(np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        scores = rng.random(count)
        for lam in (0.3, 0.7, 1.0):
            assert mmr_select(matrix, scores, top_k, lam) == mmr_select_numpy(matrix, scores, top_k, lam)


def test_mmr_demotes_a_duplicate() -> None:
    base = np.array([[1.0, 0.0], [1.0, 0.0], [0.6, 0.8]], dtype=np.float32)
    scores = np.array([1.0, 0.9, 0.85])
    assert mmr_select(base, scores, 3, 1.0) == [0, 1, 2]
    assert mmr_select(base, scores, 3, 0.7) == [0, 2, 1]


def test_feedback_lifts_candidates_close_to_the_best_ones() -> None:
    top = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    near = np.array([0.9, 0.1, 0.0], dtype=np.float32)  # not normalised: cosine is used
    far = np.array([0.0, 0.0, 2.0], dtype=np.float32)
    ranked = [top, far, near, None]
    assert feedback_factors(ranked, 1, 0.0) == [1.0] * 4
    factors = feedback_factors(ranked, 1, 0.5)
    assert factors[0] == pytest.approx(1.0)  # the closest keeps its score: the scale stays
    assert factors[1] == pytest.approx(1.0 / 1.5)
    assert factors[2] == pytest.approx((1.0 + 0.5 * 0.9 / np.hypot(0.9, 0.1)) / 1.5)
    assert factors[3] == pytest.approx(sum(factors[:3]) / 3)  # no vector yet: the mean lift
    # the centroid of the two best: "far" is one of them now, so it gains
    assert feedback_factors(ranked, 2, 0.5)[1] > factors[1]
    assert feedback_factors([top, None], 3, 0.5) == [1.0, 1.0]  # one vector says nothing


def test_context_helpers() -> None:
    assert estimate_tokens("你好世界") == 4 and estimate_tokens("abcdefgh") == 2


def test_config_file_env_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "cognition.toml"
    path.write_text('scope_policy = "open"\n[embedder]\napi_key = "${MY_KEY}"\n', encoding="utf-8")
    config = load_config(path, environ={"MY_KEY": "sk-x", "COGNITION_RECALL__TOP_K": "12"})
    assert config.scope_policy == "open" and config.embedder.api_key == "sk-x" and config.recall.top_k == 12
    assert load_config(None, environ={}).scope_policy == "strict"
    with pytest.raises(ConfigurationError, match=r"recall\.top_k"):
        load_config(None, environ={"COGNITION_RECALL__TOP_K": "500"})
    path.write_text("scope_policy = [", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="TOML"):
        load_config(path, environ={})
    with pytest.raises(ConfigurationError, match="disabled_scopes"):
        load_config(None, environ={"COGNITION_DISABLED_SCOPES": '["channel:1"]'})
