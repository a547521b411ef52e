"""The fake QQ side of ``whole_bot.py``: a OneBot V11 implementation on the bot's reverse
WebSocket (``/onebot/v11/ws``), as ``scripts/project_turn.py`` is, but asyncio and for many chats.

Each chat is a closed loop: a message, then the bot's reply, then its next message; at most
``in_flight`` turns of all chats wait for the bot at once, the chats taking turns (FIFO), so the
bot is kept busy without a burst of a thousand messages in the same second (Amrita's own
database pool, 15 connections by default, times out under such a burst and no turn completes).
Group chats are half of them, each with a few members
who take turns and address the bot with an ``at``; the rest are private chats. A turn with no
reply within ``TURN_TIMEOUT`` seconds is counted as dropped and the chat goes on. Every API call
the bot makes is answered (messages sent, member and login lookups).

A share of each chat's turns asks the bot to remember a fact (``记住：…（记号…）``): the fake
model hands it to the ``end`` tool. ``plant`` starts a probe: the next such turn of any chat is
also written to the probe file the bot's measuring plugin reads. ``quiet_fact`` is the
transcript path's probe: one message in a new private chat, with no ``end`` (the model answers
with text), after which that chat stays silent.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from _onebot import SELF_ID, info_answer
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

TURN_TIMEOUT = 600.0
CITIES = "成都 重庆 杭州 苏州 西安 大理 厦门 青岛 昆明 长沙 武汉 南京 拉萨 桂林 三亚".split()  # noqa: SIM905
HOBBIES = "火锅 羽毛球 吉他 围棋 咖啡 登山 摄影 书法 滑雪 潜水 烘焙 骑行 钓鱼 象棋 油画".split()  # noqa: SIM905
CHATTER = ("今天天气不错", "刚下班，好累", "晚饭吃什么好呢", "周末有什么安排吗", "这首歌挺好听的")
#: Where the quiet chats of the transcript probes start (far from the load chats' numbers).
QUIET_USER_BASE = 7_000_000


@dataclass(slots=True)
class Chat:
    kind: str  # "group" | "private"
    chat_id: int
    members: list[int]
    turns: int = 0
    waiting: asyncio.Future[float] | None = None

    def speaker(self) -> int:
        return self.members[self.turns % len(self.members)]


@dataclass(slots=True)
class Tally:
    """Replies per bot since the start, and the turns' round-trip seconds."""

    replies: int = 0
    dropped: int = 0
    round_trips: list[tuple[float, float]] = field(default_factory=list)  # (reply wall time, seconds)


def name_of(user_id: int) -> str:
    return f"用户{user_id}"


def event(chat_kind: str, chat_id: int, user_id: int, text: str, message_id: int) -> dict[str, Any]:
    base = {
        "time": int(time.time()),
        "self_id": SELF_ID,
        "post_type": "message",
        "message_id": message_id,
        "user_id": user_id,
        "raw_message": text,
        "font": 0,
    }
    sender = {"user_id": user_id, "nickname": name_of(user_id), "sex": "unknown", "age": 0}
    if chat_kind == "private":
        segments = [{"type": "text", "data": {"text": text}}]
        return {**base, "message_type": "private", "sub_type": "friend", "message": segments, "sender": sender}
    segments = [{"type": "at", "data": {"qq": str(SELF_ID)}}, {"type": "text", "data": {"text": " " + text}}]
    sender = {**sender, "card": "", "role": "member"}
    return {
        **base,
        "message_type": "group",
        "sub_type": "normal",
        "group_id": chat_id,
        "message": segments,
        "sender": sender,
    }


def fact_text(rng: random.Random, user_id: int, marker: str) -> str:
    return f"QQ号{user_id}（昵称{name_of(user_id)}）在{rng.choice(CITIES)}学{rng.choice(HOBBIES)}（记号{marker}）"


class FakeQQ:
    """One bot's QQ side: its chats, the connection, the replies counted."""

    def __init__(
        self,
        label: str,
        url: str,
        chats: int,
        in_flight: int,
        remember_share: float,
        seed: int,
        probe: Callable[..., None] | None,
    ) -> None:
        self.label = label
        #: Turns waiting for the bot at once, over all chats (FIFO: the chats take turns).
        self.window = asyncio.Semaphore(in_flight)
        self.url = url
        self.remember_share = remember_share
        self.rng = random.Random(seed)
        self.probe = probe
        self.tally = Tally()
        self.want_probe = 0
        #: Set when the load ends: no chat starts another turn.
        self.stopping = False
        self._ids = itertools.count(10_000)
        self._ws: ClientConnection | None = None
        self._quiet = itertools.count(QUIET_USER_BASE)
        groups = chats // 2
        self.chats: dict[tuple[str, int], Chat] = {}
        for n in range(groups):
            members = [100_000 + n * 10 + k for k in range(4)]
            self.chats[("group", 200_000 + n)] = Chat("group", 200_000 + n, members)
        for n in range(chats - groups):
            self.chats[("private", 300_000 + n)] = Chat("private", 300_000 + n, [300_000 + n])
        self._tasks: list[asyncio.Task[Any]] = []

    async def connect(self, deadline: float, alive: Callable[[], bool]) -> None:
        headers = {"X-Self-ID": str(SELF_ID), "X-Client-Role": "Universal"}
        while True:
            try:
                # no pings: a bot stopped between phases (SIGSTOP) must not lose its connection
                self._ws = await connect(
                    self.url, additional_headers=headers, open_timeout=5, ping_interval=None, max_size=None
                )
                break
            except (OSError, TimeoutError, ConnectionClosed) as error:
                if not alive():
                    raise RuntimeError(f"{self.label}: the bot exited before it accepted the connection") from error
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{self.label}: the bot did not accept {self.url}: {error}") from error
                await asyncio.sleep(1)
        self._tasks.append(asyncio.create_task(self._serve()))

    def start_chats(self) -> None:
        for chat in self.chats.values():
            self._tasks.append(asyncio.create_task(self._loop(chat)))

    async def finish(self, timeout: float) -> int:
        """End the load: no new turn, the turns in flight answered (at most ``timeout`` seconds);
        how many were still waiting."""
        self.stopping = True
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(chat.waiting is not None for chat in self.chats.values()):
            await asyncio.sleep(0.5)
        left = sum(1 for chat in self.chats.values() if chat.waiting is not None)
        await self.close()
        return left

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._ws is not None:
            await self._ws.close()

    async def _send_event(self, payload: dict[str, Any]) -> None:
        assert self._ws is not None
        await self._ws.send(json.dumps(payload, ensure_ascii=False))

    async def _loop(self, chat: Chat) -> None:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(self.rng.random() * 2)  # the chats do not all start in the same millisecond
        while not self.stopping:
            async with self.window:
                if not self.stopping:
                    await self._turn(chat, loop)

    async def _turn(self, chat: Chat, loop: asyncio.AbstractEventLoop) -> None:
        user = chat.speaker()
        chat.turns += 1
        if self.rng.random() < self.remember_share:
            marker = f"第{chat.turns}号{chat.chat_id}"  # a shape the admission gate does not take for a secret
            text = f"记住：{fact_text(self.rng, user, marker)}"
            if self.probe is not None and self.want_probe > 0:
                self.want_probe -= 1
                self.probe("end", marker, chat.kind, chat.chat_id, user, text.removeprefix("记住："))
        else:
            text = f"{self.rng.choice(CHATTER)}（第{chat.turns}句）"
        chat.waiting = loop.create_future()
        sent = time.time()
        await self._send_event(event(chat.kind, chat.chat_id, user, text, next(self._ids)))
        try:
            replied = await asyncio.wait_for(chat.waiting, TURN_TIMEOUT)
        except TimeoutError:
            self.tally.dropped += 1
            return
        finally:
            chat.waiting = None
        self.tally.replies += 1
        self.tally.round_trips.append((replied, replied - sent))

    async def quiet_fact(self, marker: str) -> None:
        """The transcript path's probe: one fact in a new private chat, which then stays silent."""
        user = next(self._quiet)
        text = f"跟你说一下：{fact_text(self.rng, user, marker).removeprefix(f'QQ号{user}（昵称{name_of(user)}）')}"
        if self.probe is not None:
            self.probe("transcript", marker, "private", user, user, fact_text(self.rng, user, marker))
        await self._send_event(event("private", user, user, text, next(self._ids)))

    async def _serve(self) -> None:
        assert self._ws is not None
        try:
            async for raw in self._ws:
                request = json.loads(raw)
                if "action" not in request:
                    continue
                data = self._answer(request["action"], request.get("params") or {})
                reply = {"status": "ok", "retcode": 0, "data": data, "echo": request.get("echo")}
                await self._ws.send(json.dumps(reply, ensure_ascii=False))
        except ConnectionClosed:
            pass

    def _answer(self, action: str, params: dict[str, Any]) -> Any:
        if action in ("send_msg", "send_private_msg", "send_group_msg"):
            if params.get("group_id") is not None and action != "send_private_msg":
                key = ("group", int(params["group_id"]))
            else:
                key = ("private", int(params.get("user_id") or 0))
            chat = self.chats.get(key)
            if chat is not None and chat.waiting is not None and not chat.waiting.done():
                chat.waiting.set_result(time.time())
            return {"message_id": next(self._ids)}
        return info_answer(action, params, name_of)
