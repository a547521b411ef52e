"""A group sees of a person only what its own facts built (issue 20, item 2), through the real
chat flow (nonebug): a user says something in group A, the historian writes it and the merge
makes it into a card (the fake model, scripted: the historian echoes the observation, a merge
writes the facts it is given); then the same user speaks in group B. Under ``scope_policy =
"strict"`` (群只看本群) nothing of what they said in A reaches B: not the injected block, not
``cognition_profile_get``, not ``cognition_profile_search``, not ``/profile``; group A still sees
it, and so does the user's own ``/profile`` in their private chat. Under ``open`` the cross-group
card is shown in B, as documented."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest
from chat_helpers import connect_bot, deliver, group_message, memory_engine, private_message, system_text, tool_results
from engine_helpers import empty_job_queue
from fake_openai import FakeOpenAI, tool_call
from nonebug import App
from test_profile_merge import Model

from amrita_plugin_cognition.domain.clock import UTC
from amrita_plugin_cognition.engine import profiles

pytestmark = pytest.mark.chatflow

BOT = "42"
#: What the user says in group A: words that appear nowhere else.
SAID_IN_A = "QQ号{user}（昵称小红）下个月要去冰岛看极光。"
WORDS = ("冰岛", "极光")


@pytest.fixture(autouse=True)
async def _empty_queue():  # type: ignore[no-untyped-def]
    await empty_job_queue()
    yield
    await empty_job_queue()


@pytest.fixture
def model(fake_openai: FakeOpenAI) -> Iterator[Model]:
    yield Model(fake_openai)  # the bot's own historian preset is the chat's fake model


@pytest.fixture
async def policy(request):  # type: ignore[no-untyped-def]
    """The bot's engine under the scope policy of the test (put back afterwards)."""
    engine = await memory_engine()
    before = engine.config
    engine.config = before.model_copy(update={"scope_policy": request.param})
    yield request.param
    engine.config = before


def _mentions(text: str) -> bool:
    return any(word in text for word in WORDS)


@pytest.mark.parametrize("policy", ["strict", "open"], indirect=True)
async def test_what_a_user_said_in_one_group_reaches_another_only_under_open(
    app: App, fake_openai: FakeOpenAI, monkeypatch, model: Model, policy: str
) -> None:
    user, group_a, group_b = (10261, 30261, 30262) if policy == "strict" else (10281, 30281, 30282)
    said = SAID_IN_A.format(user=user)
    engine = await memory_engine()
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        # 1. said in group A; the historian writes it, the merge (at the window's end) builds the card
        fake_openai.script.append(tool_call("end", {"memo": "小红说下个月去冰岛", "observations": [said]}))
        await deliver(bot, group_message("下个月我要去冰岛看极光！", group_a, user, "小红"))
        await engine.historian.run_until_idle()
        window = engine.config.profiles.merge_window_seconds
        await engine.historian.run_until_idle(datetime.now(UTC) + timedelta(seconds=window + 1))
        assert len(model.merge_requests()) == 2  # group A's card and the user's part that A sees
        # group A sees it (the control)
        await deliver(bot, group_message("/profile", group_a, user, "小红", to_me=False))
        assert _mentions(qq.sent[-1])

        # 2. the same user in group B: the injected block
        fake_openai.reset()
        await deliver(bot, group_message("大家好", group_b, user, "小红"))
        system = system_text(fake_openai.chat_requests[0])
        # 3. the get tool and the search tool, called by the model in group B
        fake_openai.reset()
        fake_openai.script.extend(
            [
                tool_call("cognition_profile_get", {"entity_type": "user", "entity_id": str(user)}, "call_0"),
                tool_call("cognition_profile_search", {"query": "冰岛 极光", "entity_type": "any"}, "call_1"),
            ]
        )
        await deliver(bot, group_message("看看我的画像", group_b, user, "小红"))
        got, found = tool_results(fake_openai.chat_requests[-1])
        # 4. /profile in group B
        await deliver(bot, group_message("/profile", group_b, user, "小红", to_me=False))
        command = qq.sent[-1]
        # 5. /profile in the user's own private chat, which may see every group fact of theirs
        await deliver(bot, private_message("/profile", user, "小红"))
        in_private = qq.sent[-1]

    assert got["ok"] and found["ok"]
    if policy == "strict":
        assert not _mentions(system), system
        assert got["cards"] == [] and not _mentions(str(got))
        assert found["cards"] == [] and not _mentions(str(found))
        assert command == "还没有画像"
        # no private part and no cross-group part grew: their newest part in a group is shown
        assert in_private.startswith(f"用户 {user} 在群 {group_a} 的画像") and _mentions(in_private)
    else:  # open: the cross-group part is what groups see, as documented
        assert f"用户 {user} 的群内可见画像" in system and _mentions(system)
        assert [item["part"] for item in got["cards"]] == ["group"] and _mentions(str(got))
        assert [(item["entity_id"], item["part"]) for item in found["cards"]] == [(str(user), "group")]
        assert command.startswith(f"用户 {user} 的群内可见画像") and _mentions(command)
        assert in_private.startswith(f"用户 {user} 的群内可见画像") and _mentions(in_private)
    # the card A's facts built is the part A sees (strict: the user's part in A)
    part = "group" if policy == "open" else f"group:{group_a}"
    card = await profiles.get(engine, BOT, "user", str(user), part)
    assert card is not None and said in card.body
