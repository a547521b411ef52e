"""Admission: secrets are found by their value next to a cue, requests not to remember by their
intent about the memory; ordinary talk full of cue words is stored as said."""

from __future__ import annotations

from pathlib import Path

import pytest

from amrita_plugin_cognition.cli.evaluation import run_admission_eval
from amrita_plugin_cognition.domain.admission import PLACEHOLDER, AdmissionVerdict, admit, redact

pytestmark = pytest.mark.embedded_only

DATA = Path(__file__).parents[1] / "data"


def _refused(text: str, reason: str) -> AdmissionVerdict:
    verdict = admit(text)
    assert not verdict.admit, text
    assert verdict.reason == reason, (text, verdict.reason)
    assert verdict.message and verdict.text == "" and not verdict.redacted and not verdict.stored_as_is
    return verdict


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        # login cookies and key=value session tokens
        ("Cookie: SESSDATA=7e1f2a3b%2C1736000000%2Cc9d8e*71; bili_jct=0b87a2d0c952eaa6", "SESSDATA"),
        ("sessionid=5ag91PzodEytQX3zwfz4PvElgSQiPMOC", "5ag91PzodEytQX3zwfz4PvElgSQiPMOC"),
        ("Authorization: Bearer 0Z0lUwEYe1zxAXS04OewApBlpNiU8oKV8MK8", "0Z0lUwEYe1zxAXS04OewApBlpNiU8oKV8MK8"),
        # connection strings with a password inside
        ("postgres://admin:pg_Adm1n@db.example.com:5432/app", "pg_Adm1n"),
        ("redis://:foobared2024@10.0.0.3:6379", "foobared2024"),
        ("root:Passw0rd@tcp(127.0.0.1:3306)/shop?parseTime=true", "Passw0rd"),
        ("Server=10.0.0.8;Database=hr;User Id=sa;Password=Sa_12345;", "Sa_12345"),
        # an account and its password side by side
        ("账号 zhangsan 密码 abc123456", "abc123456"),
        ("qq 12345678 / mima woaini1314", "woaini1314"),
        ("号：hanmeimei88 mm：hmm_0808", "hmm_0808"),
        # passwords in several phrasings
        ("我的密码是 hunter2，别告诉别人", "hunter2"),
        ("淘宝密码改成了 tb@Love520", "tb@Love520"),
        ("hunter2 是我 Steam 的密码", "hunter2"),
        # one-time codes whatever the sender calls them
        ("验证码 583920 五分钟内有效", "583920"),
        ("【淘宝】验证码 620948，用于登录，5分钟内有效", "620948"),
        ("动态码 904172", "904172"),
        ("丰巢取件码 58213094", "58213094"),
        ("382910 是验证码", "382910"),
        # security-question answers
        ("密保问题答案是：阳光小学", "阳光小学"),
        ("密保问题：你母亲的姓名？答案：赵桂芳", "赵桂芳"),
        # two-factor recovery codes
        ("恢复码：8zmqh-arhp2 8d7ei-d89uv c4aew-kiny2", "8d7ei-d89uv"),
        # vendor keys without a well-known prefix, and prefixed ones
        ("api key: 7b00b1c83fbc8897a2f3f6c61013e31b", "7b00b1c83fbc8897a2f3f6c61013e31b"),
        ("github token 828b0c39a89919f171578b38a728272fd3cd280c", "828b0c39a89919f171578b38a728272fd3cd280c"),
        ("我的 api key 是 sk-abcdefghijklmnopqrstuvwx", "sk-abcdefghijklmnopqrstuvwx"),
        # private key blocks
        (
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQVYBGZ1k2sBDAC7\n-----END PGP PRIVATE KEY BLOCK-----",
            "lQVYBGZ1k2sBDAC7",
        ),
        # bank cards: Luhn-valid without a cue, any 15-19 digits with one
        ("6228322750142177", "6228322750142177"),
        ("4392 0758 6470 3160", "4392 0758 6470 3160"),
        ("银行卡号 6222 0212 3456 7890 123", "6222 0212 3456 7890 123"),
        # identity numbers: a valid check character without a cue
        ("11010519491231002X", "11010519491231002X"),
        ("我的身份证号是 210102197606172149", "210102197606172149"),
    ],
)
def test_each_secret_shape_is_refused_when_it_is_all_there_is(text: str, secret: str) -> None:
    _refused(text, "credential")
    assert secret not in redact(text) and PLACEHOLDER in redact(text)


def test_a_secret_inside_a_sentence_worth_keeping_is_hidden_and_the_rest_kept() -> None:
    verdict = admit("下午三点开会，会议室密码 8866，记得带电脑")
    assert verdict.admit and verdict.redacted and verdict.reason == "credential"
    assert not verdict.stored_as_is
    assert verdict.text == f"下午三点开会，会议室密码 {PLACEHOLDER}，记得带电脑"
    assert "8866" not in verdict.text and verdict.message

    verdict = admit("报名信息：陈明，身份证 610113199711019595，电话 13800001234")
    assert verdict.admit and verdict.redacted
    assert "610113199711019595" not in verdict.text and "陈明" in verdict.text

    verdict = admit("游戏号 shadow_king 密码 sk778899，帮我上去做下日常")
    assert verdict.admit and verdict.redacted
    assert "shadow_king" not in verdict.text and "sk778899" not in verdict.text and "做下日常" in verdict.text


def test_a_secret_with_only_boilerplate_around_it_is_refused() -> None:
    _refused("【招商银行】验证码 583920，五分钟内有效，请勿泄露", "credential")
    _refused("帮我记一下，我的QQ密码是 abc123456", "credential")
    _refused("验证码发过来了，是 948273", "credential")


def test_redact_for_logs_never_keeps_the_secret() -> None:
    text = "db: postgresql://app_user:Vx92!kq@10.2.3.4:5432/shop, token=JRMDXEkcwJ0nZv5hUnCghUVVvPHX8HLJj6RP"
    logged = redact(text)
    assert "Vx92!kq" not in logged and "JRMDXEkcwJ0nZv5hUnCghUVVvPHX8HLJj6RP" not in logged
    assert "app_user" in logged and "10.2.3.4" in logged and logged.count(PLACEHOLDER) == 2
    assert redact("我最近在学 Python 的 asyncio") == "我最近在学 Python 的 asyncio"
    # full-width forms are judged like their ASCII forms, the text keeps its own characters
    assert redact("密码：ｈｕｎｔｅｒ２０２４") == f"密码：{PLACEHOLDER}"


@pytest.mark.parametrize(
    "text",
    [
        "这个别记下来：我下周要去医院复查",
        "这条别入库：我最近在看心理医生",
        "我不想让你记住这件事，我被裁员了",
        "这个不算数别存：我打算辞职",
        "下面这段你听完就忘了吧，我工资其实只有四千",
        "不要留档，我上周去了趟派出所",
        "这段删了，别保存",
        "当我没说，刚才那个是气话",
        "不要写进记忆：我有抑郁症",
        "别把这个存到你的记忆里",
        "把刚才的对话忘掉",
        "从你的记忆里删掉这条",
        "這個別記：我在戒菸",
        "don't remember this, I'm moving next week",
        "off the record: I failed the exam",
    ],
)
def test_requests_not_to_remember_refuse_the_whole_observation(text: str) -> None:
    _refused(text, "do_not_remember")


def test_a_request_not_to_remember_wins_over_redaction() -> None:
    _refused("别记这个：下午开会，会议室密码 8866，记得带电脑", "do_not_remember")


@pytest.mark.parametrize(
    "text",
    [
        # talk about passwords without one
        "密码忘了怎么办",
        "公司要求每 90 天改一次密码",
        "我把所有密码都交给 Bitwarden 管了",
        "保险箱的密码锁坏了，要找锁匠",
        "最近在读《达芬奇密码》",
        "这学期的密码学课老师讲得太快了",
        "密码至少要 8 位，还得有大小写",
        "你的密码不会也是 123456 吧",
        "数据库里的密码要用 bcrypt 存，别存明文",
        # codes, tokens and keys without a value
        "验证码一直收不到",
        "短信验证码 60 秒才能重发一次",
        "这个月 token 用完了",
        "max_tokens 设成 4096 就够了",
        "API key 泄露了要第一时间去后台吊销",
        "连接串格式是 postgres://user:password@host:port/db",
        "postgres://localhost:5432/test 连不上",
        # 记/存/忘 in other senses, and the opposite request
        "你别记仇啊，我昨天不是故意的",
        "别记混了，我是周四的飞机不是周三",
        "我每天晚上都记日记",
        "开始记流水账，每笔开销都写下来",
        "这顿饭算我的，不用记账",
        "老师说这个公式不用记，考试会给",
        "别存钱了，通货膨胀太厉害",
        "照片别存在手机里，容易丢",
        "这批货先别入库，质检还没过",
        "别忘了带伞",
        "记得提醒我周五交报告",
        "帮我记住：我对花生过敏",
        "那个渣男你就忘了吧",
        "我把这事忘了，你再说一遍",
        "I don't remember where I parked",
        # numbers that are not secrets
        "身份证丢了，得回老家补办",
        "银行卡被冻结了，说是有异常交易",
        "订单号 7382853117477217 一直没发货",
        "我的QQ号是 2749301856，加我",
        "我手机号换了，新号 13912345678",
        "commit 756aa04ab22031598926e8019792f4cece678874 引入了这个 bug",
        "报错日志里 request_id=f543d19d-24c1-4271-991b-2a00592f8e2a，帮我查查",
        "这个 18 位数 210102198910289917 是测试数据，校验位不对",
        "-----BEGIN PUBLIC KEY----- 这个是公钥，可以贴",
    ],
)
def test_hard_negatives_are_stored_as_said(text: str) -> None:
    verdict = admit(text)
    assert verdict.admit and verdict.stored_as_is and verdict.reason == "" and verdict.text == text, verdict


def test_shape_decides_not_the_cue() -> None:
    # Luhn: the same digits with the check digit changed are an order number, not a card
    assert not admit("5187819093786579").admit
    assert admit("5187819093786578").stored_as_is
    # MOD 11-2: a valid check character is an id card without a cue; a wrong one is not
    assert not admit("这个号 110105197512236450 你看下").admit
    assert admit("这个号 110105197512236451 你看下").stored_as_is
    # with the cue an id-shaped number is refused even with a typo in the check character
    assert not admit("身份证号 110105197512236451").admit
    # 40 hex characters: a commit without a key cue, a token with one
    digest = "4c090cea7a24129199532290b5cd33e9fec3d7c6"
    assert admit(f"回滚到 {digest}").stored_as_is
    assert not admit(f"token: {digest}").admit
    # a one-time code is 4-8 digits near a code cue; a service number or a count is not
    assert admit("验证码收不到，打了 10086 也没用").stored_as_is
    assert not admit("你的验证码是 7730，别给别人").admit


@pytest.mark.parametrize(
    ("name", "credential_recall"),
    [
        ("train/admission_small.jsonl", 0.99),
        ("train/admission_zh.jsonl", 0.99),
        ("train/admission_zh_holdout.jsonl", 0.99),
        ("train/admission_zh_holdout2.jsonl", 0.99),
        ("train/admission_zh_holdout3.jsonl", 0.99),
        ("train/admission_zh_holdout4.jsonl", 0.99),
        ("train/admission_zh_holdout5.jsonl", 0.98),
        ("train/admission_zh_holdout6.jsonl", 0.98),
        ("train/admission_zh_holdout7.jsonl", 0.99),
        ("train/admission_zh_holdout8.jsonl", 0.99),
        ("train/admission_zh_holdout9.jsonl", 0.99),
        ("train/admission_zh_holdout10.jsonl", 0.99),
        ("train/admission_zh_holdout11.jsonl", 0.99),
        ("train/admission_zh_holdout12.jsonl", 0.99),
        ("train/admission_zh_holdout13.jsonl", 0.99),
        ("train/admission_zh_holdout14.jsonl", 0.99),
        ("train/admission_zh_holdout15.jsonl", 0.99),
        ("train/admission_zh_holdout16.jsonl", 0.98),
        ("train/admission_zh_holdout17.jsonl", 0.96),
        ("train/admission_zh_holdout18.jsonl", 0.99),
        ("train/admission_zh_holdout19.jsonl", 0.99),
        ("train/admission_zh_holdout20.jsonl", 0.99),
        ("train/admission_zh_holdout21.jsonl", 0.99),
        ("train/admission_zh_holdout22.jsonl", 0.99),
        ("train/admission_zh_holdout23.jsonl", 0.99),
        ("train/admission_zh_holdout24.jsonl", 0.99),
        ("train/admission_zh_holdout25.jsonl", 0.99),
        ("train/admission_zh_holdout26.jsonl", 0.99),
        ("train/admission_zh_holdout27.jsonl", 0.99),
        ("train/admission_zh_holdout28.jsonl", 0.99),
        ("train/admission_zh_holdout29.jsonl", 0.99),
        ("train/admission_zh_holdout30.jsonl", 0.99),
        ("train/admission_zh_holdout31.jsonl", 0.99),
        ("train/admission_zh_holdout32.jsonl", 0.99),
        ("train/admission_zh_holdout33.jsonl", 0.99),
        ("train/admission_zh_holdout34.jsonl", 0.99),
        ("train/admission_zh_holdout35.jsonl", 0.99),
        ("train/admission_zh_holdout36.jsonl", 0.99),
        ("train/admission_zh_holdout37.jsonl", 0.99),
        ("train/admission_zh_holdout38.jsonl", 0.99),
        ("train/admission_zh_holdout39.jsonl", 0.99),
        ("train/admission_zh_holdout40.jsonl", 0.99),
        ("train/admission_zh_train_everyday.jsonl", 0.99),
        ("train/admission_zh_train_mixed.jsonl", 0.97),
        ("train/admission_zh_train_secrets.jsonl", 0.98),
    ],
)
def test_training_sets_meet_the_targets(name: str, credential_recall: float) -> None:
    """Each set of the train split, with rules and models: credential recall at least its floor
    (0.99 unless a known miss is named), do-not-remember recall >= 0.95 (0.94 on holdout17),
    false rejections <= 2 %. The rules were tuned on these sets and the models trained on them, so
    these are regression guards, not measurements (``docs/evaluation.md``)."""
    report = run_admission_eval(DATA / name)
    assert report["recall_by_reason"].get("credential", 1.0) >= credential_recall, report
    assert report["recall_by_reason"].get("do_not_remember", 1.0) >= (0.94 if name.endswith("17.jsonl") else 0.95), (
        report
    )
    assert report["false_rejection_rate"] <= 0.02, report


#: What the dev split must show pooled (the low end of the 95 % interval of each recall, the high end
#: of that of the false rejections): the targets of the filter, 0.99, 0.95 and 2 %, kept with room.
DEV_FLOORS = {"credential": 0.99, "do_not_remember": 0.99, "false_rejection_ceiling": 0.01}


def test_dev_split_meets_the_targets_pooled() -> None:
    """The dev split pooled, with rules and models (the models never trained on it): the lower
    ends of the 95 % intervals stay above DEV_FLOORS. Per set a 300-line file is too small to say
    more than the interval does; ``uv run ambot cognition eval admission tests/data/dev`` prints both."""
    from amrita_plugin_cognition.cli.eval_command import evaluation_files, pooled

    report = pooled(
        "admission", {str(path): run_admission_eval(path) for path in evaluation_files("admission", (DATA / "dev",))}
    )
    assert len(report["files"]) == 21
    intervals = report["intervals"]
    assert intervals["recall_by_reason"]["credential"][0] >= DEV_FLOORS["credential"], report["counts"]
    assert intervals["recall_by_reason"]["do_not_remember"][0] >= DEV_FLOORS["do_not_remember"], report["counts"]
    assert intervals["false_rejection_rate"][1] <= DEV_FLOORS["false_rejection_ceiling"], report["counts"]


def test_letters_only_keys_are_keys_and_words_are_not() -> None:
    assert not admit("AppSecret 是 PrLaFKWAKdivBOAeBpJHxHzjBqxtMfCb").admit
    assert not admit("secret: kqzvmxtrplbnwydhcfgsjbdt").admit
    for harmless in (
        "key 是 HelloWorldFromTheOtherSideAgain 这个类名",
        "token 叫 thisisaverylongidentifiername",
        "密钥就是 zhongguorenminjiefangjun 的拼音首字母",
    ):
        assert admit(harmless).stored_as_is, harmless


def test_evaluation_counts_a_redaction_as_caught_and_as_a_false_rejection(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    sentence = "下午三点开会，会议室密码 8866，记得带电脑"
    cases.write_text(
        f'{{"id": "1", "text": "{sentence}", "admit": false, "reason": "credential"}}\n'
        f'{{"id": "2", "text": "{sentence}", "admit": true}}\n'
        f'{{"id": "3", "text": "{sentence}", "admit": false, "reason": "do_not_remember"}}\n',
        "utf-8",
    )
    report = run_admission_eval(cases)
    assert report["recall_by_reason"] == {"credential": 1.0, "do_not_remember": 0.0}
    assert report["false_rejection_rate"] == 1.0


@pytest.mark.parametrize(
    "text",
    [
        "备用邮箱 lee.w@outlook.com----Qw!8zLp0，帮我登一下",
        "13912345678 / Hp2024@home 是我京东的号",
        "我的密码被盗了，后来改成了 Tz#2211ab",
        "密保：第一只宠物的名字 → 豆豆",
        "三个密保答案分别是 王芳、实验小学、0611",
        "安全验证的码是 552810",
        "yzm 903112 快点",
        "卡背面签名栏那三位是 417",
        "恢复码 R55201 记得抄",
        "备份码 a8k2m9qz 7yq4w1ne 别弄丢",
        "密钥给你：xKqTzPbWvLmNcRdFhGjYsQ",
    ],
)
def test_secret_phrasings_beyond_the_cue_word(text: str) -> None:
    assert not admit(text).stored_as_is, text


@pytest.mark.parametrize(
    "text",
    [
        "请忘掉我上一条消息",
        "忘了我刚发的那条吧",
        "忘记这句话：我其实不想去",
        "这个别留在你那，谢谢",
        "以下内容不入库：明天体检",
        "这句 don't save",
        "你脑子里别留这件事",
        "跟你说个事你可别记着",
        "别把这些写进你的笔记",
        "别存档，随口说说",
    ],
)
def test_do_not_remember_phrasings(text: str) -> None:
    assert admit(text).reason == "do_not_remember", text


@pytest.mark.parametrize(
    "text",
    [
        "别存档了，这个存档位满了",
        "这关先别存档，等打完 boss 再说",
        "我忘了我刚说的是啥了",
        "联系方式：tom@163.com / 13812345678",
        "服务器地址 postgresql://app:secret@db.local/x 已经下线",
        "跟他说别记错时间",
        "我不记得密码了",
        "这次考试不记录成绩",
        "XMLHttpRequestHandlerFactory 这个类要重构",
        "token 的格式是 HelloWorldFromTheOtherSideAgain 这种驼峰",
    ],
)
def test_ordinary_sentences_near_those_phrasings_are_kept(text: str) -> None:
    verdict = admit(text)
    assert verdict.admit and (verdict.stored_as_is or "[已隐去]" in verdict.text), (text, verdict.reason)


@pytest.mark.parametrize(
    "text",
    [
        "服务器 root 的 pw 是 7Ctl&*QLB48Cw，跑完记得关机",
        "mm是Chen0672_啊 我昨天刚改的",
        "code是397141，刚短信来的，你那边输一下",
        "谷歌验证器上 GitHub 那栏现在显示 726 864，快输",
        "steam 令牌代码现在是 42832",
        "Discord 的备份码我先发你这：8baaede2 c0ac51f3 30a97d6e",
        "加密用的 AES 密钥（base64）：3X0tecZ03+oQxYICiVwyRTZjDOCMmtPd9E8we1FaLuE= 两边要一致",
        "笔记本 Windows Hello 的 PIN 是 508799",
        "邮箱验证码 EKS28S，注册用的",
        "门禁密码#6629，进门右转",
        "短信让我验证一下，收到的那串数字是 518203",
    ],
)
def test_secrets_found_by_what_the_message_is_about(text: str) -> None:
    assert not admit(text).stored_as_is, text


@pytest.mark.parametrize(
    "text",
    [
        "密码要求至少 8 位，比如 Abc12345 这种格式",
        "忘了密码，订单号 A2023B1 的货还没到",
        "验证码一直收不到，我等了 2 分钟，手机尾号 8821",
        "token 过期了，request id 是 3f2a9c1e-7b4d-4e2a-9c1e-0a1b2c3d4e5f",
        "密钥轮换的文档在 https://wiki.example.com/keys/rotation2024",
        "WiFi 密码贴在路由器背面，型号 TL-WR886N",
        "验证码发到 138 开头的手机上了，2024 年换的号",
        "commit 3f9e2d1 修了密码校验的 bug",
        "密码学作业第 3 题，答案是 x2+y2=1",
        "PIN 码锁了，去营业厅解，排队号 A1032",
        "我把 API key 放到环境变量 OPENAI_API_KEY 里了",
        "验证码是 6 位数字，5 分钟有效",
        "明天 9:30 开会，会议号 882 331 907，密码问主持人要",
        "我的 steam 令牌坏了，找客服 400 800 1234",
        "群号 73829104，进群密码问群主",
        "新版本 v2.3.1 修复了登录验证码不显示的问题",
        "密码输错 5 次被锁了，明天 10 点再试",
        "你的密码不会也是 123456 吧",
        "验证码短信费一条 0.05 元",
        "账号 zhangsan2019 被封了，申诉中",
    ],
)
def test_messages_about_secrets_without_one_are_kept(text: str) -> None:
    assert admit(text).stored_as_is, text


@pytest.mark.parametrize(
    "text",
    [
        "妈你那个卡的取款密码是三五七二四六对吧",
        "验证码是幺三五七九二，快点",
        "redis-cli -h 10.0.0.5 -p 6379 -a Zq8vLmP2xR 连上去看看",
        "mysql -uroot -pT7x!mq29 -h 127.0.0.1",
        "docker run -e X=1 app --password hunter2024",
        "告警机器人 https://oapi.dingtalk.com/robot/send?access_token=9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        "办公室门禁换成 4471# 了",
        "保险柜是 590314，钥匙在抽屉",
        "12306 发来的是 638201 你帮我输一下",
        "战网安全令上现在是 97551508",
        "解压码 doge2024 全小写",
    ],
)
def test_secrets_read_out_typed_on_a_command_line_or_behind_a_lock(text: str) -> None:
    assert not admit(text).stored_as_is, text


@pytest.mark.parametrize(
    "text",
    [
        "机器人听好了，这句不入档",
        "这条给我忘了：我上周出了个小车祸",
        "这条不要 memorize",
        "说完你就清空吧",
        "不要把我今天说的这些写进关于我的资料里",
        "刚才我说工资多少那句，你删掉，不要保留",
        "别给我留着这个信息",
        "帮我把你记的关于我生日的那条删除",
        "这段你就别往脑子里装了",
        "阅后即焚啊机器人",
    ],
)
def test_more_ways_to_ask_not_to_be_remembered(text: str) -> None:
    assert admit(text).reason == "do_not_remember", text


@pytest.mark.parametrize(
    "text",
    [
        "七七八八收拾完了",
        "redis-cli -p 6379 ping 返回 PONG",
        "python train.py -p configs/base.yaml",
        "门禁卡丢了，去物业补一张要 20 块",
        "保险柜在二楼，型号 FD-3380",
        "这段代码别保留注释",
        "照片我先保留着，回头再删",
        "说完就忘是我的老毛病",
    ],
)
def test_near_misses_of_the_new_shapes_are_kept(text: str) -> None:
    assert admit(text).stored_as_is, text


@pytest.mark.parametrize(
    "text",
    [
        ".env.example：\nOPENAI_API_KEY=your-key-here\nDB_PASSWORD=\nDEBUG=false",
        "mysql -h 10.1.2.3 -P 3306 -u report -p（回车后再输密码，别写在命令行里）",
        "docker-compose.yml:\n  db:\n    environment:\n      - POSTGRES_PASSWORD=${POSTGRES_PASSWORD}",
        "密保问题我当年设的是小学班主任名字，现在我自己都想不起来了",
        "连接串格式是 postgresql://用户名:密码@主机:端口/库名，按这个格式填",
        "WiFi 名字是 Office-5G，密码去前台问",
    ],
)
def test_configs_and_templates_that_name_secrets_without_one_are_kept(text: str) -> None:
    assert admit(text).stored_as_is, text


@pytest.mark.parametrize(
    "text",
    [
        "我身份证号码是四二零一零六一九五四零七零六四六零叉 你帮我填那个表",
        '{"appid": "wxbf6d7bc31b4119aa", "appsecret": "e6cc872a5fd9481b89ffaa7d231926f0"}',
        "将军令上现在的数是 072907，你那边快点登",
        "IT说推送收不到的话就输安全令上的六位数，我现在这个是 163466",
        "docker login -u ci-bot -p ySvG_UfGgHi2y harbor.corp.local",
        "密保问题“你母亲的姓名是？”答案：徐淑芬",
    ],
)
def test_secrets_in_configs_voice_and_tokens(text: str) -> None:
    assert not admit(text).stored_as_is, text


@pytest.mark.parametrize(
    "text",
    [
        "你就当个树洞，听完就清空",
        "仅限本轮对话使用，结束后请遗忘：我在吃药",
        "忘掉我说我在找工作这事吧",
        "DO NOT STORE: 我下个月可能要被裁",
        "No need to keep this in memory — 我今天心情很差",
        "这件事不要写进我的用户画像",
        "请不要留在你的资料里",
        "清空你关于我的所有记忆。",
        "这段请从你的记忆中剔除",
        "这段对话我不希望在你那边留下任何记录",
        "Pretend you never heard this: 我出了个小车祸",
        "聊完即删，不进记忆。",
        "可以帮我把你存的我生日那条删了吗",
        "这个你看完就失忆哈",
    ],
)
def test_indirect_requests_not_to_be_remembered(text: str) -> None:
    assert admit(text).reason == "do_not_remember", text


@pytest.mark.parametrize(
    "text",
    ["老师说请忘记过去的成绩，向前看", "请忘记带伞的事，天晴了", "我忘了我说的那件事了", "这个游戏存档清空了"],
)
def test_forgetting_that_is_not_about_the_bots_memory(text: str) -> None:
    assert admit(text).stored_as_is, text


@pytest.mark.parametrize(
    "text",
    [
        "你能不能把关于我前任的那些全删了，不想再提",
        "把这条从你的数据库里去掉：我住在幸福小区12栋",
        "你把我昨天晚上发的那些醉话都清理掉行不",
        "以后别再提我体重的事，之前记下的也删掉",
        "清除一下你对我工作单位的记录",
        "刚刚跟你说我欠信用卡的事，忘掉吧，求你了",
        "这条你帮我选择性失忆一下",
        "我刚刚那三条消息，一个字都别留",
        "你的记忆里不需要有这段：我爸住院了",
        "要求：本段内容仅用于本次回复，不得写入记忆",
        "这个不用你备忘，我就是说说",
        "说完你就清掉：其实我挺讨厌我室友的",
    ],
)
def test_requests_to_delete_or_forget_what_was_stored(text: str) -> None:
    assert admit(text).reason == "do_not_remember", text


@pytest.mark.parametrize(
    "text",
    [
        "朋友跟我说“这事你听了就忘了吧”，结果我到现在还在想",
        "你帮我把手机里的照片删了吧，空间不够",
        "能不能把群公告那条删了，过期了",
        "我忘了吧好像，记不清了",
        "数据库密码已经从配置文件挪到 vault 了 以后别再往 yaml 里写",
        "配置里写 API_KEY=your-api-key-here，自己替换掉",
    ],
)
def test_talk_about_deleting_or_forgetting_that_is_no_request(text: str) -> None:
    assert admit(text).stored_as_is, text


@pytest.mark.parametrize(
    "text",
    [
        "G-047438 是你的 Google 验证码",
        "visa卡的cvv是六八二",
        "卡背面那三个数是886，网购要填的",
        "行李箱密码锁 179，出差老忘",
        "给你个号玩：账号3829022386，密O!jsBu0qG70",
        "QQ密保 第一个 我的小学 答 红星小学",
        "两步验证的设置密钥：wsj6 z6nx nyvi 5vtl 7bca 7y4b pqag 3wvf",
    ],
)
def test_codes_combinations_and_setup_keys(text: str) -> None:
    assert not admit(text).stored_as_is, text


@pytest.mark.parametrize(
    "text",
    [
        "这个你莫记到起哈，我乱说的",
        "呢句你唔好记住呀，我讲笑咋",
        "delete my data pls",
        "clear your memory of me",
        "重置你对我的记忆吧，咱们从零开始",
        "你那里关于我的档案，全部销毁",
        "老子说的话你少给我存",
        "你要是敢把这个记下来我就把你拉黑",
        "你记忆里有我女儿学校的名字吗？有的话删掉",
        "关闭对我的记忆功能",
    ],
)
def test_requests_in_dialect_slang_and_english(text: str) -> None:
    assert admit(text).reason == "do_not_remember", text


@pytest.mark.parametrize(
    "text",
    [
        "我把这事忘了，你再说一遍",
        "请忘记带伞的事，天晴了",
        "你别忘了删掉那个测试文件",
        "你还记得我说过的那家店吗",
        "你能把群里的旧照片清理一下吗",
        "校验码算法用 CRC32 就够了",
        "ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX 教程里都是这么打码的",
        'api_key = os.environ["DASHSCOPE_API_KEY"] 这样写就不会泄露了吧？',
    ],
)
def test_near_misses_of_requests_and_keys_are_kept(text: str) -> None:
    assert admit(text).stored_as_is, text


@pytest.mark.parametrize(
    "text",
    [
        "1. area\n2. antenna\n3. banana\n4. burst\n5. best\n6. ahead\n7. attitude\n8. basic\n9. brush\n10. amused"
        "\n11. crush\n12. crazy\n这是我冷钱包的",
        "imToken 的中文助记词 这 没 条 三 加 生 意 平 社 新 作 部",
        "安全问题1 小学班主任的名字：黄建华",
        "QQ密保里第一只宠物的名字是团子21，改密码的时候要用",
        "手机锁屏5101，我手机落你车上了",
        "刚才那条短信上的验证数字是一八九六八三",
    ],
)
def test_wallet_words_answers_and_lock_screens(text: str) -> None:
    assert not admit(text).stored_as_is, text


@pytest.mark.parametrize(
    "text",
    [
        "把我的资料从你那儿清干净，谢谢",
        "我的生日你之前存过一次吧？删了吧",
        "麻烦把你知道的我学校的信息删除",
        "你把今天我跟你聊的全删了吧",
        "取消刚才那条记忆！",
        "hey bot, forget everything you know about me pls",
        "我撤回授权，不允许你保存我的任何个人信息",
        "上面那几条帮我从你的记录里撤掉",
    ],
)
def test_requests_about_what_the_bot_knows(text: str) -> None:
    assert admit(text).reason == "do_not_remember", text


@pytest.mark.parametrize(
    "text",
    [
        "密保问题：你母亲的名字是什么来着",
        "我的手机号 13812345678，快递到了打给我",
        "12 个英文单词的作文 my day is very good and i like it so much",
        "麻烦把群里的过期信息删除",
    ],
)
def test_near_misses_of_wallets_answers_and_requests_are_kept(text: str) -> None:
    assert admit(text).stored_as_is, text


@pytest.mark.parametrize(
    "text",
    [
        "验证码刚来了，我在开车，你看我手机屏幕上那条，好像是005445？帮我输下",  # 好像是 is not "for example"
        "zh：344385321 mm：Shadow@1990 帮我挂一下日常",  # Shadow is no sha checksum talk
        "微信支付密码六位：二七零五八三，妈你买菜直接扫就行",  # a number after a colon
        "保险箱密码：左16右56左57",
        "保险柜是转盘的：左三圈到 37，右两圈到 14，再左转到 62，合同在最下面一层",
        "出境游报名表里护照那栏填 EA6102938，名字拼音 ZHOU MIN",
        "网易云那个号你知道的，登录要的是 fdb660879，上去帮我签到下",
        "动态码幺两六八幺勾，听清楚没",  # digits read out the radio way
        "说出来你们别笑，我的密码就是我家猫的名字加她生日 miaomiao0416xq",
    ],
)
def test_secrets_the_ninth_and_tenth_sets_found_missing(text: str) -> None:
    assert not admit(text).stored_as_is, text


@pytest.mark.parametrize(
    "text",
    [
        "唔好记住呢句啊",
        "bot you didn't hear this 🤫 我把公司打印机弄坏了",
        "机器人，脑子里把这句话 ctrl+z 掉吧",
        "这段私聊内容别持久化哈 bot，纯属闲聊",
    ],
)
def test_requests_the_ninth_and_tenth_sets_found_missing(text: str) -> None:
    verdict = admit(text)
    assert not verdict.admit and verdict.reason == "do_not_remember", text


@pytest.mark.parametrize(
    "text",
    [
        "忘了吧，那个人不值得你难过",  # letting go of a person
        "哈哈“当我没说”这四个字被他用烂了",  # words named, not said
        "off the record 这个词中文怎么翻比较地道",
        "门锁换成指纹的了，再也不用记那串数字",  # relieved of remembering, not a request
        "你好像是 2019 年入职的吧",
        "这首歌你听听就好，别太当真",
        "护照过期了，下周去出入境办新的",
        "保险柜放在左边第二个柜子里",
        "redis://localhost:6379 默认没密码",
        "Shadow 这个角色的大招好强",
        "I never heard of this band before",
    ],
)
def test_near_misses_of_the_ninth_and_tenth_sets_are_kept(text: str) -> None:
    assert admit(text).stored_as_is, (text, admit(text))


@pytest.mark.parametrize(
    "text",
    [
        "格件事体侬忘记脱 好伐",  # Wu: forget it
        "你咪记低啊 我讲玩笑嘅",  # Cantonese: don't note it down
        "这句汝毋通记落来",  # Hokkien
        "伐要记牢 刚刚是瞎话",
        "刚才那条你就当没聊过",
        "就当我瞎说的 你别当真",
        "这事你就当不知道",
        "聊完就删 谢谢",
        "能从你脑子里把这事拿走吗",
        "I'd prefer you not remember any of this",
        "scratch that from your memory pls",
        "ni ba na ju hua shan le ba",
        "你要是敢记得这句 我就拉黑你",
        "我嘅资料你全部清咗啦",
        "刚发的截图里的内容你也别存",
        "以后关于我家小孩的信息都不要存 包括照片",
        "你的记忆能不能把我排除掉",
        "刚才那段黑历史 bot你赶紧给我del掉",
        "我刚发的那几张照片 你那边删掉",
        "你要是把这事记进去 我天天在群里骂你",
        "你把我昨晚那些醉话清一清",
        "家里那点事我就跟你们说说 bot别收进去",
        "帮我把吵架这件事从你那去掉",
        "把你那边关于我的那部分 rm -rf 掉",
        "有没有办法让你完全不记得我这个人",
        "刚刚那句直接漏掉",
        "我在哪上班这个信息 你去掉吧",
        "把我的那份都删了 一点不留",
        "reset一下你对我的记忆吧",
        "这次帮我失忆一下 我刚骂领导那句",
        "请勿将本人在群内的发言纳入记忆范围",
        "从现在开始你不记得我失恋这回事了 好吗",
        "建议你对我的个人情况保持零记忆状态",
        "bot能把我忘了吗 我想从零开始",
        "你是不是记住我生日了 删掉吧",
        "关于小王离职的事 你记性差一点好不好",
        "你那儿存的关于我的东西 全部一键清除",
        "刚那个游戏名你能别记下来吗",
        "봇아 방금 내가 한 말 저장하지 마",
        "bot 上のメッセージは忘れてください 記録しないでね",
        "你就当我昨天没来过",  # holdout38 and 39
        "我辞职了 还没跟爸妈说 你先别记下来",
        "那次队长说了不外传 你也别存档",
        "上周考砸了那事，删了它",
        "我被分手这事，忘掉忘掉",
        "wang ji wo gang cai shuo de",
        "please delete what I told you about my rent",
        "考研失利 二战也没上 家里还一直催 唉算了 这些你别记",  # holdout40 and 41
        "bie wang xiao ben ben li cun a",
        "not in your memory pls, the part about my loan",
        "wàng diào wǒ gāng cái shuō de",  # holdout42 and 43
        "plz forget my phone number I sent",
        "forget I ever mentioned my ex, ok?",
        "你再把我的生日记下来我就拉黑你",
        pytest.param(
            "记住了你就死定了 赶紧删掉",
            marks=pytest.mark.xfail(
                reason="no rule names a threat before a removal; the request model caught it only while it was "
                "trained on the dev sets (now 0.44 against a threshold of 0.5)",
                strict=False,
            ),
        ),
        "如果可以的话，能不能别记这个",  # polite, not a what-if
        "要是方便的话 能不能把我刚才说的删掉",
        "如果可以 你能不能忘了我刚说的",
        "这条别存哈（do not remember）",  # holdout49 and 50
        "就是随口一说而已，忘了吧",  # consolation words that a request also uses
        "The thing about my manager — please forget it.",  # holdout51 and 52
        "ni bie ba wo de shi cun qi lai a",
        "我考试作弊被抓的事你给我永久删除",
        "dnt rmb this plz",  # holdout53 and 54
        "plz 4get wat i said abt my job",  # holdout55 and 56
        "wang ji wo gang shuo de hua ba",
        "no need to remember my address, just drop it",
        "bot别把我刚才骂老板的话记下来",  # holdout57 and 58
        "算了没关系，你忘了吧",
    ],
)
def test_requests_the_sets_from_eighteen_on_found_missing(text: str) -> None:
    _refused(text, "do_not_remember")


@pytest.mark.parametrize(
    "text",
    [
        "这个字段不入库 只在页面上显示",  # a program's storage
        "token 别存 localStorage 放 httpOnly cookie 里",
        "我这记性 转头就忘",  # the speaker's own memory
        "我连早饭吃了啥都忘了",
        "先别点保存 我还没改完",  # a button
        "别存侥幸心理 好好复习",
        "我室友说她不想被AI记住 觉得怪",  # someone else's wish, reported
        "笑死 他说'别让bot记住我' 结果天天找bot聊",
        "小说里主角能删除别人的记忆 这个设定好玩",
        "想把跟前任的聊天记录全删了 又舍不得",
        "麻烦把群里的过期通知删一下",
        "新同事的分机号 8316",  # numbers public by what they are
        "Pantone 2935C 这个蓝真好看",
        "实验数据在 /share/exp2024 下面",
        "300750 宁德时代明天能不能站上 200",
        "客服热线 400 800 1234 工作日有人",
        "mysql 连接串格式是 mysql://用户名:密码@host:port/库名",
        "教程里那个 password123 只是举例",
        "测试环境验证码随便填 123456 不校验",
        "我们住酒店 1206 到了直接上来",
        "镜头序列号 3302718 登记一下",  # holdout24 and 25, found after the third round
        "这张的参数 ISO400 f/2.8 1/250s 35mm",
        "我妈总说不开心的事就别记着了",
        "deadline 是 11:59pm GMT 别记成北京时间了",
        "《暖暖内含光》里那个删除记忆的诊所挺吓人",
        "我的备忘录被我误删了 能恢复吗",
        "需求：用户说忘掉的时候 bot 要删对应记忆 排下个版本",
        "密码别设 123456 太危险了",
        "你觉得我应该把前任的聊天记录删掉吗",
        "我闺蜜跟她的bot说别记这个 结果还是记住了",
        "这批疫苗批号 20240312 有效期到明年",  # holdout26 and 27
        "roll20 密码忘了怎么找回",
        "收款行的 SWIFT 是 BKCHCNBJ300",
        "电影里讲的就是删除记忆 你看过吗",
        "忘了是谁说的 不要记住输的局 要记住为什么输",
        "小明刚跟我说你千万别把这事告诉别人",
        "诗集 ISBN 978-7-5321-8746-2 下个月开印",  # holdout28 and 29
        "历史是一个民族的记忆 不能忘",
        "提交 a3f9c21 把 wifi 密码挪到 secrets.h 了",
        "要不要给用户一个一键清除记忆的按钮",
        "珍珠煮好放保温桶 别存冰箱",
        "老大说《暖暖内含光》删除记忆那段看哭了",
        "空投发这个地址 0x86aa0dee8d9175b00bb31190045d627f4376b009",  # holdout30 and 31
        "有个大爷每次来都说 医生你可别记着我",
        "馆里 wifi 不要密码 连 Museum-Guest 就行",
        "测试环境数据库每天清空 别在上面存重要数据",
        "顾客说让我们别存她的地址 这个系统能做到吗",
        "婆婆说的那些话我已经选择性失忆了",
        "串口波特率 115200 别乱改",
        "我在写小说 女主被删除了一段记忆",
        "你记住我叫小林就行 别叫我全名",  # holdout32 and 33
        "村民档案要永久保存 谁也不能删",
        "How do you say 别忘了 in English? don't forget 对吧",
        "茶园 wifi 叫 ChaYuan_5G 信号不好就往炒茶间走",
        "验证码 XXXXXX 这种短信模板要报备",
        "隐私设计上bot应该支持一键清除记忆吧",  # holdout34 and 35
        "集装箱号MSKU7348210 今天提柜 铅封号CN2038471",
        "账记错了 上月运费应该是46820 不是48620",
        "上次有个姐妹让bot忘了她的地址 其实没必要",
        "论文DOI 10.1016/j.neucom.2023.126543 放简历里",
        "集合点坐标N30.6721 E104.0583 帮我记住",
        "暖暖内含光里那个删记忆的公司好吓人",
        "你能记住群里每个人的生日吗 能的话我们就不用自己记了",
        "模板改了 之前存的旧版删掉用新的",
        "小李问我能不能不记他迟到 我说不行",
        "刚才那个韩国网友说 잊어버려 是让我忘掉的意思吗",
        "密室逃脱最后一关答案是 2718 攻略里都写了",  # holdout38 and 39
        "报考点代码 5101 专业代码 085400",
        "中通 ZT7481236590 帮我查下物流",
        "那款的 ASIN 是 B09XK2LMNP 你看下差评",
        "舍友说'当我没说' 然后就不理我了",
        "我爸说我妈唠叨的时候 就当没听见",
        "@阿杰 老板说你的那些话别往脑子里放",
        "班主任说群里的通知不用存 看一眼就行",
        "要是能选择性遗忘 你会忘掉哪段",
        "我们的助手要不要加遗忘曲线",
        "she told me to delete what I told you",
        "CVE-2021-44228 那个漏洞 你们服务升级了没",  # holdout40 and 41
        "电脑开机报错0xc0000225 怎么修",
        "他的口头禅是「这个别存」 结果自己全存了",
        "如果我让你删掉一件事 你真的会删吗",
        "假如我跟你说别记 你是删掉还是打标记",
        "假如有人让你删记忆 你会告诉别人吗",  # holdout42 and 43
        "文档里写 export TOKEN=<your-token> 别真把token写进去",
        "我在给机器人加一个'这条不记录'的开关",
        "釉料 K-3021 烧出来很透",
        "库位 B3-07-02 该盘点了",
        "BWV 846 是老师布置的第一首",
        "全服兑换码 ANNIV2024 官方发的 大家都能领",
        "密保问题我选的是'母亲的名字'",
        "充电器 60V20Ah 的 换个新的",  # holdout44 and 45
        "我们寝室是 415 不是 451",
        "摊位 C2-108 展位是我们的",
        "身份证校验位按 ISO 7064 算",
        "密室逃脱里道具保险箱的答案是 2046 主持人公布的",
        "测试用例：用户输入“别存这条”时不应写入记忆",
        "我爸说的话我从来不当耳旁风",
        "这首歌叫《Forget Me Not》",
        "教科书例题：假设密码是 654321，求它的 SHA1",  # holdout46
        "这首歌副歌一直“忘了吧 忘了吧”太洗脑",
        "@小雨 没考好而已，忘了吧，下次加油",
        "24点：4 4 7 7 怎么算",
        "写了个过滤器，遇到“别记”这种词就标一下",  # holdout47 and 48
        "测试用例：输入“忘了我刚才说的”，期望删除上一条记忆",  # holdout49 and 50
        "PM 说要做'阅后即焚'，后端怎么实现比较稳",
        "举个例子，Passw0rd! 这种就是典型弱密码，别用",
        "直播间里发的兑换码 SPRINGGIFT 还能用吗",
        "lol I always forget my keys",  # a subject and an adverb before "forget"
        "you always forget my birthday",
        "bie guan ta le wo zi ji lai",  # pinyin words that only end in ji
        "bie wan shou ji le",
        'Our PM wants a "forget me" button in the app',  # holdout51 and 52
        "教程里写 password=123456 只是演示，别真这么设",
        "我朋友说他想把前女友从记忆里删掉，我劝他看开点",
        "HTTP 状态码 401 是未认证，403 是无权限",
        "考研西综代码是306，别报错了",  # holdout53 and 54
        "610000 是成都的邮编吧",  # holdout55 and 56
        "签了保密协议，内容不能跟你说哈",
        "不要不记得我啊 哈哈",  # holdout57 and 58
        "生成随机密码可以用 openssl rand -base64 16",
        '"Forget it"在口语里多半是"算了"，不是真让你忘掉',
        "你说人要是能选择性失忆，会不会更快乐",
    ],
)
def test_near_misses_of_the_sets_from_eighteen_on_are_kept(text: str) -> None:
    assert admit(text).stored_as_is, (text, admit(text))


@pytest.mark.parametrize(
    "text",
    [
        "保险柜密码左转三圈到二十八右转两圈到零九",  # a dial, said as numbers
        "wifi 密码是小写abc下划线八八六六",  # spelled out by voice
        "私钥 WIF 格式 5Kb8kLf9zgWQnogidDA76MzPL6TsZZY36hWXMssSzNydYXYB9KF",
        "id_rsa 在这 MIIEpAIBAAKCAQEAx4sV1bq8Yq7m3Kc9rT2uP0dLw6hZf1nXy5oQe8jB",  # a private key without armour
        "单元门按 2014# 就开了",
        "提货码 38 29 16 报给团长就行",
        "助记词前五个 hidden river pencil scout famous 剩下的晚点发",
        "google maps key AIzaEPH1qhT61qtc4xatws8phP9nhFyJfm5di4P 帮我写个调用示例",
        "AccountName=logs;AccountKey=Tq9vX2mLp7RcK4bN8wYzH1dF6sJ3gA0eU5iO/kWnMx+rVtQyBhZ==",
        "我手机锁屏是147369 万一手机落你车上",
        "节点先用我的 https://eth-mainnet.g.alchemy.com/v2/uxGfJvRgNxxw7ruE3JvVglV0A43z-cTe",
        "定位器平台 账号是IMEI 密码还是默认123456没改",
        "摄像头底下贴的验证码HKZPWM 添加设备时输",
        "团费那张卡的U盾密码258369 月底报销",
        "astrometry的key我申请好了 kqzbmwrtyplxhfjd 填到插件设置里",
        "企业微信的corpsecret是 Rk8vN2xQpL5mT9wZ3cYh7bJ4dF6gS1aE0uI-oKqWnXe",
        "the safe combo is 12-40-33 ok",  # holdout38 and 39
        "推流码在这 rtmp://live.example.com/app/x?key=Zq82mPa7Lk 开播用",
        "密码是 大写的K 小写的p 数字二零二四 然后井号",
        "wifi密码念给你：大写M，小写t，幺洞拐，两个九，井号",  # holdout40 and 41
        "yanzhengma liu liu ba san er yi 快输",  # holdout42 and 43
        "wo de mi ma shi huahua0923",
        "保险柜 左转4圈到19 右转2圈到55 再左到03",
        "yanzhengma 5 8 2 0 1 9 kuai tian",  # holdout44 and 45
        "手机维修押金退到 6214835790162356 麻烦了",
        "临时链接 https://bkt.example.com/a.mp4?Expires=1718000000&Signature=Qz8mN2kLp4xR",
        "剧本杀店后门密码锁 864213# 最后走的锁门",
        "支付密码就是我生日倒过来 800317",  # holdout47 and 48
        "密码就是我生日加名字缩写 19930512wxy",  # holdout49 and 50
        "临时链接 https://x.oss-cn-hangzhou.aliyuncs.com/a.pdf?OSSAccessKeyId=LTAI5tQ9&Signature=q8Zk2m",
        "百度网盘分享码 k7Pq 别转发",  # holdout55 and 56
    ],
)
def test_secrets_the_sets_from_eighteen_on_found_missing(text: str) -> None:
    verdict = admit(text)
    assert (not verdict.admit and verdict.reason == "credential") or verdict.redacted, (text, verdict)


def test_a_public_key_and_directions_are_no_secret() -> None:
    assert admit("公钥是 MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo").stored_as_is
    assert admit("门禁坏了 从路口左转三百米再右转两百米就到").stored_as_is
