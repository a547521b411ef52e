"""One property test over everything: a hypothesis state machine drives random sequences of
writes (the tool path and the historian's path), corrections, forgets, delete-alls, per-chat
switches and opt-outs, card merges, switches of the scope policy, recalls, list reads and card
reads (the injected block, ``cognition_profile_get``, ``cognition_profile_search``), across three
groups, private chats, four users whose nicknames collide in pairs and two bot accounts, on the
backend the suite runs on (SQLite and embedded Chroma, or PostgreSQL and a Chroma server).

The model below is written from the rules, not from the code: which chat sees which fact under
the scope policy in force (drawn at the start, switched by a rule), what a correction or a forget
leaves, what a switched-off chat or an opted-out user may write. After every read it checks,
against the model: zero results outside the scope policy, zero forgotten facts, zero superseded
facts returned as current; after every write: zero writes for a switched-off chat or an
opted-out user. Cards: ``end`` observations go through the real historian and the real merge;
the fake model writes each fact back as said and each card from exactly the facts its prompt
gives (so a card shows what the engine gave it); every fact a card read shows must be one the
chat may see under the policy in force, and none forgotten.

Budget: ``COGNITION_PROPERTY_EXAMPLES`` sequences of up to ``COGNITION_PROPERTY_STEPS`` steps
(defaults are small in the default suite; the server-mode run uses more).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import re
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from engine_helpers import NOW, historian_llm, make_engine, new_bot, register_preset
from fake_openai import FakeOpenAI
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from amrita_plugin_cognition.domain.erasure import ErasureTarget
from amrita_plugin_cognition.domain.permissions import Operator
from amrita_plugin_cognition.domain.records import ChatContext, MemoryDraft, Scope
from amrita_plugin_cognition.domain.visibility import ScopePolicy
from amrita_plugin_cognition.engine import erasure, switches
from amrita_plugin_cognition.engine.context import build_context
from amrita_plugin_cognition.errors import CognitionError, InvalidInput

T = TypeVar("T")
SERVER = os.environ.get("COGNITION_TEST_BACKEND") == "server"
EXAMPLES = int(os.environ.get("COGNITION_PROPERTY_EXAMPLES", "40" if SERVER else "12"))
STEPS = int(os.environ.get("COGNITION_PROPERTY_STEPS", "40" if SERVER else "25"))

GROUPS = ("20001", "20002", "20003")
#: Two pairs of users share a nickname: nothing may be decided by name.
USERS = {"10001": "小明", "10002": "小明", "10003": "阿强", "10004": "阿强"}
TOPICS = ("羽毛球", "火锅", "考研", "搬家", "养猫", "加班")


@dataclass
class Fact:
    bot: str
    scope: Scope
    speaker: str
    subject: str
    text: str
    status: str = "active"  # active | superseded | forgotten


def allowed(fact: Fact, context: ChatContext, policy: ScopePolicy) -> bool:
    """The scope policy, from its rules: a group sees its own facts (``open``: every group's);
    a private chat sees its own facts and the group facts said by or about its user; nothing
    crosses bot accounts, a private fact never leaves its chat."""
    if fact.bot != context.bot_id:
        return False
    if fact.scope == context.scope:
        return True
    if context.scope.is_group:
        return policy == "open" and fact.scope.is_group
    return fact.scope.is_group and context.user_id in (fact.speaker, fact.subject)


def context_of(bot: str, chat: str, user: str) -> ChatContext:
    """``chat`` is a group id, or "private" for the user's private chat."""
    if chat == "private":
        return ChatContext(bot, Scope("private", user), user, USERS[user])
    return ChatContext(bot, Scope("group", chat), user, USERS[user])


bots = st.integers(0, 1)
policies = st.sampled_from(("strict", "open"))
chats = st.sampled_from((*GROUPS, "private"))
users = st.sampled_from(tuple(USERS))
topics = st.sampled_from(TOPICS)
subjects = st.one_of(st.none(), users)


#: Every fact's text carries its number (``Memory.text``): what a card read shows is found by it.
NUMBERED = re.compile(r"第(\d+)次说起")


class Memory(RuleBasedStateMachine):
    engine: Any = None
    loop: asyncio.AbstractEventLoop | None = None

    def __init__(self) -> None:
        super().__init__()
        self.bots = [new_bot(), new_bot()]
        self.facts: dict[int, Fact] = {}
        self.off: set[tuple[str, Scope]] = set()
        self.opted_out: set[tuple[str, str]] = set()
        #: older version -> the correction that replaced it
        self.replaced: dict[int, int] = {}
        self.counter = itertools.count(1)
        self.policy: ScopePolicy = "strict"
        #: Observations handed to ``end`` and not yet written by the historian: (bot, text) -> scope.
        self.observed: dict[tuple[str, str], Scope] = {}
        #: (bot, user) of every fact the historian wrote: whose cards a merge built.
        self.carded: set[tuple[str, str]] = set()

    # ------------------------------------------------------------------ plumbing

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        assert self.loop is not None
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(timeout=180)

    def text(self, user: str, subject: str | None, topic: str) -> str:
        number = next(self.counter)
        if subject:
            return f"QQ号{subject}（昵称{USERS[subject]}）第{number}次说起{topic}的事。"
        return f"{USERS[user]}第{number}次说起{topic}的事。"

    def may_write(self, bot: str, scope: Scope, user: str, subject: str | None) -> bool:
        people = {user, subject} - {None}
        return (bot, scope) not in self.off and not any((bot, person) in self.opted_out for person in people)

    def active(self) -> list[int]:
        return sorted(memory_id for memory_id, fact in self.facts.items() if fact.status == "active")

    # ------------------------------------------------------------------ writes

    @initialize(policy=policies)
    def nothing_yet(self, policy: ScopePolicy) -> None:
        assert self.engine is not None
        self.set_policy(policy)

    @rule(policy=policies)
    def set_policy(self, policy: ScopePolicy) -> None:
        """The bot owner switches ``scope_policy`` (a hot key: the engine reads it at each use)."""
        self.policy = policy
        self.engine.config = self.engine.config.model_copy(update={"scope_policy": policy})

    @rule(bot=bots, chat=chats, user=users, subject=subjects, topic=topics)
    def tool_write(self, bot: int, chat: str, user: str, subject: str | None, topic: str) -> None:
        bot_id = self.bots[bot]
        context = context_of(bot_id, chat, user)
        text = self.text(user, subject, topic)
        target = "group" if context.scope.is_group and subject is None else "user"
        expected = self.may_write(bot_id, context.scope, user, subject)
        try:
            record = self.run(self.engine.memories.write(context, target, text, now=NOW))
        except CognitionError as error:
            assert not expected, f"a permitted write was refused: {error.zh}"
            return
        assert expected, f"written although the chat is off or someone opted out: {text}"
        self.facts[record.id] = Fact(bot_id, record.scope, record.speaker_id, record.subject_id, text)

    @rule(bot=bots, chat=chats, user=users, subject=subjects, topic=topics)
    def historian_write(self, bot: int, chat: str, user: str, subject: str | None, topic: str) -> None:
        """The path of historian facts, importers and consolidation (``remember``)."""
        bot_id = self.bots[bot]
        context = context_of(bot_id, chat, user)
        text = self.text(user, subject, topic)
        draft = MemoryDraft(
            text=text,
            scope=context.scope,
            speaker_id=user,
            speaker_name=USERS[user],
            subject_id=subject or "",
            subject_name=USERS[subject] if subject else "",
            source={"job": next(self.counter)},
        )
        result = self.run(self.engine.memories.remember(bot_id, [draft], now=NOW))
        expected = self.may_write(bot_id, context.scope, user, subject)
        assert bool(result.written) == expected, (text, result.refused)
        for record in result.written:
            self.facts[record.id] = Fact(bot_id, record.scope, record.speaker_id, record.subject_id, text)

    @rule(bot=bots, chat=chats, user=users, subject=subjects, topic=topics)
    def end_of_turn(self, bot: int, chat: str, user: str, subject: str | None, topic: str) -> None:
        """The ``end`` tool and transcript capture: a note and a job, a transcript row; nothing of
        either for a switched-off chat or an opted-out speaker; an observation or a turn naming an
        opted-out user is dropped, the memo of the turn is kept)."""
        from amrita_plugin_cognition.engine.turns import InputMessage

        bot_id = self.bots[bot]
        context = context_of(bot_id, chat, user)
        observation = self.text(user, subject, topic)
        batch = [InputMessage(f"m{next(self.counter)}", user, USERS[user], observation, NOW)]
        chat_on = (bot_id, context.scope) not in self.off
        speaker_in = (bot_id, user) not in self.opted_out
        ended = self.run(self.engine.turns.end(context, f"聊了{topic}", [observation], batch=batch, now=NOW))
        assert ended.note_written == (chat_on and speaker_in), (context.scope.key, user, ended)
        assert ended.queued == int(self.may_write(bot_id, context.scope, user, subject)), (observation, ended)
        if ended.queued:
            self.observed[(bot_id, observation)] = context.scope
        logged = self.run(self.engine.turns.record(context, batch[0], "好的", ended=False))
        # a turn that names an opted-out user is kept out of the transcript whole
        assert logged == self.may_write(bot_id, context.scope, user, subject), (context.scope.key, user, subject)

    @rule(data=st.data(), topic=topics)
    def correct(self, data: st.DataObject, topic: str) -> None:
        active = self.active()
        if not active:
            return
        memory_id = data.draw(st.sampled_from(active))
        fact = self.facts[memory_id]
        context = ChatContext(fact.bot, fact.scope, fact.speaker or "10001", USERS.get(fact.speaker, "小明"), "admin")
        text = self.text(context.user_id, None, topic)
        expected = self.may_write(fact.bot, fact.scope, context.user_id, fact.subject or None)
        try:
            record = self.run(self.engine.memories.update(context, memory_id, text, now=NOW))
        except CognitionError as error:
            assert not expected, f"a permitted correction was refused: {error.zh}"
            return
        assert expected, f"a correction was written although the chat is off or someone opted out: {text}"
        fact.status = "superseded"
        self.replaced[memory_id] = record.id
        self.facts[record.id] = Fact(fact.bot, record.scope, record.speaker_id, record.subject_id, text)

    # ------------------------------------------------------------------ forgetting

    def _forget_lineage(self, memory_id: int) -> None:
        """The fact and every version it replaced."""
        self.facts[memory_id].status = "forgotten"
        for older, newer in self.replaced.items():
            if newer == memory_id and self.facts[older].status != "forgotten":
                self._forget_lineage(older)

    @rule(data=st.data())
    def forget(self, data: st.DataObject) -> None:
        active = self.active()
        if not active:
            return
        memory_id = data.draw(st.sampled_from(active))
        fact = self.facts[memory_id]
        context = ChatContext(fact.bot, fact.scope, fact.speaker or "10001", USERS.get(fact.speaker, "小明"), "admin")
        self.run(self.engine.governance.forget(context, memory_id, now=NOW))
        self._forget_lineage(memory_id)

    @rule(bot=bots, chat=chats, user=users)
    def delete_chat(self, bot: int, chat: str, user: str) -> None:
        bot_id = self.bots[bot]
        scope = context_of(bot_id, chat, user).scope
        self.run(erasure.delete_all(self.engine, ErasureTarget.chat(bot_id, scope), actor=Operator(user), now=NOW))
        for memory_id, fact in list(self.facts.items()):
            if fact.bot == bot_id and fact.scope == scope:
                self._forget_lineage(memory_id)

    @rule(bot=bots, user=users)
    def delete_user(self, bot: int, user: str) -> None:
        bot_id = self.bots[bot]
        self.run(erasure.delete_all(self.engine, ErasureTarget.user(bot_id, user), actor=Operator(user), now=NOW))
        mention = f"QQ号{user}（"
        for memory_id, fact in list(self.facts.items()):
            private_chat = fact.scope == Scope("private", user)
            if fact.bot == bot_id and (user in (fact.speaker, fact.subject) or private_chat or mention in fact.text):
                # an active fact goes with its older versions; a superseded one alone
                if fact.status == "active":
                    self._forget_lineage(memory_id)
                else:
                    fact.status = "forgotten"

    # ------------------------------------------------------------------ switches

    @rule(bot=bots, chat=chats, user=users, on=st.booleans())
    def switch(self, bot: int, chat: str, user: str, on: bool) -> None:
        bot_id = self.bots[bot]
        scope = context_of(bot_id, chat, user).scope
        self.run(switches.set_chat_memory(self.engine, bot_id, scope, on, Operator(user), now=NOW))
        if on:
            self.off.discard((bot_id, scope))
        else:
            self.off.add((bot_id, scope))

    @rule(bot=bots, user=users, out=st.booleans())
    def opt(self, bot: int, user: str, out: bool) -> None:
        bot_id = self.bots[bot]
        self.run(switches.set_opt_out(self.engine, bot_id, user, out, actor=Operator(user), now=NOW))
        if out:
            self.opted_out.add((bot_id, user))
        else:
            self.opted_out.discard((bot_id, user))

    # ------------------------------------------------------------------ reads

    def check_returned(self, context: ChatContext, ids: list[int], path: str) -> None:
        for memory_id in ids:
            fact = self.facts.get(memory_id)
            assert fact is not None, f"{path} returned #{memory_id}, which no rule wrote"
            assert fact.status != "forgotten", f"{path} returned forgotten #{memory_id}: {fact.text}"
            assert fact.status == "active", f"{path} returned superseded #{memory_id} as current"
            assert allowed(fact, context, self.policy), (
                f"{path} in {context.scope.key} by {context.user_id} under {self.policy} leaked {fact}"
            )

    @rule(bot=bots, chat=chats, user=users, topic=topics)
    def recall(self, bot: int, chat: str, user: str, topic: str) -> None:
        context = context_of(self.bots[bot], chat, user)
        self.run(self.engine.index.drain())
        result = self.run(self.engine.memories.recall(context, [f"{topic}的事"], now=NOW))
        self.check_returned(context, [hit.record.id for hit in result.hits], "recall")

    @rule(bot=bots, chat=chats, user=users, kind=st.sampled_from(("user", "group")))
    def list_read(self, bot: int, chat: str, user: str, kind: str) -> None:
        context = context_of(self.bots[bot], chat, user)
        if kind == "group" and not context.scope.is_group:
            return
        records, _ = self.run(self.engine.memories.list(context, kind, 0, 50))
        self.check_returned(context, [record.id for record in records], f"list {kind}")

    # ------------------------------------------------------------------ cards

    def run_jobs(self) -> None:
        """The historian's queue until idle: jobs of ``end`` write their facts (the fake model
        writes each observation as said), which queue card merges (no window), which run too,
        as do rebuilds after a forget. The facts written join the model."""
        from sqlalchemy import select

        from amrita_plugin_cognition.store.models import MemoryRow

        self.run(self.engine.historian.run_until_idle(NOW, flush=False))
        if not self.observed:
            return

        async def written() -> list[MemoryRow]:
            texts = sorted({text for _, text in self.observed})
            async with self.engine.session() as session:
                query = select(MemoryRow).where(MemoryRow.bot_id.in_(self.bots), MemoryRow.text.in_(texts))
                return list((await session.execute(query)).scalars())

        for row in self.run(written()):
            scope = self.observed.pop((row.bot_id, row.text))
            assert Scope(row.scope_kind, row.scope_id) == scope, row.text
            self.facts[row.id] = Fact(row.bot_id, scope, row.speaker_id, row.subject_id, row.text)
            self.carded |= {(row.bot_id, person) for person in (row.speaker_id, row.subject_id) if person in USERS}

    @rule()
    def merge(self) -> None:
        self.run_jobs()

    def check_shown(self, context: ChatContext, shown: str, path: str) -> None:
        """Every fact a card read shows (found by its number) may be seen in this chat under
        the policy in force, and none was forgotten; a superseded one may still be on a card."""
        by_number = {int(NUMBERED.search(fact.text).group(1)): fact for fact in self.facts.values()}  # type: ignore[union-attr]
        for number in {int(found) for found in NUMBERED.findall(shown)}:
            fact = by_number.get(number)
            assert fact is not None, f"{path} showed fact {number}, which no rule wrote"
            assert fact.status != "forgotten", f"{path} showed a forgotten fact: {fact.text}"
            assert allowed(fact, context, self.policy), (
                f"{path} in {context.scope.key} by {context.user_id} under {self.policy} leaked {fact}"
            )

    @rule(topic=topics, data=st.data())
    def read_cards(self, topic: str, data: st.DataObject) -> None:
        """The injected block, the get tool (the speaker's card, someone else's, the group's) and
        the search tool, after the queue ran (a forget's rebuild is due at once). Read by
        someone a merged fact was said by or is about (so the cards read exist), in every chat:
        the groups they were not built in, too."""
        self.run_jobs()
        if not self.carded:
            return
        bot_id, user = data.draw(st.sampled_from(sorted(self.carded)))
        other = data.draw(users)
        for chat in (*GROUPS, "private"):
            self.read_cards_in(context_of(bot_id, chat, user), topic, other)

    def read_cards_in(self, context: ChatContext, topic: str, other: str) -> None:
        from amrita_plugin_cognition.bot.tools.registry import TOOLS, parse_arguments

        block = self.run(build_context(self.engine, context, [f"{topic}的事"], now=NOW)).text
        self.check_shown(context, block, "the injected block")

        async def tool(name: str, raw: dict[str, Any]) -> str:
            handler = TOOLS[name]
            try:
                arguments = parse_arguments(handler.arguments, raw, self.engine.config)
                return str(await handler.handler(self.engine, context, arguments, NOW))
            except InvalidInput as refused:  # a card this chat may not see: refused, nothing shown
                return refused.zh

        wanted = [("user", context.user_id), ("user", other)]
        if context.scope.is_group:
            wanted.append(("group", context.scope.id))
        for entity_type, entity_id in wanted:
            shown = self.run(tool("cognition_profile_get", {"entity_type": entity_type, "entity_id": entity_id}))
            self.check_shown(context, shown, f"cognition_profile_get {entity_type} {entity_id}")
        found = self.run(tool("cognition_profile_search", {"query": f"{topic}的事", "top_k": 10}))
        self.check_shown(context, found, "cognition_profile_search")

    @invariant()
    def sql_agrees(self) -> None:
        """Every fact the model holds as forgotten or superseded is not active in SQL."""
        gone = [memory_id for memory_id, fact in self.facts.items() if fact.status != "active"]
        if not gone:
            return
        from amrita_plugin_cognition.store import repository

        async def active_rows() -> set[int]:
            async with self.engine.session() as session:
                rows = await repository.rows_by_ids(session, gone)
            return {row.id for row in rows if row.status == "active"}

        assert self.run(active_rows()) == set()


def fake_model(body: dict[str, Any]) -> dict[str, Any] | None:
    """The historian writes each observation as said; a merge writes a card of exactly the facts
    its prompt gives (new observations and past facts, one per line), nothing else."""
    from test_profile_merge import echo_card, historian_echo, section, tool_of, user_prompt

    from amrita_plugin_cognition.engine.historian import TOOL_NAME as HISTORIAN_TOOL
    from amrita_plugin_cognition.engine.profile_prompt import TOOL_NAME as MERGE_TOOL

    if tool_of(body) == HISTORIAN_TOOL:
        return historian_echo(body)
    if tool_of(body) == MERGE_TOOL:
        prompt = user_prompt(body)
        past = [re.sub(r"^\[\d+\] [^：]*：", "", line) for line in section(prompt, "相关的历史记忆")]
        given = [*section(prompt, "新的观察"), *past]
        return echo_card(body, body="\n".join(given), evaluation="", roast="", tags=[])
    return None


async def test_no_sequence_of_actions_leaks_resurrects_or_writes_where_it_must_not(
    tmp_root, chroma_port, fake_openai: FakeOpenAI
) -> None:
    preset = "cognition-property-test"
    register_preset(preset, fake_openai.base_url)
    fake_openai.responder = fake_model
    Memory.engine = await make_engine(
        tmp_root,
        chroma_port,
        llm=historian_llm(preset),
        profiles={"merge": True, "merge_window_seconds": 0, "body_max_chars": 20000},
    )
    Memory.loop = asyncio.get_running_loop()
    budget = settings(
        max_examples=EXAMPLES,
        stateful_step_count=STEPS,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        derandomize=not SERVER,
    )
    await asyncio.to_thread(run_state_machine_as_test, Memory, settings=budget)
