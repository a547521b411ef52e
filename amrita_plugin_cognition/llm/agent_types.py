"""What the consolidation cycle's agent is given and what it gives back, apart from how it runs
(``llm/agent.py`` drives amrita_core's ReAct strategy): the engine builds the tools and the
budget, the driver runs them and returns an :class:`AgentOutcome`.

A tool's arguments are a pydantic model: the driver validates the model's raw arguments with it
(Amrita's own validation is off, so nothing is coerced behind our back) and hands the handler the
validated model; invalid arguments go back to the model as the tool's answer, never to the
handler. A handler answers in text (what the model reads next) and raises nothing for a refusal:
a refusal is an answer beginning with :data:`REFUSED` ("拒绝：…"). The driver adds its own stop
tool (:data:`STOP_TOOL`), whose ``summary`` ends the run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from pydantic import BaseModel

#: The tool that ends a run; its ``summary`` argument is the run's summary.
STOP_TOOL = "cycle_stop"
#: How a handler's refusal begins (the call is recorded with ``ok=False``).
REFUSED = "拒绝："

#: Why a run ended: the model called the stop tool; ``max_iterations`` rounds were used; the token
#: budget ran out; ``should_stop`` said yes between rounds (the chat talked); a round answered with
#: no tool call; a round failed (``AgentOutcome.error``).
Ended = Literal["stopped", "iterations", "tokens", "yielded", "no_tool_call", "failed"]


@dataclass(frozen=True, slots=True)
class AgentTool:
    """One tool of a run: ``name`` is unique within the run and never registered globally."""

    name: str
    description: str
    arguments: type[BaseModel]
    handler: Callable[[BaseModel], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class AgentBudget:
    """``max_iterations`` model rounds and ``max_tokens`` (prompt + completion, as the provider
    reports them) for the whole run; the driver winds down to the stop tool before either ends."""

    max_iterations: int
    max_tokens: int


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """One tool call of a run, for the report and the log: ``ok`` is False when the arguments were
    invalid or the handler refused. ``arguments`` is what the model sent (JSON text), ``answer``
    what it read back (its first ``ANSWER_KEPT_CHARS`` characters; ``answer_chars`` is the whole)."""

    round: int
    name: str
    ok: bool
    answer_chars: int
    arguments: str = ""
    answer: str = ""


#: The characters of a tool's answer kept on its ``ToolCallRecord`` (a page of memories can be long;
#: the record is for showing what the run did, the model read the whole).
ANSWER_KEPT_CHARS = 2000


@dataclass(slots=True)
class AgentOutcome:
    ended: Ended
    summary: str = ""
    rounds: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: list[ToolCallRecord] = field(default_factory=list)
    error: str = ""

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class AgentRunner(Protocol):
    """Runs one agent: ``system`` is the invariant system prompt, ``kickoff`` the first user
    message; ``purpose`` names the run in the LLM counters; ``should_stop`` is asked before each
    round after the first (True: the run ends ``yielded``, what the tools did stays)."""

    async def __call__(
        self,
        purpose: str,
        system: str,
        kickoff: str,
        tools: Sequence[AgentTool],
        budget: AgentBudget,
        should_stop: Callable[[], Awaitable[bool]] | None = None,
    ) -> AgentOutcome: ...
