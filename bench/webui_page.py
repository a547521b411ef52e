"""The WebUI memory page on a big bank: how fast its first screen and its routes answer.

A standalone home with ``--count`` memories of one bot account (60 % in one group, the rest over
200 groups, 20 speakers), written through ``engine.memories.remember`` with a flat benchmark
embedder (the page reads only SQL) and cached in /tmp/cognition-bench-cache; then the WebUI bot
(``_webui_server.py``, another process, uvicorn on 127.0.0.1) serves it. Measured, medians of
``--runs``: the routes over httpx (logged in: the chats list, the big chat's first page, a deep
page, a text search, a speaker filter, one memory's why chain), then the page itself in Debian's
Chromium (Playwright, the system browser): from navigation start to the first memory on screen,
for first visits (a new browser context each, nothing cached) and repeated ones, and the page's
own part of each (from the moment the WebUI asks for its entry module). Target: the first screen
under 1 s at 100,000 memories.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from _common import (
    FlatEmbedder,
    init_engine_only,
    machine_line,
    open_engine,
    parse_args,
    quiet_cognition_logs,
    throwaway_home,
    verdict,
)
from _corpus import CACHE_ROOT, facts
from _webui import PASSWORD, free_port, login, start_server, stop_server

BOT = "3000001"
BIG = "20001"
FIRST_SCREEN_LIMIT_MS = 1000.0


def _arguments(parser) -> None:  # type: ignore[no-untyped-def]
    parser.add_argument("--count", type=int, default=100_000, help="memories in the bank")
    parser.add_argument("--runs", type=int, default=7, help="measurements per figure")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the cached bank")
    parser.add_argument(
        "--settle", type=float, default=45.0, help="seconds to wait after the bot starts (its startup repair pass)"
    )


async def seed(home: Path, count: int) -> float:
    """Write the bank (in another process's folder layout: the server opens the same home)."""
    from datetime import datetime, timedelta

    from amrita_plugin_cognition.api import UTC, MemoryDraft, Provenance, Scope

    init_engine_only(home)
    quiet_cognition_logs()
    engine = await open_engine(home, embedder=FlatEmbedder())
    await engine.index.check_fingerprint()
    texts = facts(count)
    groups = [BIG] + [str(30000 + number) for number in range(200)]
    big = int(count * 0.6)
    base = datetime(2025, 1, 1, tzinfo=UTC)
    started = time.perf_counter()
    batch: dict[str, list[MemoryDraft]] = {}
    for index, text in enumerate(texts):
        scope_id = BIG if index < big else groups[1 + index % 200]
        speaker = str(100000 + index % 20)
        batch.setdefault(scope_id, []).append(
            MemoryDraft(
                text=text,
                scope=Scope("group", scope_id),
                speaker_id=speaker,
                speaker_name=f"成员{index % 20}",
                subject_id=speaker,
                provenance=Provenance.IMPORTED,
            )
        )
        if len(batch[scope_id]) == 1000 or index == count - 1:
            for key in [key for key, drafts in batch.items() if len(drafts) == 1000 or index == count - 1]:
                await engine.memories.remember(BOT, batch.pop(key), now=base + timedelta(minutes=index))
            await engine.index.drain()
            if index % 10_000 < 1000:
                print(f"  wrote {index + 1}/{count}", file=sys.stderr, flush=True)
    await engine.index.drain()
    await engine.close()
    return time.perf_counter() - started


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def measure_routes(base: str, runs: int) -> dict[str, float]:
    with login(base) as client:
        page = client.get(f"/api/cognition/bots/{BOT}/chats/group:{BIG}/memories").json()["data"]
        last_page = max(1, page["total"] // 20)
        one_id = page["items"][0]["id"]
        routes = {
            "chats list": (f"/api/cognition/bots/{BOT}/chats", {}),
            "big chat, page 1": (f"/api/cognition/bots/{BOT}/chats/group:{BIG}/memories", {}),
            "big chat, last page": (f"/api/cognition/bots/{BOT}/chats/group:{BIG}/memories", {"page": last_page}),
            "search 火锅": (f"/api/cognition/bots/{BOT}/chats/group:{BIG}/memories", {"q": "火锅"}),
            "speaker filter": (f"/api/cognition/bots/{BOT}/chats/group:{BIG}/memories", {"speaker": "100003"}),
            "why chain": (f"/api/cognition/bots/{BOT}/memories/{one_id}/why", {}),
        }
        figures = {}
        for name, (path, params) in routes.items():
            samples = []
            for _ in range(runs):
                began = time.perf_counter()
                answer = client.get(path, params=params)
                samples.append(time.perf_counter() - began)
                answer.raise_for_status()
            figures[name] = _median_ms(samples)
        figures["total"] = float(page["total"])
    return figures


@dataclass
class Visits:
    """Navigation start → the page's first memories in the DOM (the page's ``cognition:first-screen``
    mark), and the page's own part of it (from the moment the WebUI asked for its entry module),
    for fresh visits (a new browser context each: nothing cached, as a first visit) and repeated
    ones (the same context: the WebUI's bundle cached, the page's modules revalidated)."""

    fresh: list[float] = field(default_factory=list)
    fresh_own: list[float] = field(default_factory=list)
    repeated: list[float] = field(default_factory=list)
    repeated_own: list[float] = field(default_factory=list)
    fresh_parts: list[dict[str, float | None]] = field(default_factory=list)


MARK = 'performance.getEntriesByName("cognition:first-screen")[0].startTime'


async def _visit(page, base: str) -> tuple[float, dict[str, float | None]]:  # type: ignore[no-untyped-def]
    await page.goto(f"{base}/cognition/memory")
    await page.locator(".cg-memory").first.wait_for(timeout=60_000)
    return float(await page.evaluate(MARK)), await page.evaluate(PARTS)


def _own(screen: float, parts: dict[str, float | None]) -> float:
    asked = parts.get("this page's first module asked")
    return screen - asked if asked is not None else float("nan")


async def measure_first_screen(base: str, runs: int) -> Visits:
    from playwright.async_api import async_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("no Chromium on PATH: apt-get install chromium")
    visits = Visits()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        for _ in range(runs):  # a first visit each: a new context has an empty cache
            context = await browser.new_context(viewport={"width": 1280, "height": 900})
            answer = await context.request.post(
                f"{base}/api/auth/login", data={"username": "admin", "password": PASSWORD}
            )
            assert answer.ok, await answer.text()
            page = await context.new_page()
            screen, parts = await _visit(page, base)
            visits.fresh.append(screen)
            visits.fresh_own.append(_own(screen, parts))
            visits.fresh_parts.append(parts)
            if len(visits.fresh) == runs:  # the last context: repeated visits
                for _ in range(runs):
                    screen, parts = await _visit(page, base)
                    visits.repeated.append(screen)
                    visits.repeated_own.append(_own(screen, parts))
            await context.close()
        await browser.close()
    return visits


#: Where a visit's time goes, from the browser's resource timings (ms since navigation start): the
#: WebUI's own document and bundle, then this page's modules, its first API answer, its first screen.
PARTS = """() => {
  const entries = performance.getEntriesByType("resource");
  const ours = entries.filter((entry) => entry.name.includes("/api/cognition/assets/"));
  const api = entries.filter((entry) => entry.name.includes("/api/cognition/") && !ours.includes(entry));
  const nav = performance.getEntriesByType("navigation")[0];
  const first = (list, key) => list.length ? Math.min(...list.map((entry) => entry[key])) : null;
  const last = (list, key) => list.length ? Math.max(...list.map((entry) => entry[key])) : null;
  return {
    "document received": nav ? nav.responseEnd : null,
    "WebUI's own scripts loaded": last(entries.filter((entry) => !ours.includes(entry) && !api.includes(entry)
      && entry.initiatorType === "script"), "responseEnd"),
    "this page's first module asked": first(ours, "startTime"),
    "this page's modules loaded": last(ours.filter((entry) => entry.name.endsWith(".js")), "responseEnd"),
    "first API call asked": first(api, "startTime"),
    "first API answer": first(api, "responseEnd"),
    "modules fetched": ours.filter((entry) => entry.name.endsWith(".js")).length,
  };
}"""


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], _arguments)
    count = 600 if args.quick else args.count
    runs = 2 if args.quick else args.runs
    home = throwaway_home("webui") if args.quick else CACHE_ROOT / f"webui-page-{count}"
    marker = home / "complete.json"
    if args.rebuild or (home.exists() and not marker.exists()):
        shutil.rmtree(home, ignore_errors=True)
    if not marker.exists():
        home.mkdir(parents=True, exist_ok=True)
        print(f"building a bank of {count} memories in {home} …", file=sys.stderr, flush=True)
        seconds = asyncio.run(seed(home, count))
        marker.write_text(json.dumps({"count": count, "seconds": round(seconds, 1)}), encoding="utf-8")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(home, port, home / "server.log")
    # the bot checks the whole vector index against SQL in the background as it starts: measure after it
    time.sleep(0 if args.quick else args.settle)
    try:
        routes = measure_routes(base, runs)
        visits = asyncio.run(measure_first_screen(base, runs))
    finally:
        stop_server(server)
        if args.quick:
            shutil.rmtree(home, ignore_errors=True)
    print(machine_line())
    print(f"measured {0 if args.quick else args.settle:g} s after the bot started")
    print(f"bank: {count} memories of one bot account, {int(routes.pop('total'))} in the big chat (group:{BIG})")
    print("routes (httpx, logged in), median of", runs, "runs:")
    for name, value in routes.items():
        print(f"  {name:<22} {value:8.1f} ms")
    median = statistics.median(visits.repeated)
    print(
        f"first screen (Chromium, navigation start → first memory shown), repeated visits: median {median:.0f} ms, "
        f"max {max(visits.repeated):.0f} ms over {runs} — {verdict(median, FIRST_SCREEN_LIMIT_MS)}; "
        "the page's own part (from the WebUI asking for its module): "
        f"median {statistics.median(visits.repeated_own):.0f} ms"
    )
    fresh = statistics.median(visits.fresh)
    print(
        f"first visit (a fresh browser context each, nothing cached): median {fresh:.0f} ms, "
        f"max {max(visits.fresh):.0f} ms over {runs} — {verdict(fresh, FIRST_SCREEN_LIMIT_MS)}; "
        f"the page's own part: median {statistics.median(visits.fresh_own):.0f} ms"
    )
    print("  where a first visit's time goes (ms since navigation start, median of the fresh visits):")
    for name in visits.fresh_parts[0]:
        values = [parts[name] for parts in visits.fresh_parts if parts[name] is not None]
        print(f"    {name:<32} {f'{statistics.median(values):8.0f}' if values else '       —'}")


if __name__ == "__main__":
    main()
