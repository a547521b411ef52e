"""``/profile`` as an image (nonebot-plugin-htmlrender, the ``image`` extra), text otherwise.

Driven like the text tests (``test_profile_chat``): real Amrita flow, OneBot V11 events through
nonebug, the QQ side stubbed. The real rendering uses htmlrender's playwright provider with the
system's Chromium (``executable_path``; no browser download); it skips only when no Chromium
binary is installed (``.ci/run`` installs Debian's). The fallbacks: htmlrender not importable →
today's text; a renderer that raises or hangs → the text, and ONE warning."""

from __future__ import annotations

import base64
import logging
import shutil
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from chat_helpers import SELF_ID, connect_bot, deliver, group_message, memory_engine, private_message
from log_capture import CognitionLog, capturing
from nonebot.adapters.onebot.v11 import Message
from nonebug import App

from amrita_plugin_cognition.bot import commands_profile, profile_image
from amrita_plugin_cognition.domain.profiles import Card
from amrita_plugin_cognition.engine import profiles

BOT = str(SELF_ID)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PNG = b"\x89PNG\r\n\x1a\n"
JPEG = b"\xff\xd8\xff"


class _Records(CognitionLog):
    def warnings(self) -> list[logging.LogRecord]:
        return [r for r in self.records if r.levelno >= logging.WARNING and "action=profile_image" in r.getMessage()]


@pytest.fixture
def cognition_log() -> Iterator[_Records]:
    with capturing(_Records()) as handler:
        yield handler


@pytest.fixture(autouse=True)
def _fresh_health(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Each test starts with a renderer not known to fail (no pause, no warning given yet)."""
    monkeypatch.setattr(profile_image, "_health", profile_image._Health())


@pytest.fixture
async def chromium_renderer() -> AsyncIterator[Any]:
    """htmlrender's default application for the test: the playwright provider on Debian's Chromium."""
    if CHROMIUM is None:
        pytest.skip("no Chromium binary on PATH (apt-get install chromium; .ci/run installs it)")
    htmlrender = profile_image.htmlrender()
    assert htmlrender is not None, "nonebot-plugin-htmlrender is a dev dependency: uv sync"
    from nonebot_plugin_htmlrender.bootstrap.composition import prepare_runtime

    settings = htmlrender.RenderSettings(provider="playwright", provider_config={"executable_path": CHROMIUM})
    application = prepare_runtime(settings).build_application()
    previous = htmlrender.set_default_application(application)
    try:
        yield application
    finally:
        htmlrender.set_default_application(previous)
        await application.aclose()


def _record_replies(bot: Any, qq: Any, monkeypatch: Any) -> list[Message]:
    """What the bot sends, as messages (the fake QQ keeps only their text)."""
    replies: list[Message] = []

    async def send(event: Any, message: Any, **kwargs: Any) -> Any:
        replies.append(Message(message))
        return await qq.send(event, message, **kwargs)

    monkeypatch.setattr(bot, "send", send)
    return replies


def _image_bytes(message: Message) -> bytes:
    images = [segment for segment in message if segment.type == "image"]
    assert len(images) == 1 and len(message) == 1, f"expected one image, got {str(message)[:200]!r}"
    file = str(images[0].data["file"])
    assert file.startswith("base64://")
    return base64.b64decode(file.removeprefix("base64://"))


def _check_image(data: bytes) -> None:
    assert data.startswith((PNG, JPEG))
    assert 5_000 < len(data) < 8_000_000
    if data.startswith(PNG):
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        assert width == int(profile_image.WIDTH * profile_image.DEVICE_PIXEL_RATIO)
        assert 150 < height < 16_000


async def _seed(user: str, group_id: str) -> tuple[Card, Card]:
    engine = await memory_engine()
    member = Card(
        BOT,
        "user",
        user,
        f"group:{group_id}",
        name="阿明",
        tags=["桌游", "猫"],
        evaluation="群里的桌游组织者",
        roast="永远在摇人",
    )  # the part the group sees under the default strict policy
    team = Card(
        BOT, "group", group_id, "group", name="桌游群", evaluation="周末约桌游的群", body="常玩阿瓦隆\n也玩狼人杀"
    )
    saved = [(await profiles.save(engine, card, by="test")).card for card in (member, team)]
    return saved[0], saved[1]


# ------------------------------------------------------------------------- the page


@pytest.mark.embedded_only
def test_the_page_escapes_the_card_and_keeps_the_order() -> None:
    card = Card(
        BOT,
        "user",
        "10401",
        "private",
        name="<script>alert(1)</script>",
        tags=["a&b", '"引号"'],
        evaluation="<b>评价</b>",
        roast="<img src=x onerror=alert(1)>",
        body="正文\n第二行",
    )
    page = profile_image.card_html(card, "Asia/Shanghai")
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>评价</b>" not in page and "&lt;b&gt;评价&lt;/b&gt;" in page
    assert "<img" not in page and "a&amp;b" in page and "&#34;引号&#34;" in page
    assert "仅私聊" in page and "更新于" in page and "标签" in page
    name = page.index("&lt;script&gt;alert(1)")
    assert (
        name < page.index("标签") < page.index("更新于") < page.index("评价") < page.index("吐槽") < page.index("正文")
    )
    assert "http://" not in page and "https://" not in page  # self-contained: renders offline


# ------------------------------------------------------------------------- real rendering


@pytest.mark.chatflow
async def test_profile_is_an_image_when_htmlrender_renders(
    app: App, fake_openai, monkeypatch, chromium_renderer, cognition_log: _Records
) -> None:
    await _seed("10411", "30411")
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        replies = _record_replies(bot, qq, monkeypatch)
        await deliver(bot, group_message("/profile", 30411, 10411, "阿明", to_me=False))
        _check_image(_image_bytes(replies[-1]))
        await deliver(bot, group_message("/profile group", 30411, 10411, "阿明", to_me=False))
        _check_image(_image_bytes(replies[-1]))
        # refusals and usage stay text
        await deliver(bot, group_message("/profile group", 30412, 10411, "阿明", to_me=False))
        assert str(replies[-1]) == commands_profile.NO_CARD
        await deliver(bot, private_message("/profile foo", 10411, "阿明"))
        assert str(replies[-1]) == commands_profile.USAGE
    assert not cognition_log.warnings()
    assert not fake_openai.chat_requests


# ------------------------------------------------------------------------- fallbacks


@pytest.mark.chatflow
async def test_without_htmlrender_profile_is_todays_text(
    app: App, fake_openai, monkeypatch, cognition_log: _Records
) -> None:
    member, team = await _seed("10421", "30421")
    monkeypatch.setitem(sys.modules, profile_image.HTMLRENDER, None)  # as if not installed
    assert profile_image.htmlrender() is None
    engine = await memory_engine()
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        await deliver(bot, group_message("/profile", 30421, 10421, "阿明", to_me=False))
        assert qq.sent[-1] == commands_profile.render_text(member, engine.config.timezone)
        assert qq.sent[-1].startswith("用户 10421 在群 30421 的画像") and "名称：阿明" in qq.sent[-1]
        await deliver(bot, group_message("/profile group", 30421, 10421, "阿明", to_me=False))
        assert qq.sent[-1] == commands_profile.render_text(team, engine.config.timezone)
    assert not cognition_log.warnings()  # not installed is the normal text path, not a failure


@pytest.mark.chatflow
async def test_a_failing_renderer_gives_the_text_and_one_warning(
    app: App, fake_openai, monkeypatch, cognition_log: _Records
) -> None:
    member, team = await _seed("10431", "30431")
    htmlrender = profile_image.htmlrender()
    assert htmlrender is not None
    calls: list[str] = []

    async def broken(html: str, **options: Any) -> Any:
        calls.append(html)
        raise RuntimeError("no browser here")

    monkeypatch.setattr(htmlrender, "render_html", broken)
    monkeypatch.setattr(profile_image, "RETRY_AFTER_SECONDS", 0.0)  # try at every call
    engine = await memory_engine()
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        for _ in range(3):
            await deliver(bot, group_message("/profile", 30431, 10431, "阿明", to_me=False))
            assert qq.sent[-1] == commands_profile.render_text(member, engine.config.timezone)
        await deliver(bot, group_message("/profile group", 30431, 10431, "阿明", to_me=False))
        assert qq.sent[-1] == commands_profile.render_text(team, engine.config.timezone)
    assert len(calls) == 4 and "群里的桌游组织者" in calls[0]
    (warning,) = cognition_log.warnings()  # one, not one per call
    assert "RuntimeError: no browser here" in warning.getMessage() and warning.exc_info is None
    assert not [r for r in cognition_log.records if r.exc_info]  # no traceback at all


@pytest.mark.chatflow
async def test_a_hanging_renderer_times_out_to_the_text_then_pauses(
    app: App, fake_openai, monkeypatch, cognition_log: _Records
) -> None:
    import asyncio

    member, _ = await _seed("10441", "30441")
    htmlrender = profile_image.htmlrender()
    assert htmlrender is not None
    calls: list[float | None] = []

    async def hanging(html: str, **options: Any) -> Any:
        calls.append(options.get("timeout_seconds"))
        await asyncio.sleep(30)

    monkeypatch.setattr(htmlrender, "render_html", hanging)
    monkeypatch.setattr(profile_image, "RENDER_TIMEOUT_SECONDS", 0.2)
    engine = await memory_engine()
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        for _ in range(2):  # the second within RETRY_AFTER_SECONDS: text at once, no new try
            await deliver(bot, group_message("/profile", 30441, 10441, "阿明", to_me=False))
            assert qq.sent[-1] == commands_profile.render_text(member, engine.config.timezone)
    assert calls == [0.2]
    assert len(cognition_log.warnings()) == 1 and "TimeoutError" in cognition_log.warnings()[0].getMessage()
