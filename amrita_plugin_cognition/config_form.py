"""What Amrita's WebUI shows for this plugin's configuration: every key with a line of Chinese,
and the commented file written when there is none.

The WebUI's configuration editor lists a registered class's keys with the ``description`` of
each field; the keys that need a restart say so there (``RESTART_NOTE``), and every key says
what it takes (its range and unit, or its choices: ``allowed_values``), because a refused save
shows the field's rule only in the browser's network reply. The same lines are the comments of
the file written at the first start (``default_file_text``); a save in the WebUI rewrites the
file without them (uniconf writes plain TOML), which the file's header says. The class registered
with nonebot-plugin-uniconf (``settings_document``) is ``CognitionConfig`` with these
descriptions: the same types, limits, choices and checks, so the editor refuses what the
plugin would refuse.
"""

from __future__ import annotations

import copy
import functools
import json
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, Field, create_model
from pydantic.fields import FieldInfo

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
    "outbox_interval_seconds": "向量索引补写（outbox）的周期",
    "hook_timeout_seconds": "每轮查记忆的时限；超时只丢掉本轮召回的记忆",
    "vector_budget_share": "向量侧（查询嵌入 + Chroma）最多使用上面时限的这一比例；超时则只用关键词结果",
    "tool_timeout_seconds": "每次工具调用与 /memory 命令的时限",
    "outbox_max_attempts": "一条向量索引任务最多尝试的次数（含第一次），之后记为“已放弃”（dead）",
    "outbox_lease_seconds": "一次补写占用所取任务的租约时长；期间其他进程跳过它们，进程崩溃则到期后重做",
    "memo_revisions_keep": "每个会话保留的备忘录历史版本数",
    "recent_notes_inject_k": "每轮注入本会话最近多少条短期笔记",
    "embedder": "嵌入模型",
    "embedder.provider": "local：内置模型；openai：OpenAI 兼容 /v1/embeddings；ollama：/api/embed",
    "embedder.url": "接口地址（openai 填到 /v1）",
    "embedder.api_key": "密钥，建议写 ${EMBEDDING_API_KEY} 从环境变量读取",
    "embedder.model": "模型名",
    "embedder.dimensions": "OpenAI dimensions 参数；0 = 模型默认",
    "embedder.batch_size": "每次请求的文本数",
    "embedder.timeout_seconds": "单次嵌入请求的时限",
    "embedder.threads": "本地模型的 CPU 线程数",
    "embedder.on_mismatch": "启动时嵌入指纹与库中不一致：auto 重建索引；ask 终端确认；never 仅警告",
    "embedder.query_cache_seconds": "查询向量缓存时长",
    "embedder.second_model": "第二本地模型（仅 provider = local）：none 不用；e5 需先安装 [e5] 扩展，切换时重建索引",
    "embedder.second_weight": "第二模型在向量得分中的占比（0 至小于 1，查询时生效，无需重建索引）",
    "chroma": "向量索引（Chroma）",
    "chroma.mode": "embedded：本地目录；server：Chroma 服务器",
    "chroma.path": "嵌入式目录（相对数据目录）",
    "chroma.host": "服务器地址",
    "chroma.port": "服务器端口",
    "chroma.ssl": "使用 HTTPS",
    "chroma.headers": "额外请求头（鉴权）",
    "chroma.tenant": "租户",
    "chroma.database": "数据库",
    "chroma.cached_indexes": "嵌入式：同时留在内存里的会话向量索引数（每个约 2.6 MB，默认 64）；0 = Chroma 自己的上限",
    "chroma.call_timeout_seconds": "Chroma 单次调用时限；超时则向量检索暂停，调用返回后自动恢复",
    "recall": "召回",
    "recall.top_k": "每轮注入的记忆条数",
    "recall.candidates": "每个检索器、每个查询视角的候选数",
    "recall.exact_search_max_vectors": "记忆不超过这么多条的会话在数据库的向量副本上精确检索；0 = 一律查向量索引",
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
    "llm.timeout_seconds": "单次 LLM 调用时限",
    "llm.max_retries": "失败后重试次数（指数退避加抖动）",
    "llm.backoff_initial_seconds": "重试间隔的起点",
    "llm.backoff_max_seconds": "重试间隔的上限",
    "historian": "史官（把对话整理成长期记忆的后台任务）",
    "historian.capture": "哪些对话交给史官：end / transcript / both",
    "historian.preset": "史官使用的 Amrita 模型预设（通常选便宜的）；空 = llm.preset",
    "historian.max_concurrency": "同时处理的任务数",
    "historian.poll_interval_seconds": "轮询任务队列的间隔（新任务入队时也会立即唤醒）",
    "historian.job_lease_seconds": "任务租约时长（运行中自动续租）；租约过期（进程崩溃或卡住）即被收回重做",
    "historian.job_max_attempts": "一个任务最多尝试的次数（含第一次，间隔指数退避），之后记为“已放弃”（dead）",
    "historian.dead_jobs_keep": "保留的已放弃任务条数",
    "historian.dead_jobs_keep_days": "已放弃任务保留天数",
    "historian.recent_messages_k": "每个任务附带的最近消息条数（用于消解指代）",
    "historian.source_message_max_chars": "任务中每条消息截断到的字数",
    "historian.transcript_batch_turns": "未调用 end 的轮次攒够这么多条即一次提取",
    "historian.transcript_pause_seconds": "……或会话安静这么久后提取",
    "historian.notes_keep": "每个会话保留的短期笔记条数",
    "historian.turns_keep": "每个会话保留的对话记录条数",
    "profiles": "画像卡片（每个用户、每个群一张）",
    "profiles.revisions_keep": "每张画像保留的历史版本数（profile restore 可恢复）",
    "profiles.evaluation_max_chars": "画像“评价”部分的字数上限",
    "profiles.body_max_chars": "画像“正文”部分的字数上限",
    "profiles.roast_max_chars": "画像“吐槽”部分的字数上限",
    "profiles.merge": "史官整理完一批记忆后，用模型更新相关的用户和群画像",
    "profiles.merge_window_seconds": "同一张画像在这段时间内的多次更新合并为一次模型调用",
    "profiles.merge_preset": "更新画像使用的 Amrita 模型预设；空 = historian.preset",
    "profiles.merge_top_k": "每次更新画像时参考的该对象的历史记忆条数",
    "consolidation": "整理（在每个会话的空闲时段整理记忆）、知识库与记忆衰减",
    "consolidation.use_idle_window_planner": "按会话的活跃热度图挑选空闲时段；关闭则按指数退避安排",
    "consolidation.idle_timezone": "热度图时段与目标时刻的时区；空 = timezone；无效则回退到 timezone（或 UTC）并警告",
    "consolidation.idle_target_hour": "还没有活跃记录（不足一天）的会话在每天这个整点整理",
    "consolidation.idle_window_minutes": "一次整理窗口的最长时长",
    "consolidation.idle_short_window_minutes": "值得安排的最短窗口；也是全天都活跃的会话得到的短窗口",
    "consolidation.idle_buffer_minutes": "窗口与前后活跃时段（下一条预计消息）之间、最后一条消息之后留出的间隔",
    "consolidation.cycle": "整理周期：有新记忆的会话在空闲时段整理（合并重复记忆，需要判断的交给模型）；关闭则不整理",
    "consolidation.idle_horizon_hours": "向前寻找安静时段的范围",
    "consolidation.quiet_run_base_hours": "所需连续安静时长的起点",
    "consolidation.quiet_run_penalty_hours": "上次整理以来的消息数每翻一倍，所需安静时长增加这么多",
    "consolidation.quiet_run_max_hours": "所需连续安静时长的上限（低于起点时以它为准）",
    "consolidation.cold_slot_max_share_percent": "某时段的消息份额不超过平均时段的这一比例才算安静",
    "consolidation.cold_slot_max_messages": "……且该时段预计消息数不超过这么多",
    "consolidation.heat_half_life_days": "星期 × 时段热度图的半衰期",
    "consolidation.coarse_heat_half_life_days": "每日时段热度图的半衰期",
    "consolidation.shrinkage_prior_occurrences": "细粒度热度图向粗粒度收缩的先验次数（越大越依赖粗粒度）",
    "consolidation.activity_flush_seconds": "消息计数先记在内存里，每隔这么久（以及关闭时）写入数据库一次",
    "consolidation.rethink_base_delay_minutes": "不用空闲规划时：指数退避的起始间隔",
    "consolidation.rethink_penalty_multiplier": "……上次整理以来每多一条消息，间隔乘以这个倍数",
    "consolidation.rethink_max_delay_minutes": "……间隔的上限",
    "consolidation.agent_max_iterations": "每次整理中模型判断步骤最多的轮数",
    "consolidation.cycle_token_budget": "每次整理中模型判断步骤最多使用的 token 数（输入 + 输出）",
    "consolidation.daily_token_budget": "每个机器人账号每天（按 timezone）整理合计最多使用的 token 数；0 = 不调用模型",
    "consolidation.allow_send_to_user": "允许整理时给私聊用户留一条简短消息（只在那个私聊发送一次，从不发到群里）",
    "consolidation.knowledge_max_chars": "知识库条目正文的字数上限（标题最多 60 字，摘要最多 200 字）",
    "consolidation.knowledge_revisions_keep": "每个知识库条目保留的历史版本数",
    "consolidation.knowledge_suggestions_per_day": "每个用户 24 小时内可提交的知识库建议条数（0 = 不接受建议）",
    "consolidation.sweep_interval_hours": "记忆衰减扫描的间隔（从上一轮扫完算起）；0 = 只由 ambot cognition sweep 运行",
    "consolidation.short_term_days": "低重要度记忆的寿命，到期即过期（可在 expired_keep_days 内恢复）",
    "consolidation.long_term_days": "高重要度记忆的寿命，到期降为中；中等的寿命是两者的几何平均，到期降为低",
    "consolidation.expired_keep_days": "过期记忆可恢复的天数，之后永久删除",
    "consolidation.sweep_batch_size": "衰减扫描每批（一个事务）读取的记忆条数",
}


#: The unit of each numeric key, said after its range (keys without one are plain numbers:
#: weights, shares, constants, a port).
UNITS: dict[str, str] = {
    "memo_max_chars": "字",
    "memory_max_chars": "字",
    "pins_max_per_scope": "条",
    "memories_max_per_scope": "条",
    "outbox_interval_seconds": "秒",
    "hook_timeout_seconds": "秒",
    "tool_timeout_seconds": "秒",
    "outbox_max_attempts": "次",
    "outbox_lease_seconds": "秒",
    "memo_revisions_keep": "个",
    "recent_notes_inject_k": "条",
    "embedder.dimensions": "维",
    "embedder.batch_size": "条",
    "embedder.timeout_seconds": "秒",
    "embedder.threads": "个",
    "embedder.query_cache_seconds": "秒",
    "chroma.cached_indexes": "个",
    "chroma.call_timeout_seconds": "秒",
    "recall.top_k": "条",
    "recall.candidates": "条",
    "recall.exact_search_max_vectors": "条",
    "recall.feedback_docs": "条",
    "recall.short_query_chars": "字",
    "recall.token_budget": "token",
    "recall.current_group_boost": "倍",
    "recall.current_private_boost": "倍",
    "llm.timeout_seconds": "秒",
    "llm.max_retries": "次",
    "llm.backoff_initial_seconds": "秒",
    "llm.backoff_max_seconds": "秒",
    "historian.max_concurrency": "个",
    "historian.poll_interval_seconds": "秒",
    "historian.job_lease_seconds": "秒",
    "historian.job_max_attempts": "次",
    "historian.dead_jobs_keep": "个",
    "historian.dead_jobs_keep_days": "天",
    "historian.recent_messages_k": "条",
    "historian.source_message_max_chars": "字",
    "historian.transcript_batch_turns": "轮",
    "historian.transcript_pause_seconds": "秒",
    "historian.notes_keep": "条",
    "historian.turns_keep": "条",
    "profiles.revisions_keep": "个",
    "profiles.evaluation_max_chars": "字",
    "profiles.body_max_chars": "字",
    "profiles.roast_max_chars": "字",
    "profiles.merge_window_seconds": "秒",
    "profiles.merge_top_k": "条",
    "consolidation.idle_target_hour": "点",
    "consolidation.idle_window_minutes": "分钟",
    "consolidation.idle_short_window_minutes": "分钟",
    "consolidation.idle_buffer_minutes": "分钟",
    "consolidation.idle_horizon_hours": "小时",
    "consolidation.quiet_run_base_hours": "小时",
    "consolidation.quiet_run_penalty_hours": "小时",
    "consolidation.quiet_run_max_hours": "小时",
    "consolidation.cold_slot_max_share_percent": "%",
    "consolidation.cold_slot_max_messages": "条",
    "consolidation.heat_half_life_days": "天",
    "consolidation.coarse_heat_half_life_days": "天",
    "consolidation.shrinkage_prior_occurrences": "次",
    "consolidation.activity_flush_seconds": "秒",
    "consolidation.rethink_base_delay_minutes": "分钟",
    "consolidation.rethink_penalty_multiplier": "倍",
    "consolidation.rethink_max_delay_minutes": "分钟",
    "consolidation.agent_max_iterations": "轮",
    "consolidation.cycle_token_budget": "token",
    "consolidation.daily_token_budget": "token",
    "consolidation.knowledge_max_chars": "字",
    "consolidation.knowledge_revisions_keep": "个",
    "consolidation.knowledge_suggestions_per_day": "条",
    "consolidation.sweep_interval_hours": "小时",
    "consolidation.short_term_days": "天",
    "consolidation.long_term_days": "天",
    "consolidation.expired_keep_days": "天",
    "consolidation.sweep_batch_size": "条",
}
#: Numeric keys that are plain numbers on purpose (no unit to name).
UNITLESS = frozenset(
    {
        "vector_budget_share",
        "chroma.port",
        "embedder.second_weight",
        "recall.vector_weight",
        "recall.keyword_weight",
        "recall.rrf_k",
        "recall.speaker_boost",
        "recall.recency_floor",
        "recall.recency_min_similarity",
        "recall.mmr_lambda",
        "recall.feedback_weight",
    }
)


def field_of(key: str) -> FieldInfo:
    """The field of the dotted ``key`` in ``CognitionConfig``."""
    model: Any = CognitionConfig
    *sections, name = key.split(".")
    for section in sections:
        model = model.model_fields[section].annotation
    return model.model_fields[name]


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def allowed_values(key: str) -> str:
    """What ``key`` takes, in words: ``整数 1 到 50 条``, ``数值 ≥ 0 秒``, ``true 或 false``,
    ``可选 strict、open``."""
    field = field_of(key)
    annotation = field.annotation
    if annotation is bool:
        return "true 或 false"
    if get_origin(annotation) is Literal:
        return "可选 " + "、".join(str(choice) for choice in get_args(annotation))
    if annotation not in (int, float):
        return ""
    bounds: dict[str, Any] = {}
    for item in field.metadata:
        for name in ("ge", "gt", "le", "lt"):
            if getattr(item, name, None) is not None:
                bounds[name] = getattr(item, name)
    low = bounds.get("ge", bounds.get("gt"))
    high = bounds.get("le", bounds.get("lt"))
    kind = "整数" if annotation is int else "数值"
    if low is not None and high is not None and "gt" not in bounds and "lt" not in bounds:
        shown = f"{_number(low)} 到 {_number(high)}"
    else:
        parts = [f"{'>' if 'gt' in bounds else '≥'} {_number(low)}"] if low is not None else []
        parts += [f"{'<' if 'lt' in bounds else '≤'} {_number(high)}"] if high is not None else []
        shown = " 且 ".join(parts) or "任意"
    unit = UNITS.get(key, "")
    return f"{kind} {shown}" + (f" {unit}" if unit else "")


def describe(key: str) -> str:
    """The WebUI line of the dotted ``key``: the restart note when it needs one, what it does, and
    what it takes (range and unit, or the choices), so that a refused save can be read against it."""
    text = DESCRIPTIONS.get(key, "")
    allowed = "" if _is_section(key) else allowed_values(key)
    if allowed:
        text = f"{text}（{allowed}）"
    return f"{RESTART_NOTE}{text}" if needs_restart(key) else text


def _is_section(key: str) -> bool:
    annotation = field_of(key).annotation
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


# ---------------------------------------------------------------------------- the file's text


def _toml_value(value: Any) -> str:
    """A default as TOML: booleans, numbers, strings, a list of strings, a table of strings."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(f"{json.dumps(str(k), ensure_ascii=False)} = {_toml_value(v)}" for k, v in value.items())
            + "}"
        )
    raise TypeError(f"no TOML form for {type(value).__name__}")


FILE_HEADER = """\
# amrita_plugin_cognition 的配置。每个键上面一行说明：作用、取值范围与单位；标着【需要重启】的键改了要重启机器人才生效，
# 其余的保存后立即生效（热重载）。所有键都可以删掉（删掉即用默认值，下面写的就是默认值）；写错了会沿用当前配置，
# 日志里写明是哪个键。环境变量 COGNITION_<键>、COGNITION_<节>__<键> 覆盖这里的值；值里的 ${NAME} 从环境变量读取。
# 注意：在 Amrita WebUI 里保存会按默认格式重写这个文件，这些注释（以及你自己写的注释）都会消失。
"""


def default_file_text() -> str:
    """The configuration file written when there is none: every key with its default, each under
    a comment line (``describe``), sections under theirs. Read back, it is exactly the defaults."""
    defaults = CognitionConfig()
    lines = [FILE_HEADER]
    sections: list[str] = []
    for name, field in CognitionConfig.model_fields.items():
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            sections.append(name)
            continue
        lines += [f"# {describe(name)}", f"{name} = {_toml_value(getattr(defaults, name))}"]
    for section in sections:
        lines += ["", f"# {describe(section)}", f"[{section}]"]
        values = getattr(defaults, section)
        for name in type(values).model_fields:
            key = f"{section}.{name}"
            lines += [f"# {describe(key)}", f"{name} = {_toml_value(getattr(values, name))}"]
    return "\n".join(lines) + "\n"


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
