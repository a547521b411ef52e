"""The plugin's one exception tree.

Every error the plugin raises on purpose is a ``CognitionError``. Each carries two messages:

* ``zh``: Simplified Chinese, safe to show to a chat user or to the LLM (what was wrong, what the
  limit is, what to do);
* ``en``: English, for logs (``str(error)`` is this one).

A subclass names the kind of failure; its class-level defaults are used when a raise site gives
no message of its own. Callers that answer users read ``error.zh``; loggers use ``str(error)``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import ClassVar

#: Every "took too long" an await can raise: ``asyncio.wait_for`` and thread futures raise their
#: own classes before Python 3.11 (from 3.11 on, all three are the builtin ``TimeoutError``).
TIMEOUTS: tuple[type[BaseException], ...] = (TimeoutError, asyncio.TimeoutError, concurrent.futures.TimeoutError)


class CognitionError(Exception):
    """Root of the tree: a refused or failed operation of the memory plugin."""

    zh_default: ClassVar[str] = "记忆服务出错"
    en_default: ClassVar[str] = "cognition error"

    def __init__(self, zh: str | None = None, *, en: str | None = None) -> None:
        self.zh = zh or self.zh_default
        if en is None:
            en = self.en_default if zh is None else f"{self.en_default}: {zh}"
        self.en = en
        super().__init__(en)

    def __str__(self) -> str:
        return self.en


class InvalidInput(CognitionError):
    """An argument, command or text the plugin cannot accept as given."""

    zh_default = "输入无效"
    en_default = "invalid input"


class LimitExceeded(InvalidInput):
    """A length or count limit would be passed."""

    zh_default = "超出上限"
    en_default = "limit exceeded"


class BackupInvalid(InvalidInput):
    """A backup file that cannot be restored as it is (unreadable, not JSON, a row the store would
    not take from a normal write): names the file and the line; nothing was changed."""

    zh_default = "备份文件无法恢复"
    en_default = "invalid backup"

    def __init__(self, path: object, line: int | None, zh: str, en: str) -> None:
        where_zh = f"备份文件 {path}" + (f" 第 {line} 行" if line else "")
        where_en = f"backup {path}" + (f" line {line}" if line else "")
        super().__init__(f"{where_zh}：{zh}；未恢复，数据未改动", en=f"{where_en}: {en}; nothing restored")
        self.path = path
        self.line = line


class NotFound(CognitionError):
    zh_default = "没有找到"
    en_default = "not found"


class PermissionDenied(CognitionError):
    zh_default = "没有权限执行这个操作"
    en_default = "permission denied"


class ConcurrentChange(CognitionError):
    """The record changed (corrected, forgotten) between reading it and changing it."""

    zh_default = "这条记录已被修改或删除，请重新查看后再操作"
    en_default = "concurrent change"


class IndexUnavailable(CognitionError):
    """The vector index (Chroma) is unreachable, stalled, or refused the operation."""

    zh_default = "向量索引暂不可用"
    en_default = "vector index unavailable"


class IndexLocked(IndexUnavailable):
    """An embedded vector index folder is held by another process (usually the running bot)."""

    zh_default = "向量索引正被另一个进程（通常是运行中的机器人）使用"
    en_default = "vector index held by another process"


class EmbedderUnavailable(CognitionError):
    """The embedding model failed, timed out, or answered something unusable."""

    zh_default = "向量模型暂不可用"
    en_default = "embedder unavailable"


class ConfigurationError(CognitionError, ValueError):
    """The configuration cannot be used; the message names the file, the key and why."""

    zh_default = "配置有误"
    en_default = "configuration error"


class SchemaMissing(CognitionError):
    """The database lacks the plugin's tables (or columns of them): ``ambot orm upgrade`` was not
    run since the plugin was installed or upgraded."""

    zh_default = "本插件的数据表还没有建立"
    en_default = "the plugin's tables are missing"
    #: What creates them, in a bot project (a standalone folder is upgraded by the CLI itself).
    COMMAND = "ambot orm upgrade"

    def __init__(self, tables: list[str], columns: dict[str, list[str]], *, none_yet: bool = False) -> None:
        """``tables`` and ``columns`` the database lacks; ``none_yet``: it has none of the plugin's."""
        parts_zh = ["缺少表 " + "、".join(tables[:3]) + (f" 等 {len(tables)} 张" if len(tables) > 3 else "")]
        parts_zh = (parts_zh if tables else []) + [
            f"{table} 缺少列 {'、'.join(cols)}" for table, cols in columns.items()
        ]
        parts_en = [f"missing tables {', '.join(tables)}"] if tables else []
        parts_en += [f"{table} lacks {', '.join(cols)}" for table, cols in columns.items()]
        state_zh, state_en = ("还没有建立", "missing") if none_yet else ("不是最新版本", "not up to date")
        zh = f"本插件的数据表{state_zh}（{'；'.join(parts_zh)}）"
        en = f"the plugin's tables are {state_en} ({'; '.join(parts_en)})"
        super().__init__(
            f"{zh}：请在机器人项目目录执行 `{self.COMMAND}` 建立或升级它们",
            en=f"{en}: run `{self.COMMAND}` in the bot project",
        )
        self.tables = tables
        self.columns = columns


class SchemaBehind(SchemaMissing):
    """The plugin's tables are there, but the database records an older migration of the plugin
    than this version ships: a read command does not migrate the bot's database, it says so."""

    def __init__(self, recorded: list[str], heads: list[str]) -> None:
        CognitionError.__init__(
            self,
            f"机器人数据库中本插件的数据表不是最新版本（已应用的迁移 {'、'.join(recorded)}，本版本需要 "
            f"{'、'.join(heads)}）：请在机器人项目目录执行 `{self.COMMAND}`（或启动一次机器人并确认升级）后再查看",
            en=f"the plugin's migrations are behind (recorded {', '.join(recorded)}, head {', '.join(heads)}): "
            f"run `{self.COMMAND}` in the bot project",
        )
        self.tables = []
        self.columns = {}
        self.recorded = recorded
        self.heads = heads


class StoreUnavailable(CognitionError):
    """The database cannot be reached: connection refused, the server gone or the connection
    closed under a transaction, the SQLite file unopenable or unreadable, a disk I/O error. Raised
    by the unit of work from the driver's own error (its ``__cause__``), so no caller above the
    store catches SQLAlchemy's or the socket's exceptions. A missing table is not this
    (``SchemaMissing``, or the driver's error), nor a busy SQLite database (it waits and retries)."""

    zh_default = "记忆数据库暂时无法连接"
    en_default = "database unreachable"

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"记忆数据库暂时无法连接（{reason}）：请检查数据库地址、文件与服务是否在运行",
            en=f"database unreachable: {reason}",
        )
        self.reason = reason


class EngineUnavailable(CognitionError):
    """Memory is off in this process for now (bad configuration, refused startup)."""

    zh_default = "记忆功能暂不可用"
    en_default = "memory engine unavailable"

    def __init__(self, reason: str) -> None:
        super().__init__(f"记忆功能暂不可用：{reason}", en=f"memory engine unavailable: {reason}")
        self.reason = reason


class LLMUnavailable(CognitionError):
    """An LLM call through the gateway failed after its retries, or timed out."""

    zh_default = "语言模型暂不可用"
    en_default = "llm unavailable"


class LLMNotConfigured(LLMUnavailable):
    """Work that needs the model (the historian's extraction, a card merge or rebuild) ran in an
    engine built without an LLM gateway: the job fails and is retried like any model failure."""

    zh_default = "没有配置语言模型，史官和画像整理无法运行"
    en_default = "no llm gateway configured"
