"""The WebUI memory page's other routes over HTTP (ASGI, a real engine): restoring an expired
memory, cards with revisions and restore, the memo's versions and pins, jobs retried and dropped,
the knowledge base, each of one bot account and audited with the WebUI user."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import httpx
import pytest
from engine_helpers import NOW, group, make_engine, new_bot, private
from fastapi import FastAPI
from sqlalchemy import delete

from amrita_plugin_cognition.api import Card, Importance, InputMessage, MemoryDraft, Scope
from amrita_plugin_cognition.store.decay import SWEEP_KEY
from amrita_plugin_cognition.store.models import MetaRow

pytestmark = pytest.mark.embedded_only  # the page's routes live in the bot layer
U = "10001"
G = Scope("group", "20001")
HEADERS = {"X-Cognition-Page": "1"}


@pytest.fixture
async def page(tmp_root, chroma_port) -> AsyncIterator[tuple[httpx.AsyncClient, object]]:  # type: ignore[no-untyped-def]
    from amrita.plugins.webui.service.authlib import TOKEN_KEY, TokenManager

    from amrita_plugin_cognition.bot.webui.routes import router
    from amrita_plugin_cognition.bot.webui.routes.common import engine as engine_dependency

    engine = await make_engine(tmp_root, chroma_port)
    app = FastAPI()
    app.include_router(router)
    app.dependency_overrides[engine_dependency] = lambda: engine
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        client.cookies.set(TOKEN_KEY, await TokenManager().create_access_token({"sub": "owner"}))
        yield client, engine


async def _get(client: httpx.AsyncClient, path: str, **params: object) -> object:
    answer = await client.get(f"/api/cognition{path}", params=params)  # type: ignore[arg-type]
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


async def _post(client: httpx.AsyncClient, path: str, body: dict) -> httpx.Response:  # type: ignore[type-arg]
    return await client.post(f"/api/cognition{path}", json=body, headers=HEADERS)


async def test_an_expired_memory_is_listed_and_restored(page) -> None:  # type: ignore[no-untyped-def]
    client, engine = page
    bot = new_bot()
    async with engine.session() as session:  # a new sweep pass (another test may have left one midway)
        await session.execute(delete(MetaRow).where(MetaRow.key == SWEEP_KEY))
        await session.commit()
    chat = group(bot, G.id, U, "小明", role="admin")
    low = await engine.memories.write(chat, "group", "小明把伞落在了羽毛球馆。", importance=Importance.LOW, now=NOW)
    await engine.decay.sweep(now=NOW + timedelta(days=7, minutes=1))
    expired = await _get(client, f"/bots/{bot}/chats/{G.key}/memories", status="expired")
    assert [item["id"] for item in expired["items"]] == [low.id]  # type: ignore[index]
    restored = await _post(client, f"/bots/{bot}/memories/{low.id}/restore", {})
    assert restored.status_code == 200 and restored.json()["data"]["status"] == "active"
    again = await _post(client, f"/bots/{bot}/memories/{low.id}/restore", {})
    assert again.status_code == 400 and "没有过期" in again.json()["message"]
    assert (await _post(client, f"/bots/{new_bot()}/memories/{low.id}/restore", {})).status_code == 404
    assert [entry.actor for entry in await engine.governance.audit(bot)] == ["webui:owner"]


async def test_cards_show_revisions_and_restore_one(page) -> None:  # type: ignore[no-untyped-def]
    client, engine = page
    bot = new_bot()
    await engine.profiles.save(Card(bot, "user", U, "private", name="小明", body="喜欢猫。"), by="historian", now=NOW)
    await engine.profiles.save(Card(bot, "user", U, "private", name="小明", body="喜欢狗。"), by="historian", now=NOW)
    listed = await _get(client, f"/bots/{bot}/cards")
    assert [(card["entity_id"], card["revisions"]) for card in listed["items"]] == [(U, 1)]  # type: ignore[index]
    detail = await _get(client, f"/bots/{bot}/cards/user/{U}")
    (revision,) = detail["revisions"]  # type: ignore[index]
    assert revision["card"]["body"] == "喜欢猫。" and detail["parts"][0]["body"] == "喜欢狗。"  # type: ignore[index]
    assert (await client.get(f"/api/cognition/bots/{new_bot()}/cards/user/{U}")).status_code == 404
    restored = await _post(
        client, f"/bots/{bot}/cards/user/{U}/restore", {"revision_id": revision["id"], "part": "private"}
    )
    assert restored.status_code == 200, restored.text
    assert (await engine.profiles.get(bot, "user", U, "private")).body == "喜欢猫。"  # type: ignore[union-attr]
    assert ("card_restore", "webui:owner") in [
        (entry.action, entry.actor) for entry in await engine.governance.audit(bot)
    ]


async def test_memo_versions_pins_and_jobs_of_one_account(page) -> None:  # type: ignore[no-untyped-def]
    client, engine = page
    bot, other = new_bot(), new_bot()
    chat = private(bot, U, "小明")
    await engine.notes.update_memo(chat, "第一版备忘录", now=NOW)
    await engine.notes.update_memo(chat, "第二版备忘录", now=NOW)
    await engine.notes.add_pin(chat, "周五前交报告", now=NOW)
    notes = await _get(client, f"/bots/{bot}/chats/private:{U}/notes")
    assert notes["memo"] == "第二版备忘录" and [pin["content"] for pin in notes["pins"]] == ["周五前交报告"]  # type: ignore[index]
    first = next(item for item in notes["revisions"] if item["content"] == "第一版备忘录")  # type: ignore[index]
    answer = await _post(client, f"/bots/{bot}/chats/private:{U}/memo/restore", {"revision_id": first["id"]})
    assert answer.status_code == 200 and await engine.notes.memo_of(bot, Scope("private", U)) == "第一版备忘录"
    (pin,) = notes["pins"]  # type: ignore[index]
    assert (
        await _post(client, f"/bots/{other}/chats/private:{U}/pins/{pin['id']}/delete", {"confirm": True})
    ).status_code == 404
    assert (
        await _post(client, f"/bots/{bot}/chats/private:{U}/pins/{pin['id']}/delete", {"confirm": True})
    ).status_code == 200
    assert await engine.notes.pins_of(bot, Scope("private", U)) == []

    for account in (bot, other):
        said = InputMessage("m1", U, "小明", "我喜欢猫", NOW)
        await engine.turns.end(private(account, U), "小明喜欢猫", ["小明喜欢猫"], batch=[said], now=NOW)
    (mine,) = await _get(client, f"/bots/{bot}/jobs")  # type: ignore[misc]
    (theirs,) = await _get(client, f"/bots/{other}/jobs")  # type: ignore[misc]
    dropped = await _post(client, f"/bots/{bot}/jobs/drop", {"ids": [theirs["id"], mine["id"]]})
    assert dropped.json()["data"] == {"count": 1}  # only this account's job
    assert await _get(client, f"/bots/{bot}/jobs") == [] and len(await _get(client, f"/bots/{other}/jobs")) == 1  # type: ignore[arg-type]
    assert (await _post(client, f"/bots/{bot}/jobs/retry", {"ids": []})).status_code == 422
    await engine.jobs.drop(bot_id=other)


async def test_the_knowledge_base_is_listed_with_history_and_deleted(page) -> None:  # type: ignore[no-untyped-def]
    client, engine = page
    bot = new_bot()
    drafts = [MemoryDraft(text="群20001每周五晚上八点组织开黑。", scope=G, speaker_id="10401")]
    fact = (await engine.memories.remember(bot, drafts, now=NOW)).written[0].id
    entry = await engine.knowledge.create(bot, "开黑时间", "每周五", "每周五晚上八点开黑。", [fact], now=NOW)
    await engine.knowledge.update(bot, entry.id, "开黑时间", "每周五", "每周五晚上九点开黑。", [fact], now=NOW)
    listed = await _get(client, f"/bots/{bot}/knowledge")
    assert [(item["title"], item["version"], item["revisions"]) for item in listed] == [("开黑时间", 2, 1)]  # type: ignore[union-attr]
    shown = await _get(client, f"/bots/{bot}/knowledge/{entry.id}")
    assert shown["body"] == "每周五晚上九点开黑。" and shown["history"][0]["body"] == "每周五晚上八点开黑。"  # type: ignore[index]
    assert (await client.get(f"/api/cognition/bots/{new_bot()}/knowledge/{entry.id}")).status_code == 404
    assert (await _post(client, f"/bots/{bot}/knowledge/{entry.id}/delete", {})).status_code == 422  # not confirmed
    assert (await _post(client, f"/bots/{bot}/knowledge/{entry.id}/delete", {"confirm": True})).status_code == 200
    assert await _get(client, f"/bots/{bot}/knowledge") == []
