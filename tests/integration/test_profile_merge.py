"""The historian's merge step against the fake model: jobs for one card within the window become
one merge, the entity is the job's whatever the model writes, bad answers (another entity, an
empty card, a section over its limit, malformed output, a credential) get one more call and then
leave the current card as it was, a ``skip`` ends the job, the group-visible part never sees a
private fact, opted-out users get no merge, and merges of one card never interleave."""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta
from typing import Any

import pytest
from engine_helpers import NOW, group, historian_llm, jobs_left, make_engine, new_bot, private, register_preset
from fake_openai import FakeOpenAI, tool_call
from sqlalchemy import select

from amrita_plugin_cognition.domain import profile_policy
from amrita_plugin_cognition.domain.permissions import Operator
from amrita_plugin_cognition.domain.profiles import Card
from amrita_plugin_cognition.domain.records import Importance, MemoryDraft, MemoryRecord, MemoryStatus, Scope
from amrita_plugin_cognition.engine import profile_merge, profile_queue, profiles
from amrita_plugin_cognition.engine.historian import TOOL_NAME as HISTORIAN_TOOL
from amrita_plugin_cognition.engine.profile_prompt import TOOL_NAME
from amrita_plugin_cognition.engine.profile_queue import MERGE_JOB
from amrita_plugin_cognition.engine.switches import set_opt_out
from amrita_plugin_cognition.store import jobs
from amrita_plugin_cognition.store.models import JobRow, MemoryRow

PRESET = "cognition-historian-test"
LLM = historian_llm(PRESET)
WINDOW = 120
LATER = NOW + timedelta(seconds=WINDOW + 1)
_OBSERVATION = re.compile(r"\[观察#(\d+)\] [^：\n]*：(.+)")
_ENTITY = re.compile(r"entity_type=(\w+)，entity_id=(\d+)，部分=(\w+)")


#: The job queue and the transcript are one table each for every bot: empty before and after.
pytestmark = pytest.mark.usefixtures("clean_job_queue")


def user_prompt(body: dict[str, Any]) -> str:
    return "\n".join(str(message.get("content")) for message in body["messages"] if message["role"] == "user")


def tool_of(body: dict[str, Any]) -> str:
    return next((tool["function"]["name"] for tool in body.get("tools", [])), "")


def section(prompt: str, title: str) -> list[str]:
    """The ``- `` lines of a prompt's 【title】 section."""
    lines: list[str] = []
    inside = False
    for line in prompt.splitlines():
        if line.startswith("【"):
            inside = line.startswith(f"【{title}】")
            continue
        if inside and line.startswith("- "):
            lines.append(line[2:])
    return lines


def echo_card(request: dict[str, Any], /, **overrides: Any) -> dict[str, Any]:
    """A well-behaved merge: the card's entity as given, its old body plus every fact shown."""
    prompt = user_prompt(request)
    entity_type, entity_id, _part = _ENTITY.search(prompt).groups()  # type: ignore[union-attr]
    old = re.search(r"正文：\n(.*?)\n吐槽：", prompt, re.S)
    lines = [line for line in (old.group(1).splitlines() if old else []) if line and line != "（空）"]
    past = [re.sub(r"^\[\d+\] [^：]*：", "", line) for line in section(prompt, "相关的历史记忆")]
    for text in [*section(prompt, "新的观察"), *past]:
        if text not in lines:
            lines.append(text)
    arguments = {
        "action": "update_profile",
        "entity_type": entity_type,
        "entity_id": entity_id,
        "name": "",
        "tags": ["测试"],
        "evaluation": f"{entity_id}是个普通人",
        "body": "\n".join(lines),
        "roast": "话不多，事不少",
        **overrides,
    }
    return tool_call(TOOL_NAME, arguments)


def historian_echo(body: dict[str, Any]) -> dict[str, Any]:
    """The historian writes each observation as its fact (the tests' observations are absolute)."""
    facts = [
        {"text": text.strip(), "sources": [int(number)], "kind": "fact"}
        for number, text in _OBSERVATION.findall(user_prompt(body))
    ]
    return tool_call(HISTORIAN_TOOL, {"facts": facts})


class Model:
    """The fake model as the tests drive it: the historian echoes, merges follow ``merges`` (one
    function per merge request, in order; then ``echo_card``)."""

    def __init__(self, fake: FakeOpenAI) -> None:
        self.fake = fake
        self.merges: list[Any] = []
        fake.responder = self.respond

    def respond(self, body: dict[str, Any]) -> dict[str, Any] | None:
        tool = tool_of(body)
        if tool == HISTORIAN_TOOL:
            return historian_echo(body)
        if tool == TOOL_NAME:
            answer = self.merges.pop(0) if self.merges else echo_card
            return answer(body) if callable(answer) else answer
        return None

    def merge_requests(self) -> list[dict[str, Any]]:
        return [body for body in self.fake.chat_requests if tool_of(body) == TOOL_NAME]


@pytest.fixture
def model(fake_openai: FakeOpenAI) -> Model:
    register_preset(PRESET, fake_openai.base_url)
    return Model(fake_openai)


async def merge_engine(tmp_root, chroma_port, **profiles_settings: Any):  # type: ignore[no-untyped-def]
    settings = {"merge": True, "merge_window_seconds": WINDOW, **profiles_settings}
    return await make_engine(
        tmp_root, chroma_port, llm=LLM, historian={"job_max_attempts": 2, "capture": "end"}, profiles=settings
    )


async def end(engine, chat, *observations: str, at=NOW):  # type: ignore[no-untyped-def]
    from amrita_plugin_cognition.engine.turns import InputMessage

    batch = [InputMessage(f"m{at.timestamp():.0f}", chat.user_id, chat.user_name, observations[0], at)]
    return await engine.turns.end(chat, "", list(observations), batch=batch, now=at)


LIKES = "QQ号10001（昵称小明）喜欢打羽毛球。"
PLAYS = "QQ号10001（昵称小明）每周六在体育馆打球。"
PRIVATE = "QQ号10001（昵称小明）私下说自己正在准备跳槽。"


# ------------------------------------------------------------------------------ who gets a merge


def record(memory_id: int, scope: Scope, speaker: str, subject: str = "") -> MemoryRecord:
    return MemoryRecord(
        memory_id, "b1", scope, f"事实{memory_id}", speaker, "", subject or speaker, "", "fact", [],
        Importance.MEDIUM, "inferred", {}, None, NOW, NOW, MemoryStatus.ACTIVE, None, None, "h",
    )  # fmt: skip


@pytest.mark.parametrize(("policy", "user_part"), [("strict", "group:30001"), ("open", "group")])
def test_a_group_fact_asks_for_group_parts_and_a_private_fact_for_its_owner_only(policy, user_part) -> None:
    in_group = record(1, Scope("group", "30001"), "10001", "10002")
    in_private = record(2, Scope("private", "10001"), "10001", "10003")
    by_bot = record(3, Scope("group", "30001"), "", "1")  # the bot's reply, about the bot account "1"
    wanted = profile_policy.merges_for("1", Scope("group", "30001"), [in_group, by_bot], policy)
    # strict: a user's part in that group; open: their cross-group part
    assert wanted == {
        ("group", "30001"): {"group": [1, 3]},
        ("user", "10001"): {user_part: [1]},
        ("user", "10002"): {user_part: [1]},
    }
    assert profile_policy.merges_for("1", Scope("private", "10001"), [in_private], policy) == {
        ("user", "10001"): {"private": [2]}
    }


def test_what_each_card_part_may_be_built_from() -> None:
    in_group = record(1, Scope("group", "30001"), "10001", "10002")
    in_private = record(2, Scope("private", "10001"), "10001", "10003")
    visible = profile_policy.visible_to
    assert visible(in_group, "user", "10002", "group") and visible(in_group, "group", "30001", "group")
    assert not visible(in_private, "user", "10001", "group") and visible(in_private, "user", "10001", "private")
    assert not visible(in_private, "user", "10003", "private")  # about 10003, but said in 10001's private chat
    assert not visible(in_group, "group", "30002", "group") and not visible(in_group, "user", "10003", "private")
    # a user's part in one group: that group's facts by or about them, nothing else
    assert visible(in_group, "user", "10001", "group:30001") and visible(in_group, "user", "10002", "group:30001")
    assert not visible(in_group, "user", "10001", "group:30002")  # said in 30001: never 30002's part
    assert not visible(in_group, "user", "10003", "group:30001")  # neither by nor about 10003
    assert not visible(in_private, "user", "10001", "group:10001")  # a private chat is no group


# ------------------------------------------------------------------------------ coalescing


async def test_jobs_for_one_card_within_the_window_become_one_merge(tmp_root, chroma_port, model) -> None:
    engine = await merge_engine(tmp_root, chroma_port)
    bot = new_bot()
    chat = group(bot, "30001", "10001", "小明")
    said = [f"QQ号10001（昵称小明）在2026-11-30的第{number}条消息里说喜欢羽毛球。" for number in range(1, 6)]
    for number, text in enumerate(said):
        moment = NOW + timedelta(seconds=10 * number)
        await end(engine, chat, text, at=moment)
        await engine.historian.run_until_idle(moment)
    assert model.merge_requests() == []  # the window is still open
    merge_jobs = [row for row in await jobs_left(engine) if row.kind == MERGE_JOB]
    assert sorted((row.scope_kind, row.scope_id) for row in merge_jobs) == [("group", "30001"), ("private", "10001")]

    await engine.historian.run_until_idle(LATER)
    requests = model.merge_requests()
    assert len(requests) == 2  # five jobs, two cards (the group's, the speaker's): one call each
    group_card = await profiles.get(engine, bot, "group", "30001")
    user_card = await profiles.get(engine, bot, "user", "10001", "group:30001")  # strict: their part in 30001
    assert group_card is not None and user_card is not None
    for text in said:
        assert text in group_card.body and text in user_card.body
    assert group_card.source_ids and await jobs_left(engine) == []
    assert await profiles.get(engine, bot, "user", "10001", "private") is None  # nothing said in private


async def test_the_merge_prompt_has_the_card_its_time_and_the_entity(tmp_root, chroma_port, model) -> None:
    engine = await merge_engine(tmp_root, chroma_port)
    bot = new_bot()
    await profiles.save(engine, Card(bot, "user", "10001", "private", body="老朋友", roast="嘴硬"), now=NOW)
    await end(engine, private(bot, "10001", "小明"), LIKES)
    await engine.historian.run_until_idle(NOW)
    await engine.historian.run_until_idle(LATER)
    (request,) = model.merge_requests()
    prompt = user_prompt(request)
    assert "entity_type=user，entity_id=10001，部分=private" in prompt
    assert "老朋友" in prompt and "上次更新：2026-11-30 20:00" in prompt and "当前时间：2026-11-30 20:02" in prompt
    assert LIKES in prompt
    card = await profiles.get(engine, bot, "user", "10001", "private")
    assert card is not None and "老朋友" in card.body and LIKES in card.body
    (revision,) = await profiles.revisions(engine, bot, "user", "10001", "private")
    assert revision.card.body == "老朋友"


# ------------------------------------------------------------------------------ privacy


async def test_the_group_visible_part_never_holds_a_private_fact(tmp_root, chroma_port, model) -> None:
    engine = await merge_engine(tmp_root, chroma_port)
    bot = new_bot()
    await end(engine, private(bot, "10001", "小明"), PRIVATE)
    await end(engine, group(bot, "30001", "10001", "小明"), LIKES)
    await end(engine, private(bot, "10002", "小红"), "QQ号10002（昵称小红）私下说QQ号10001（昵称小明）欠她钱。")
    await engine.historian.run_until_idle(NOW)
    await engine.historian.run_until_idle(LATER)
    group_part = await profiles.get(engine, bot, "user", "10001", "group:30001")
    private_part = await profiles.get(engine, bot, "user", "10001", "private")
    group_card = await profiles.get(engine, bot, "group", "30001")
    assert group_part is not None and private_part is not None and group_card is not None
    assert LIKES in group_part.body and "跳槽" not in group_part.body and "跳槽" not in group_card.body
    assert LIKES in private_part.body and "跳槽" in private_part.body  # the private part sees both
    for card in (group_part, private_part, group_card):
        assert "欠她钱" not in card.body  # another user's private chat reaches no card of 10001
    for request in model.merge_requests():
        prompt = user_prompt(request)
        if "部分=group" in prompt:  # the group's card and 10001's part in the group
            assert "跳槽" not in prompt and "欠她钱" not in prompt
    # 10001's two parts were asked for by two jobs in two chats: one merge job, two calls
    assert len([r for r in model.merge_requests() if "entity_id=10001" in user_prompt(r)]) == 2


async def test_a_fact_forgotten_before_its_merge_never_reaches_a_card(tmp_root, chroma_port, model) -> None:
    engine = await merge_engine(tmp_root, chroma_port)
    bot = new_bot()
    chat = private(bot, "10001", "小明")
    await end(engine, chat, PRIVATE)
    await engine.historian.run_until_idle(NOW)
    async with engine.session() as session:
        (memory_id,) = (await session.execute(select(MemoryRow.id).where(MemoryRow.bot_id == bot))).scalars()
    await engine.governance.forget(chat, memory_id, now=NOW)
    await engine.historian.run_until_idle(LATER)
    assert model.merge_requests() == []  # the queue held its id, not its text: nothing left to merge
    assert await profiles.get(engine, bot, "user", "10001", "private") is None
    assert await jobs_left(engine) == []


# ------------------------------------------------------------------------------ faults


async def _one_private_merge(engine, bot: str) -> None:  # type: ignore[no-untyped-def]
    await end(engine, private(bot, "10001", "小明"), LIKES)
    await engine.historian.run_until_idle(NOW)
    await engine.historian.run_until_idle(LATER)


async def _old_card(engine, bot: str) -> Card:  # type: ignore[no-untyped-def]
    saved = await profiles.save(engine, Card(bot, "user", "10001", "private", body="旧的正文", roast="旧吐槽"), now=NOW)
    return saved.card


async def test_a_merge_for_another_entity_is_retried_and_never_written_there(tmp_root, chroma_port, model) -> None:
    engine = await merge_engine(tmp_root, chroma_port)
    bot = new_bot()
    model.merges = [lambda body: echo_card(body, entity_id="10002", body="QQ号10002的事")]
    await _one_private_merge(engine, bot)
    _first, second = model.merge_requests()
    assert "entity_id 必须照抄" in user_prompt(second)
    card = await profiles.get(engine, bot, "user", "10001", "private")
    assert card is not None and LIKES in card.body
    assert await profiles.get_parts(engine, bot, "user", "10002") == []

    # both answers for another entity: refused, the current card stays
    bot = new_bot()
    old = await _old_card(engine, bot)
    wrong = lambda body: echo_card(body, entity_type="group", entity_id="30001")  # noqa: E731
    model.merges = [wrong, wrong]
    await _one_private_merge(engine, bot)
    assert await profiles.get(engine, bot, "user", "10001", "private") == old
    assert await profiles.get(engine, bot, "group", "30001") is None
    assert await jobs_left(engine) == []  # done, not failed: a bad answer is not retried forever


async def test_an_empty_card_is_refused_and_the_old_one_kept(tmp_root, chroma_port, model) -> None:
    engine = await merge_engine(tmp_root, chroma_port)
    bot = new_bot()
    old = await _old_card(engine, bot)
    empty = lambda body: echo_card(body, evaluation="", body="", roast=" ")  # noqa: E731
    model.merges = [empty, empty]
    await _one_private_merge(engine, bot)
    assert len(model.merge_requests()) == 2
    assert "不能全部为空" in user_prompt(model.merge_requests()[1])
    assert await profiles.get(engine, bot, "user", "10001", "private") == old
    assert await profiles.revisions(engine, bot, "user", "10001", "private") == []


async def test_a_card_over_the_limit_gets_one_more_call_with_the_limit(tmp_root, chroma_port, model) -> None:
    engine = await merge_engine(tmp_root, chroma_port, body_max_chars=100)
    bot = new_bot()
    old = await _old_card(engine, bot)
    model.merges = [lambda body: echo_card(body, body="很长" * 100)]
    await _one_private_merge(engine, bot)
    _first, second = model.merge_requests()
    assert "超过上限 100 字" in user_prompt(second)
    card = await profiles.get(engine, bot, "user", "10001", "private")
    assert card is not None and LIKES in card.body and len(card.body) <= 100
    (revision,) = await profiles.revisions(engine, bot, "user", "10001", "private")
    assert revision.card == old  # the previous card is kept as a revision

    bot = new_bot()
    old = await _old_card(engine, bot)
    model.merges = [lambda body: echo_card(body, roast="吐" * 200)] * 2
    await _one_private_merge(engine, bot)
    assert await profiles.get(engine, bot, "user", "10001", "private") == old


async def test_malformed_output_is_retried_then_the_old_card_kept(tmp_root, chroma_port, model) -> None:
    engine = await merge_engine(tmp_root, chroma_port)
    bot = new_bot()
    old = await _old_card(engine, bot)
    not_a_call = {"role": "assistant", "content": "我觉得他人不错。"}
    bad_json = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": TOOL_NAME, "arguments": "{oops"}}],
    }
    model.merges = [not_a_call, bad_json]
    await _one_private_merge(engine, bot)
    assert len(model.merge_requests()) == 2
    assert await profiles.get(engine, bot, "user", "10001", "private") == old
    assert await jobs_left(engine) == []

    bot = new_bot()
    model.merges = [not_a_call]  # then a good answer
    await _one_private_merge(engine, bot)
    card = await profiles.get(engine, bot, "user", "10001", "private")
    assert card is not None and LIKES in card.body


async def test_a_skip_ends_the_merge_and_keeps_the_card(tmp_root, chroma_port, model, caplog) -> None:
    engine = await merge_engine(tmp_root, chroma_port)
    bot = new_bot()
    old = await _old_card(engine, bot)
    model.merges = [lambda body: tool_call(TOOL_NAME, {"action": "skip"})]
    with caplog.at_level("INFO"):
        await _one_private_merge(engine, bot)
    assert len(model.merge_requests()) == 1  # never looped
    assert await profiles.get(engine, bot, "user", "10001", "private") == old
    assert await jobs_left(engine) == []
    assert "skip_with_news=1" in caplog.text


async def test_a_secret_never_enters_a_card(tmp_root, chroma_port, model) -> None:
    engine = await merge_engine(tmp_root, chroma_port)
    bot = new_bot()
    # a secret inside a sentence is cut out; a section that is nothing but a secret is refused
    model.merges = [lambda request: echo_card(request, body=f"{LIKES}\n会议室密码 8866", roast="验证码 948273")]
    model.merges.append(lambda request: echo_card(request, body=f"{LIKES}\n会议室密码 8866"))
    await _one_private_merge(engine, bot)
    _first, second = model.merge_requests()
    assert "机密" in user_prompt(second)
    card = await profiles.get(engine, bot, "user", "10001", "private")
    assert card is not None and LIKES in card.body and "会议室密码" in card.body
    assert "8866" not in card.body and "948273" not in card.roast


# ------------------------------------------------------------------------------ switches


async def test_an_opted_out_user_gets_no_merge(tmp_root, chroma_port, model) -> None:
    engine = await merge_engine(tmp_root, chroma_port)
    bot = new_bot()
    await end(engine, group(bot, "30001", "10001", "小明"), LIKES)
    await engine.historian.run_until_idle(NOW)
    await set_opt_out(engine, bot, "10001", True, actor=Operator("10001"), now=NOW)
    await engine.historian.run_until_idle(LATER)
    # the user's card does not grow; the group's card has nothing left that does not name them
    assert model.merge_requests() == []
    assert await profiles.get_parts(engine, bot, "user", "10001") == []
    assert await profiles.get(engine, bot, "group", "30001") is None
    assert await jobs_left(engine) == []

    await end(engine, group(bot, "30001", "10002", "小红"), "QQ号10002（昵称小红）喜欢看电影。", at=LATER)
    await engine.historian.run_until_idle(LATER)
    merge_jobs = [(row.scope_kind, row.scope_id) for row in await jobs_left(engine) if row.kind == MERGE_JOB]
    assert sorted(merge_jobs) == [("group", "30001"), ("private", "10002")]


async def test_merges_can_be_switched_off(tmp_root, chroma_port, model) -> None:
    engine = await make_engine(tmp_root, chroma_port, llm=LLM, historian={"capture": "end"}, profiles={"merge": False})
    bot = new_bot()
    await end(engine, group(bot, "30001", "10001", "小明"), LIKES)
    await engine.historian.run_until_idle(NOW)
    assert await jobs_left(engine) == []
    assert model.merge_requests() == []


# ------------------------------------------------------------------------------ serialised


async def _second_job(engine, bot: str, text: str) -> None:  # type: ignore[no-untyped-def]
    """A second pending merge job for the same card (as another process would have queued it)."""
    async with engine.session() as session:
        found = await session.execute(select(MemoryRow.id).where(MemoryRow.bot_id == bot, MemoryRow.text == text))
        memory_id = found.scalar_one()
    payload = {"entity_type": "user", "entity_id": "10001", "parts": {"private": [memory_id]}}
    async with engine.unit_of_work() as uow:
        await jobs.enqueue(uow.session, MERGE_JOB, bot, Scope("private", "10001"), payload, NOW)
        await uow.commit()


async def test_two_merges_of_one_card_never_interleave(tmp_root, chroma_port, model) -> None:
    engine = await merge_engine(tmp_root, chroma_port)
    bot = new_bot()
    await end(engine, private(bot, "10001", "小明"), LIKES, PLAYS)
    await engine.historian.run_until_idle(NOW)
    await _second_job(engine, bot, PLAYS)
    model.fake.chat_delays.extend([0.3, 0.3])
    model.merges = [echo_card, lambda request: echo_card(request, roast="第二次")]
    await engine.historian.run_until_idle(LATER)  # both due: leased together, run one after the other
    _first, second = model.merge_requests()
    assert LIKES in user_prompt(second).split("【新的观察】")[0]  # the second merge saw the first's card
    card = await profiles.get(engine, bot, "user", "10001", "private")
    assert card is not None and LIKES in card.body and PLAYS in card.body and card.roast == "第二次"
    (revision,) = await profiles.revisions(engine, bot, "user", "10001", "private")
    assert LIKES in revision.card.body and revision.card.roast != "第二次"  # the first version, kept


async def test_a_merge_that_raced_another_process_is_redone_on_the_newer_card(tmp_root, chroma_port, model) -> None:
    engine = await merge_engine(tmp_root, chroma_port)
    other = await merge_engine(tmp_root, chroma_port)  # another process: its own in-process locks
    bot = new_bot()
    await end(engine, private(bot, "10001", "小明"), LIKES, PLAYS)
    await engine.historian.run_until_idle(NOW)
    await _second_job(engine, bot, PLAYS)
    async with engine.unit_of_work() as uow:
        leased = await jobs.lease(uow.session, LATER, 2, 600)
        await uow.commit()
    assert len(leased) == 2
    model.merges = [lambda body: echo_card(body, body=LIKES), lambda body: echo_card(body, body=PLAYS)]
    model.fake.chat_delays.extend([0.2, 0.4])
    reports = await asyncio.gather(
        profile_merge.process(engine, leased[0], LATER), profile_merge.process(other, leased[1], LATER)
    )
    assert sum(report.llm_calls for report in reports) == 3  # the loser asked again, on the winner's card
    card = await profiles.get(engine, bot, "user", "10001", "private")
    assert card is not None and LIKES in card.body and PLAYS in card.body
    assert len(await profiles.revisions(engine, bot, "user", "10001", "private")) == 1


# ------------------------------------------------------------------------------ forget → rebuild


def rebuild_card(request: dict[str, Any]) -> dict[str, Any]:
    """A well-behaved rebuild: the card written from the listed facts only (its evaluation too),
    never the old card."""
    past = [re.sub(r"^\[\d+\] [^：]*：", "", line) for line in section(user_prompt(request), "相关的历史记忆")]
    listed = [*section(user_prompt(request), "新的观察"), *past]
    return echo_card(request, body="\n".join(listed), evaluation=listed[0] if listed else "", roast="")


async def _memory_id(engine, bot: str, text: str) -> int:  # type: ignore[no-untyped-def]
    async with engine.session() as session:
        found = await session.execute(select(MemoryRow.id).where(MemoryRow.bot_id == bot, MemoryRow.text == text))
        return int(found.scalar_one())


async def _merge_jobs(engine, bot: str) -> list[JobRow]:  # type: ignore[no-untyped-def]
    return [row for row in await jobs_left(engine) if row.kind == MERGE_JOB and row.bot_id == bot]


async def test_forgetting_a_fact_rebuilds_the_cards_built_from_it(tmp_root, chroma_port, model) -> None:
    engine = await merge_engine(tmp_root, chroma_port)
    bot = new_bot()
    chat = private(bot, "10001", "小明")
    await end(engine, chat, LIKES, PLAYS)
    await engine.historian.run_until_idle(NOW)
    await engine.historian.run_until_idle(LATER)
    likes, plays = await _memory_id(engine, bot, LIKES), await _memory_id(engine, bot, PLAYS)
    card = await profiles.get(engine, bot, "user", "10001", "private")
    assert card is not None and LIKES in card.body and PLAYS in card.body
    assert {likes, plays} <= set(card.source_ids)
    assert await _merge_jobs(engine, bot) == []

    await engine.governance.forget(chat, likes, now=LATER)
    flagged = await profiles.get(engine, bot, "user", "10001", "private")
    assert flagged is not None and likes not in flagged.source_ids and plays in flagged.source_ids
    (job,) = await _merge_jobs(engine, bot)
    payload = profile_queue.payload_of(job.payload)
    assert (job.scope_kind, job.scope_id, job.state) == ("private", "10001", jobs.PENDING)
    assert payload["rebuild"] == ["private"] and payload["entity_id"] == "10001"
    assert LIKES not in job.payload  # ids only, never the text

    model.merges = [rebuild_card]
    before = len(model.merge_requests())
    await engine.historian.run_until_idle(LATER + timedelta(seconds=WINDOW + 1))
    (request,) = model.merge_requests()[before:]
    prompt = user_prompt(request)
    assert "可能含有已删除记忆的内容" in prompt
    assert LIKES not in "\n".join([*section(prompt, "新的观察"), *section(prompt, "相关的历史记忆")])
    assert PLAYS in "\n".join(section(prompt, "相关的历史记忆"))
    rebuilt = await profiles.get(engine, bot, "user", "10001", "private")
    assert rebuilt is not None and LIKES not in rebuilt.body and PLAYS in rebuilt.body
    assert rebuilt.source_ids == [plays]
    for revision in await profiles.revisions(engine, bot, "user", "10001", "private"):
        assert LIKES not in revision.card.body  # no restore brings the forgotten fact back
    assert await _merge_jobs(engine, bot) == []


async def test_switching_the_chat_off_after_a_forget_still_takes_the_fact_out_of_its_card(
    tmp_root, chroma_port, model
) -> None:
    """Switching a chat off calls off its extraction work, not the rebuild a forget asked for:
    the card part (closed now, so it is deleted rather than rebuilt) no longer says the fact."""
    from amrita_plugin_cognition.engine.switches import set_chat_memory

    engine = await merge_engine(tmp_root, chroma_port)
    bot = new_bot()
    chat = private(bot, "10001", "小明")
    await end(engine, chat, LIKES, PLAYS)
    await engine.historian.run_until_idle(NOW)
    await engine.historian.run_until_idle(LATER)
    await engine.governance.forget(chat, await _memory_id(engine, bot, LIKES), now=LATER)
    assert (await set_chat_memory(engine, bot, chat.scope, False, Operator("10001"), now=LATER)).changed
    assert [job.kind for job in await _merge_jobs(engine, bot)] == [MERGE_JOB]
    await engine.historian.run_until_idle(LATER + timedelta(seconds=WINDOW + 1))
    assert await profiles.get(engine, bot, "user", "10001", "private") is None
    assert await profiles.revisions(engine, bot, "user", "10001", "private") == []
    assert await _merge_jobs(engine, bot) == []


async def test_a_forget_after_an_opt_out_by_a_namesake_rebuilds_the_card_without_the_fact(
    tmp_root, chroma_port, model
) -> None:
    """Found by the property test: two 小明, the first opts out, the second's fact stays, the
    first one's fact is forgotten. The rebuild's answer names 小明 (the second, from the fact it
    was shown): it is kept, not cut as the opted-out one's; and a rebuild whose answers are all
    unusable drops the part rather than leave the forgotten fact on it for a retry."""
    engine = await merge_engine(tmp_root, chroma_port)
    bot = new_bot()
    her, him = group(bot, "20001", "10001", "小明"), group(bot, "20001", "10002", "小明")
    first, second = "小明第1次说起羽毛球的事。", "小明第2次说起羽毛球的事。"
    await end(engine, her, first)
    await engine.historian.run_until_idle(NOW)
    await engine.historian.run_until_idle(LATER)
    card = await profiles.get(engine, bot, "group", "20001")
    assert card is not None and first in card.body
    await set_opt_out(engine, bot, "10001", True, actor=Operator("10001"), now=LATER)
    draft = MemoryDraft(text=second, scope=him.scope, speaker_id="10002", speaker_name="小明", source={"job": 1})
    assert len((await engine.memories.remember(bot, [draft], now=LATER)).written) == 1
    await engine.governance.forget(her, await _memory_id(engine, bot, first), now=LATER)
    model.merges = [rebuild_card]
    await engine.historian.run_until_idle(LATER + timedelta(seconds=WINDOW + 1))
    rebuilt = await profiles.get(engine, bot, "group", "20001")
    assert rebuilt is not None and first not in rebuilt.body and second in rebuilt.body
    assert await _merge_jobs(engine, bot) == []

    # the same forget where the model's answers cannot be used at all: the part goes
    bot = new_bot()
    her = group(bot, "20001", "10001", "小明")
    await end(engine, her, LIKES, PLAYS)
    await engine.historian.run_until_idle(NOW)
    await engine.historian.run_until_idle(LATER)
    await engine.governance.forget(her, await _memory_id(engine, bot, LIKES), now=LATER)
    model.merges = [lambda body: tool_call(TOOL_NAME, {"action": "update_profile"})] * 2  # empty: unusable
    await engine.historian.run_until_idle(LATER + timedelta(seconds=WINDOW + 1))
    for entity_type, entity_id, part in (("group", "20001", "group"), ("user", "10001", "group:20001")):
        left = await profiles.get(engine, bot, entity_type, entity_id, part)
        assert left is None or LIKES not in left.body, (entity_type, left)
    assert await _merge_jobs(engine, bot) == []


async def test_forgetting_a_fact_no_card_uses_queues_nothing(tmp_root, chroma_port, model) -> None:
    engine = await merge_engine(tmp_root, chroma_port)
    bot = new_bot()
    chat = private(bot, "10001", "小明")
    await end(engine, chat, LIKES)
    await engine.historian.run_until_idle(NOW)
    await engine.historian.run_until_idle(LATER)
    card = await profiles.get(engine, bot, "user", "10001", "private")
    assert card is not None
    model.merges = [lambda body: tool_call(TOOL_NAME, {"action": "skip"})]  # PLAYS never reaches the card
    await end(engine, chat, PLAYS, at=LATER)
    await engine.historian.run_until_idle(LATER)
    await engine.historian.run_until_idle(LATER + timedelta(seconds=WINDOW + 1))
    assert await profiles.get(engine, bot, "user", "10001", "private") == card
    calls = len(model.merge_requests())

    await engine.governance.forget(
        chat, await _memory_id(engine, bot, PLAYS), now=LATER + timedelta(seconds=WINDOW + 2)
    )
    assert await _merge_jobs(engine, bot) == []
    assert await profiles.get(engine, bot, "user", "10001", "private") == card
    assert len(model.merge_requests()) == calls


async def test_a_rebuild_with_no_fact_left_or_a_skip_deletes_the_part(tmp_root, chroma_port, model) -> None:
    engine = await merge_engine(tmp_root, chroma_port)
    bot = new_bot()
    chat = private(bot, "10001", "小明")
    await _one_private_merge(engine, bot)
    await engine.governance.forget(chat, await _memory_id(engine, bot, LIKES), now=LATER)
    calls = len(model.merge_requests())
    await engine.historian.run_until_idle(LATER)
    assert len(model.merge_requests()) == calls  # nothing left to build from: no call
    assert await profiles.get(engine, bot, "user", "10001", "private") is None
    assert await profiles.revisions(engine, bot, "user", "10001", "private") == []

    bot = new_bot()
    chat = private(bot, "10001", "小明")
    await end(engine, chat, LIKES, PLAYS)
    await engine.historian.run_until_idle(NOW)
    await engine.historian.run_until_idle(LATER)
    await engine.governance.forget(chat, await _memory_id(engine, bot, LIKES), now=LATER)
    model.merges = [lambda body: tool_call(TOOL_NAME, {"action": "skip"})]
    await engine.historian.run_until_idle(LATER)
    assert await profiles.get(engine, bot, "user", "10001", "private") is None
    assert await _merge_jobs(engine, bot) == []


async def test_a_delete_all_rebuilds_the_cards_left_that_used_its_facts(tmp_root, chroma_port, model) -> None:
    from amrita_plugin_cognition.domain.erasure import ErasureTarget
    from amrita_plugin_cognition.engine.erasure import delete_all

    engine = await merge_engine(tmp_root, chroma_port)
    bot = new_bot()
    await end(engine, group(bot, "30001", "10001", "小明"), LIKES)
    await end(engine, private(bot, "10001", "小明"), PRIVATE)
    await engine.historian.run_until_idle(NOW)
    await engine.historian.run_until_idle(LATER)
    card = await profiles.get(engine, bot, "user", "10001", "private")
    assert card is not None and LIKES in card.body and PRIVATE in card.body

    assert await profiles.get(engine, bot, "user", "10001", "group:30001") is not None
    await delete_all(engine, ErasureTarget.chat(bot, Scope("group", "30001")), Operator(), now=LATER)
    assert await profiles.get(engine, bot, "group", "30001") is None  # the chat's own card: erased
    assert await profiles.get(engine, bot, "user", "10001", "group:30001") is None  # and his part in it
    (job,) = await _merge_jobs(engine, bot)
    assert profile_queue.payload_of(job.payload)["rebuild"] == ["private"]
    model.merges = [rebuild_card]
    await engine.historian.run_until_idle(LATER)
    private_part = await profiles.get(engine, bot, "user", "10001", "private")
    assert private_part is not None and PRIVATE in private_part.body and LIKES not in private_part.body
    assert await profiles.get_parts(engine, bot, "user", "10001") == [private_part]


async def test_erasing_a_users_private_chat_keeps_the_rebuild_a_forget_asked_for_their_group_part(
    tmp_root, chroma_port, model
) -> None:
    """A user's merge job lives in their private chat's scope. Erasing that chat takes the card's
    private part, not the job's other parts: the rebuild a forget asked for the group part still
    runs, and the group part no longer says the forgotten fact."""
    from amrita_plugin_cognition.domain.erasure import ErasureTarget
    from amrita_plugin_cognition.engine.erasure import delete_all

    engine = await merge_engine(tmp_root, chroma_port)
    bot = new_bot()
    in_group = group(bot, "30001", "10001", "小明")
    await end(engine, in_group, LIKES, PLAYS)
    await end(engine, private(bot, "10001", "小明"), PRIVATE)
    await engine.historian.run_until_idle(NOW)
    await engine.historian.run_until_idle(LATER)
    (group_part,) = [part for part in await profiles.get_parts(engine, bot, "user", "10001") if part.part != "private"]
    assert LIKES in group_part.body

    await engine.governance.forget(in_group, await _memory_id(engine, bot, LIKES), now=LATER)
    report = await delete_all(engine, ErasureTarget.chat(bot, Scope("private", "10001")), Operator(), now=LATER)
    assert report.counts["jobs"] == 0  # the merge job was kept, for the group part
    (job,) = [job for job in await _merge_jobs(engine, bot) if job.scope_kind == "private"]  # and the group's card
    payload = profile_queue.payload_of(job.payload)
    assert payload["rebuild"] == [group_part.part] and "private" not in payload["parts"]

    model.merges = [rebuild_card, rebuild_card]  # the group's card and his part in the group
    await engine.historian.run_until_idle(LATER)
    assert await profiles.get(engine, bot, "user", "10001", "private") is None
    rebuilt = await profiles.get(engine, bot, "user", "10001", group_part.part)
    assert rebuilt is not None and LIKES not in rebuilt.body and PLAYS in rebuilt.body
    assert await _merge_jobs(engine, bot) == []


def unchanged_card(request: dict[str, Any]) -> dict[str, Any]:
    """A rebuild that returns the current card as the prompt shows it, word for word."""
    prompt = user_prompt(request)
    current = prompt.split("【当前卡片】", 1)[1].split("【新的观察】", 1)[0]

    def field(label: str) -> str:
        found = re.search(rf"^{label}：(.*)$", current, re.M)
        return "" if found is None or found.group(1) in ("（无）", "（空）") else found.group(1)

    body = re.search(r"正文：\n(.*?)\n吐槽：", current, re.S)
    tags = field("标签")
    return echo_card(
        request,
        evaluation=field("评价"),
        body=body.group(1) if body else "",
        roast=field("吐槽"),
        tags=tags.split("、") if tags else [],
    )


async def _forgotten_likes(engine, model: Model) -> tuple[str, int]:  # type: ignore[no-untyped-def]
    """A private part built from LIKES and PLAYS, then LIKES forgotten: (bot, calls so far)."""
    bot = new_bot()
    chat = private(bot, "10001", "小明")
    await end(engine, chat, LIKES, PLAYS)
    await engine.historian.run_until_idle(NOW)
    await engine.historian.run_until_idle(LATER)
    card = await profiles.get(engine, bot, "user", "10001", "private")
    assert card is not None and "羽毛球" in card.body
    await engine.governance.forget(chat, await _memory_id(engine, bot, LIKES), now=LATER)
    return bot, len(model.merge_requests())


async def test_a_rebuild_that_keeps_the_forgotten_fact_is_not_saved(tmp_root, chroma_port, model) -> None:
    """The model returns the old card unchanged: not saved; one more call names what must go;
    unchanged again, the part is dropped (no version of it holds the forgotten fact)."""
    engine = await merge_engine(tmp_root, chroma_port)
    bot, calls = await _forgotten_likes(engine, model)
    model.merges = [unchanged_card, unchanged_card]
    await engine.historian.run_until_idle(LATER)
    assert await profiles.get(engine, bot, "user", "10001", "private") is None
    assert await profiles.revisions(engine, bot, "user", "10001", "private") == []
    first, second = model.merge_requests()[calls:]
    assert "可能来自已删除的记忆" not in user_prompt(first)
    feedback = "\n".join(section(user_prompt(second), "上一次的回答有问题，请修正后重新提交"))
    assert "可能来自已删除的记忆" in feedback and "喜欢打羽毛球" in feedback
    assert await _merge_jobs(engine, bot) == []  # done: the part is gone, nothing left to retry


async def test_a_rebuild_retried_after_keeping_the_forgotten_fact_saves_the_clean_card(
    tmp_root, chroma_port, model
) -> None:
    engine = await merge_engine(tmp_root, chroma_port)
    bot, calls = await _forgotten_likes(engine, model)
    model.merges = [unchanged_card, rebuild_card]
    await engine.historian.run_until_idle(LATER)
    rebuilt = await profiles.get(engine, bot, "user", "10001", "private")
    assert rebuilt is not None and PLAYS in rebuilt.body and "羽毛球" not in rebuilt.body
    assert len(model.merge_requests()) == calls + 2
    assert rebuilt.source_ids == [await _memory_id(engine, bot, PLAYS)]
