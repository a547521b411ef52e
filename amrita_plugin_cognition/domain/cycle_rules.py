"""What the consolidation cycle's judgement step may write, decided without I/O (the tools are
``engine/cycle_tools/``).

* **Text the cycle writes** (a fact, a merged fact, a rewritten fact, a card, the memo, a knowledge
  entry, the one message to the user) is stored only as it is: admission must take it whole
  (``stored_text_refusal``). A chat's own words may keep a redacted secret (``[已隐去]``); the
  model's words are rewritten instead, so nothing half-hidden is written in the cycle's name.
* **Forget barriers** hold content hashes, never text: a forgotten fact comes back only as the
  same text. The model rewrites freely, so a text of the cycle is checked piece by piece
  (``barrier_pieces``): the whole, each sentence and each clause, each with its closing mark, with
  ``。`` and with none; one piece that hashes like a forgotten fact of the chat refuses the text.
* **Cards**: the cycle of a chat refines only the part that chat's facts grow
  (``cycle_card_part``, the parts of ``profile_policy.merges_for``): in a group its card and the
  part the group sees of a member (under ``strict`` their part in that group; under ``open`` their
  cross-group part, the documented shared view); in a private chat the user's private part.
* **The one message** to a private chat's user (``consolidation.allow_send_to_user``) is at most
  ``SEND_MAX_CHARS`` characters.
"""

from __future__ import annotations

import re

from .admission import admit
from .profile_policy import group_part
from .records import Importance, Scope, normalise_text
from .visibility import ScopePolicy

#: The longest message the cycle may leave for a private chat's user.
SEND_MAX_CHARS = 200
#: How the tools' answers name an importance.
IMPORTANCE_LABELS = {Importance.HIGH: "高", Importance.MEDIUM: "中", Importance.LOW: "低"}
#: Pieces of one text checked against the barriers at most (a text of the cycle is bounded anyway).
PIECES_MAX = 400

_SENTENCE_END = re.compile(r"(?<=[。！？!?；;\n])")
_CLAUSE_END = re.compile(r"[，,、：:（）()“”\"]")
_CLOSING = "。！？!?；;，,、.…~～ "

_SECRET_MESSAGE = "含敏感内容（密码、验证码、密钥、证件号等），不能写入；请去掉后再写"
_DO_NOT_REMEMBER_MESSAGE = "这段文字是“不要记住”的请求，不能写入"


def stored_text_refusal(text: str) -> str:
    """Why admission does not take ``text`` whole (Chinese); "" when it does."""
    verdict = admit(text)
    if verdict.stored_as_is:
        return ""
    return _DO_NOT_REMEMBER_MESSAGE if verdict.reason == "do_not_remember" else _SECRET_MESSAGE


def _variants(piece: str) -> list[str]:
    bare = piece.rstrip(_CLOSING)
    return [piece, bare, f"{bare}。"] if bare else []


def barrier_pieces(text: str) -> list[str]:
    """The texts whose content hashes are checked against the chat's forget barriers before the
    cycle writes ``text`` (see the module doc), each once, at most ``PIECES_MAX``."""
    whole = normalise_text(text)
    pieces: list[str] = [*_variants(whole)]
    for sentence in _SENTENCE_END.split(text):
        sentence = normalise_text(sentence)
        if not sentence:
            continue
        pieces.extend(_variants(sentence))
        clauses = [normalise_text(clause) for clause in _CLAUSE_END.split(sentence)]
        if len([clause for clause in clauses if clause]) > 1:
            for clause in clauses:
                pieces.extend(_variants(clause))
    return list(dict.fromkeys(piece for piece in pieces if piece))[:PIECES_MAX]


def cycle_card_part(scope: Scope, policy: ScopePolicy, entity_type: str, entity_id: str) -> str | None:
    """The part of the card of (``entity_type``, ``entity_id``) the cycle of ``scope`` may refine;
    None when it may refine none of it (see the module doc). A user card of a group chat also needs
    the user to be one the group's facts name, which is the engine's to read."""
    if scope.is_group:
        if entity_type == "group":
            return "group" if entity_id == scope.id else None
        return group_part(policy, scope.id) if entity_type == "user" else None
    return "private" if entity_type == "user" and entity_id == scope.id else None
