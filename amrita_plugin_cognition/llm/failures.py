"""Why an attempt of the LLM gateway failed: the classification of what amrita_core raised
(timeout, a permanent error another attempt cannot fix, any other error) and its words."""

from __future__ import annotations

import json

from pydantic import ValidationError

from ..errors import TIMEOUTS

#: HTTP statuses that another attempt cannot fix (bad request, key, permission, model name).
PERMANENT_STATUSES = frozenset({400, 401, 403, 404, 422})
#: Errors that are not the provider's: a bad request built here, a bug, a broken install.
PERMANENT_ERRORS = (ValueError, TypeError, LookupError, AttributeError, ImportError)
MAX_ERROR_CHARS = 300
#: Why an attempt failed → the Chinese words used in ``LLMUnavailable.zh``.
FAILURE_ZH = {
    "timeout": "请求超时",
    "error": "请求失败",
    "empty": "模型没有给出回答",
    "invalid_output": "模型的回答格式不对",
    "preset": "找不到模型预设",
}


def quote_for_log(text: str) -> str:
    """A log value: one line, bounded, quoted when it has spaces."""
    line = " ".join(text.split())[:MAX_ERROR_CHARS]
    return json.dumps(line, ensure_ascii=False) if " " in line or not line else line


class AttemptFailed(Exception):
    """One attempt that produced no usable answer (internal: the gateway raises LLMUnavailable)."""

    def __init__(self, kind: str, en: str, *, retryable: bool = True, problem: str = "", arguments: str = "") -> None:
        super().__init__(en)
        self.kind = kind
        self.en = en
        self.retryable = retryable
        #: For an invalid structured answer: what was wrong and what the model sent, told to it
        #: on the next attempt.
        self.problem = problem
        self.arguments = arguments


def validation_lines(error: ValidationError, limit: int) -> list[str]:
    """What was wrong with a model's arguments, one ``- 字段：problem`` line per error (at most
    ``limit``), as the model is told."""
    return [
        f"- {'.'.join(str(part) for part in item['loc']) or '(参数整体)'}：{item['msg']}"
        for item in error.errors()[:limit]
    ]


def exception_chain(error: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and all(current is not seen for seen in chain):
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def failure_from(error: Exception) -> AttemptFailed:
    """Classify what an amrita_core call raised (often a ``FallbackFailed`` around the real error)."""
    chain = exception_chain(error)
    cause = next((item for item in chain if type(item).__name__ != "FallbackFailed"), error)
    description = f"{type(cause).__name__}: {cause}"
    if any(isinstance(item, TIMEOUTS) or "Timeout" in type(item).__name__ for item in chain):
        return AttemptFailed("timeout", description)
    statuses = [getattr(item, "status_code", None) for item in chain]
    status = next((value for value in statuses if isinstance(value, int)), None)
    permanent = status in PERMANENT_STATUSES or (status is None and isinstance(cause, PERMANENT_ERRORS))
    return AttemptFailed("error", description, retryable=not permanent)
