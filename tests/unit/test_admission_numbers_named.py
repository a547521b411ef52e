"""Admission: numbers that say what they are (a date in eight digits, a bank card's public
prefix, a desk or a seat, a fee or a price) are stored as said; an e-mail address with its password
after a slash is refused; someone else's words and one's own poor memory are no request. Each kind
beside the look-alike that must keep its verdict."""

from __future__ import annotations

import pytest

from amrita_plugin_cognition.domain.admission import admit

pytestmark = pytest.mark.embedded_only


def _kept(text: str) -> None:
    verdict = admit(text)
    assert verdict.stored_as_is and verdict.text == text, (text, verdict)


def _caught(text: str) -> None:
    verdict = admit(text)
    assert verdict.reason == "credential" and (not verdict.admit or verdict.redacted), (text, verdict)


@pytest.mark.parametrize(
    "text",
    [
        "我女儿是20190704出生的，刚上幼儿园",
        "生日 19930228，双鱼座",
        "20261207 那天的访问日志帮我拉一下",
        "证书有效期到20290131",
        "我们是20211001领的证",
    ],
)
def test_a_date_in_eight_digits_is_a_date(text: str) -> None:
    _kept(text)


@pytest.mark.parametrize(
    "text",
    [
        "银行卡密码是我生日19930228",
        "门禁密码 20211001，按完按井号",
        "开机密码就是我们的纪念日 20211001",
    ],
)
def test_a_pin_chosen_from_a_date_is_still_a_pin(text: str) -> None:
    _caught(text)


@pytest.mark.parametrize(
    "text",
    [
        "卡号前六位 621226 是工行的",
        "这个卡头 436745 是建行的信用卡",
        "BIN 622588 属于招商银行",
        "银行卡号开头是 622848 的都是农行",
    ],
)
def test_a_bank_cards_public_prefix_is_no_secret(text: str) -> None:
    _kept(text)


@pytest.mark.parametrize(
    "text",
    [
        "卡号 6222021234567890128 转账用",
        "卡号 622848 0402 5648 90018，户名李四",
    ],
)
def test_a_card_number_given_is_still_caught(text: str) -> None:
    _caught(text)


@pytest.mark.parametrize(
    "text",
    [
        "我的工位号 7F-C12，找不到就问前台",
        "我坐在 B3-115，靠窗",
        "工位 5F203 换到 5F207 了",
        "考场座位号 1129，别坐错",
    ],
)
def test_a_desk_or_a_seat_is_no_code(text: str) -> None:
    _kept(text)


@pytest.mark.parametrize(
    "text",
    [
        "会议室门禁密码 4417#",
        "工位柜子的锁是 0729",
    ],
)
def test_a_door_or_a_lockers_code_is_still_caught(text: str) -> None:
    _caught(text)


@pytest.mark.parametrize(
    "text",
    [
        "邮箱 wangli@163.com/wangli",
        "我的邮箱是 zhao88@qq.com / 741852",
        "用户名 sun.yu@outlook.com/moonlight 你先登着",
        "账号：xu_ming@126.com｜xuming",
    ],
)
def test_an_email_and_its_password_after_a_slash_are_caught(text: str) -> None:
    _caught(text)


@pytest.mark.parametrize(
    "text",
    [
        "联系我：wangli@163.com/13800138000",
        "邮箱 wangli@163.com/wangli@qq.com 都能收到",
        "有事发 wangli@163.com / QQ 也行",
        "把简历发到 hr@example.cn/ 就行",
        "邮箱 wangli@163.com/微信 wangli88 都可以",
    ],
)
def test_an_email_with_another_contact_after_the_slash_is_kept(text: str) -> None:
    _kept(text)


@pytest.mark.parametrize(
    "text",
    [
        "报名费 480，教材费另算 90",
        "闲置的耳机卖了 650",
        "教练说这个动作要领不考，可以不用记",
        "我这脑子跟漏勺似的，啥也存不住",
    ],
)
def test_fees_sales_reports_and_ones_own_memory_are_kept(text: str) -> None:
    _kept(text)


@pytest.mark.parametrize("text", ["这些话你听听就好，别记住", "老师的话你别管，这段别存"])
def test_the_speakers_own_request_after_a_clause_still_stands(text: str) -> None:
    verdict = admit(text)
    assert not verdict.admit and verdict.reason == "do_not_remember", (text, verdict)


# --- the same classes in other shapes ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "住院号 2261873，探视的时候报这个",
        "合同编号 HT20260455 写错了一位",
        "预约号 3321，到了窗口报一下就行",
        "622202 这个前缀是工行的",
        "招行信用卡的前几位一般是 622575 或者 439225",
    ],
)
def test_a_records_number_and_a_prefix_named_with_its_bank_are_kept(text: str) -> None:
    _kept(text)


@pytest.mark.parametrize(
    "text",
    [
        "医保卡密码 502213，去药房拿药要输",
        "挂号用的验证码 883201，你帮我填一下",
        "密码前缀是 4823，后面是我生日",
        "招行卡号 6214830212345678，前缀 621483",
    ],
)
def test_a_pin_a_code_and_a_card_number_beside_them_are_still_caught(text: str) -> None:
    _caught(text)


@pytest.mark.parametrize(
    "text",
    [
        "git 用密码 push 不了了，要换成 SSH key",
        "他用 root 密码 sudo 了半天也没装上",
        "CPU 换成 R7-7800X3D 了，打游戏真流畅",
        "新配的 i5-12400F 和 B660M，一共花了三千五",
        "耳机入了 WH-1000XM5，降噪不错",
    ],
)
def test_a_commands_word_after_a_password_cue_and_a_devices_model_are_kept(text: str) -> None:
    _kept(text)


@pytest.mark.parametrize(
    "text",
    [
        "git 的密码是 Push2026!，你先推上去",
        "电脑开机密码 R7x3d@2026，别告诉别人",
        "主板 BIOS 的密码是 Bios8832，帮我进一下",
        "密码跟微信的一样 wx2020abc",
        "登录密码和 QQ 相同：qq5201314a",
    ],
)
def test_a_password_beside_a_command_or_a_device_or_said_the_same_as_anothers_is_caught(text: str) -> None:
    _caught(text)
