"""The WebUI memory page's routes over HTTP (httpx against the ASGI app: the router as the WebUI
mounts it, the WebUI's own token store, a real engine): refused without the WebUI's login or the
page's CSRF header, inputs checked, one bot account's data only, forget asked for and audited."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from engine_helpers import NOW, group, make_engine, new_bot, private
from fastapi import FastAPI

from amrita_plugin_cognition.api import InspectFilter, Scope

# The page's routes live in the bot layer, which the server backend's engine-only boot does not load.
pytestmark = pytest.mark.embedded_only

U, V = "10001", "10002"
G = Scope("group", "20001")
HEADERS = {"X-Cognition-Page": "1"}


async def _page_of(client: httpx.AsyncClient, bot: str, **params: object) -> dict:  # type: ignore[type-arg]
    answer = await client.get(f"/api/cognition/bots/{bot}/chats/{G.key}/memories", params=params)  # type: ignore[arg-type]
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


async def _change(client: httpx.AsyncClient, path: str, body: dict, **headers: str) -> httpx.Response:  # type: ignore[type-arg]
    return await client.post(f"/api/cognition{path}", json=body, headers={**HEADERS, **headers})


@pytest.fixture
async def page(tmp_root, chroma_port) -> AsyncIterator[tuple[httpx.AsyncClient, object, str, str]]:  # type: ignore[no-untyped-def]
    from amrita.plugins.webui.service.authlib import TOKEN_KEY, TokenManager

    from amrita_plugin_cognition.bot.webui.routes import router
    from amrita_plugin_cognition.bot.webui.routes.common import engine as engine_dependency

    engine = await make_engine(tmp_root, chroma_port)
    app = FastAPI()
    app.include_router(router)
    app.dependency_overrides[engine_dependency] = lambda: engine
    token = await TokenManager().create_access_token({"sub": "admin"})
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        client.cookies.set(TOKEN_KEY, token)
        yield client, engine, new_bot(), TOKEN_KEY


async def test_without_the_webui_login_every_route_is_refused(page) -> None:  # type: ignore[no-untyped-def]
    client, _engine, bot, key = page
    client.cookies.clear()
    for path in ("/api/cognition/bots", f"/api/cognition/bots/{bot}/chats", "/api/cognition/assets/memory.js"):
        assert (await client.get(path)).status_code == 401
    assert (
        await client.post(f"/api/cognition/bots/{bot}/memories/1/forget", json={"confirm": True}, headers=HEADERS)
    ).status_code == 401
    client.cookies.set(key, "not-a-token")
    assert (await client.get("/api/cognition/bots")).status_code == 401


async def test_a_chats_memories_are_paged_searched_and_one_accounts_only(page) -> None:  # type: ignore[no-untyped-def]
    client, engine, bot, _ = page
    other = new_bot()
    chat = group(bot, G.id, U, "小明")
    for number in range(25):
        await engine.memories.write(chat, "user", f"小明的第{number}号爱好是收集邮票{number}。", now=NOW)
    await engine.memories.write(group(bot, G.id, V), "user", "小红喜欢<script>alert('x')</script>。", now=NOW)
    await engine.memories.write(group(other, G.id, U), "user", "另一个账号：小明喜欢滑雪。", now=NOW)

    start = (await client.get("/api/cognition/start")).json()["data"]
    meta = {"user": "admin", "config_url": "/system/confedit/amrita_plugin_cognition", "timezone": "Asia/Shanghai"}
    assert start["meta"] == meta and {"bot_id": bot, "memories": 26} in start["bots"]
    first_bot = start["first"]["bot"]
    assert all(item["bot_id"] == first_bot for item in start["first"]["page"]["items"])  # one account's page
    chats = (await client.get(f"/api/cognition/bots/{bot}/chats")).json()["data"]
    assert chats == [
        {"chat": G.key, "kind": "group", "id": G.id, "active": 26, "expired": 0, "superseded": 0, "memory_on": True}
    ]
    first = (await client.get(f"/api/cognition/bots/{bot}/chats/{G.key}/memories", params={"size": 10})).json()["data"]
    assert first["total"] == 26 and len(first["items"]) == 10 and first["items"][0]["text"].startswith("小红")
    third = (
        await client.get(f"/api/cognition/bots/{bot}/chats/{G.key}/memories", params={"size": 10, "page": 3})
    ).json()["data"]
    assert len(third["items"]) == 6
    found = (await client.get(f"/api/cognition/bots/{bot}/chats/{G.key}/memories", params={"q": "邮票7"})).json()[
        "data"
    ]
    assert [item["text"] for item in found["items"]] == ["小明的第7号爱好是收集邮票7。"]
    by_speaker = (await client.get(f"/api/cognition/bots/{bot}/chats/{G.key}/memories", params={"speaker": V})).json()[
        "data"
    ]
    assert by_speaker["total"] == 1 and "<script>" in by_speaker["items"][0]["text"]  # stored text returned as data
    texts = [
        item["text"]
        for item in (
            await client.get(f"/api/cognition/bots/{bot}/chats/{G.key}/memories", params={"size": 100})
        ).json()["data"]["items"]
    ]
    assert not any("滑雪" in text for text in texts)  # another bot account's fact of the same chat
    theirs = (await engine.governance.inspect(InspectFilter(bot_id=other)))[0][0]
    assert (await client.get(f"/api/cognition/bots/{bot}/memories/{theirs.record.id}")).status_code == 404
    assert (await client.get(f"/api/cognition/bots/{bot}/memories/{theirs.record.id}/why")).status_code == 404


async def test_bad_input_is_refused_before_anything_runs(page) -> None:  # type: ignore[no-untyped-def]
    client, _engine, bot, _ = page
    memories = f"/api/cognition/bots/{bot}/chats/{G.key}/memories"
    assert (await client.get(memories, params={"q": "x" * 101})).status_code == 422
    assert (await client.get(memories, params={"size": 1000})).status_code == 422
    assert (await client.get(memories, params={"speaker": "abc"})).status_code == 422
    assert (await client.get(memories, params={"status": "forgotten"})).status_code == 422
    assert (await client.get(memories, params={"nonsense": "1"})).status_code == 422
    assert (await client.get(f"/api/cognition/bots/{bot}/chats/channel:1/memories")).status_code == 422
    assert (await client.get(f"/api/cognition/bots/{'x' * 40}/chats")).status_code == 422
    assert (await client.get(f"/api/cognition/bots/{bot}/memories/0")).status_code == 422
    assert (await client.get(f"/api/cognition/bots/{bot}/memories/{2**60}")).status_code == 422
    forget = f"/api/cognition/bots/{bot}/memories/1/forget"
    assert (await client.post(forget, json={"confirm": False}, headers=HEADERS)).status_code == 422
    assert (await client.post(forget, json={"confirm": True, "extra": 1}, headers=HEADERS)).status_code == 422
    correct = f"/api/cognition/bots/{bot}/memories/1/correct"
    assert (await client.post(correct, json={"text": "x" * 2001}, headers=HEADERS)).status_code == 422
    assert (await client.get("/api/cognition/assets/..%2F..%2Fauth.py")).status_code == 404
    assert (await client.get("/api/cognition/assets/memory.js")).headers["content-type"].startswith("text/javascript")


async def test_forget_needs_the_page_header_and_confirmation_then_is_audited_with_the_webui_user(page) -> None:  # type: ignore[no-untyped-def]
    client, engine, bot, _ = page
    chat = private(bot, U, "小明")
    record = await engine.memories.write(chat, "user", "小明的车牌是浙A12345。", now=NOW)
    path = f"/api/cognition/bots/{bot}/memories/{record.id}/forget"
    assert (await client.post(path, json={"confirm": True})).status_code == 403  # no page header: a cross-site form
    refused = await client.post(path, json={"confirm": True}, headers={**HEADERS, "Origin": "http://evil.example"})
    assert refused.status_code == 403
    assert (await client.post(path, json={}, headers=HEADERS)).status_code == 422  # not confirmed
    done = await client.post(path, json={"confirm": True}, headers={**HEADERS, "Origin": "http://testserver"})
    assert done.status_code == 200 and done.json()["message"] == "已删除这条记忆"
    assert (await client.post(path, json={"confirm": True}, headers=HEADERS)).json()["message"].startswith("记忆 #")
    entries = await engine.governance.audit(bot)
    assert [(entry.action, entry.actor, entry.target) for entry in entries] == [
        ("forget", "webui:admin", f"private:{U}")
    ]
    switched = await _change(client, f"/bots/{bot}/chats/private:{U}/switch", {"on": False})
    assert switched.json()["data"] == {"chat": f"private:{U}", "memory_on": False, "changed": True}
    assert not await engine.governance.memory_on(bot, Scope("private", U))
    assert (await engine.governance.audit(bot))[0].actor == "webui:admin"


async def test_correct_and_the_why_chain_and_export_and_delete_all(page) -> None:  # type: ignore[no-untyped-def]
    client, engine, bot, _ = page
    chat = private(bot, U, "小明")
    record = await engine.memories.write(chat, "user", "小明住在杭州。", now=NOW)
    answer = await client.post(
        f"/api/cognition/bots/{bot}/memories/{record.id}/correct", json={"text": "小明住在上海。"}, headers=HEADERS
    )
    assert answer.status_code == 200, answer.text
    new = answer.json()["data"]
    assert new["text"] == "小明住在上海。" and new["supersedes"] == [record.id] and "webui:admin" in new["how"]
    chain = (await client.get(f"/api/cognition/bots/{bot}/memories/{new['id']}/why")).json()["data"]
    corrections = next(step for step in chain["steps"] if step["stage"] == "corrections")
    assert corrections["memory_ids"] == [record.id] and any("杭州" in item["text"] for item in corrections["items"])
    exported = await client.post(f"/api/cognition/bots/{bot}/users/{U}/export", json={}, headers=HEADERS)
    kinds = [document["type"] for document in exported.json()["data"]]
    assert kinds[0] == "export" and kinds.count("memory") == 2
    wrong = await client.post(
        f"/api/cognition/bots/{bot}/users/{U}/delete-all", json={"confirm_user": V}, headers=HEADERS
    )
    assert wrong.status_code == 400 and "不一致" in wrong.json()["message"]
    erased = await client.post(
        f"/api/cognition/bots/{bot}/users/{U}/delete-all", json={"confirm_user": U}, headers=HEADERS
    )
    assert erased.status_code == 200 and erased.json()["data"]["counts"]["memories"] == 2
    actions = [(entry.action, entry.actor) for entry in await engine.governance.audit(bot)]
    assert ("correct", "webui:admin") in actions and ("export", "webui:admin") in actions
    assert any(action.startswith("delete") and actor == "webui:admin" for action, actor in actions)


def test_without_the_webui_the_plugin_mounts_nothing() -> None:
    """The test bot runs with ``webui_enable = false``: no page, no route, the plugin loaded all the same."""
    import nonebot

    from amrita_plugin_cognition.bot import webui

    assert webui.webui_enabled() is False and webui.mount() is False
    paths = [getattr(route, "path", "") for route in nonebot.get_app().routes]
    assert not any(path.startswith("/api/cognition") for path in paths)
    assert nonebot.get_plugin("amrita_plugin_cognition") is not None
