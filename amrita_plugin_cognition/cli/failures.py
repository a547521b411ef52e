"""The one error path of every command.

Exit codes: 0 done; 1 failed, with one line on stderr naming the cause (and the file, when a
file is the cause); 2 bad input or usage (click's usage errors, an unreadable evaluation file, a
value the plugin refuses). An unexpected exception also ends with one line; its traceback is
written to a log file named in that line, and printed as well under ``cognition --debug``.

Errors are recognised by class name and module, not by identity: under ``ambot`` the package is
imported again when the bot project loads it as a plugin, so the engine raises the classes of
that second import.
"""

from __future__ import annotations

import datetime as _dt
import os
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

T = TypeVar("T")

EXIT_FAILURE = 1
EXIT_USAGE = 2
ERRORS_MODULE = f"{__name__.split('.')[0]}.errors"
#: Where unexpected tracebacks go (appended; the line on stderr names the file).
ERROR_LOG_NAME = "amrita_plugin_cognition-cli-errors.log"


class CommandFailed(click.ClickException):
    """Ends the command with ``错误: <message>`` on stderr and exit code 1."""

    exit_code = EXIT_FAILURE

    def show(self, file: Any = None) -> None:
        line = " ".join(part.strip() for part in self.message.splitlines() if part.strip())
        click.echo(f"错误: {line}", err=True)


class BadInput(CommandFailed):
    """Like ``CommandFailed``, exit code 2: the input (a file, an argument) is what is wrong."""

    exit_code = EXIT_USAGE


def fail(message: str, code: int = EXIT_FAILURE) -> CommandFailed:
    """The exception to raise for an expected failure (``raise fail("…")``)."""
    return BadInput(message) if code == EXIT_USAGE else CommandFailed(message)


def _is(error: BaseException, name: str, module: str = ERRORS_MODULE) -> bool:
    return any(cls.__name__ == name and cls.__module__ == module for cls in type(error).__mro__)


def _first_line(text: str, limit: int = 300) -> str:
    line = next((part.strip() for part in str(text).splitlines() if part.strip()), "")
    return line[:limit]


def _os_message(error: OSError) -> str:
    reason = error.strerror or _first_line(str(error)) or type(error).__name__
    if error.filename is None:
        if isinstance(error, ConnectionError):
            return f"连接失败（{reason}）：检查数据库或 Chroma 服务器的地址与是否在运行"
        return f"系统错误（{type(error).__name__}：{reason}）"
    where = str(error.filename)
    if isinstance(error, FileNotFoundError):
        return f"找不到 {where}（{reason}）"
    if isinstance(error, PermissionError):
        return f"没有权限访问 {where}（{reason}）"
    return f"无法访问 {where}：{reason}"


def _debug() -> bool:
    from .boot import debug_enabled

    return debug_enabled()


def _log_traceback(error: BaseException) -> Path | None:
    """Append the traceback to the CLI error log; its path, or None when it cannot be written."""
    path = Path(tempfile.gettempdir()) / ERROR_LOG_NAME
    try:
        with path.open("a", encoding="utf-8") as handle:
            stamp = _dt.datetime.now().astimezone().isoformat(timespec="seconds")
            handle.write(f"==== {stamp} pid {os.getpid()}: {' '.join(sys.argv)}\n")
            handle.write("".join(traceback.format_exception(type(error), error, error.__traceback__)))
            handle.write("\n")
    except OSError:
        return None
    return path


def translate(error: Exception) -> CommandFailed:
    """The one-line failure for ``error``."""
    if isinstance(error, CommandFailed):
        return error
    debug = _debug()
    if debug:  # ``--debug``: the whole story first, then the usual line
        traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
    if _is(error, "CognitionError"):
        message = getattr(error, "zh", None) or str(error)
        if message.endswith("详见日志") and not debug:
            message += "（或加 --debug 在终端显示详情）"
        return fail(message, EXIT_USAGE if _is(error, "InvalidInput") else EXIT_FAILURE)
    if _is(error, "EvalInputError", f"{__package__}.evaluation"):
        return fail(str(getattr(error, "zh", error)), EXIT_USAGE)
    if isinstance(error, OSError):
        return fail(_os_message(error))
    if any(cls.__module__.split(".")[0] == "sqlalchemy" for cls in type(error).__mro__):
        cause = getattr(error, "orig", None) or error
        return fail(f"数据库出错：{_first_line(str(cause)) or type(cause).__name__}")
    if debug:
        return fail(f"意外错误（{type(error).__name__}：{_first_line(str(error))}），详情见上")
    where = _log_traceback(error)
    detail = f"详见日志 {where}" if where else "加 --debug 查看详情"
    return fail(f"意外错误（{type(error).__name__}：{_first_line(str(error))}），{detail}")


def guarded(work: Callable[[], T]) -> T:
    """Run ``work``; every exception but click's own ends the command through ``translate``."""
    try:
        return work()
    except (click.ClickException, click.exceptions.Exit, click.Abort, KeyboardInterrupt, SystemExit):
        raise
    except Exception as error:
        raise translate(error) from error
