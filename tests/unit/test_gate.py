"""The absoluteness gate: look-alike words pass, subtle relative words are caught, opaque spans are
skipped, numeric ids must survive byte-identical, and the evaluation sets meet their targets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amrita_plugin_cognition.cli.eval_gate import run_gate_eval
from amrita_plugin_cognition.cli.evaluation import EvalInputError
from amrita_plugin_cognition.domain.gate import GateProblem, check_fact, explicit_ids, missing_ids

pytestmark = pytest.mark.embedded_only

DATA = Path(__file__).parents[1] / "data"
USER = "QQ号10001（昵称小明）"


def problems(text: str, required: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    return [(problem.kind, problem.word) for problem in check_fact(text, required).problems]


@pytest.mark.parametrize(
    "text",
    [
        "QQ号10001（昵称小明）于2026-11-29在成都吃了火锅。",
        f"{USER}于2026年11月29日在成都春熙路附近开了一家奶茶店。",
        f"{USER}计划在2026年春节回老家，于2027-02-06返回成都。",
        f"{USER}认为其他人的意见也值得参考，其它方案成本太高。",
        f"{USER}觉得他人的评价不重要。",
        f"{USER}的自我介绍写的是前端工程师，信奉“他山之石，可以攻玉”。",
        f"{USER}在群里说“你好”，还说“我们明天见”。",
        f"{USER}负责项目的本地化，并在公司内网本地部署了GitLab。",
        f"{USER}推荐了《这里的黎明静悄悄》和《我和我的祖国》。",
        f"{USER}最喜欢《你的名字》《昨日重现》《明天会更好》《明天》《昨日之岛》。",
        f"{USER}在群123456789自称「本地吃货」，签名是『今天也要加油』。",
        f'{USER}的口头禅是"我太难了"。',
        f"{USER}觉得她经济带火了国货，是一名吉他手。",
        f"{USER}说关心环保是你我他共同的责任。",
        f"{USER}于北京当地时间2026-11-29 20:00参加了发布会。",
        f"{USER}天天健身，每天跑五公里，每周三去游泳，每个周末去图书馆。",
        f"{USER}周末一般在家打《我的世界》。",
        f"{USER}以前在广州做外贸，2026-11-29之后改为远程办公。",
        f"{USER}负责的这个项目叫Apollo。",
        f"{USER}自己做饭，很少点外卖。",
        "QQ号10001（昵称我是大王）和QQ号10002（昵称你好呀）是同事。",
        "QQ号10001（昵称他说今天这里）喜欢黑胶唱片。",
        f"{USER}爱上周杰伦的歌，觉得《繁花》的主角相当天真。",
        f"{USER}是90后，成年后一直在深圳工作，在日本人开的公司上班。",
        f"{USER}表示对方案B更满意，觉得坐地铁相对方便。",
        f"{USER}于2026-11-29下班后天已经黑了，所以打车回家。",
        f"{USER}住在离成都东站最近的小区，讲过最近邻算法。",
        f"{USER}于2026-11-29生日，当天请了假。",
        f"{USER}于2026年9月入职，同年12月转正，入职三个月后加薪。",
        f"{USER}在2026年底前完成论文，11月下旬去了北京。",
        f"{USER}的生日是3月14日，每年春节都回哈尔滨。",
        f"{USER}于2026-12-04（周五）晚上加班，周一到周五上班。",
        f"{USER}是前天才少年，现在在腾讯工作。",
        f"{USER}的女朋友是QQ号10002（昵称小红），{USER}本人也确认了。",
        f"{USER}在公司楼下的便利店买早餐，家里养了两只猫。",
        f"{USER}1980年出生在湖南株洲的一个工人家庭。",
        f"{USER}对方便面调料包中的味精过敏。",
        f"{USER}就职的成都明日网络科技有限公司每周五举办分享会。",
        "QQ号26129384（昵称Akira）给群机器人（QQ号3601928374，昵称他的小助手）加了欢迎功能。",
        f"{USER}于纽约当地时间2027-01-02 08:00降落。",
        f"{USER}于2026-11-29在群123456789发帖，该群有300人。",
        f"{USER}于2026-11-29在群里说当天晚上要加班。",  # a day anaphor in reported speech is that day
        f"{USER}关注独立歌手“李明天”，于2027-06-20在南京看了李明天的专场演出。",
        "QQ号21002112（昵称当年明月）最喜欢的书是当年明月写的《明朝那些事儿》。",
        f"{USER}在自己的电脑上本地训练了一个LoRA模型。",
        f"{USER}玩过迷你世界。",
        f"{USER}在群123456789里分享了 https://example.com/ta/today 的链接。",
    ],
)
def test_look_alike_words_pass(text: str) -> None:
    assert check_fact(text).ok, problems(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("他昨天在这里吃了火锅。", [("pronoun", "他"), ("relative_time", "昨天"), ("relative_place", "这里")]),
        (f"{USER}于2026-11-29和他女朋友在成都吃了火锅。", [("pronoun", "他")]),
        (f"{USER}养了两只猫，它们都是2025年出生的。", [("pronoun", "它们")]),
        (f"{USER}认为其他群友不如他们靠谱。", [("pronoun", "他们")]),
        (f"{USER}说我们群的氛围很好。", [("pronoun", "我们")]),
        (f"{USER}的建议被对方拒绝了。", [("pronoun", "对方")]),
        (f"{USER}觉得这个方案不可行。", [("pronoun", "这个")]),
        ("自己把头像换成了一只柴犬。", [("pronoun", "自己")]),
        (f"{USER}说ta要去上海面试。", [("pronoun", "ta")]),
        (f"{USER}上周五在杭州跑了半程马拉松。", [("relative_time", "上周五")]),
        (f"{USER}三天前从北京搬到了厦门。", [("relative_time", "三天前")]),
        (f"{USER}最近在学日语。", [("relative_time", "最近")]),
        (f"{USER}分享了作品集，那天还请了客。", [("relative_time", "那天")]),
        (f"{USER}拒绝了老板，当时很生气。", [("relative_time", "当时")]),
        (f"{USER}计划春节前去哈尔滨。", [("relative_time", "春节前")]),
        (f"{USER}要在月底完成论文。", [("relative_time", "月底")]),
        (f"{USER}周三晚上要去面试。", [("relative_time", "周三")]),
        (f"{USER}去年去了冰岛，明年想去挪威。", [("relative_time", "去年"), ("relative_time", "明年")]),
        (f"{USER}在这边开了一家奶茶店。", [("relative_place", "这边")]),
        (f"{USER}住在附近。", [("relative_place", "附近")]),
        (f"{USER}是本地人。", [("relative_place", "本地")]),
        (f"{USER}在本群自称第一冤种。", [("relative_place", "本群")]),
        (f"{USER}毕业后打算留在当地。", [("relative_place", "当地")]),
        (f"{USER}的利率和上面说的一样。", [("pronoun", "上面说的")]),
        (f"{USER}在该群的K歌比赛中得了第一。", [("pronoun", "该群")]),
        (f"{USER}于2027-03-16回复楼上，推荐了一部动画。", [("pronoun", "楼上")]),
        (f"{USER}于2027-06-01发帖出售本人的二手iPad。", [("pronoun", "本人")]),
        (f"{USER}被任命为本部门负责人。", [("relative_place", "本部门")]),
        (f"{USER}上个赛季打进了排行榜前100。", [("relative_time", "上个赛季")]),
        (f"{USER}于2027-01-09验光，度数比上次加深了100度。", [("relative_time", "上次")]),
        (f"{USER}于2027-04-08表示对此事不再发表意见。", [("pronoun", "此事")]),
        (f"{USER}乘坐的航班于当地时间2027-01-02 08:00降落。", [("relative_place", "当地")]),
        (f"{USER}于2027-08-01发帖怀念当年和室友一起旅行的日子。", [("relative_time", "当年")]),
    ],
)
def test_subtle_problems_are_caught(text: str, expected: list[tuple[str, str]]) -> None:
    assert problems(text) == expected


def test_problem_spans_point_into_the_text() -> None:
    text = f"{USER}昨天在这里吃了火锅。"
    verdict = check_fact(text)
    assert not verdict.ok and not verdict.id_drift
    for problem in verdict.problems:
        assert text[problem.start : problem.end] == problem.word


def test_opaque_spans_are_skipped_but_the_rest_is_not() -> None:
    assert check_fact("QQ号10001（昵称昨天（在这里））喜欢猫。").ok
    assert problems("QQ号10001（昵称昨天）今天说“我明天去”。") == [("relative_time", "今天")]
    assert problems(f"{USER}推荐了《明天》，他很喜欢。") == [("pronoun", "他")]
    # an unclosed quote hides nothing
    assert problems(f"{USER}说“我明天去") == [("pronoun", "我"), ("relative_time", "明天")]


def test_explicit_ids_are_maximal_digit_runs_and_skip_bare_dates() -> None:
    source = "我QQ是10001，拉我进群123456789，订单号2026112988123456，20261129那天到，QQ号20261129也是我"
    assert explicit_ids(source) == {"10001", "123456789", "2026112988123456", "20261129"}
    assert explicit_ids("20261129那天到的，金额1234") == set()
    assert explicit_ids("群号：98765432") == {"98765432"}


def test_id_drift() -> None:
    required = explicit_ids("我QQ是10001，在群123456789里")
    kept = "QQ号10001（昵称小明）于2026-11-29加入群123456789。"
    assert check_fact(kept, required).ok
    dropped = check_fact("QQ号10001（昵称小明）于2026-11-29加入了一个群。", required)
    assert dropped.id_drift and dropped.problems == (GateProblem("id_drift", "123456789", -1, -1),)
    changed = check_fact("QQ号10002（昵称小明）于2026-11-29加入群123456789。", required)
    assert [problem.word for problem in changed.problems] == ["10001"]
    inside_longer = check_fact("QQ号100012（昵称小明）于2026-11-29加入群123456789。", ["10001"])
    assert inside_longer.id_drift
    assert missing_ids(["10001", "10001", " "], "QQ号10001") == []


def test_feedback_names_words_and_missing_ids() -> None:
    verdict = check_fact("他昨天来了。", ["10001"])
    assert (
        verdict.feedback()
        == "以下词语需要改写为绝对表述：“他”（代词）、“昨天”（相对时间）；以下编号必须原样保留：10001"
    )
    assert check_fact("他和他们在这里。").feedback() == (
        "以下词语需要改写为绝对表述：“他”（代词）、“他们”（代词）、“这里”（相对地点）"
    )
    assert check_fact(f"{USER}于2026-11-29加入群123456789。", ["123456789"]).feedback() == ""
    assert check_fact("QQ号10001", ["10002", "10003"]).feedback() == "以下编号必须原样保留：10002、10003"


@pytest.mark.parametrize(
    "name",
    [
        "train/gate_zh.jsonl",
        "train/gate_zh_holdout.jsonl",
        "train/gate_zh_holdout2.jsonl",
        "train/gate_zh_holdout3.jsonl",
        "dev/gate_zh_holdout4.jsonl",
        "dev/gate_zh_holdout5.jsonl",
    ],
)
def test_evaluation_sets_meet_the_targets(name: str) -> None:
    """Every gate set of the train and dev splits: false positives <= 3 %, false negatives <= 5 %."""
    report = run_gate_eval(DATA / name)
    assert report["kind"] == "gate"
    assert report["cases"] >= (400 if name == "train/gate_zh.jsonl" else 120)
    assert report["false_positive_rate"] <= 0.03, report["failures"]
    assert report["false_negative_rate"] <= 0.05, report["failures"]


def test_gate_eval_report_and_input_errors(tmp_path: Path) -> None:
    cases = [
        {"id": "a", "text": "QQ号10001（昵称小明）于2026-11-29在成都吃了火锅。", "absolute": True},
        {"id": "b", "text": "他昨天在这里吃了火锅。", "absolute": False},
        {"id": "c", "text": "QQ号10001（昵称小明）于2026-11-29吃了火锅。", "absolute": False},
    ]
    path = tmp_path / "gate.jsonl"
    path.write_text("\n".join(json.dumps(case, ensure_ascii=False) for case in cases), encoding="utf-8")
    report = run_gate_eval(path)
    assert report["cases"] == 3 and report["accuracy"] == 0.6667
    assert report["false_positive_rate"] == 0.0 and report["false_negative_rate"] == 0.5
    assert report["failures"] == [{"id": "c", "text": cases[2]["text"], "expected": False, "problems": []}]

    empty = tmp_path / "empty.jsonl"
    empty.write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(EvalInputError, match="no cases"):
        run_gate_eval(empty)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "text": "他来了", "absolute": "yes"}\n', encoding="utf-8")
    with pytest.raises(EvalInputError, match="line 1"):
        run_gate_eval(bad)
