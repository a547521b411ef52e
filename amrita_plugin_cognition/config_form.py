"""What Amrita's WebUI shows for this plugin's configuration: every key with a line of Chinese.

The WebUI's configuration editor lists a registered class's keys with the ``description`` of
each field; the keys that need a restart say so there (``RESTART_NOTE``). The class registered
with nonebot-plugin-uniconf (``settings_document``) is ``CognitionConfig`` with these
descriptions: the same types, limits, choices and checks, so the editor refuses what the
plugin would refuse.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from pydantic import BaseModel, Field, create_model

from .config import CognitionConfig
from .config_restart import needs_restart

RESTART_NOTE = "【需要重启】"

#: One line per key (and section), in the words of the README's configuration table.
DESCRIPTIONS: dict[str, str] = {
    "enable": "总开关（钩子、工具、命令）",
    "scope_policy": "strict：群只看本群的记忆；open：群也能看到其他群的（本群、本人私聊加权）",
    "timezone": "给模型和用户显示时间所用的时区，如 Asia/Shanghai",
    "data_dir": "数据目录；空 = nonebot-plugin-localstore 分配的插件目录",
    "memo_max_chars": "每个会话置顶备忘录的字数上限",
    "memory_max_chars": "单条记忆的字数上限",
    "pins_max_per_scope": "每个会话的提醒条数上限",
    "memories_max_per_scope": "每个会话的有效记忆条数上限",
    "disabled_scopes": '关闭记忆的会话，如 ["group:20001", "private:10001"]',
    "outbox_interval_seconds": "向量索引补写（outbox）的周期（秒）",
    "hook_timeout_seconds": "每轮查记忆的时限（秒）；超时只丢掉本轮召回的记忆",
    "vector_budget_share": "向量侧（查询嵌入 + Chroma）最多使用上面时限的这一比例；超时则只用关键词结果",
    "tool_timeout_seconds": "每次工具调用与 /memory 命令的时限（秒）",
    "outbox_max_attempts": "一条向量索引任务的最多重试次数，之后记为“已放弃”",
    "memo_revisions_keep": "每个会话保留的备忘录历史版本数",
    "recent_notes_inject_k": "每轮注入本会话最近多少条短期笔记",
    "embedder": "嵌入模型",
    "embedder.provider": "local：内置模型；openai：OpenAI 兼容 /v1/embeddings；ollama：/api/embed",
    "embedder.url": "接口地址（openai 填到 /v1）",
    "embedder.api_key": "密钥，建议写 ${EMBEDDING_API_KEY} 从环境变量读取",
    "embedder.model": "模型名",
    "embedder.dimensions": "OpenAI dimensions 参数；0 = 模型默认",
    "embedder.batch_size": "每次请求的文本数",
    "embedder.timeout": "请求超时（秒）",
    "embedder.threads": "本地模型的 CPU 线程数",
    "embedder.on_mismatch": "启动时嵌入指纹与库中不一致：auto 重建索引；ask 终端确认；never 仅警告",
    "embedder.query_cache_seconds": "查询向量缓存时长（秒）",
    "chroma": "向量索引（Chroma）",
    "chroma.mode": "embedded：本地目录；server：Chroma 服务器",
    "chroma.path": "嵌入式目录（相对数据目录）",
    "chroma.host": "服务器地址",
    "chroma.port": "服务器端口",
    "chroma.ssl": "使用 HTTPS",
    "chroma.headers": "额外请求头（鉴权）",
    "chroma.tenant": "租户",
    "chroma.database": "数据库",
    "chroma.call_timeout_seconds": "Chroma 单次调用时限（秒）；超时则向量检索暂停，调用返回后自动恢复",
    "recall": "召回",
    "recall.top_k": "每轮注入的记忆条数",
    "recall.candidates": "每个检索器、每个查询视角的候选数",
    "recall.fusion": "score：归一化分数加权（实测最好）；rrf：倒数排名融合",
    "recall.dense_normalisation": "向量相似度归一化：minmax，或相对最好候选的 ratio",
    "recall.vector_weight": "向量检索权重",
    "recall.keyword_weight": "关键词检索权重",
    "recall.rrf_k": "RRF 常数（仅 fusion = rrf）",
    "recall.speaker_boost": "查询中点名某人时，此人说过的记忆加分",
    "recall.recency_floor": "时间衰减下限（旧记忆至少保留的分数比例；1 = 不衰减）",
    "recall.recency_min_similarity": "余弦相似度不低于此值的候选才享受“新近”加成",
    "recall.mmr_lambda": "MMR 多样性参数（1 = 不去重）",
    "recall.feedback_weight": "伪相关反馈强度（0 = 关闭）",
    "recall.feedback_docs": "伪相关反馈取排名最前的几条记忆作为“主题”",
    "recall.short_query_chars": "不超过此长度的输入会带上上一句作为上下文",
    "recall.token_budget": "注入记忆块的 token 预算",
    "recall.current_group_boost": "当前群的记忆加权",
    "recall.current_private_boost": "当前私聊的记忆加权",
    "llm": "后台 LLM 调用",
    "llm.preset": "后台 LLM 调用使用的 Amrita 模型预设名；空 = 聊天默认预设",
    "llm.timeout_seconds": "单次 LLM 调用时限（秒）",
    "llm.max_retries": "失败后重试次数（指数退避加抖动）",
    "llm.backoff_initial_seconds": "重试间隔的起点（秒）",
    "llm.backoff_max_seconds": "重试间隔的上限（秒）",
    "historian": "史官（把对话整理成长期记忆的后台任务）",
    "historian.capture": "哪些对话交给史官：end / transcript / both",
    "historian.preset": "史官使用的 Amrita 模型预设（通常选便宜的）；空 = llm.preset",
    "historian.max_concurrency": "同时处理的任务数",
    "historian.poll_interval_seconds": "轮询任务队列的间隔（秒；新任务入队时也会立即唤醒）",
    "historian.stale_job_timeout_seconds": "任务租约超过此时长（秒）即被收回重做",
    "historian.job_max_retries": "失败任务按指数退避重试的次数，之后记为 failed",
    "historian.failed_jobs_keep": "保留的失败任务条数",
    "historian.failed_jobs_keep_days": "失败任务保留天数",
    "historian.recent_messages_k": "每个任务附带的最近消息条数（用于消解指代）",
    "historian.source_message_max_len": "任务中每条消息截断到的字数",
    "historian.transcript_batch_turns": "未调用 end 的轮次攒够这么多条即一次提取",
    "historian.transcript_pause_seconds": "……或会话安静这么久（秒）后提取",
    "historian.notes_keep": "每个会话保留的短期笔记条数",
    "historian.turns_keep": "每个会话保留的对话记录条数",
    "profiles": "画像卡片（每个用户、每个群一张）",
    "profiles.revision_keep": "每张画像保留的历史版本数（profile restore 可恢复）",
    "profiles.evaluation_max_chars": "画像“评价”部分的字数上限",
    "profiles.body_max_chars": "画像“正文”部分的字数上限",
    "profiles.roast_max_chars": "画像“吐槽”部分的字数上限",
    "profiles.merge": "史官整理完一批记忆后，用模型更新相关的用户和群画像",
    "profiles.merge_window_seconds": "同一张画像在这段时间（秒）内的多次更新合并为一次模型调用",
    "profiles.merge_preset": "更新画像使用的 Amrita 模型预设；空 = historian.preset",
    "profiles.merge_top_k": "每次更新画像时参考的该对象的历史记忆条数",
}


def describe(key: str) -> str:
    """The WebUI line of the dotted ``key``, with the restart note when it needs one."""
    text = DESCRIPTIONS.get(key, "")
    return f"{RESTART_NOTE}{text}" if needs_restart(key) else text


@functools.lru_cache(maxsize=1)
def settings_document() -> type[CognitionConfig]:
    """``CognitionConfig`` (and its sections) with the WebUI descriptions: the class registered
    with nonebot-plugin-uniconf. An instance holds the file as written (``${NAME}`` unexpanded,
    no environment overrides), which is what the WebUI shows and saves back."""
    return _described(CognitionConfig, "")


def _described(model: type[BaseModel], prefix: str) -> Any:
    fields: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        key = prefix + name
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            section = _described(annotation, f"{key}.")
            fields[name] = (section, Field(default_factory=section, description=describe(key)))
        else:
            described = copy.copy(field)
            described.description = describe(key)
            fields[name] = (annotation, described)
    return create_model(model.__name__, __base__=model, __module__=__name__, **fields)
