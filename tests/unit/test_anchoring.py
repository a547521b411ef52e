"""Anchoring a text without a model (what a correction goes through): relative times become the
dates they name at the moment the text was said, the day it is about is found, the rest is kept."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest

from amrita_plugin_cognition.domain.anchoring import anchor, written_date

pytestmark = pytest.mark.embedded_only

SAID = datetime(2026, 11, 30, 20, 0, tzinfo=timezone(timedelta(hours=8)))  # a Monday evening
USER = "QQ号10001（昵称小明）"


@pytest.mark.parametrize(
    ("text", "expected", "day", "precision"),
    [
        (f"{USER}前天在成都吃了火锅", f"{USER}2026-11-28（周六）在成都吃了火锅", date(2026, 11, 28), "day"),
        (f"{USER}去年去了冰岛", f"{USER}2025年去了冰岛", date(2025, 1, 1), "year"),
        (f"{USER}上个月搬家了", f"{USER}2026年10月搬家了", date(2026, 10, 1), "month"),
        (f"{USER}下周要去北京", f"{USER}2026-12-07至2026-12-13要去北京", date(2026, 12, 7), "week"),
        (f"{USER}明天晚上去看电影", f"{USER}2026-12-01（周二）晚上去看电影", date(2026, 12, 1), "day"),
        (f"{USER}于2026年11月20日入职", f"{USER}于2026年11月20日入职", date(2026, 11, 20), "day"),
        (f"{USER}每周五去游泳", f"{USER}每周五去游泳", None, ""),  # a habit names no day
        (f"{USER}喜欢《后天》这部电影", f"{USER}喜欢《后天》这部电影", None, ""),  # a title is no time
    ],
)
def test_relative_times_are_anchored_at_the_moment_said(
    text: str, expected: str, day: date | None, precision: str
) -> None:
    anchored = anchor(text, SAID)
    assert (anchored.text, anchored.day, anchored.precision) == (expected, day, precision)


def test_written_dates_are_read_only_when_valid() -> None:
    assert written_date("2026-02-30 或 2026-03-01") == date(2026, 3, 1)
    assert written_date("订单号 20261130889") is None
