"""Long texts are read window by window (``domain/windows.py``): the time resolver and admission
stay linear in the length of a text, and still find what lies far into it, at its place."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from amrita_plugin_cognition.domain.admission import WINDOW_CHARS as ADMISSION_WINDOW
from amrita_plugin_cognition.domain.admission import admit, redact
from amrita_plugin_cognition.domain.timeresolve import WINDOW_CHARS as TIME_WINDOW
from amrita_plugin_cognition.domain.timeresolve import anchor_hints, first_date, resolve_times
from amrita_plugin_cognition.domain.windows import windows

pytestmark = pytest.mark.embedded_only

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone(timedelta(hours=8)))
FILLER = "今天群里聊了很多关于猫粮和猫砂的话题，大家各有各的看法。"


def test_windows_cover_the_text_in_order_and_cut_at_sentence_ends_outside_quotes() -> None:
    text = "甲说：“第一句。第二句。”" + "乙同意了。" * 300
    found = windows(text, 100)
    assert "".join(window for _, window in found) == text
    assert all(len(window) <= 100 for _, window in found)
    assert [offset for offset, _ in found] == [
        sum(len(window) for _, window in found[:index]) for index in range(len(found))
    ]
    assert found[0][1].startswith("甲说：“第一句。第二句。”")  # not cut inside the quote
    assert all(window.endswith("。") for _, window in found)
    assert windows("短句", 100) == [(0, "短句")]
    unbroken = "字" * 250  # no break at all: cut at the size
    assert [len(window) for _, window in windows(unbroken, 100)] == [100, 100, 50]


def test_the_resolver_finds_a_time_far_into_a_long_text_at_its_place() -> None:
    text = FILLER * (3 * TIME_WINDOW // len(FILLER)) + "我明天去北京。"
    mentions = resolve_times(text, NOW)
    assert len(text) > 3 * TIME_WINDOW
    assert [(mention.text, text[mention.start : mention.end]) for mention in mentions] == [("今天", "今天")] * (
        len(mentions) - 1
    ) + [("明天", "明天")]
    assert mentions[-1].date.isoformat() == "2026-12-01"
    assert first_date(text, NOW) == NOW.date()
    assert anchor_hints(text, NOW) == anchor_hints(FILLER + "我明天去北京。", NOW)


def test_admission_reads_every_window_of_a_long_text() -> None:
    long = FILLER * (3 * ADMISSION_WINDOW // len(FILLER))
    with_secret = long + "我的邮箱密码是 Xq7#pLm29vT，" + FILLER
    verdict = admit(with_secret)
    assert verdict.admit and verdict.redacted and "Xq7#pLm29vT" not in verdict.text
    assert "Xq7#pLm29vT" not in redact(with_secret)
    assert verdict.text.startswith(long)  # the rest is kept as said
    assert admit(long + "这件事别记下来，我下周二要去面试。").reason == "do_not_remember"
