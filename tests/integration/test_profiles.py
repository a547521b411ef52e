"""Profile cards: the document format, validation, saving with revisions, restore, export, and
erasure. Real SQL (SQLite, or PostgreSQL with ``COGNITION_TEST_BACKEND=server``); nothing mocked."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from engine_helpers import NOW, make_engine, new_bot
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from amrita_plugin_cognition.domain.clock import UTC
from amrita_plugin_cognition.domain.erasure import ErasureTarget
from amrita_plugin_cognition.domain.events import ProfilesChanged
from amrita_plugin_cognition.domain.permissions import Operator
from amrita_plugin_cognition.domain.profile_document import parse_document, render_document
from amrita_plugin_cognition.domain.profiles import Card, CardLimits, export_path, validate_card
from amrita_plugin_cognition.domain.records import ChatContext, Scope
from amrita_plugin_cognition.engine import erasure, inspection, profiles
from amrita_plugin_cognition.errors import InvalidInput, LimitExceeded, NotFound

U, V = "10001", "10002"
ROOMY = CardLimits(evaluation=10_000, body=10_000, roast=10_000)


def card(bot: str, entity_type: str = "user", entity_id: str = U, part: str = "group", **fields) -> Card:  # type: ignore[no-untyped-def]
    values = {"evaluation": "爱打羽毛球的程序员。", "body": "住在杭州。\n周六打球。", "roast": "球比代码写得好。"}
    return Card(bot, entity_type, entity_id, part, **{"updated_at": NOW, **values, **fields})


# ---------------------------------------------------------------------------- the document

#: Lines that look like separators, escaped ones, meta-like and ordinary text.
TRICKY_LINES = [
    "---",
    "--- ",
    "---\t",
    "\\---",
    "\\\\---  ",
    "----",
    "- a",
    "key: value",
    "# 注释",
    "",
    "  缩进",
    "小明",
]
section_text = st.one_of(st.text(max_size=60), st.lists(st.sampled_from(TRICKY_LINES), max_size=6).map("\n".join))
moments = st.datetimes(
    min_value=datetime(2000, 1, 1),
    max_value=datetime(2100, 1, 1),
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=8))]),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    entity=st.sampled_from([("user", "group"), ("user", "private"), ("group", "group")]),
    entity_id=st.from_regex(r"[1-9][0-9]{4,11}", fullmatch=True),
    name=st.text(max_size=20),
    tags=st.lists(st.text(max_size=8), max_size=5),
    evaluation=section_text,
    body=section_text,
    roast=section_text,
    updated_at=moments,
    source_ids=st.lists(st.integers(min_value=1, max_value=10**12), max_size=8),
)
def test_a_valid_card_survives_its_document(  # type: ignore[no-untyped-def]
    entity, entity_id, name, tags, evaluation, body, roast, updated_at, source_ids
) -> None:
    entity_type, part = entity
    raw = Card("90001", entity_type, entity_id, part, name, tags, evaluation, body, roast, updated_at, source_ids)
    try:
        valid = validate_card(raw, ROOMY)
    except LimitExceeded:
        assume(False)
        return
    except InvalidInput as error:
        assert "不能全部为空" in error.zh
        assume(False)
        return
    document = render_document(valid)
    assert parse_document(document) == valid
    assert parse_document(document.replace("\n", "\r\n")) == valid  # a file saved on Windows too
    assert document.count("\n---\n") + document.startswith("---\n") == 4  # escaped lines never split


def test_the_document_is_front_matter_json_literals_and_three_sections() -> None:
    document = render_document(card("90001", tags=["羽毛球", "猫"], source_ids=[3, 7], name="小明\n（换行）"))
    assert document.splitlines()[:10] == [
        "---",
        'bot_id: "90001"',
        'entity_type: "user"',
        'entity_id: "10001"',
        'part: "group"',
        'name: "小明\\n（换行）"',
        'tags: ["羽毛球", "猫"]',
        'updated_at: "2026-11-30T12:00:00+00:00"',
        "source_ids: [3, 7]",
        "---",
    ]
    assert document.endswith("爱打羽毛球的程序员。\n---\n住在杭州。\n周六打球。\n---\n球比代码写得好。\n")
    escaped = render_document(card("90001", body="上半\n---\n下半"))
    assert "\n\\---\n" in escaped and parse_document(escaped).body == "上半\n---\n下半"


def test_a_hand_edited_document_parses() -> None:
    text = (
        "# 手写的画像\r\n"
        "bot_id: 90001\r\n"
        "entity_type: group   # 群\r\n"
        "entity_id: 20001\r\n"
        "name: '周末''羽毛球'群'\r\n"
        "tags:\r\n  - 运动\r\n  - 杭州\r\n"
        "updated_at: 2026-11-30T12:00:00Z\r\n"
        "source_ids: [1, 2]\r\n"
        "---\r\n\r\n群里周末约球。\r\n\r\n---\r\n---\r\n都是嘴强王者。\r\n"
    )
    parsed = parse_document(text)
    assert parsed == Card(
        "90001", "group", "20001", "group", "周末'羽毛球'群", ["运动", "杭州"], "群里周末约球。", "", "都是嘴强王者。",
        NOW, [1, 2],
    )  # fmt: skip
    flow = "---\nbot_id: 1\nentity_type: user\nentity_id: 2\npart: private\nupdated_at: 2026-11-30 12:00\n"
    assert parse_document(flow + "tags: [a, b]\n---\n评价\n---\n---\n").tags == ["a", "b"]


#: A group's meta (its parts follow ``REST``): each case below changes one thing.
GROUP_META = "bot_id: 1\nentity_type: group\nentity_id: 2\nupdated_at: 2026-11-30\n"
REST = "---\na\n---\nb\n---\nc"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (GROUP_META.replace("group", "user") + REST, "必须写明 part"),
        (GROUP_META + "age: 3\n" + REST, "未知的元数据键 age"),
        (GROUP_META + REST + "\n---\nd", "读到 5 部分"),
        (GROUP_META + "---\na\n---\nb", "读到 3 部分"),
        (GROUP_META.replace("entity_id: 2", "entity_id: 二") + REST, "纯数字"),
        (GROUP_META + "part: private\n" + REST, "只有 group"),
        (GROUP_META.replace("group", "team") + REST, "user（用户）或 group"),
        (GROUP_META.replace("2026-11-30", "昨天") + REST, "ISO 8601"),
        ("bot_id: 2\n" + GROUP_META + REST, "两次"),
        (GROUP_META.replace("bot_id: 1\n", "") + REST, "缺少元数据 bot_id"),
        (GROUP_META + 'source_ids: ["x"]\n' + REST, "记忆编号"),
    ],
)
def test_a_malformed_document_is_refused_in_chinese(text: str, message: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_document(text)
    assert message in caught.value.zh


def test_validation_normalises_and_refuses_in_one_place() -> None:
    limits = CardLimits(evaluation=10, body=20, roast=5)
    valid = validate_card(
        card("90001", name=" 小\n明 ", tags=[" 羽毛 球 ", "", "羽毛 球"], evaluation=" 短评\r\n ", body="a", roast="",
             source_ids=[3, 3, 1], updated_at=datetime(2026, 11, 30, 20, tzinfo=timezone(timedelta(hours=8)))),
        limits,
    )  # fmt: skip
    assert (valid.name, valid.tags, valid.evaluation, valid.source_ids) == ("小 明", ["羽毛 球"], "短评", [3, 1])
    assert valid.updated_at == NOW and valid.updated_at.tzinfo == UTC
    with pytest.raises(LimitExceeded, match="评价 11 字，超过上限 10 字"):
        validate_card(card("90001", evaluation="长" * 11), limits)
    with pytest.raises(LimitExceeded, match="吐槽 6 字"):
        validate_card(card("90001", evaluation="", roast="毒" * 6), limits)
    with pytest.raises(InvalidInput, match="不能全部为空"):
        validate_card(card("90001", evaluation=" ", body="\n", roast=""), limits)
    with pytest.raises(InvalidInput, match="纯数字"):
        validate_card(card("90001", entity_id="xiaoming", evaluation="a", body="", roast=""), limits)
    with pytest.raises(InvalidInput, match="只有 group"):
        validate_card(card("90001", entity_type="group", part="private", body="", roast=""), ROOMY)
    with pytest.raises(InvalidInput, match="时区"):
        validate_card(card("90001", updated_at=datetime(2026, 11, 30)), ROOMY)
    with pytest.raises(InvalidInput, match="机器人账号"):
        validate_card(card("../x"), ROOMY)
    with pytest.raises(LimitExceeded, match="标签"):
        validate_card(card("90001", tags=[str(number) for number in range(17)]), ROOMY)


def test_the_export_layout_is_the_seeds_one_folder_per_bot() -> None:
    assert export_path(card("90001")) == "90001/profiles/users/10001.md"
    assert export_path(card("90001", part="private")) == "90001/profiles/users/10001.private.md"
    assert export_path(card("90001", "group", "20001")) == "90001/profiles/groups/20001.md"


# ---------------------------------------------------------------------------- the engine


async def test_saving_keeps_the_replaced_versions_up_to_revisions_keep(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port, profiles={"revisions_keep": 2, "roast_max_chars": 10})
    bot = new_bot()
    seen: list[object] = []
    handlers = engine._after_commit
    engine._after_commit = lambda events: (seen.extend(events), handlers(events))  # type: ignore[method-assign]

    first = await profiles.save(engine, card(bot, evaluation="v1"), by="historian", now=NOW)
    assert first.changed and first.revision_id is None
    for version in (2, 3, 4):
        saved = await profiles.save(engine, card(bot, evaluation=f"v{version}"), now=NOW + timedelta(hours=version))
        assert saved.changed and saved.revision_id is not None
    again = await profiles.save(engine, card(bot, evaluation="v4", updated_at=NOW), now=NOW + timedelta(days=1))
    assert not again.changed and again.card.updated_at == NOW + timedelta(hours=4)  # nothing written

    current = await profiles.get(engine, bot, "user", U)
    assert current is not None and current.evaluation == "v4" and current.updated_at == NOW + timedelta(hours=4)
    kept = await profiles.revisions(engine, bot, "user", U)
    assert [item.card.evaluation for item in kept] == ["v3", "v2"]  # v1 pruned
    assert kept[0].card.updated_at == NOW + timedelta(hours=3) and kept[0].replaced_at == NOW + timedelta(hours=4)
    assert kept[-1].written_by == "historian" and kept[-1].replaced_by == "historian"
    assert seen.count(ProfilesChanged(bot, "user", U)) == 4
    with pytest.raises(LimitExceeded, match="吐槽 11 字"):
        await profiles.save(engine, card(bot, roast="毒" * 11), now=NOW)
    with pytest.raises(InvalidInput, match="不能全部为空"):
        await profiles.save(engine, card(bot, evaluation="", body="", roast=""), now=NOW)
    assert (await profiles.get(engine, bot, "user", U)) == current  # refusals leave the card as it was


async def test_a_users_parts_are_separate_and_bots_are_isolated(tmp_root, chroma_port, capsys) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot, other = new_bot(), new_bot()
    await profiles.save(engine, card(bot, evaluation="群里的他"), now=NOW)
    await profiles.save(engine, card(bot, part="private", evaluation="私聊里的他"), now=NOW)
    await profiles.save(engine, card(bot, part="group:20001", evaluation="20001 群里的他"), now=NOW)
    await profiles.save(engine, card(bot, "group", "20001", evaluation="周末约球的群"), now=NOW)
    await profiles.save(engine, card(bot, "group", "20001", evaluation="周末约球、爱吐槽的群"), now=NOW)
    await profiles.save(engine, card(other, evaluation="另一个机器人认识的他"), now=NOW)

    parts = await profiles.get_parts(engine, bot, "user", U)
    assert [(part.part, part.evaluation) for part in parts] == [
        ("group", "群里的他"), ("group:20001", "20001 群里的他"), ("private", "私聊里的他")
    ]  # fmt: skip
    assert (await profiles.get(engine, bot, "user", U, "group")) == parts[0]
    assert await profiles.get_parts(engine, bot, "user", U, ["group:20002", "private", "group:20001"]) == [
        parts[2],
        parts[1],
    ]  # fmt: skip  (the parts asked for that exist, in the order asked)
    assert parts[1].label == "用户 10001 在群 20001 的画像"
    assert (await profiles.get(engine, bot, "user", V)) is None
    assert [card.part for card in await profiles.get_parts(engine, bot, "group", "20001")] == ["group"]
    for wrong in ("private", "group:20001"):
        with pytest.raises(InvalidInput):
            await profiles.get(engine, bot, "group", "20001", wrong)
    for wrong in ("group:", "group:abc", "群:20001", "group:" + "1" * 21):
        with pytest.raises(InvalidInput):
            await profiles.get(engine, bot, "user", U, wrong)

    listed, total = await profiles.list_cards(engine, profiles.ProfileFilter(bot_id=bot))
    assert total == 4 and {(item.card.entity_type, item.card.part) for item in listed} == {
        ("user", "group"), ("user", "private"), ("user", "group:20001"), ("group", "group")
    }  # fmt: skip
    assert {item.card.entity_id: item.revisions for item in listed if item.card.entity_type == "group"} == {"20001": 1}
    privates, count = await profiles.list_cards(engine, profiles.ProfileFilter(bot_id=bot, part="private"))
    assert count == 1 and privates[0].card.evaluation == "私聊里的他"
    in_group, count = await profiles.list_cards(engine, profiles.ProfileFilter(bot_id=bot, part="group:20001"))
    assert count == 1 and in_group[0].card.evaluation == "20001 群里的他"

    from amrita_plugin_cognition.cli import render_profiles
    from amrita_plugin_cognition.cli.profile_commands import listing

    report = listing(listed, total)
    assert json.loads(json.dumps(report, ensure_ascii=False))["total"] == 4  # --json prints it as is
    render_profiles.card_list(report)
    render_profiles.shown({"cards": [{"document": render_document(card)} for card in parts]})
    out = capsys.readouterr().out
    assert "群内可见" in out and "仅私聊" in out and "仅群 20001 可见" in out and "共 4 张" in out
    assert "周末约球、爱吐槽的群" in out
    documents = out[out.index("---\nbot_id") :]
    assert [parse_document(text) for text in _split_documents(documents)] == parts


def _split_documents(text: str) -> list[str]:
    """Documents printed one after another: each starts with its front matter line and bot_id."""
    starts = [index for index in range(len(text)) if text.startswith("---\nbot_id", index)]
    return [text[start:end] for start, end in zip(starts, [*starts[1:], len(text)], strict=True)]


async def test_restore_snapshots_the_current_version_so_it_can_be_undone(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port, profiles={"revisions_keep": 0})
    bot = new_bot()
    await profiles.save(engine, card(bot, evaluation="v1"), now=NOW)
    # revisions_keep = 0 keeps nothing on a save ...
    await profiles.save(engine, card(bot, evaluation="v2"), now=NOW + timedelta(hours=1))
    assert await profiles.revisions(engine, bot, "user", U) == []
    engine.config = engine.config.model_copy(
        update={"profiles": engine.config.profiles.model_copy(update={"revisions_keep": 5})}
    )
    await profiles.save(engine, card(bot, evaluation="v3"), now=NOW + timedelta(hours=2))
    (v2,) = await profiles.revisions(engine, bot, "user", U)

    restored = await profiles.restore(engine, bot, "user", U, v2.id, by="cli", now=NOW + timedelta(hours=3))
    assert restored.changed and restored.revision_id is not None
    current = await profiles.get(engine, bot, "user", U)
    assert current is not None and current.evaluation == "v2" and current.updated_at == NOW + timedelta(hours=3)
    undo = await profiles.restore(engine, bot, "user", U, restored.revision_id, now=NOW + timedelta(hours=4))
    assert undo.changed
    current = await profiles.get(engine, bot, "user", U)
    assert current is not None and current.evaluation == "v3"
    assert [item.card.evaluation for item in await profiles.revisions(engine, bot, "user", U)] == ["v2", "v3", "v2"]
    assert (await profiles.revision(engine, bot, "user", U, v2.id)).card.evaluation == "v2"

    with pytest.raises(NotFound, match="没有编号为"):
        await profiles.restore(engine, bot, "user", U, v2.id, part="private")
    with pytest.raises(NotFound):
        await profiles.restore(engine, bot, "user", V, v2.id)  # another user's card has no such version
    with pytest.raises(NotFound):
        await profiles.revision(engine, new_bot(), "user", U, v2.id)
    # keeping none again prunes what was kept
    engine.config = engine.config.model_copy(
        update={"profiles": engine.config.profiles.model_copy(update={"revisions_keep": 0})}
    )
    await profiles.save(engine, card(bot, evaluation="v4"), now=NOW + timedelta(hours=5))
    assert await profiles.revisions(engine, bot, "user", U) == []


async def test_concurrent_saves_of_one_card_never_lose_a_version(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    await profiles.save(engine, card(bot, evaluation="原来的"), now=NOW)
    results = await asyncio.gather(
        *[profiles.save(engine, card(bot, evaluation=f"并发{index}"), now=NOW) for index in range(4)]
    )
    assert all(result.changed for result in results)
    current = await profiles.get(engine, bot, "user", U)
    kept = [item.card.evaluation for item in await profiles.revisions(engine, bot, "user", U)]
    assert current is not None
    assert sorted([current.evaluation, *kept]) == sorted(["原来的", "并发0", "并发1", "并发2", "并发3"])


async def test_export_writes_the_seed_layout_and_documents_that_parse_back(tmp_root, chroma_port, tmp_path) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot, other = new_bot(), new_bot()
    stored = [
        (await profiles.save(engine, card(bot), now=NOW)).card,
        (await profiles.save(engine, card(bot, part="private", body="私聊里说的\n---\n分隔线"), now=NOW)).card,
        (await profiles.save(engine, card(bot, "group", "20001", tags=["羽毛球"]), now=NOW)).card,
        (await profiles.save(engine, card(bot, part="group:20001", evaluation="在 20001 的他"), now=NOW)).card,
    ]
    await profiles.save(engine, card(other), now=NOW)

    report = await profiles.export(engine, tmp_path, bot)
    assert sorted(report.files) == [
        f"{bot}/profiles/groups/20001.md",
        f"{bot}/profiles/users/{U}.group-20001.md",
        f"{bot}/profiles/users/{U}.md",
        f"{bot}/profiles/users/{U}.private.md",
    ]
    for expected in stored:
        assert parse_document((tmp_path / export_path(expected)).read_text(encoding="utf-8")) == expected
    assert not (tmp_path / other).exists()
    everything = await profiles.export(engine, tmp_path / "all")
    assert f"{other}/profiles/users/{U}.md" in everything.files and len(everything.files) >= 4


async def test_delete_all_takes_the_cards_it_covers_and_export_lists_them(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot, other = new_bot(), new_bot()
    await profiles.save(engine, card(bot, evaluation="他在群里"), now=NOW)
    await profiles.save(engine, card(bot, part="private", evaluation="他在私聊"), now=NOW)
    await profiles.save(engine, card(bot, part="private", evaluation="他在私聊，后来"), now=NOW)  # one revision
    await profiles.save(engine, card(bot, entity_id=V, evaluation="和 QQ号10001 是好友"), now=NOW)  # names him
    await profiles.save(engine, card(bot, entity_id="10003", evaluation="QQ号100012 的同事"), now=NOW)  # not him
    await profiles.save(engine, card(bot, entity_id="10004", evaluation="曾提到 10001"), now=NOW)
    await profiles.save(engine, card(bot, entity_id="10004", evaluation="后来不提了"), now=NOW)  # revision names him
    await profiles.save(engine, card(bot, "group", "20001", evaluation="群"), now=NOW)
    await profiles.save(engine, card(bot, entity_id=V, part="group:20001", evaluation="在 20001 群里"), now=NOW)
    await profiles.save(engine, card(bot, entity_id=V, part="group:20002", evaluation="在 20002 群里"), now=NOW)
    await profiles.save(engine, card(other, evaluation="另一个账号的他"), now=NOW)

    documents = await inspection.export_user(engine, U, now=NOW)  # every bot account: other tests' ones too
    exported = [
        (doc["bot_id"], doc["entity_id"], doc["part"])
        for doc in documents
        if doc["type"] == "profile" and doc["bot_id"] in (bot, other)
    ]
    assert sorted(exported) == sorted([(bot, U, "group"), (bot, U, "private"), (bot, V, "group"), (other, U, "group")])

    private_chat = await erasure.delete_all(
        engine, ErasureTarget.chat(bot, Scope("private", U)), actor=Operator(), now=NOW
    )
    assert private_chat.counts["profiles"] == 1
    assert [part.part for part in await profiles.get_parts(engine, bot, "user", U)] == ["group"]
    assert await profiles.revisions(engine, bot, "user", U, "private") == []

    user = await erasure.delete_all(engine, ErasureTarget.user(bot, U), actor=Operator(), now=NOW)
    assert user.counts["profiles"] == 2  # his group part and the card that names him
    assert (await profiles.get(engine, bot, "user", U)) is None
    friend = await profiles.get(engine, bot, "user", V)  # the sentence naming him is cut, the rest stays
    assert friend is not None and friend.evaluation == "" and U not in friend.body + friend.roast
    assert (await profiles.get(engine, bot, "user", "10003")) is not None
    assert (await profiles.get(engine, bot, "user", "10004")) is not None
    assert await profiles.revisions(engine, bot, "user", "10004") == []  # the version that named him
    assert (await profiles.get(engine, other, "user", U)) is not None

    # a group chat takes its card and every user's part in it, built from its facts only
    chat = await erasure.delete_all(engine, ErasureTarget.chat(bot, Scope("group", "20001")), actor=Operator(), now=NOW)
    assert chat.counts["profiles"] == 2 and (await profiles.get(engine, bot, "group", "20001")) is None
    assert (await profiles.get(engine, bot, "user", V, "group:20001")) is None
    assert (await profiles.get(engine, bot, "user", V, "group:20002")) is not None
    whole = await erasure.delete_all(engine, ErasureTarget.bot(bot), actor=Operator(), now=NOW)
    assert whole.counts["profiles"] == 4  # 10002 (cut, not deleted) and his part in 20002, 10003, 10004
    assert (await profiles.list_cards(engine, profiles.ProfileFilter(bot_id=bot)))[1] == 0
    assert (await profiles.get(engine, other, "user", U)) is not None


# ---------------------------------------------------------------------------- the command line


async def _seed_home(database: Path, bot: str) -> None:
    from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

    from amrita_plugin_cognition.store import profiles as store

    sql = create_async_engine(f"sqlite+aiosqlite:///{database}")
    try:
        async with async_sessionmaker(sql, expire_on_commit=False)() as session:
            seeded = (card(bot), card(bot, part="private"), card(bot, "group", "20001"), card(bot, part="group:20001"))
            for value in seeded:
                await store.write_card(session, validate_card(value, ROOMY), "historian", NOW, 5)
            await session.commit()
    finally:
        await sql.dispose()


@pytest.mark.slow  # starts another process: runs with tests/e2e (-m slow)
@pytest.mark.embedded_only
def test_the_cli_shows_and_exports_cards(tmp_path: Path) -> None:
    from processes import one_line_error, run_cli

    home, output = tmp_path / "home", tmp_path / "out"
    missing = run_cli("profile", "show", "90001", "user", U, "--home", str(home))
    assert missing.returncode == 1, missing.stderr[-2000:]
    assert "用户 10001 的画像不存在" in one_line_error(missing)
    asyncio.run(_seed_home(home / "cognition.sqlite3", "90001"))

    exported = run_cli("profile", "export", "--home", str(home), "--output", str(output))
    assert exported.returncode == 0, exported.stderr[-2000:]
    assert "已导出 4 份画像" in exported.stdout and "私聊部分 1 份" in exported.stdout
    assert "用户在某个群的部分 1 份" in exported.stdout
    users = output / "90001" / "profiles" / "users"
    assert sorted(path.name for path in users.iterdir()) == [f"{U}.group-20001.md", f"{U}.md", f"{U}.private.md"]
    group_card = parse_document((output / "90001" / "profiles" / "groups" / "20001.md").read_text(encoding="utf-8"))
    assert group_card == validate_card(card("90001", "group", "20001"), ROOMY)
    in_group = parse_document((users / f"{U}.group-20001.md").read_text(encoding="utf-8"))
    assert in_group == validate_card(card("90001", part="group:20001"), ROOMY)

    shown = run_cli("profile", "show", "90001", "user", U, "--part", "group:20001", "--home", str(home))
    assert shown.returncode == 0, shown.stderr[-2000:]
    (document,) = json.loads(shown.stdout)["cards"]
    assert parse_document(document["document"]) == in_group and document["part"] == "group:20001"
    bad = run_cli("profile", "show", "90001", "user", U, "--part", "group:abc", "--home", str(home))
    assert bad.returncode == 2 and "group:群号" in bad.stderr


# ---------------------------------------------------------------------------- backup


async def test_a_backup_restores_a_users_part_in_each_group_under_its_own_name(tmp_root, chroma_port) -> None:
    """The per-group parts survive a backup and a restore with their key; one whose source was
    forgotten since is restored without it and its rebuild asked for under the same name."""
    from amrita_plugin_cognition.engine import backup
    from amrita_plugin_cognition.engine.profile_queue import MERGE_JOB, payload_of, rebuild_parts
    from amrita_plugin_cognition.store import jobs

    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    in_a = ChatContext(bot, Scope("group", "20001"), U, "小明")
    kept = await engine.memories.write(in_a, "user", "群友小明喜欢打羽毛球。", now=NOW)
    doomed = await engine.memories.write(in_a, "user", "群友小明下周二去面试。", now=NOW)
    part_a = (await profiles.save(engine, card(bot, part="group:20001", source_ids=[kept.id, doomed.id]), now=NOW)).card
    part_b = (await profiles.save(engine, card(bot, part="group:20002", evaluation="二群里的他"), now=NOW)).card
    info = await backup.create_backup(engine)
    await engine.governance.forget(in_a, doomed.id, now=NOW)
    await profiles.clear(engine, part_b)
    async with engine.unit_of_work() as uow:  # the forget's own rebuild: not what is looked at here
        forget_job = await jobs.pending_of(uow.session, MERGE_JOB, bot, Scope("private", U))
        assert forget_job is not None and await jobs.drop(uow.session, [forget_job.id], None) == 1
        await uow.commit()

    await backup.restore_backup(engine, info.path)
    restored = await profiles.get_parts(engine, bot, "user", U)
    assert [(item.part, item.source_ids) for item in restored] == [("group:20001", [kept.id]), ("group:20002", [])]
    assert restored[0].body == part_a.body and restored[1] == part_b
    async with engine.unit_of_work() as uow:
        pending = await jobs.pending_of(uow.session, MERGE_JOB, bot, Scope("private", U))
        assert pending is not None and rebuild_parts(payload_of(pending.payload)) == ["group:20001"]
