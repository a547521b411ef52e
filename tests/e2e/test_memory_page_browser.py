"""The memory page in a real bot with Amrita's WebUI on (another process, uvicorn on 127.0.0.1),
driven by Debian's Chromium through Playwright (the system browser, no download): an
unauthenticated visit is refused, the page renders a chat's memories (stored markup shown as
text, never run), "why" shows the chain, and a forget asks first and then works. Screenshots are
taken and checked (the confirmation darkens the page; the page is not blank)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import httpx
import pytest
from processes import REPO, seed_home

sys.path.insert(0, str(REPO / "bench"))
from _webui import PASSWORD, free_port, login, start_server, stop_server

pytestmark = [pytest.mark.slow, pytest.mark.embedded_only]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
BOT = "3000001"
HOSTILE = "小红说<img src=x onerror=alert(1)><script>alert(2)</script>"

SEED = f"""
from amrita_plugin_cognition.api import ChatContext, InputMessage, Scope
bot, scope = {BOT!r}, Scope("group", "20001")
xiaoming = ChatContext(bot, scope, "10001", "小明")
xiaohong = ChatContext(bot, scope, "10002", "小红")
start = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
for number in range(30):
    at = start + timedelta(minutes=number)
    await engine.memories.write(xiaoming, "user", f"小明的第{{number}}号爱好是收集邮票。", now=at)
said = InputMessage("m-run", "10001", "小明", "我每个周末都去西湖跑步", start + timedelta(hours=2))
await engine.turns.record(xiaoming, said, "真棒", ended=True)
target = await engine.memories.write(
    xiaoming, "user", "小明每个周末都去西湖跑步。", now=start + timedelta(hours=2), message_id="m-run"
)
await engine.memories.write(xiaohong, "user", {HOSTILE!r}, now=start + timedelta(hours=3))
await engine.index.drain()
print(target.id)
"""


def _brightness(path: Path) -> float:
    from PIL import Image, ImageStat

    with Image.open(path) as image:
        return float(ImageStat.Stat(image.convert("L")).mean[0])


def _pixel(path: Path, where: tuple[int, int]) -> int:
    from PIL import Image

    with Image.open(path) as image:
        return int(image.convert("L").getpixel(where))  # type: ignore[arg-type]


def _colours(path: Path) -> int:
    from PIL import Image

    with Image.open(path) as image:
        return len(image.convert("RGB").getcolors(maxcolors=1_000_000) or [])


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on PATH (apt-get install chromium; .ci/run installs it)")
async def test_the_memory_page_in_chromium(tmp_path: Path) -> None:
    from playwright.async_api import async_playwright

    home = tmp_path / "home"
    home.mkdir()
    target = int(seed_home(home, SEED).strip().splitlines()[-1])
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(home, port, tmp_path / "server.log")
    shots = tmp_path / "shots"
    shots.mkdir()
    alerts: list[str] = []
    try:
        # the API refuses without the WebUI's login, answers with it
        assert httpx.get(f"{base}/api/cognition/bots", timeout=10).status_code == 401
        with login(base) as client:
            bots = client.get("/api/cognition/bots").json()["data"]
            assert bots == [{"bot_id": BOT, "memories": 32}]
            menu = client.get("/api/meta/menu").json()["data"]["routes"]
            assert any(route["name"] == "记忆" and route["module_url"] for route in menu)

        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            context = await browser.new_context(viewport={"width": 1280, "height": 900}, locale="zh-CN")
            page = await context.new_page()
            page.on("dialog", lambda dialog: (alerts.append(dialog.message), dialog.dismiss()))
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))

            # not logged in: the WebUI sends the visit back to its login, nothing of memory shown
            await page.goto(f"{base}/cognition/memory")
            await page.wait_for_load_state("networkidle")
            assert page.url.rstrip("/") == base
            await page.screenshot(path=str(shots / "refused.png"))
            assert "邮票" not in await page.content()

            answer = await context.request.post(
                f"{base}/api/auth/login", data={"username": "admin", "password": PASSWORD}
            )
            assert answer.ok
            await page.goto(f"{base}/cognition/memory")
            memories = page.locator(".cg-memory")
            await memories.first.wait_for(timeout=30_000)
            texts = await page.locator(".cg-memory .cg-text").all_text_contents()
            assert texts[0] == HOSTILE and len(texts) == 20  # markup as text, the first page of 20
            assert await page.locator(".cg-memory img").count() == 0 and alerts == []
            await page.screenshot(path=str(shots / "memories.png"), full_page=True)
            assert await page.get_by_text("记忆", exact=True).count() >= 1  # the sidebar's entry

            row = page.locator(f'.cg-memory[data-id="{target}"]')
            await row.get_by_role("button", name="为什么记得？").click()
            chain = row.locator(".cg-why-chain")
            await chain.wait_for()
            assert "我每个周末都去西湖跑步" in await chain.inner_text()
            await page.screenshot(path=str(shots / "why.png"))

            await row.locator(".cg-forget").click()
            dialog = page.locator(".cg-overlay")
            await dialog.wait_for()
            assert "小明每个周末都去西湖跑步。" in await dialog.inner_text()
            await page.screenshot(path=str(shots / "forget-asks.png"))
            await dialog.locator("[data-agree]").click()
            await page.locator(".cg-note.cg-ok").wait_for()
            assert "已删除这条记忆" in await page.locator(".cg-notice").inner_text()
            await page.locator(f'.cg-memory[data-id="{target}"]').wait_for(state="detached")
            await page.screenshot(path=str(shots / "forgotten.png"))

            # the other tabs render (their empty states here) without a script error
            for tab, shown in (
                ("画像", "还没有画像"),
                ("任务", "队列里没有任务"),
                ("知识库", "知识库是空的"),
                ("用户数据", "导出"),
            ):
                await page.locator(".cg-tabs").get_by_role("button", name=tab).click()
                await page.locator(".cg-body").get_by_text(shown).first.wait_for()
            await page.locator(".cg-tabs").get_by_role("button", name="会话与记忆").click()
            await page.get_by_role("button", name="备忘录与提醒").click()
            await page.get_by_text("置顶备忘录").wait_for()
            assert errors == [] and alerts == []
            await browser.close()

        with login(base) as client:
            assert client.get(f"/api/cognition/bots/{BOT}/memories/{target}").status_code == 404
            audit_rows = client.get(f"/api/cognition/bots/{BOT}/chats").json()["data"][0]
            assert audit_rows["active"] == 31
    finally:
        stop_server(server)
    for name in ("refused", "memories", "why", "forget-asks", "forgotten"):
        assert (shots / f"{name}.png").stat().st_size > 5_000, name
    assert _colours(shots / "memories.png") > 50  # the page is drawn, not blank
    # the confirmation covers the page with its dark overlay; it is gone after the forget
    assert _brightness(shots / "forget-asks.png") < _brightness(shots / "forgotten.png") - 20
    sidebar = (100, 600)
    assert _pixel(shots / "forget-asks.png", sidebar) < _pixel(shots / "memories.png", sidebar) - 60
    copy_to = REPO / "docs" / "images"
    if copy_to.is_dir() and os.environ.get("COGNITION_SAVE_SCREENSHOTS"):
        shutil.copy(shots / "why.png", copy_to / "webui-memory-page.png")
