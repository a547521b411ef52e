"""What the fake QQ clients (the OneBot V11 side of a bot: ``bench/_whole_bot_qq.py`` and
``scripts/project_turn.py``) answer to the bot's calls that only ask about the account, its friends
and groups, or a user: one place, so both clients tell the bot the same things. Standard library
only: ``scripts/project_turn.py`` runs in a bot project's environment."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: The bot's QQ account in every fake client.
SELF_ID = 42


def info_answer(action: str, params: dict[str, Any], nickname: Callable[[int], str]) -> Any:
    """The answer to an informational action (``{}`` for any other that needs no answer);
    ``nickname`` names a user by QQ number."""
    if action == "get_login_info":
        return {"user_id": SELF_ID, "nickname": "Amrita"}
    if action in ("get_friend_list", "get_group_list"):
        return []
    if action in ("get_stranger_info", "get_group_member_info"):
        user_id = params.get("user_id")
        return {
            "user_id": user_id,
            "nickname": nickname(int(user_id or 0)),
            "card": "",
            "role": "member",
            "sex": "unknown",
        }
    return {}
