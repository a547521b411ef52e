"""Argument types of the commands: every value is checked before anything is loaded, so a value
the store could not take ends the command with a usage error (exit 2, one line naming the
argument and what it takes) instead of an overflow or a database error after the bot has loaded.

- ``ROW_ID``: a row id (memory, job, memo or card revision): 1 to 2⁶³−1, the range of the id
  columns on both databases (a 20-digit id overflowed SQLite's int64 and PostgreSQL's BIGINT).
- ``QQ``: a QQ number (bot account, user, group): ``domain.records.QQ_NUMBER``.
- ``CHAT``: a chat key, ``group:<QQ number>`` or ``private:<QQ number>`` (``group:abc`` was
  accepted and audited).
- ``ACTOR``: who an erasure names (``domain.governance.ACTOR_MAX_CHARS``; 200 characters were
  accepted on SQLite and failed on PostgreSQL).

The checked value stays text: a command parses it again inside its run, with the classes of the
package the bot project loaded (``commands._scope_argument``).
"""

from __future__ import annotations

from typing import Any

import click

from ..api import clean_text, is_qq_number, parse_chat_key

#: The largest id SQLite's INTEGER and PostgreSQL's BIGINT hold.
MAX_ROW_ID = 2**63 - 1
#: The largest page of a listing whose offset still fits an id (``(page - 1) × per_page``).
MAX_PAGE = 10**9


class _RowId(click.ParamType):
    name = "编号"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            text = str(value).strip()
            if not text.isascii() or not text.isdigit():
                self.fail(f"{value!r} 不是编号：编号是 1 到 {MAX_ROW_ID} 之间的整数", param, ctx)
            number = int(text)
        if not 1 <= number <= MAX_ROW_ID:
            self.fail(f"编号 {value} 超出范围：编号是 1 到 {MAX_ROW_ID} 之间的整数", param, ctx)
        return number


class _QQNumber(click.ParamType):
    name = "QQ号"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value).strip()
        if not is_qq_number(text):
            self.fail(f"{value!r} 不是 QQ 号：写作 5 到 20 位数字（不以 0 开头）", param, ctx)
        return text


class _ChatKey(click.ParamType):
    name = "会话"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            return parse_chat_key(str(value)).key
        except ValueError:
            self.fail(f"{value!r} 不是会话：写作 group:<群号> 或 private:<QQ号>（号码为 5 到 20 位数字）", param, ctx)


class _Actor(click.ParamType):
    name = "名字"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from ..api import ACTOR_MAX_CHARS  # the gate's lexicon behind it: not for --help

        text = " ".join(clean_text(str(value)).split())
        if not text:
            self.fail("操作者不能为空", param, ctx)
        if len(text) > ACTOR_MAX_CHARS:
            self.fail(f"操作者最多 {ACTOR_MAX_CHARS} 个字符（给出的有 {len(text)} 个）", param, ctx)
        return text


ROW_ID = _RowId()
QQ = _QQNumber()
CHAT = _ChatKey()
ACTOR = _Actor()
PAGE = click.IntRange(1, MAX_PAGE)
