"""What the LLM gateway counts per purpose, and where a finished call's counters go."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(slots=True)
class PurposeCounters:
    """What the gateway did for one purpose (``historian``, ``profile_merge``, …) since start."""

    #: Gateway calls (one call = all its attempts).
    calls: int = 0
    #: Calls that ended in ``LLMUnavailable``.
    failures: int = 0
    #: Attempts after the first one, over all calls.
    retries: int = 0
    #: Attempts that hit ``timeout_seconds``.
    timeouts: int = 0
    #: Structured attempts whose tool call was missing or invalid.
    invalid_outputs: int = 0
    #: Tokens the provider reported (every attempt that got an answer, usable or not).
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: Wall time of all calls, retries and backoff included.
    latency_seconds: float = 0.0
    #: English reason of the last failed call ("" when none failed).
    last_error: str = ""

    def add(self, other: PurposeCounters) -> None:
        """Add ``other``'s counts to these; its ``last_error``, when it has one, becomes the last."""
        self.calls += other.calls
        self.failures += other.failures
        self.retries += other.retries
        self.timeouts += other.timeouts
        self.invalid_outputs += other.invalid_outputs
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.latency_seconds += other.latency_seconds
        if other.last_error:
            self.last_error = other.last_error

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["latency_seconds"] = round(self.latency_seconds, 3)
        return data

    def counts(self) -> dict[str, int]:
        """The counters as whole numbers (latency in ms), as ``usage_sink`` stores them."""
        return {
            "calls": self.calls,
            "failures": self.failures,
            "retries": self.retries,
            "timeouts": self.timeouts,
            "invalid_outputs": self.invalid_outputs,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_ms": round(self.latency_seconds * 1000),
        }


#: Where a finished call's own counters go (``purpose``, counters of that one call).
UsageSink = Callable[[str, PurposeCounters], Awaitable[None]]
