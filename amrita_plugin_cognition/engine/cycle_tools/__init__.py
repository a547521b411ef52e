"""The tools of the consolidation cycle's judgement step: a ReAct agent (``llm/agent.py``) works
on ONE chat's memories with these, built per run over a ``CycleDesk`` (what the run shares).

Every tool name starts with ``cycle_``; descriptions and answers are Chinese and compact (one
line per memory, lists paged at most 50). Every tool keeps the rules every writer keeps: the
chat's switch (memory off: every tool refuses), the forget barrier (checked piece by piece on
the model's words), admission (the model's text is taken whole or refused), the scope policy
(what the chat may see and the card part it grows), opt-outs (never shown, never changed). A
refusal is an answer (``拒绝：…``), never an exception; an id of another chat is "找不到 #N".
Each change is one unit of work of an engine use case, counted in ``CycleDesk.changes`` and
logged (``cycle_change``) beside the use case's own record. The stop tool is the driver's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ...domain.cycle_offer import offered
from ...llm.agent_types import AgentTool
from .cards import card_tools
from .desk import CHANGE_KINDS, CycleDesk
from .knowledge import knowledge_tools
from .memo import memo_tools
from .memory_change import memory_change_tools
from .memory_read import memory_read_tools
from .overview import overview_tools
from .send import send_tools
from .suggestions import suggestion_tools

if TYPE_CHECKING:
    from ..service import CognitionEngine

__all__ = ["CHANGE_KINDS", "CycleDesk", "cycle_tools"]


def cycle_tools(engine: CognitionEngine, desk: CycleDesk, work: Iterable[str] | None = None) -> list[AgentTool]:
    """The tools of one run over ``desk``'s chat (``cycle_send_to_user`` only in a private chat
    with ``desk.allow_send_to_user``; the driver adds its stop tool): those ``work`` needs
    (``domain/cycle_offer``; near clusters the pre-pass proposed count as work, the context shows
    them), every tool when ``work`` is None."""
    tools = [
        *overview_tools(engine, desk),
        *memory_read_tools(engine, desk),
        *memory_change_tools(engine, desk),
        *card_tools(engine, desk),
        *memo_tools(engine, desk),
        *knowledge_tools(engine, desk),
        *suggestion_tools(engine, desk),
        *send_tools(engine, desk),
    ]
    if work is None:
        return tools
    # the context shows every proposed cluster, judged before or not: the tool to page them stays offered
    shown = ("near_clusters",) if desk.prepass.near or desk.prepass.wording else ()
    names = offered({*work, *shown}, group=desk.scope.is_group)
    return tools if names is None else [tool for tool in tools if tool.name in names]
