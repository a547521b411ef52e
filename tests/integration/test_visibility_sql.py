"""Visibility is decided once (``domain/visibility.py``) and read twice: in Python
(``Visibility.allows``: recall's final check, ``/memory … show``, corrections) and as SQL
(``repository.visibility_clause``: ``/memory … list``, the emptiness probe). Hypothesis generates
facts (group and private chats, two bot accounts, speakers and subjects, active and superseded)
and chats, and for every policy the configuration allows asserts on the suite's database
(SQLite, or PostgreSQL with ``COGNITION_TEST_BACKEND=server``):

* the SQL filter returns exactly the facts the domain admits, for a chat and for each list target;
* the domain admits exactly what the policy's rules say (an oracle written from the rules, as in
  ``test_property.py``): a change of the grants alone is caught here, a change of either reading
  of them alone by the first check;
* the list use case (``engine.memories.list``) shows exactly the listing's facts, never a fact
  the chat could not see under either policy.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar, get_args

from engine_helpers import NOW, make_engine, new_bot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from amrita_plugin_cognition.config import CognitionConfig
from amrita_plugin_cognition.domain.records import ChatContext, MemoryStatus, Scope
from amrita_plugin_cognition.domain.visibility import (
    SCOPE_POLICIES,
    ScopePolicy,
    listing_visibility,
    visibility_for,
)
from amrita_plugin_cognition.errors import InvalidInput
from amrita_plugin_cognition.store import repository
from amrita_plugin_cognition.store.models import MemoryRow

T = TypeVar("T")
SERVER = os.environ.get("COGNITION_TEST_BACKEND") == "server"
EXAMPLES = int(os.environ.get("COGNITION_VISIBILITY_EXAMPLES", "60" if SERVER else "40"))

GROUPS = ("20001", "20002", "20003")
USERS = ("10001", "10002", "10003")
PEOPLE = (*USERS, "")  # a fact may have no speaker or subject id


@dataclass(frozen=True)
class Fact:
    other_bot: bool
    scope: Scope
    speaker: str
    subject: str
    status: str


@dataclass(frozen=True)
class Chat:
    other_bot: bool
    scope: Scope
    user: str
    role: str
    bot_admin: bool


scopes = st.one_of(
    st.sampled_from(GROUPS).map(lambda group: Scope("group", group)),
    st.sampled_from(USERS).map(lambda user: Scope("private", user)),
)
facts = st.builds(
    Fact,
    other_bot=st.booleans(),
    scope=scopes,
    speaker=st.sampled_from(PEOPLE),
    subject=st.sampled_from(PEOPLE),
    status=st.sampled_from(("active", "active", "superseded")),
)


@st.composite
def chats(draw: st.DrawFn) -> Chat:
    scope = draw(scopes)
    if scope.is_group:
        user = draw(st.sampled_from(USERS))
        role = draw(st.sampled_from(("member", "admin", "owner")))
    else:  # a private chat is its user's; now and then the event carries no user id
        user = draw(st.sampled_from((scope.id, scope.id, scope.id, "")))
        role = ""
    return Chat(draw(st.booleans()), scope, user, role, draw(st.booleans()))


def rules_allow(fact: Fact, fact_bot: str, context: ChatContext, policy: ScopePolicy) -> bool:
    """The scope policy from its rules (not from the code): nothing crosses bot accounts; a
    chat sees its own facts; a group under ``open`` every group's; a private chat the group
    facts said by or about its (known) user; a private fact never leaves its chat."""
    if fact_bot != context.bot_id:
        return False
    if fact.scope == context.scope:
        return True
    if not fact.scope.is_group:
        return False
    if context.scope.is_group:
        return policy == "open"
    return bool(context.user_id) and context.user_id in (fact.speaker, fact.subject)


def rules_list(fact: Fact, fact_bot: str, context: ChatContext, target: str) -> bool:
    """``/memory group list``: the group's facts; ``/memory user list``: the speaker's facts of
    this chat, and from a private chat their group facts too."""
    if fact_bot != context.bot_id:
        return False
    if target == "group":
        return fact.scope == context.scope
    about = bool(context.user_id) and context.user_id in (fact.speaker, fact.subject)
    return about and (fact.scope == context.scope or (not context.scope.is_group and fact.scope.is_group))


def test_every_configurable_policy_is_tested() -> None:
    allowed = get_args(CognitionConfig.model_fields["scope_policy"].annotation)
    assert set(allowed) == set(SCOPE_POLICIES) == set(get_args(ScopePolicy))


async def test_sql_filter_returns_exactly_what_the_domain_admits(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    loop = asyncio.get_running_loop()

    def run(work: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(work, loop).result(timeout=120)

    async def store(bot: str, other: str, drawn: list[Fact]) -> dict[int, Fact]:
        rows = []
        async with engine.unit_of_work() as uow:
            for number, fact in enumerate(drawn):
                rows.append(
                    MemoryRow(
                        bot_id=other if fact.other_bot else bot,
                        scope_kind=fact.scope.kind,
                        scope_id=fact.scope.id,
                        speaker_id=fact.speaker,
                        subject_id=fact.subject,
                        text=f"事实{number}",
                        tags=json.dumps([]),
                        source=json.dumps({}),
                        recorded_at=NOW,
                        updated_at=NOW,
                        status=fact.status,
                        content_hash=f"{bot}-{number}",
                    )
                )
            uow.session.add_all(rows)
            await uow.session.flush()
            ids = {row.id: fact for row, fact in zip(rows, drawn, strict=True)}
            await uow.commit()
        return ids

    async def sql_ids(query: Any) -> set[int]:
        async with engine.unit_of_work() as uow:
            result = await uow.session.execute(query.with_only_columns(MemoryRow.id))
            return {row[0] for row in result}

    async def records(ids: set[int]) -> list[Any]:
        async with engine.unit_of_work() as uow:
            rows = (await uow.session.execute(select(MemoryRow).where(MemoryRow.id.in_(ids)))).scalars()
            return [repository.to_record(row) for row in rows]

    async def listed(context: ChatContext, target: Any) -> set[int]:
        shown: set[int] = set()
        offset = 0
        while True:
            page, total = await engine.memories.list(context, target, offset, 50)
            shown |= {record.id for record in page}
            offset += 50
            if offset >= total:
                return shown

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        derandomize=not SERVER,
    )
    @given(drawn=st.lists(facts, min_size=0, max_size=14), drawn_chats=st.lists(chats(), min_size=1, max_size=4))
    def check(drawn: list[Fact], drawn_chats: list[Chat]) -> None:
        bot, other = new_bot(), new_bot()
        ids = run(store(bot, other, drawn))
        every = run(records(set(ids)))
        active = [record for record in every if record.status == MemoryStatus.ACTIVE]
        for chat in drawn_chats:
            context = ChatContext(
                other if chat.other_bot else bot,
                chat.scope,
                chat.user,
                group_role=chat.role,
                is_bot_admin=chat.bot_admin,
            )
            seen: dict[ScopePolicy, set[int]] = {}
            for policy in SCOPE_POLICIES:
                visibility = visibility_for(context, policy)
                admitted = {record.id for record in active if visibility.allows(record)}
                from_rules = {
                    record.id for record in active if rules_allow(ids[record.id], record.bot_id, context, policy)
                }
                in_sql = run(sql_ids(repository.visible_memories_query(visibility)))
                assert in_sql == admitted, (policy, context, visibility.grants)
                assert admitted == from_rules, (policy, context, visibility.grants)
                assert run(repository_any_visible(engine, visibility)) == bool(admitted)
                seen[policy] = admitted
            for target in ("user", "group"):
                if target == "group" and not context.scope.is_group:
                    try:
                        run(listed(context, target))
                    except InvalidInput:
                        continue
                    raise AssertionError("a private chat has no group list")
                listing = listing_visibility(context, target)  # type: ignore[arg-type]
                admitted = {record.id for record in active if listing.allows(record)}
                from_rules = {
                    record.id for record in active if rules_list(ids[record.id], record.bot_id, context, target)
                }
                assert run(sql_ids(repository.visible_memories_query(listing))) == admitted, (target, context)
                assert admitted == from_rules, (target, context, listing.grants)
                assert run(listed(context, target)) == admitted, (target, context)
                assert all(admitted <= shown for shown in seen.values()), (target, context)

    await asyncio.to_thread(check)


async def repository_any_visible(engine: Any, visibility: Any) -> bool:
    async with engine.unit_of_work() as uow:
        return await repository.any_visible(uow.session, visibility)
