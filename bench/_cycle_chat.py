"""One group chat of about 30 members for the cycle benches: template facts (``_corpus.facts``,
the members' names only) with planted duplicates and near-misses written by hand.

* **Exact copies**: a template fact written again once folded the same (``_corpus.exact_copy``:
  other final punctuation, a space inside, no final full stop; the same speaker): what the
  model-free pre-pass merges.
* **Rewordings** (``REWORDINGS``): a fact and the same fact said again another way — another word
  order, synonyms, a particle or politeness added, 的/了 dropped or added, a date written in full
  or short, a holiday for its date, a nickname for the name. Written before anything was measured
  and not tuned to what the pre-pass's near-duplicate check catches: only the judgement step may
  merge them, and only if the pre-pass proposes them.
* **Near-misses** (``NEAR_MISSES``): a fact and another that differs in one number, name, date,
  place, direction, negation or plan-vs-done; never one fact. Three of them are near-misses of a
  reworded fact (a cluster of three where only two are one fact).

``build`` writes the chat through the real write path and returns what was planted, so the
checks (and the benches' fake model, a perfect judge) know the truth.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from _corpus import NAMES, exact_copy, facts

#: The chat's members: a QQ number and a name each.
MEMBERS = [(str(10001 + index), name) for index, name in enumerate(NAMES[:30])]

#: (a fact, the same fact said again another way, its tag).
REWORDINGS: list[tuple[str, str, str]] = [
    ("小明的生日是2001年5月12日。", "小明是2001年5月12号生的。", "生日"),
    ("阿杰在杭州一家游戏公司做后端开发。", "阿杰的工作是后端开发，在杭州的一家游戏公司上班。", "工作"),
    ("王芳对芒果过敏，吃了会起疹子。", "王芳吃芒果会起疹子，她对芒果过敏。", "健康"),
    ("李雷养了一只叫可乐的柯基。", "李雷家有只柯基，名字叫可乐。", "宠物"),
    ("韩梅梅2025年9月要去英国读研究生。", "梅梅2025年9月去英国念研究生。", "学业"),
    ("张伟每周三晚上在体育馆打羽毛球。", "每个星期三晚上，张伟都会去体育馆打羽毛球。", "运动"),
    ("群里约好2025年3月8日在西湖边聚餐。", "群友们说好了3月8号（2025年）一起去西湖边吃饭。", "群活动"),
    ("刘洋的车是一辆白色的特斯拉Model 3。", "刘洋开的是白色Model 3，特斯拉的。", "生活"),
    ("陈静是小学语文老师。", "陈静在小学教语文。", "工作"),
    ("杨帆2024年12月通过了法考。", "杨帆在2024年12月把法考考过了。", "学业"),
    ("赵磊不吃香菜，点外卖都会备注。", "赵磊点外卖总会备注不要香菜，他是不吃香菜的。", "饮食"),
    ("黄丽的猫叫团子，是一只英短蓝猫。", "黄丽养的英短蓝猫名叫团子。", "宠物"),
    ("周杰最喜欢的歌手是五月天。", "五月天是周杰最喜欢的乐队。", "爱好"),
    ("吴敏住在成都高新区。", "吴敏家在成都的高新区。", "生活"),
    ("徐晨2025年4月5日结婚。", "徐晨的婚礼定在2025年4月5号。", "大事"),
    ("孙悦是群里的管理员，负责审核新人。", "群管理员孙悦负责新人入群的审核。", "群务"),
    ("马超每天早上六点起床跑步五公里。", "马超每天6点起来晨跑，跑5公里。", "运动"),
    ("朱婷在学日语，准备考N2。", "朱婷正在学日语，打算考日语N2。", "学业"),
    ("胡斌是湖南人，特别能吃辣。", "胡斌老家是湖南的，很能吃辣。", "饮食"),
    ("郭琳的生日是11月3日。", "郭琳十一月三号过生日。", "生日"),
    ("何欢周末在奶茶店兼职。", "何欢每逢周末去奶茶店打工。", "工作"),
    ("高远2025年1月买了一台PS5。", "2025年1月，高远入手了一台PS5。", "生活"),
    ("林夕喜欢看科幻小说，最爱《三体》。", "林夕最爱的科幻小说是《三体》，平时很喜欢看科幻。", "爱好"),
    ("罗宇在准备考研，目标是浙江大学计算机专业。", "罗宇考研想考浙大的计算机。", "学业"),
    ("梁爽2025年2月14日和男朋友订婚了。", "2025年2月14日梁爽跟男朋友订了婚。", "大事"),
    ("宋佳会弹钢琴，考过了十级。", "宋佳钢琴十级，会弹钢琴。", "爱好"),
    ("郑凯在深圳做产品经理。", "郑凯的工作是产品经理，在深圳。", "工作"),
    ("谢娜怕狗，小时候被狗咬过。", "谢娜小时候被狗咬过，所以很怕狗。", "生活"),
    ("韩雪的女儿叫朵朵，2022年出生。", "韩雪有个2022年出生的女儿，名字叫朵朵。", "家庭"),
    ("唐宁是群主，2019年建的这个群。", "这个群是唐宁2019年建的，他是群主。", "群务"),
    ("群规：每周五晚上八点是固定的开黑时间。", "每个星期五晚上8点群里固定开黑。", "群规"),
    ("群里规定不许发广告，发了直接踢。", "本群禁止发广告，发广告的直接踢出去。", "群规"),
    ("小红在上海读大学，学的是临床医学。", "小红在上海念大学，专业是临床医学。", "学业"),
    ("阿杰2024年10月1日去了一趟西藏。", "2024年国庆节那天阿杰去了西藏。", "旅行"),
    ("王芳每天中午都会午睡半小时。", "王芳有每天午睡30分钟的习惯。", "生活"),
    ("李雷用的是机械键盘，青轴的。", "李雷的键盘是青轴机械键盘。", "生活"),
    ("张伟打算2025年5月1日去西安玩。", "张伟计划2025年劳动节去西安旅游。", "计划"),
    ("刘洋的女朋友叫小雨，是护士。", "刘洋的对象小雨是一名护士。", "家庭"),
    ("陈静周末会去郊区徒步。", "陈静一般周末去郊外徒步。", "运动"),
    ("杨帆的口头禅是“稳住”。", "杨帆老爱说“稳住”。", "趣事"),
    ("赵磊在健身，目标是减到70公斤。", "赵磊健身是想把体重减到七十公斤。", "运动"),
    ("黄丽是广州人，会说粤语。", "黄丽老家广州，会讲粤语。", "生活"),
    ("周杰2024年11月换了新工作，去了字节跳动。", "周杰2024年11月跳槽去了字节。", "工作"),
    ("吴敏对花生过敏。", "吴敏花生过敏，不能吃花生。", "健康"),
    ("徐晨的游戏ID叫“晨光熹微”。", "徐晨在游戏里的名字是“晨光熹微”。", "游戏"),
    ("孙悦喜欢喝不加糖的美式咖啡。", "孙悦爱喝美式，不加糖的。", "饮食"),
    ("马超支持湖人队。", "马超是湖人的球迷。", "爱好"),
    ("朱婷会在2025年6月毕业。", "朱婷的毕业时间是2025年6月。", "学业"),
    ("胡斌养了两只仓鼠。", "胡斌家里有两只仓鼠。", "宠物"),
    ("郭琳在银行工作，做柜员。", "郭琳是银行的柜员。", "工作"),
    ("何欢最喜欢的电影是《星际穿越》。", "《星际穿越》是何欢最爱的电影。", "爱好"),
    ("高远周日下午一般在家打游戏。", "高远每周日下午基本都在家打游戏。", "游戏"),
    ("林夕2024年8月去日本大阪旅游了。", "林夕2024年8月去了趟大阪（日本）玩。", "旅行"),
    ("罗宇不喝酒，聚餐只喝饮料。", "罗宇滴酒不沾，聚餐时都喝饮料。", "饮食"),
    ("梁爽是左撇子。", "梁爽用左手写字，是个左撇子。", "趣事"),
    ("宋佳2025年3月15日生了个儿子。", "宋佳在2025年3月15号生了一个男孩。", "大事"),
    ("郑凯每天通勤要一个半小时。", "郑凯每天上下班路上要花一个半小时。", "生活"),
    ("谢娜的微信头像是她家的猫。", "谢娜用自家猫的照片当微信头像。", "趣事"),
    ("韩雪在学做烘焙，最拿手的是戚风蛋糕。", "韩雪学烘焙，戚风蛋糕做得最好。", "爱好"),
    ("唐宁说2025年1月28日除夕晚上在群里发红包。", "唐宁说除夕夜（2025年1月28日）群里发红包哦。", "群活动"),
]

#: (a fact, a fact that differs from it in one part, its tag): never one fact.
NEAR_MISSES: list[tuple[str, str, str]] = [
    ("小红养了两只猫。", "小红养了三只猫。", "宠物"),
    ("阿杰2025年3月22日周六晚上请大家吃火锅。", "阿杰2025年3月23日周日晚上请大家吃火锅。", "群活动"),
    ("王芳会开车。", "王芳不会开车。", "生活"),
    ("李雷2024年考过了英语六级。", "韩梅梅2024年考过了英语六级。", "学业"),
    ("张伟的房租每月3500元。", "张伟的房租每月4500元。", "生活"),
    ("刘洋2025年2月去哈尔滨看了冰雕。", "刘洋2024年2月去哈尔滨看了冰雕。", "旅行"),
    ("陈静喜欢吃辣。", "陈静不喜欢吃辣。", "饮食"),
    ("杨帆住在小区的3号楼。", "杨帆住在小区的8号楼。", "生活"),
    ("赵磊计划2025年10月去云南旅游。", "赵磊2025年10月去云南旅游了。", "旅行"),
    ("黄丽的儿子2025年秋天上三年级。", "黄丽的儿子2025年秋天上四年级。", "家庭"),
    ("周杰在北京工作。", "周杰在南京工作。", "工作"),
    ("吴敏每周跑三次步。", "吴敏每周跑五次步。", "运动"),
    ("徐晨借给孙悦500块钱。", "孙悦借给徐晨500块钱。", "生活"),
    ("马超2025年3月1日参加了半程马拉松。", "马超2025年3月1日参加了全程马拉松。", "运动"),
    ("朱婷喜欢喝咖啡。", "朱婷不喜欢喝咖啡。", "饮食"),
    ("胡斌的生日是7月8日。", "胡斌的生日是7月18日。", "生日"),
    ("郭琳2025年买了一辆20万的车。", "郭琳2025年买了一辆30万的车。", "生活"),
    ("群规：每周五晚上八点是固定的开黑时间。", "群规：每周六晚上八点是固定的开黑时间。", "群规"),
    ("小明的生日是2001年5月12日。", "小明的生日是2001年5月21日。", "生日"),
    ("何欢最喜欢的电影是《星际穿越》。", "何欢最不喜欢的电影是《星际穿越》。", "爱好"),
]

FULL = (1000, 40, 60, 20)
QUICK = (200, 8, 12, 4)


@dataclass(slots=True)
class Entry:
    text: str
    speaker: int
    day: int
    tags: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Planted:
    """What ``build`` wrote: every id, its text, and the planted pairs (original id, copy id)."""

    ids: list[int]
    texts: dict[int, str]
    exact: list[tuple[int, int]]
    reworded: list[tuple[int, int]]
    near: list[tuple[int, int]]
    tags: dict[int, list[str]]

    @property
    def duplicates(self) -> list[tuple[int, int]]:
        return self.exact + self.reworded


def _fillers() -> list[str]:
    """Template facts about the members only, in a fixed order."""
    names = {name for _, name in MEMBERS}
    others = [name for name in NAMES if name not in names]
    pool = [
        text
        for text in facts(2400)
        if any(text.startswith(name) for name in names) and not any(text.startswith(name) for name in others)
    ]
    return pool


def _filler_tags(text: str) -> list[str]:
    return ["喜好"] if "聊天时提到" in text else ["日常"]


def layout(seed: int, total: int, exact: int, reworded: int, near: int) -> tuple[list[Entry], dict[str, Any]]:
    """The chat's entries in the order they are written (by day), and where each planted copy is
    (indices into the entries). The same seed gives the same chat."""
    rng = random.Random(seed)
    pairs = REWORDINGS[:reworded]
    misses = NEAR_MISSES[:near]
    bases = list(dict.fromkeys([first for first, _, _ in pairs] + [first for first, _, _ in misses]))
    base_tags = {first: [tag] for first, _, tag in pairs + misses}
    copies = exact + reworded + near
    fillers = _fillers()
    need = total - copies - len(bases)
    if need > len(fillers):
        raise ValueError(f"{need} template facts wanted, {len(fillers)} available")
    chosen = rng.sample(fillers, need)
    base = [Entry(text, rng.randrange(len(MEMBERS)), rng.randrange(0, 300), _filler_tags(text)) for text in chosen]
    base += [Entry(text, rng.randrange(len(MEMBERS)), rng.randrange(0, 300), base_tags[text]) for text in bases]
    rng.shuffle(base)
    index_of = {entry.text: index for index, entry in enumerate(base)}
    later: list[tuple[str, int, Entry]] = []
    for number, source in enumerate(rng.sample(range(need), exact)):
        original = base[index_of[chosen[source]]]
        copy = Entry(exact_copy(original.text, number), original.speaker, original.day, list(original.tags))
        later.append(("exact", index_of[original.text], copy))
    for first, second, tag in pairs:
        original = base[index_of[first]]
        day = original.day + rng.randrange(1, 60)
        later.append(("reworded", index_of[first], Entry(second, rng.randrange(len(MEMBERS)), day, [tag])))
    for first, second, tag in misses:
        original = base[index_of[first]]
        day = original.day + rng.randrange(0, 60)
        later.append(("near", index_of[first], Entry(second, rng.randrange(len(MEMBERS)), day, [tag])))
    entries = base + [entry for _, _, entry in later]
    order = sorted(range(len(entries)), key=lambda index: (entries[index].day, rng.random()))
    position = {old: new for new, old in enumerate(order)}
    planted: dict[str, list[tuple[int, int]]] = {"exact": [], "reworded": [], "near": []}
    for offset, (kind, original, _) in enumerate(later):
        planted[kind].append((position[original], position[len(base) + offset]))
    return [entries[index] for index in order], planted


async def build(engine: Any, bot_id: str, scope: Any, entries: list[Entry], planted: dict[str, Any]) -> Planted:
    """Write ``entries`` into ``scope`` through the real write path, a week at a time (each
    written that week), vectors drained; the ids of what was planted."""
    from amrita_plugin_cognition.api import MemoryDraft, Provenance

    start = datetime(2024, 6, 1, 20, 0, tzinfo=timezone.utc)
    ids: list[int] = []
    for week in range(0, max(entry.day for entry in entries) + 7, 7):
        batch = [entry for entry in entries if week <= entry.day < week + 7]
        if not batch:
            continue
        drafts = [
            MemoryDraft(
                text=entry.text,
                scope=scope,
                speaker_id=MEMBERS[entry.speaker][0],
                speaker_name=MEMBERS[entry.speaker][1],
                tags=list(entry.tags),
                provenance=Provenance.IMPORTED,
            )
            for entry in batch
        ]
        result = await engine.memories.remember(bot_id, drafts, now=start + timedelta(days=week + 6))
        if len(result.written) != len(drafts):
            raise RuntimeError(f"refused while building the chat: {result.refused[:3]}")
        ids += [result.record_ids[index] for index in range(len(drafts))]
    await engine.index.drain()

    def ids_of(kind: str) -> list[tuple[int, int]]:
        return [(ids[first], ids[second]) for first, second in planted[kind]]

    return Planted(
        ids=ids,
        texts={ids[index]: entry.text for index, entry in enumerate(entries)},
        exact=ids_of("exact"),
        reworded=ids_of("reworded"),
        near=ids_of("near"),
        tags={ids[index]: list(entry.tags) for index, entry in enumerate(entries)},
    )
