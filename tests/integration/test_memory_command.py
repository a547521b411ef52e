"""``/memory`` in the real Amrita chat flow (nonebug): search with a relevance floor, dates and
chat labels in lists, usage, the menu entry, and who may delete group memories (group roles and
the LitePerm node ``cognition.admin``)."""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from chat_helpers import (
    SELF_ID,
    connect_bot,
    deliver,
    grant_node,
    group_message,
    memory_engine,
    private_message,
    tool_results,
)
from fake_openai import tool_call
from nonebug import App

from amrita_plugin_cognition.domain.clock import UTC
from amrita_plugin_cognition.domain.records import MemoryDraft, Scope

pytestmark = pytest.mark.chatflow

BOT = str(SELF_ID)
_engine = memory_engine


async def _seed(
    scope: Scope,
    text: str,
    speaker: str = "10001",
    name: str = "小明",
    happened_at: datetime | None = None,
) -> int:
    engine = await _engine()
    draft = MemoryDraft(text=text, scope=scope, speaker_id=speaker, speaker_name=name, happened_at=happened_at)
    result = await engine.memories.remember(BOT, [draft])
    await engine.index.drain()
    return result.record_ids[0]


async def _bot(ctx, monkeypatch):  # type: ignore[no-untyped-def]
    return await connect_bot(ctx, monkeypatch, BOT)


def _group_names(bot, monkeypatch, names: dict[int, str], slow: dict[int, float] | None = None) -> list[int]:  # type: ignore[no-untyped-def]
    """Answer ``get_group_info`` with ``names`` (after ``slow[group]`` seconds); returns the asked groups."""
    asked: list[int] = []
    plain = bot.adapter._call_api

    async def call_api(bot_: Any, api: str, **data: Any) -> Any:
        if api != "get_group_info":
            return await plain(bot_, api, **data)
        group = int(data["group_id"])
        asked.append(group)
        await asyncio.sleep((slow or {}).get(group, 0.0))
        return {"group_id": group, "group_name": names.get(group, ""), "member_count": 3}

    monkeypatch.setattr(bot.adapter, "_call_api", call_api)
    return asked


async def test_search_shows_only_memories_that_match(app: App, fake_openai, monkeypatch) -> None:
    me = Scope("private", "10071")
    checkup = await _seed(me, "小林下周二上午去市医院做年度体检，要空腹。", speaker="10071", name="小林")
    report = await _seed(me, "小林上个月的体检报告显示血压偏高。", speaker="10071", name="小林")
    badminton = await _seed(me, "小林每周六下午在体育馆打羽毛球。", speaker="10071", name="小林")
    cat = await _seed(me, "小林养了一只叫咪咪的橘猫。", speaker="10071", name="小林")
    group = Scope("group", "30071")
    group_trip = await _seed(group, "群30071约定下周六去郊外烧烤。", speaker="10072", name="阿杰")
    group_badminton = await _seed(group, "群30071每周三晚上组织羽毛球活动。", speaker="10072", name="阿杰")
    async with app.test_api() as ctx:
        bot, qq = await _bot(ctx, monkeypatch)
        await deliver(bot, private_message("/memory user search 体检", 10071, "小林"))
        reply = qq.sent[-1]
        assert "与“体检”相关的记忆（2 条）" in reply
        assert f"#{checkup} " in reply and f"#{report} " in reply
        assert "羽毛球" not in reply and f"#{badminton} " not in reply and f"#{cat} " not in reply

        await deliver(bot, private_message("/memory user search 量子力学", 10071, "小林"))
        assert qq.sent[-1] == "没有找到与“量子力学”相关的记忆"

        await deliver(bot, group_message("/memory group search 羽毛球", 30071, 10073, "路人", to_me=False))
        reply = qq.sent[-1]
        assert f"#{group_badminton} " in reply and f"#{group_trip} " not in reply
        assert f"#{badminton} " not in reply  # a private memory never shows in a group
    assert not fake_openai.chat_requests  # commands never reach the model


async def test_search_floor_keeps_close_meanings_and_words(app: App) -> None:
    """Engine level: a match in meaning without a shared word is kept; a shared word is enough."""
    from amrita_plugin_cognition.domain.records import ChatContext
    from amrita_plugin_cognition.engine.search import search_memories

    me = Scope("private", "10075")
    cat = await _seed(me, "小周养了一只叫咪咪的橘猫。", speaker="10075", name="小周")
    await _seed(me, "小周在杭州一家互联网公司做后端开发。", speaker="10075", name="小周")
    engine = await _engine()
    context = ChatContext(BOT, me, "10075", "小周")
    found = await search_memories(engine, context, "猫", "user")
    assert [hit.record.id for hit in found.hits] == [cat]
    found = await search_memories(engine, context, "宠物", "user")  # no word in common with the cat
    assert [hit.record.id for hit in found.hits] == [cat]


async def test_private_list_shows_dates_and_chats(app: App, fake_openai, monkeypatch) -> None:
    from amrita_plugin_cognition.bot.commands_labels import GROUP_NAMES

    now = datetime.now(UTC)
    this_year = datetime(now.year, 1, 15, 4, 0, tzinfo=UTC)  # 12:00 in Shanghai: 01-15
    if this_year > now:  # pragma: no cover - the first half of 15 January
        this_year = now
    late_evening = datetime(2024, 11, 26, 20, 0, tzinfo=UTC)  # 2024-11-27 04:00 in Shanghai
    private = await _seed(
        Scope("private", "10076"), "小吴下个月搬家到滨江。", speaker="10076", name="小吴", happened_at=this_year
    )
    unnamed = await _seed(
        Scope("group", "30076"), "小吴在群里说他周末去钓鱼。", speaker="10076", name="小吴", happened_at=late_evening
    )
    named = await _seed(Scope("group", "30077"), "小吴是群30077的羽毛球队长。", speaker="10076", name="小吴")
    recorded = datetime.now(UTC).astimezone(timezone(timedelta(hours=8)))
    async with app.test_api() as ctx:
        bot, qq = await _bot(ctx, monkeypatch)
        asked = _group_names(bot, monkeypatch, {30077: "摸鱼小队"})
        await deliver(bot, private_message("/memory user list", 10076, "小吴"))
        lines = qq.sent[-1].splitlines()
        assert lines[0] == "我的记忆（第 1/1 页，共 3 条）"
        by_id = {line.split(" ")[0]: line for line in lines[1:]}
        local_this_year = this_year.astimezone(timezone(timedelta(hours=8))).strftime("%m-%d")
        assert by_id[f"#{private}"] == f"#{private} [{local_this_year} · 私聊] 小吴下个月搬家到滨江。"
        assert by_id[f"#{unnamed}"] == f"#{unnamed} [2024-11-27 · 群30076] 小吴在群里说他周末去钓鱼。"
        assert by_id[f"#{named}"] == f"#{named} [{recorded:%m-%d} · 摸鱼小队·30077] 小吴是群30077的羽毛球队长。"
        assert sorted(asked) == [30076, 30077]

        await deliver(bot, private_message("/memory user list", 10076, "小吴"))
        assert sorted(asked) == [30076, 30077]  # names (and the missing one) are cached

        await deliver(bot, group_message("/memory group list", 30077, 10078, "路人", to_me=False))
        assert qq.sent[-1].splitlines()[1] == f"#{named} [{recorded:%m-%d}] 小吴是群30077的羽毛球队长。"

        await deliver(bot, private_message("/memory user search 钓鱼", 10076, "小吴"))
        assert f"#{unnamed} [2024-11-27 · 群30076]" in qq.sent[-1]
    GROUP_NAMES.clear()


async def test_a_slow_group_name_never_holds_the_list(app: App, fake_openai, monkeypatch) -> None:
    from amrita_plugin_cognition.bot import commands_labels

    fact = await _seed(Scope("group", "30079"), "小郑在群里说下周去上海出差。", speaker="10079", name="小郑")
    monkeypatch.setattr(commands_labels, "LOOKUP_SECONDS", 0.3)
    async with app.test_api() as ctx:
        bot, qq = await _bot(ctx, monkeypatch)
        _group_names(bot, monkeypatch, {30079: "出差群"}, slow={30079: 3.0})
        started = time.perf_counter()
        await deliver(bot, private_message("/memory user list", 10079, "小郑"))
        assert time.perf_counter() - started < 2.5  # waited 0.3 s for the name, not 3 s
        assert f"#{fact} [" in qq.sent[-1] and "· 群30079]" in qq.sent[-1]
        pending = list(commands_labels.GROUP_NAMES._pending.values())
        await asyncio.gather(*pending)  # the lookup went on in the background …
        await deliver(bot, private_message("/memory user list", 10079, "小郑"))
        assert "· 出差群·30079]" in qq.sent[-1]  # … and serves the next reply
    commands_labels.GROUP_NAMES.clear()


async def test_memory_alone_answers_with_usage(app: App, fake_openai, monkeypatch) -> None:
    async with app.test_api() as ctx:
        bot, qq = await _bot(ctx, monkeypatch)
        await deliver(bot, private_message("/memory", 10080, "小钱"))
        assert qq.sent[-1].startswith("记忆命令用法")
        for subcommand in ("/memory user list", "/memory user search", "/memory group delete", "/memory memo"):
            assert subcommand in qq.sent[-1]
        await deliver(bot, group_message("/cogmem", 30080, 10080, "小钱", to_me=False))
        assert qq.sent[-1].startswith("记忆命令用法")
        await deliver(bot, private_message("/memory user", 10080, "小钱"))
        assert qq.sent[-1].startswith("记忆命令用法")
        await deliver(bot, private_message("/memory 列表", 10080, "小钱"))
        assert qq.sent[-1].startswith("不认识的子命令“列表”") and "/memory user list" in qq.sent[-1]
        await deliver(bot, private_message("/memory user explain", 10080, "小钱"))
        assert qq.sent[-1].startswith("请在 /memory user 后写 list、search、show、delete 或 clear")

        # the usage needs neither the engine nor the QQ side: it answers while memory is down
        from amrita_plugin_cognition.bot import commands
        from amrita_plugin_cognition.errors import EngineUnavailable

        async def down() -> None:
            raise EngineUnavailable("测试")

        monkeypatch.setattr(commands, "get_engine", down)
        await deliver(bot, private_message("/memory", 10080, "小钱"))
        assert qq.sent[-1].startswith("记忆命令用法")
        await deliver(bot, private_message("/memory user list", 10080, "小钱"))
        assert qq.sent[-1] == "记忆功能暂不可用：测试"
    assert not fake_openai.chat_requests


async def test_commands_are_in_amritas_menu(app: App) -> None:
    from amrita.plugins.menu.models import MatcherData, PluginData
    from amrita.plugins.menu.utils import generate_menu
    from nonebot import get_plugin

    plugin = get_plugin("amrita_plugin_cognition")
    assert plugin is not None and plugin.metadata is not None
    entries = [MatcherData.model_validate(m._default_state) for m in plugin.matcher if m._default_state]
    assert {entry.name for entry in entries} >= {"长期记忆", "cogmem"}
    pages = await generate_menu(
        [PluginData(matchers=entries, metadata=plugin.metadata)], event=private_message("/menu", 10081)
    )
    assert plugin.metadata.name in pages[0]
    assert "长期记忆" in pages[1] and "/memory user list" in pages[1] and "cognition.admin" in pages[1]


async def test_who_may_delete_a_group_memory(app: App, fake_openai, monkeypatch, caplog) -> None:
    group = Scope("group", "30082")
    first = await _seed(group, "群30082每周五晚上八点开黑。", speaker="10082", name="阿宁")
    second = await _seed(group, "群30082的群规第一条是不许刷屏。", speaker="10082", name="阿宁")
    third = await _seed(group, "群30082下个月组织线下聚餐。", speaker="10082", name="阿宁")
    await grant_node("10085", "cognition.admin")
    async with app.test_api() as ctx:
        bot, qq = await _bot(ctx, monkeypatch)
        await deliver(bot, group_message(f"/memory group delete {first}", 30082, 10083, "成员", to_me=False))
        assert "管理员" in qq.sent[-1] and "已删除" not in qq.sent[-1]
        await deliver(
            bot, group_message(f"/memory group delete {first}", 30082, 10084, "群管", role="admin", to_me=False)
        )
        assert "确认" in qq.sent[-1]
        await deliver(bot, group_message("确认", 30082, 10084, "群管", role="admin", to_me=False))
        assert qq.sent[-1] == f"已删除记忆 #{first}，之后不会再被记起"
        await deliver(bot, group_message(f"/memory group delete {second}", 30082, 10085, "记忆管理员", to_me=False))
        await deliver(bot, group_message("确认", 30082, 10085, "记忆管理员", to_me=False))
        assert qq.sent[-1] == f"已删除记忆 #{second}，之后不会再被记起"

        # the same node lets its holder replace the group's memo (a plain member may not)
        fake_openai.script.append(tool_call("cognition_memo_update", {"content": "本群每周五开黑。"}, "call_x"))
        await deliver(bot, group_message("把备忘录改成每周五开黑", 30082, 10083, "成员"))
        assert tool_results(fake_openai.chat_requests[-1])[-1]["ok"] is False
        fake_openai.reset()
        fake_openai.script.append(tool_call("cognition_memo_update", {"content": "本群每周五开黑。"}, "call_y"))
        await deliver(bot, group_message("把备忘录改成每周五开黑", 30082, 10085, "记忆管理员"))
        assert tool_results(fake_openai.chat_requests[-1])[-1]["ok"] is True  # earlier turns' results come first

        # LitePerm switched off: the node is not checked (one warning), group roles still are
        from amrita.plugins.perm.config import DataManager

        from amrita_plugin_cognition.bot import context as permission_context

        monkeypatch.setattr(DataManager().config, "enable", False)
        monkeypatch.setattr(permission_context, "_perm_warned", False)
        with caplog.at_level(logging.WARNING, logger="cognition"):
            for _ in range(2):
                await deliver(
                    bot, group_message(f"/memory group delete {third}", 30082, 10085, "记忆管理员", to_me=False)
                )
                assert "管理员" in qq.sent[-1] and "已删除" not in qq.sent[-1]
        warnings = [record for record in caplog.records if "liteperm_unavailable" in record.getMessage()]
        assert len(warnings) == 1
        await deliver(
            bot, group_message(f"/memory group delete {third}", 30082, 10086, "群主", role="owner", to_me=False)
        )
        await deliver(bot, group_message("确认", 30082, 10086, "群主", role="owner", to_me=False))
        assert qq.sent[-1] == f"已删除记忆 #{third}，之后不会再被记起"
