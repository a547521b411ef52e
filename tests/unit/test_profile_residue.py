"""The pure check of a card part rebuilt after a forget (``domain/profile_residue.py``): what it
keeps, word for word, of the version that cited the forgotten fact and that no remaining fact
supports. No I/O; the rebuild that uses it is tested against the fake model in
``test_profile_merge.py``."""

from __future__ import annotations

from amrita_plugin_cognition.domain.profile_residue import MIN_CJK_RUN, NAMED_MAX, residue

OLD = [
    "爱运动的程序员",
    "喜欢打羽毛球\n每周六在体育馆打球\n下周二去字节跳动面试",
    "球拍比键盘摸得多",
]
LEFT = ["QQ号10001（昵称小明）喜欢打羽毛球。", "QQ号10001（昵称小明）每周六在体育馆打球。"]


def test_the_card_returned_unchanged_carries_what_no_fact_left_supports() -> None:
    kept = residue(OLD, OLD, LEFT)
    assert kept.carries
    assert "下周二去字节跳动面试" in kept.spans  # the forgotten fact, one run
    assert not any("羽毛球" in span or "体育馆" in span for span in kept.spans)  # still supported


def test_a_card_written_from_the_facts_left_passes_whatever_wording_it_shares() -> None:
    rebuilt = ["喜欢打羽毛球的人", "喜欢打羽毛球\n每周六在体育馆打球", "周六必到体育馆"]
    assert not residue(OLD, rebuilt, LEFT).carries
    assert residue(OLD, ["爱运动", *rebuilt[1:]], LEFT).spans == ("爱运动",)  # old commentary no fact supports
    # a card that never said anything the remaining facts do not support may come back unchanged
    assert not residue(rebuilt[1:2], rebuilt[1:2], LEFT).carries


def test_a_kept_fragment_of_the_forgotten_fact_is_caught_inside_new_wording() -> None:
    rebuilt = ["爱运动的程序员", "喜欢打羽毛球，最近在准备字节跳动的面试", "周六必到"]
    kept = residue(OLD, rebuilt, LEFT)
    assert any("字节跳动" in span for span in kept.spans) and "爱运动的程序员" in kept.spans  # commentary too


def test_runs_shorter_than_the_minimum_do_not_count() -> None:
    assert MIN_CJK_RUN == 3
    assert not residue(["他说下周二去"], ["周二见"], []).carries  # one pair in common: 周二
    assert residue(["他说下周二去"], ["下周二见"], []).spans == ("下周二",)


def test_numbers_and_latin_words_count_alone_and_are_read_after_nfkc() -> None:
    old = ["手机号１３８００１３８０００，常用 Rust 写代码，2026年入职"]
    kept = residue(old, ["联系：13800138000；写 rust；2026年"], ["2026年入职了一家公司"])
    assert kept.spans == ("13800138000", "rust")  # 2026 is supported by a fact left
    assert not residue(old, ["写代码的人"], ["写代码"]).carries
    assert not residue(["9 号楼"], ["9 号楼"], []).carries  # one digit is no distinctive number


def test_the_feedback_names_the_spans_and_asks_for_them_to_go() -> None:
    kept = residue(OLD, OLD, LEFT)
    feedback = kept.feedback()
    assert "“下周二去字节跳动面试”" in feedback and "可能来自已删除的记忆" in feedback
    many = residue([f"第{n}号房间住着张{n}号先生" for n in range(20, 40)], [f"第{n}号" for n in range(20, 40)], [])
    assert len(many.spans) > NAMED_MAX and many.feedback().count("“") == NAMED_MAX
