"""Errors the engine raises on purpose: their message is Chinese and safe to show to a chat user
or to the LLM (it says what was wrong and what the limit is)."""

from __future__ import annotations


class CognitionError(Exception):
    """A refused operation; ``str(error)`` is the user-facing Chinese message."""


class NotFound(CognitionError):
    pass


class PermissionDenied(CognitionError):
    pass


class LimitExceeded(CognitionError):
    pass


class InvalidInput(CognitionError):
    pass
