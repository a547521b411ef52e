"""Knowledge search: the recall's score fusion against either side alone, on a hand-made probe.

``engine.knowledge.search`` fuses the keyword side (BM25 over the entries' tokens) and the vector
side (the bundled local model) with ``recall.vector_weight`` / ``recall.keyword_weight``, as
memory recall and card search do. The brief allowed something simpler if measured good enough;
this measures it. Thirty general entries of one bot account (group rules, FAQs, how-tos) are
written through the real write path, and thirty questions as a chat user would ask them, each
about one entry and worded differently from it (some share a word, some none), are searched three
ways: fused (the shipped weights), keyword only (vector weight 0) and vector only (keyword weight
0). Reported: hit@1, hit@3 and MRR (a question whose entry is not shown counts 0).

The probe was written by the author of the feature, so it says how the modes compare, not how
good search is on real bots' knowledge bases.

    uv run python bench/knowledge_search.py

Runs engine-only NoneBot on a throw-away folder; SQLite and embedded Chroma; no network.
"""

from __future__ import annotations

import asyncio
import json

from _common import (
    init_engine_only,
    machine_line,
    open_engine,
    parse_args,
    quiet_cognition_logs,
    remove_home,
    throwaway_home,
)

BOT = "700001"
#: (title, body) of each entry.
ENTRIES = [
    ("群规：周五开黑", "本群每周五晚上八点组织开黑，迟到十分钟以上的人下次请全队喝奶茶。"),
    ("服务器维护时间", "游戏服务器每周二凌晨两点到六点维护，期间无法登录。"),
    ("新人须知", "新人入群先看群公告，改群名片为游戏昵称，有问题在群里问。"),
    ("禁止发广告", "群内禁止发广告和拉人链接，第一次警告，第二次移出群聊。"),
    ("活动报名方式", "线下聚会在群接龙里报名，截止时间是活动前三天的晚上十点。"),
    ("群文件说明", "群文件里有新手教程、地图攻略和装备表，按文件夹分类存放。"),
    ("账号被封怎么办", "账号被封禁时去官网提交申诉，附上截图，一般三到五个工作日回复。"),
    ("充值没到账", "充值后十五分钟内没到账，重启游戏；仍未到账联系官方客服并提供订单截图。"),
    ("周末副本时间", "周六下午两点开团打团队副本，需要装等达到 480 以上。"),
    ("装备分配规则", "团队副本的装备按贡献积分分配，积分相同时掷骰子决定。"),
    ("语音频道", "开黑统一用群语音频道，不要在语音里放背景音乐。"),
    ("如何更换头像框", "在个人主页点击头像，选择头像框标签页即可更换已获得的头像框。"),
    ("电脑配置要求", "最低配置需要 8G 内存和 GTX 1060 显卡，推荐 16G 内存。"),
    ("手机版下载", "手机版在应用商店搜索游戏名下载，苹果和安卓数据互通。"),
    ("公会招新", "公会每月一号招新，要求每周上线至少三天。"),
    ("举报外挂", "发现外挂在游戏内右键玩家名字选择举报，并在群里说明时间。"),
    ("节日活动", "春节期间登录送限定时装，活动持续到元宵节。"),
    ("交易安全", "不要私下交易账号或道具，官方不保护场外交易。"),
    ("禁言规则", "刷屏超过五条会被自动禁言十分钟。"),
    ("段位赛时间", "段位赛每晚七点到十一点开放，赛季持续八周。"),
    ("新手任务卡住", "主线任务卡住时先检查背包是否已满，清理后重新接取任务。"),
    ("画面卡顿", "游戏卡顿时把画质调到中等并关闭垂直同步，可以明显提升帧数。"),
    ("宠物培养", "宠物每天喂三次食物能提升亲密度，亲密度满后可以进化。"),
    ("钓鱼玩法", "钓鱼在湖边按空格抛竿，鱼上钩后连续点击收线。"),
    ("群管理员职责", "管理员负责审核入群申请、处理举报和整理群公告。"),
    ("退群说明", "长期不发言超过三个月的成员会在月底统一清理。"),
    ("直播规则", "在群里分享直播链接需要先问管理员，不能刷屏宣传。"),
    ("比赛奖励", "群内比赛冠军奖励一个月月卡，亚军奖励限定表情包。"),
    ("修改昵称", "游戏内修改昵称需要使用改名卡，改名卡可以在商城购买。"),
    ("地图传送", "打开大地图点击已解锁的传送点即可传送，每次消耗十个金币。"),
]
#: (question, index of the entry it is about)
QUESTIONS = [
    ("周五晚上几点打游戏", 0),
    ("什么时候登不上服务器", 1),
    ("刚进群要做什么", 2),
    ("可以在群里打广告吗", 3),
    ("聚会怎么报名", 4),
    ("有没有新手攻略资料", 5),
    ("号被封了怎么申诉", 6),
    ("钱充了但是没收到", 7),
    ("团本几点开", 8),
    ("副本掉的东西怎么分", 9),
    ("开黑用什么语音", 10),
    ("头像框在哪里换", 11),
    ("我的电脑带得动吗", 12),
    ("安卓能玩吗", 13),
    ("公会什么时候收人", 14),
    ("看到有人开挂怎么办", 15),
    ("过年有什么福利", 16),
    ("能不能私下买号", 17),
    ("为什么我被禁言了", 18),
    ("排位几点开始", 19),
    ("任务做不下去了", 20),
    ("游戏太卡了怎么办", 21),
    ("宠物怎么进化", 22),
    ("怎么钓鱼", 23),
    ("管理员平时管什么", 24),
    ("不说话会被踢吗", 25),
    ("能发直播间吗", 26),
    ("比赛赢了有什么奖励", 27),
    ("怎么改名字", 28),
    ("怎么快速去别的地图", 29),
]
MODES = {"fused": None, "keyword only": (0.0, 1.0), "vector only": (1.0, 0.0)}


async def measure(engine, ids: list[int], weights: tuple[float, float] | None) -> dict[str, float]:  # type: ignore[no-untyped-def]
    if weights is not None:
        recall = engine.config.recall.model_copy(update={"vector_weight": weights[0], "keyword_weight": weights[1]})
        engine.config = engine.config.model_copy(update={"recall": recall})
    hit1 = hit3 = reciprocal = 0.0
    for question, index in QUESTIONS:
        result = await engine.knowledge.search(BOT, question, top_k=10)
        found = [hit.entry.id for hit in result.hits]
        rank = found.index(ids[index]) + 1 if ids[index] in found else 0
        hit1 += rank == 1
        hit3 += 0 < rank <= 3
        reciprocal += 1 / rank if rank else 0.0
    count = len(QUESTIONS)
    return {"hit@1": hit1 / count, "hit@3": hit3 / count, "mrr": reciprocal / count}


async def main() -> None:
    parse_args(__doc__ or "")
    init_engine_only(HOME)
    quiet_cognition_logs()
    print(f"knowledge search — {machine_line()}")
    print(f"{len(ENTRIES)} entries, {len(QUESTIONS)} questions (hand-made probe, see the docstring)")
    results: dict[str, dict[str, float]] = {}
    for mode, weights in MODES.items():
        engine = await open_engine(HOME)
        try:
            ids = [(await engine.knowledge.create(BOT, title, "", body, by="bench")).id for title, body in ENTRIES]
            await engine.index.drain()
            results[mode] = await measure(engine, ids, weights)
            for entry_id in ids:
                await engine.knowledge.delete(BOT, entry_id, by="bench")
            await engine.index.drain()
        finally:
            await engine.close()
        scores = results[mode]
        print(f"{mode:>13}: hit@1 {scores['hit@1']:.3f}  hit@3 {scores['hit@3']:.3f}  MRR {scores['mrr']:.3f}")
    print(json.dumps(results))


HOME = throwaway_home("knowledge")

if __name__ == "__main__":
    try:
        asyncio.run(main())
    finally:
        remove_home(HOME)
