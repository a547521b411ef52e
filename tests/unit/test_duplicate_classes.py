"""Classes of near-duplicate mistakes the rules now catch (``domain/duplicates.py``, ``fact_parts``,
``thesaurus``), each with a pair that must agree and one that must not. Judged by the rules alone
(no vectors: the learned check is ``test_pair_model.py``'s), at a cosine that lets the parts decide."""

from __future__ import annotations

import pytest

from amrita_plugin_cognition.domain import thesaurus
from amrita_plugin_cognition.domain.duplicates import HOW_MUCH, PLAN_VS_DONE, ROLES, WHEN, WHETHER, WHO, judge_pair
from amrita_plugin_cognition.domain.fact_parts import read_parts

SIMILARITY = 0.9


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # a word said with its synonym (the thesaurus's groups of equal words), not another thing
        ("小雨的儿子在读小学三年级。", "小雨的儿子目前正在上小学三年级。"),
        ("阿海的妻子在一所中学当英语老师。", "阿海的妻子在一所中学当英语教师。"),
        # a QQ number written bare in brackets after the name is the same person
        ("QQ号10086（昵称移动）上周在成都吃了火锅。", "上周移动（10086）在成都吃了顿火锅。"),
        # a year of two digits before 年
        ("晨晨2024年12月1日在上海迪士尼过了生日。", "晨晨24年12月1号在上海迪士尼过的生日。"),
        # forbidding said in two ways: one negation each
        ("群主老周规定本群禁止发广告。", "群主老周规定本群不允许发广告。"),
        # an intention on one side, the same act set ahead on the other
        ("豆豆下周三要去北京出差。", "豆豆下个星期三去北京出差。"),
        # a frequency said as a span of its own period
        ("阿宁每周去一次健身房。", "阿宁一周去一次健身房。"),
        # counting words of speech, half as a percentage, money said as 89块9
        ("晓晓养了两只猫。", "晓晓养了俩猫。"),
        ("小潘把工资的一半都存起来了。", "小潘把百分之五十的工资存了起来。"),
        ("小杨花了89.9元买了一个手机壳。", "小杨花了89块9买了一个手机壳。"),
        # 昨晚 is an evening
        ("饭团昨晚加班到凌晨两点。", "饭团昨天夜里一直加班到凌晨2点。"),
    ],
)
def test_the_same_fact_said_otherwise_agrees(first: str, second: str) -> None:
    verdict = judge_pair(first, second, SIMILARITY)
    assert verdict.duplicate, verdict


@pytest.mark.parametrize(
    ("first", "second", "reason"),
    [
        # another thing of one kind, even where a fragment of each word is a synonym of the other
        ("小马在闲鱼上以300元卖掉了旧自行车。", "小马在闲鱼上以300元卖掉了旧电动车。", "wording"),
        # relative days, weeks, months and years
        ("小邓和女朋友上个月分手了。", "小邓和女朋友这个月分手了。", WHEN),
        ("移动（10086）上周在成都吃了火锅。", "移动（10086）这周在成都吃了火锅。", WHEN),
        # allowed against forbidden
        ("群主老周规定本群禁止发广告。", "群主老周规定本群允许发广告。", WHETHER),
        # an intention against the act going on
        ("小明打算去咖啡店兼职。", "小明在咖啡店打工。", PLAN_VS_DONE),
        # two people trading places around the same words, with no directional word
        ("小马请阿凯吃了午饭。", "阿凯请小马吃了午饭。", ROLES),
        ("老张欠小李500块钱。", "小李欠老张500块钱。", ROLES),
        ("阿康把猫寄养在了小柯家。", "小柯把猫寄养在了阿康家。", ROLES),
        # the same one before 被 and before 把
        ("老严被儿子接到北京住了。", "老严把儿子接到北京住了。", ROLES),
        # a person's name in the place of another's: who differs (the learned check never sees it)
        ("萧然打算明年考研，这是2025年6月5日聊天时提到的。", "程诚打算明年考研，这是2025年6月5日聊天时提到的。", WHO),
        ("小张在杭州开了一家花店。", "小王在杭州开了一家花店。", WHO),
        ("曾可在学日语。", "王芳在学日语。", WHO),
        # a relative acting in one fact, the person in the other (another one acts)
        ("阿宁给外婆织了一顶帽子。", "阿宁的外婆给她织了一顶帽子。", ROLES),
        ("QQ号20301（昵称阿宁）每晚十点遛狗。", "QQ号20301（昵称阿宁）的丈夫每晚十点遛狗。", ROLES),
        # a word of people on both sides of the same 给 / 把: from giving to getting
        ("阿宁每周给外婆打一次电话。", "阿宁每周外婆给她打一次电话。", ROLES),
        ("阿宁的表弟把她的相机弄丢了。", "阿宁把她表弟的相机弄丢了。", ROLES),
        # what follows the one 从 of each fact traded places (where from and where to)
        ("阿宁上个月从苏州搬到了杭州。", "阿宁上个月从杭州搬回了苏州。", ROLES),
        # the same one after 被 (who acts) and after 向 (who is acted on)
        ("阿宁被一位前辈批评了。", "阿宁向一位前辈道歉了。", ROLES),
        # the same opener giving in one fact and getting in the other
        ("阿宁借给了表哥两千元。", "阿宁从表哥那里借了两千元。", ROLES),
        ("阿宁送了邻居一箱橙子。", "阿宁收到了邻居送的一箱橙子。", ROLES),
        # one day against one week: two spans of time, not two articles
        ("阿宁请了一天假。", "阿宁请了一周假。", HOW_MUCH),
        # still trying against reached
        ("阿宁最近在找房子。", "阿宁已经找到房子了。", PLAN_VS_DONE),
        # 考虑 is an intention
        ("阿宁在考虑学吉他。", "阿宁已经学了吉他。", PLAN_VS_DONE),
        # how often against a span of another period (每周 / 一个月…一次)
        ("阿宁每周去一次健身房。", "阿宁一个月去一次健身房。", WHEN),
        # time still to go is ahead (还有两年就), not behind
        ("阿宁已经毕业两年了。", "阿宁还有两年就毕业了。", PLAN_VS_DONE),
        # a relative made another by what is added to the word (哥哥 / 表哥): another person
        ("阿宁的哥哥在上海工作。", "阿宁的表哥在上海工作。", WHO),
        # a clause with something more in it
        ("阿宁不喝咖啡。", "阿宁不喝咖啡，但喝茶。", "wording"),
        # one QQ number with two names that share nothing: one is wrong, or these are two people
        ("QQ号20301（昵称阿宁）每天早上跑步5公里。", "QQ号20301（昵称阿康）每天早上跑步5公里。", WHO),
        ("QQ号20301（昵称小北）每周末去爬山。", "小南（QQ号20301）每个周末都去爬山。", WHO),
        # a word made narrower by what is put right before it (车 / 电动车, 班 / 隔壁班)
        ("阿宁的车被人刮花了。", "阿宁的电动车被人刮花了。", "wording"),
        ("阿宁暗恋同班的一个女生。", "阿宁暗恋隔壁班的一个女生。", "wording"),
        # a relative acting on the person, named on both sides
        ("阿宁教她妹妹做数学题。", "阿宁的妹妹教她做数学题。", ROLES),
        # two users named by QQ number trading places (the brackets no longer stand between them)
        (
            "QQ号20301（昵称阿宁）在辅导QQ号20302（昵称阿康）学数学。",
            "QQ号20302（昵称阿康）在辅导QQ号20301（昵称阿宁）学数学。",
            ROLES,
        ),
        (
            "QQ号20301（昵称阿宁）在《王者荣耀》里带QQ号20302（昵称阿康）上分。",
            "阿康（QQ号20302）在《王者荣耀》里带阿宁（QQ号20301）上分。",
            ROLES,
        ),
        # amounts in other units that are not the same amount
        ("阿宁瘦了十斤。", "阿宁瘦了十公斤。", HOW_MUCH),
        ("阿宁被禁言了一天。", "阿宁被禁言了一小时。", HOW_MUCH),
        ("阿宁的预算是八千。", "阿宁预算8w。", HOW_MUCH),
        # 还 as giving back, not the filler "still"
        ("小吴上周还了室友200块钱。", "小吴上周借了室友200块钱。", "wording"),
    ],
)
def test_another_fact_that_looks_alike_differs(first: str, second: str, reason: str) -> None:
    verdict = judge_pair(first, second, SIMILARITY)
    assert not verdict.duplicate and verdict.reason == reason, verdict


def test_a_word_of_a_names_shape_on_one_side_only_is_no_person() -> None:
    assert judge_pair("阿海的妻子在一所中学当英语老师。", "阿海的妻子在一所中学当英语教师。", SIMILARITY).duplicate


def test_names_that_trade_places_around_and_are_no_swap() -> None:
    assert judge_pair("小明和小红去了成都。", "小红和小明去了成都。", SIMILARITY).duplicate


@pytest.mark.parametrize(
    "second",
    [
        "阿宁她外婆住在苏州。",  # a pronoun between the person and the relative
        "阿宁外婆住在苏州。",  # 的 left out
        "阿宁妈妈的妈妈住在苏州。",  # the same relative named another way round
        "阿宁有个外婆住在苏州。",
    ],
)
def test_a_relative_named_another_way_is_still_the_one_meant(second: str) -> None:
    verdict = judge_pair("阿宁的外婆住在苏州。", second, SIMILARITY)
    assert verdict.reason != ROLES, verdict


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("阿宁从同事那里借了三百元。", "阿宁向同事借了三百元。"),  # 从 and 向: both from whom it was got
        ("同事送了阿宁一盒茶叶。", "阿宁收到了同事送的一盒茶叶。"),  # told from each side: not one opener
        ("阿宁给她的猫买了猫粮。", "阿宁给猫买了猫粮。"),  # 给 as "for", no giving
        ("周末，阿宁和朋友去看了电影。", "阿宁周末和朋友去看了电影。"),  # a clause moved, nothing more
        ("阿宁在学校学了很多。", "阿宁在学校学到了很多。"),  # 在 before a place is no act going on
        # the relative named on both sides, told from the person's side, acting on no one
        ("阿宁的女儿上个月出生了。", "阿宁上个月喜得一个女儿。"),
        ("阿宁通过相亲认识了现在的男朋友。", "阿宁的男友是相亲认识的。"),
    ],
)
def test_the_same_act_told_otherwise_is_no_role_change(first: str, second: str) -> None:
    verdict = judge_pair(first, second, SIMILARITY)
    assert verdict.reason not in (ROLES, PLAN_VS_DONE) and not verdict.detail.startswith("+"), verdict


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # a QQ number written bare before the name is the person, not an amount
        ("QQ号20301（昵称阿宁）每天跑步五公里。", "20301阿宁每天跑步5公里。"),
        # a week is seven days
        ("阿宁上个月出差了一个星期。", "阿宁上个月出差了七天。"),
        # the shorthand of chat: k is 千, w is 万
        ("阿宁的预算是八千。", "阿宁预算8k。"),
        ("阿宁花了1200块买了键盘。", "阿宁买键盘花了1.2k。"),
        ("阿宁的视频有两万播放。", "阿宁的视频播放量2w。"),
        # a span in a smaller unit of time, a year and a half-year
        ("阿宁被禁言了一天。", "阿宁被禁言了24小时。"),
        ("阿宁戒烟半年了。", "阿宁戒烟六个月了。"),
        ("阿宁坐高铁用了四个半小时。", "阿宁坐高铁用了4.5h。"),
        ("阿宁在这家公司干了两年半。", "阿宁在这家公司干了2.5年。"),
        # 周年 and 周岁 count years, not weeks
        ("阿宁和丈夫结婚十周年了。", "阿宁和丈夫结婚满10年了。"),
        ("阿宁的儿子刚满两周岁。", "阿宁的儿子刚满两岁。"),
        # 斤 is half a 公斤
        ("阿宁瘦了十斤。", "阿宁瘦了5公斤。"),
        # two neighbouring numerals are a rough range
        ("阿宁每周点三四次外卖。", "阿宁每周点三到四次外卖。"),
        # measure words that count the same things
        ("阿宁养了两条金毛。", "阿宁养了2只金毛。"),
        ("阿宁每天换乘两次公交。", "阿宁每天要倒两趟公交。"),
        # a year written with two digits
        ("阿宁在2023年买了车。", "阿宁23年买了车。"),
        # a measure word before a noun counts it, it does not narrow it
        ("阿宁领养了一只流浪狗。", "阿宁领养了条流浪狗。"),
        # a Latin word after a number is no unit (一个Kindle is not a thousand)
        ("阿宁买了一个Kindle。", "阿宁入手了Kindle。"),
    ],
)
def test_the_same_amount_written_otherwise_is_no_amount_more(first: str, second: str) -> None:
    verdict = judge_pair(first, second, SIMILARITY)
    assert verdict.reason not in (HOW_MUCH, WHO), verdict


def test_the_thesaurus_knows_words_of_people() -> None:
    assert thesaurus.person("外婆") and thesaurus.person("同事") and thesaurus.person("女朋友")
    assert not thesaurus.person("相机") and not thesaurus.person("阿宁")
    # people at large and a place said with a word of kin are not the people one has
    assert not thesaurus.person("有人") and not thesaurus.person("把头") and not thesaurus.person("家里")


def test_the_thesaurus_knows_equal_words_not_words_of_one_kind() -> None:
    assert thesaurus.synonyms("妻子", "老婆") and thesaurus.synonyms("购买", "买")
    assert not thesaurus.synonyms("成都", "重庆")  # a group of things of one kind
    assert not thesaurus.synonyms("饺子", "馄饨")  # two groups of one category
    assert not thesaurus.synonyms("夏", "秋")  # single characters outside actions and states
    assert thesaurus.synonyms("读", "上")  # single characters of an action
    assert thesaurus.known("自行车") and not thesaurus.known("不是一个词的东西")


def test_relative_times_are_read_and_taken_out_of_the_wording() -> None:
    parts = read_parts("阿杰上周三和去年都去过杭州。")
    assert parts.relative_times == frozenset({"week-1", "year-1"}) and 3 in parts.weekdays
    assert "去" not in "".join(read_parts("去年").residue)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # two noes and one no say the same no
        ("阿宁吃不惯香菜，不爱吃。", "阿宁不喜欢吃香菜。"),
        # a word that says no in itself (quit, stopped, sleepless)
        ("阿宁戒掉了喝奶茶的习惯。", "阿宁已经不喝奶茶了。"),
        ("阿宁因为膝盖受伤暂停了跑步。", "阿宁膝盖伤了，暂时不跑步了。"),
        ("阿宁失眠好几个月了。", "阿宁这几个月一直睡不着觉。"),
        # an idiom whose 不 or 无 says yes
        ("阿宁每天早上都要喝一杯咖啡。", "阿宁每天早上雷打不动地喝一杯咖啡。"),
        ("阿宁特别能吃辣。", "阿宁吃辣很厉害，无辣不欢。"),
    ],
)
def test_the_same_no_or_yes_said_otherwise_is_no_negation_more(first: str, second: str) -> None:
    verdict = judge_pair(first, second, SIMILARITY)
    assert verdict.reason != WHETHER, verdict


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("阿宁戒烟了。", "阿宁每天抽烟。"),
        ("阿宁每天都跑步。", "阿宁暂停了跑步。"),
        ("阿宁喜欢吃香菜。", "阿宁吃不惯香菜，不爱吃。"),
    ],
)
def test_a_no_against_a_yes_differs(first: str, second: str) -> None:
    verdict = judge_pair(first, second, SIMILARITY)
    assert not verdict.duplicate and verdict.reason == WHETHER, verdict


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # preparing for something under way is no intention
        ("阿宁在准备考研。", "阿宁正在备考研究生。"),
        ("阿宁最近在备考雅思。", "阿宁近期正在为雅思考试做准备。"),
        # 要 in a rule is a duty
        ("群主规定新人进群要改群名片。", "新人进群必须修改群名片，这是群主的规定。"),
    ],
)
def test_a_duty_or_a_preparation_is_no_plan(first: str, second: str) -> None:
    verdict = judge_pair(first, second, SIMILARITY)
    assert verdict.reason != PLAN_VS_DONE, verdict


def test_preparing_to_go_is_still_a_plan() -> None:
    verdict = judge_pair("阿宁在准备去北京。", "阿宁去了北京。", SIMILARITY)
    assert not verdict.duplicate and verdict.reason == PLAN_VS_DONE, verdict


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # weekdays listed with 周 said once
        ("阿宁每周一、三、五去健身房。", "阿宁每周一周三周五都去健身房。"),
        # a month and day after a year in words
        ("阿宁的生日是5月20日。", "阿宁每年五月二十号过生日。"),
        # the same clock time, its part of the day worded otherwise
        ("阿宁老是到半夜3点才睡着。", "阿宁经常凌晨三点才睡着。"),
        # a holiday on a fixed day is that day
        ("阿宁情人节给男朋友送了一块手表。", "2月14日阿宁送了男朋友一块手表。"),
    ],
)
def test_the_same_day_or_hour_written_otherwise_agrees_on_when(first: str, second: str) -> None:
    verdict = judge_pair(first, second, SIMILARITY)
    assert verdict.reason != WHEN, verdict


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("阿宁每周一、三、五去健身房。", "阿宁每周二、四去健身房。"),
        ("阿宁情人节给男朋友送了一块手表。", "阿宁圣诞节给男朋友送了一块手表。"),
        # a holiday before 后 is a point of reference, not the day
        ("阿宁国庆后10月8号搬了家。", "阿宁10月1号搬了家。"),
    ],
)
def test_another_day_or_hour_differs(first: str, second: str) -> None:
    verdict = judge_pair(first, second, SIMILARITY)
    assert not verdict.duplicate and verdict.reason == WHEN, verdict


@pytest.mark.parametrize(
    "second",
    [
        "宁宁（QQ号20301）每天早上跑步5公里。",  # a name sharing a character: the same one called otherwise
        "Aning（QQ号20301）每天早上跑步5公里。",  # the name in Latin letters
    ],
)
def test_one_number_called_otherwise_is_the_same_person(second: str) -> None:
    verdict = judge_pair("QQ号20301（昵称阿宁）每天早上跑步5公里。", second, SIMILARITY)
    assert verdict.reason != WHO, verdict
