"""The cycle's tools a run is offered by its work (``cycle_tools(engine, desk, work)`` over
``domain/cycle_offer``) on a real engine: every name the table offers is a tool the cycle has,
each kind of work gets its tools, the pre-pass's near clusters bring the tool that pages them
(the context shows them), the message to the user only where allowed, and no work given (None)
offers every tool.

Runs on SQLite + embedded Chroma by default and on PostgreSQL + a Chroma server with
COGNITION_TEST_BACKEND=server.
"""

from __future__ import annotations

import pytest
from cycle_helpers import desk_of
from engine_helpers import make_engine, new_bot

from amrita_plugin_cognition.domain.cycle_offer import ALWAYS, BY_WORK, BY_WORK_IN_GROUP, UNGATED, offered
from amrita_plugin_cognition.domain.judgement import WORK
from amrita_plugin_cognition.domain.records import Scope
from amrita_plugin_cognition.engine.consolidation import PrepassReport
from amrita_plugin_cognition.engine.cycle_tools import cycle_tools

CHAT = Scope("group", "20001")
DM = Scope("private", "10001")


@pytest.fixture
async def engine(tmp_root, chroma_port):  # type: ignore[no-untyped-def]
    return await make_engine(tmp_root, chroma_port)


def _names(engine, desk, work) -> set[str]:  # type: ignore[no-untyped-def]
    return {tool.name for tool in cycle_tools(engine, desk, work)}


async def test_every_name_the_table_offers_is_a_tool_of_the_cycle(engine) -> None:  # type: ignore[no-untyped-def]
    every = _names(engine, desk_of(new_bot(), DM, allow_send_to_user=True), None) | _names(
        engine, desk_of(new_bot(), CHAT), None
    )
    named = {*ALWAYS, *UNGATED, *(name for names in (*BY_WORK.values(), *BY_WORK_IN_GROUP.values()) for name in names)}
    assert named <= every
    assert every - named == set()  # and every tool of the cycle is offered for some work


@pytest.mark.parametrize("kind", WORK)
@pytest.mark.parametrize("scope", [CHAT, DM], ids=["group", "private"])
async def test_each_kind_of_work_is_offered_its_tools(engine, kind: str, scope: Scope) -> None:  # type: ignore[no-untyped-def]
    desk = desk_of(new_bot(), scope, allow_send_to_user=True)
    expected = offered((kind,), group=scope.is_group)
    assert expected is not None
    names = _names(engine, desk, (kind,))
    assert names == expected - ({"cycle_send_to_user"} if scope.is_group else set())
    assert names < _names(engine, desk, None)  # less than every tool


async def test_near_clusters_the_context_shows_bring_the_tool_that_pages_them(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    shown = PrepassReport(bot, CHAT, near=[(1, 2)])
    assert "cycle_clusters" in _names(engine, desk_of(bot, CHAT, prepass=shown), ("suggestions",))
    assert "cycle_clusters" not in _names(engine, desk_of(bot, CHAT), ("suggestions",))


async def test_the_message_to_the_user_only_where_allowed(engine) -> None:  # type: ignore[no-untyped-def]
    assert "cycle_send_to_user" in _names(engine, desk_of(new_bot(), DM, allow_send_to_user=True), ())
    assert "cycle_send_to_user" not in _names(engine, desk_of(new_bot(), DM), ())
    assert _names(engine, desk_of(new_bot(), DM), ()) == set(ALWAYS)
