"""The historian's model as a second opinion on admission: three flags it gives each fact.

The rules (``admit``) judge what is there; they stopped generalising on the long tail (a secret
in words no rule knows, a request reported in other words, a private matter of someone else).
The historian's one structured call already reads every observation, so its answer carries, per
fact, ``secret`` (a password, key, code, card or id number …), ``do_not_remember`` (the speaker
asked not to remember it) and ``about_someone_else`` (a private matter — health, money,
relationships, legal trouble, something confided — of a third person not in the chat). A flag
refuses the fact whole: the model names no span, so nothing can be redacted on its word.
``admission.judge`` is the one place that puts the rules and the flags together.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "FLAGGED_ABOUT_SOMEONE_ELSE",
    "FLAGGED_DO_NOT_REMEMBER",
    "FLAGGED_REASONS",
    "FLAGGED_SECRET",
    "NO_OPINION",
    "SecondOpinion",
]

#: Refusal reasons of a fact the model flagged (the rules' own are "credential" and "do_not_remember").
FLAGGED_SECRET = "flagged_secret"
FLAGGED_DO_NOT_REMEMBER = "flagged_do_not_remember"
FLAGGED_ABOUT_SOMEONE_ELSE = "flagged_about_someone_else"
FLAGGED_REASONS = (FLAGGED_SECRET, FLAGGED_DO_NOT_REMEMBER, FLAGGED_ABOUT_SOMEONE_ELSE)


@dataclass(frozen=True, slots=True)
class SecondOpinion:
    """The model's flags on one fact; all false is no objection."""

    secret: bool = False
    do_not_remember: bool = False
    about_someone_else: bool = False

    @property
    def reason(self) -> str:
        """The refusal reason the flags give ("" when none is set): a request first, then a
        secret, then someone else's private matter."""
        if self.do_not_remember:
            return FLAGGED_DO_NOT_REMEMBER
        if self.secret:
            return FLAGGED_SECRET
        if self.about_someone_else:
            return FLAGGED_ABOUT_SOMEONE_ELSE
        return ""

    def __bool__(self) -> bool:
        return bool(self.reason)

    def __or__(self, other: SecondOpinion) -> SecondOpinion:
        return SecondOpinion(
            self.secret or other.secret,
            self.do_not_remember or other.do_not_remember,
            self.about_someone_else or other.about_someone_else,
        )

    def names(self) -> list[str]:
        """The flags set, by their field names (reports and logs)."""
        return [name for name in ("secret", "do_not_remember", "about_someone_else") if getattr(self, name)]


NO_OPINION = SecondOpinion()
