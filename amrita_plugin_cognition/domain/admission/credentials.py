"""Credentials: a secret value next to its cue, judged by the value's shape.

Each rule is a pattern that finds a candidate value and a check of that value (Luhn for card
numbers, the MOD 11-2 check of a 身份证号, cookie and connection-string syntax, the entropy of a
key, a one-time code of 4-8 digits near a code cue). A cue word with no value after it ("密码忘了",
"验证码收不到", "token 用完了") is ordinary talk. Rules return the spans to hide, never the cue.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from . import shapes
from .contextual import contextual_secrets


@dataclass(frozen=True, slots=True)
class Secret:
    start: int
    end: int
    kind: str


_A = re.ASCII  # \w, \d, \s and \b are ASCII: a CJK character next to a value is a boundary
_I = re.IGNORECASE | _A
_STOP = r"[^，。！？,!?；,!?;\n]"  # a character inside one clause
_QUOTE = r"[\"'“‘「『`]?"
_PW_CHARS = r"A-Za-z0-9!@#$%^&*._+\-=~?/\\|<>\[\]{}"
_PW_VALUE = rf"(?<![{_PW_CHARS}])(?P<v>[{_PW_CHARS}]{{3,64}})(?![{_PW_CHARS}])"

# --- passwords -------------------------------------------------------------------------------

_PW_CUE = (
    r"(?:密\s?码(?!学|锁|箱|柜|本|器|机|盘|管理|子|破解|策略|框|强度|长度|规则|芯片|错误|保护|输错)"
    r"|口令|pin\s*码|解压码|开锁码|(?<![\u4e00-\u9fff])密(?=[:：]?\s*[A-Za-z0-9!@#$%^&*])"
    r"|蜜码|秘码|(?<![A-Za-z])(?:password|passwd|passcode|passphrase|pwd|psw|mima|mi\s?ma)(?![A-Za-z])"
    r"|(?<![A-Za-z])(?:pass|pin|pw)(?=\s*[:=：]))"
)
_MODIFIER = (
    r"(?:我|他|她|你|都|也|就|还|一直|其实|应该|好像|现在|目前|暂时|默认|初始|统一|原来|之前|以前|已经"
    r"|刚刚|刚|后来|全都|全)"
)
_CONNECT_WORD = (
    r"(?:[:：=]|is|was|是|为|叫|即"
    r"|(?:设置|设|修改|改|换|更|重置|定|弄|变)(?:成|为)(?:了)?"
    r"|(?:设|写|填|输|用|定|记|存)的(?:是)?|输入|填|输)"
)
# Spaces, not line breaks: "DB_PASSWORD=" on one line of a config and "DEBUG=false" on the next
# are two settings, the second no password.
_CONNECT = rf"[ \t]*(?:{_MODIFIER}[ \t]*){{0,3}}(?P<conn>{_CONNECT_WORD})?[ \t]*(?:[:：][ \t]*)?{_QUOTE}[ \t]*"

# After a value: a count, a unit or an example marker means the "value" is not a password.
_NOT_A_VALUE_AFTER = re.compile(
    r"\s*(?:位|个|次|天|小时|分钟|秒|年|月|日|号|岁|块|元|%|字|以上|以内|左右|多|bit|加密|哈希|算法|格式|方式|字段|校验|编码"
    r"|这种|之类|那样|这样|一类|开头|结尾|的人|的用户|(?:设|改|给|定|弄|换|说)的|告诉|知道|管|chars?\b|characters?\b|digits?\b|times?\b)",
    _I,
)
# Words in the gap between a password cue and a value that make the value something else.
_LOOSE_BLOCK = re.compile(
    r"忘|错|丢|泄|漏|不|没|别|少|多|长|要求|需|必须|位|找回|管理|生成|加密|哈希|存|记在|写在|策略|规则|强度|复杂|格式|太|过期"
    r"|框|提示|字段|表|用|页|界面|重置|登录|提交|像|比如|例如|类似|建议|推荐|规定|改|换|[A-Za-z0-9]"
)

_PASSWORD = re.compile(_PW_CUE + _CONNECT + _PW_VALUE, _I)
_PASSWORD_LOOSE = re.compile(_PW_CUE + rf"(?P<w>{_STOP}{{1,10}}?)" + _PW_VALUE, _I)
_PASSWORD_REVERSE = re.compile(
    _PW_VALUE + rf"\s*(?:就是|即是|是|为)\s*(?P<w>{_STOP}{{0,12}}?)(?:的)?{_PW_CUE}(?!学|锁|箱|管理)", _I
)
_REVERSE_BLOCK = re.compile(r"管理|生成|用来|不|没|例|比如|像|存|记")
# "密码忘了又找回来了，新的是 xxx": the value named as the new or current one, later in the sentence.
_PASSWORD_NEW = re.compile(
    _PW_CUE
    + r"[^。！？!?\n]{0,24}?(?:新的|新密码|现在的?|目前的?|改成了?|换成了?|变成了?|设成了?)\s*(?:是|为|[:：])?\s*"
    + _QUOTE
    + _PW_VALUE,
    _I,
)

_ACCOUNT_CUE = (
    r"(?:账号|帐号|账户|帐户|用户名|登录名|登录账号|游戏号|qq号|微信号|邮箱|手机号|学号|工号|号"
    r"|(?<![A-Za-z])(?:qq|email|e-mail|user(?:name)?|login|uid|id)(?![A-Za-z]))"
)
_ACCOUNT_VALUE = r"(?<![\w.@\-])(?P<acct>[A-Za-z0-9_.@\-]{3,40})(?![\w.@\-])"
_ACCOUNT_PAIR = re.compile(
    rf"{_ACCOUNT_CUE}\s*(?:是|为|[:：=])?\s*{_ACCOUNT_VALUE}\s*[,，/／|;；、\s]*(?:[\u4e00-\u9fff]{{1,4}})?\s*"
    rf"(?:{_PW_CUE}|(?<![A-Za-z])(?:mm|pw|pass)(?![A-Za-z])){_CONNECT}{_PW_VALUE}",
    _I,
)
_ACCOUNT_SLASH_PASSWORD = re.compile(
    rf"(?:账号|帐号|账户|帐户|登录|后台|管理员|(?<![A-Za-z])(?:login|account)(?![A-Za-z]))[^，。！？,!?\n]{{0,6}}?[:：]?\s*"
    rf"{_ACCOUNT_VALUE}"
    rf"\s*[/／|]\s*{_PW_VALUE}",
    _I,
)
_ACCOUNT_AND_PASSWORD = re.compile(
    rf"(?:账密|(?:账号|帐号|用户名|号)(?:和|与|/)?密码)\s*(?:都?是|为|[:：])?\s*{_ACCOUNT_VALUE}\s*[/／|,，\s]\s*{_PW_VALUE}",
    _I,
)

# An e-mail address or a mobile number, a separator, then a password-shaped token (the way account
# lists are traded: "name@mail.com----p@ss", "138xxxxxxxx / Pass123#"), no cue needed.
_BARE_ACCOUNT_PAIR = re.compile(
    r"(?<![\w.@\-])(?P<acct>[A-Za-z0-9_.+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}|1[3-9]\d{9})"
    rf"\s*(?:-{{2,}}|[/／|｜]|[:：])\s*(?P<v>[{_PW_CHARS}]{{3,64}})(?![{_PW_CHARS}])",
    _A,
)

# A password on a command line: redis-cli -a x, mysql -px / -p x, --password x, sshpass -p x.
_CLI_PASSWORD = re.compile(
    r"(?:(?<![\w\-])(?-i:-a|-p)[ \t]*|(?<![\w\-])--(?:password|passwd|pass|auth|token|secret)(?:[ \t]+|=))"
    r"[\"']?(?P<v>[!#-&(-~]{4,})",
    _I,
)
# -a and -p are passwords only for these tools (elsewhere -p is a port, a path, a profile …)
_CLI_TOOLS = re.compile(
    r"(?<![\w\-])(?:redis-cli|sshpass|mysql|mysqldump|mariadb|mysqladmin|docker\s+login|podman\s+login)(?![\w\-])", _I
)

# --- cookies, session tokens, connection strings ---------------------------------------------

_COOKIE_PAIR = r"[A-Za-z_][\w.\-]*=[^\s;,，。'\"]*"
_COOKIE = re.compile(
    rf"(?<![A-Za-z])(?:set-)?cookies?(?![A-Za-z])[^，。！？,!?\n=]{{0,8}}?(?P<v>{_COOKIE_PAIR}(?:\s*;\s*{_COOKIE_PAIR})*;?)",
    _I,
)
_SESSION_NAMED = (
    r"sessdata|bili_jct|sessionid(?:_ss)?|session[_-]?id|session[_-]?token|jsessionid|phpsessid|aspsessionid\w*"
    r"|asp\.net_sessionid|connect\.sid|csrftoken|csrf[_-]?token|xsrf[_-]?token|_xsrf|skey|p_skey|pt4_token|pt_key"
    r"|ptcz|uid_tt|odin_tt|sid_tt|passport_csrf_token|z_c0|web_session|laravel_session|ci_session|remember_token"
    r"|wordpress_logged_in_\w*|bduss(?:_bfess)?|stoken|_m_h5_tk|cookie2|_tb_token_"
)
_SESSION_GENERIC = (
    r"access[_-]?token|refresh[_-]?token|id[_-]?token|auth[_-]?token|authtoken|x-auth-token|x-access-token|x-api-key"
    r"|api[_-]?token|token|auth|ticket|session|sess|sid|sub|_t"
)
_SESSION = re.compile(
    rf"(?<![\w.\-])(?P<k>{_SESSION_NAMED}|{_SESSION_GENERIC})[\"']?[ \t]*(?:=|:(?!//))[ \t]*[\"']?"
    rf"(?P<v>[^\s;&,，。\"'<>]{{8,}})",
    _I,
)
_AUTHORIZATION = re.compile(
    r"(?:authorization\s*[:：=]\s*(?:bearer|basic|token|bot|digest)|(?<![A-Za-z])bearer)\s+"
    r"(?P<v>[A-Za-z0-9._~+/=\-]{12,})",
    _I,
)
_URL_CREDENTIALS = re.compile(r"(?<![\w])[a-z][a-z0-9+.\-]{1,20}://[^\s:/@]*:(?P<v>[^\s/]+)@[^\s@/]+", _I)
_GO_DSN = re.compile(r"(?<![\w/:])[\w.\-]+:(?P<v>[^\s@/]+)@(?:tcp|unix|udp)\(", _I)
_ASSIGNMENT = re.compile(
    r"(?<![\w.\-])(?P<k>(?:[A-Za-z_][\w\-]*?)?(?:password|passwd|pwd|pass|secret|token|api[_-]?key|apikey|access[_-]?key"
    r"|private[_-]?key|app[_-]?key|auth[_-]?key)[\w\-]*)[\"'`]?[ \t]*(?:=|:(?!//))[ \t]*[\"'`]?"
    r"(?P<v>[^\s;&,，。\"'`]+)",
    _I,
)
_ASSIGNMENT_NOT_SECRET = re.compile(
    r"max|min|len|count|num|limit|size|expir|ttl|timeout|type|url|uri|endpoint|file|path|name|policy|hash|salt|reset"
    r"|prompt|usage|budget|cost|price|rule|field|input|label|hint|enabled|required|header|param|format",
    _I,
)

# --- keys and tokens --------------------------------------------------------------------------

_PREFIXED_KEYS = tuple(
    re.compile(pattern, _A)
    for pattern in (
        r"(?<![\w-])sk-(?:proj-|ant-(?:api\d+-)?|or-v1-|live-|svcacct-)?[A-Za-z0-9_\-]{20,}",
        r"(?<![\w])(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",
        r"(?<![\w])gh[pousr]_[A-Za-z0-9]{30,}",
        r"(?<![\w])github_pat_[A-Za-z0-9_]{30,}",
        r"(?<![\w])glpat-[A-Za-z0-9_\-]{20,}",
        r"(?<![\w])xox[abprse]-[A-Za-z0-9\-]{10,}",
        r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])",
        r"(?<![\w])AIza[0-9A-Za-z_\-]{30,}",
        r"(?<![\w])hf_[A-Za-z0-9]{30,}",
        r"(?<![\w])LTAI[A-Za-z0-9]{12,30}",
        r"(?<![\w])AKID[A-Za-z0-9]{13,40}",
        r"(?<![\w])ya29\.[A-Za-z0-9_\-]{20,}",
        r"(?<![\w])npm_[A-Za-z0-9]{30,}",
        r"(?<![\w])pypi-AgE[A-Za-z0-9_\-]{40,}",
        r"(?<![\w])do[opr]_v1_[a-f0-9]{64}",
        r"(?<![\w])shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}",
        r"(?<![\w])SG\.[\w\-]{16,}\.[\w\-]{16,}",
        r"(?<![\w])whsec_[A-Za-z0-9+/=]{20,}",
        r"eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*",  # JWT
        r"(?<!\d)\d{8,10}:A[A-Za-z0-9_\-]{32,}",  # Telegram bot token
        # webhook URLs whose path or query is the secret (Feishu, DingTalk, WeCom, Slack, Discord)
        r"open\.(?:feishu\.cn|larksuite\.com)/open-apis/bot/v2/hook/[\w\-]{16,}",
        r"oapi\.dingtalk\.com/robot/send\?access_token=\w{16,}",
        r"qyapi\.weixin\.qq\.com/cgi-bin/webhook/send\?key=[\w\-]{16,}",
        r"hooks\.slack\.com/services/[\w/]{20,}",
        r"discord(?:app)?\.com/api/webhooks/\d+/[\w\-]{20,}",
        r"(?<![\w])[MN][A-Za-z\d]{23,25}\.[\w\-]{6}\.[\w\-]{27,}",  # Discord bot token
    )
)
_KEY_CUE = (
    r"(?:(?<![A-Za-z])(?:api[\s_-]?key|apikey|app[\s_-]?key|app[\s_-]?secret|client[\s_-]?secret"
    r"|secret(?:[\s_-]?(?:key|id|access[\s_-]?key))?|access[\s_-]?key(?:[\s_-]?(?:id|secret))?|signing[\s_-]?key"
    r"|webhook[\s_-]?secret|private[\s_-]?key|bot[\s_-]?token|token|key|ak|sk)(?![A-Za-z])"
    r"|令牌|密钥|秘钥|密匙|私钥|凭证|凭据)"
)
_KEY = re.compile(
    _KEY_CUE + r"\s*(?:[^\x00-\x7f，。！？；\n]{0,6}?)?\s*(?:[:：=]|是|为|is)?\s*[\"'“`]?(?<![\w+/.\-])"
    r"(?P<v>(?:0x)?[A-Za-z0-9_\-+/=.]{16,})(?![\w+/=\-])",
    _I,
)
_PUBLIC_BEFORE = re.compile(r"(?:public|pub|公)\s*$", _I)
_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s:,\-]*)"
)
_SEED_PHRASE = re.compile(
    r"(?:助记词|seed\s*phrase|mnemonic(?:\s*(?:phrase|words))?|recovery\s*phrase"
    r"|(?:备份|恢复|钱包)的?\s*(?:12|24|十二|二十四)\s*个?(?:词|单词))[^。！？\n]{0,6}?(?:[:：=]|是|为)?\s*"
    r"(?P<v>(?:\d{1,2}[.、)]\s*)?[a-z]{3,8}(?:[\s,]+(?:\d{1,2}[.、)]\s*)?[a-z]{3,8}){7,23})",
    _I,
)

# --- one-time codes, security answers, recovery codes -------------------------------------------

_OTP_ALNUM_CUES = ("提取码", "授权码", "兑换码", "兑奖码", "激活码", "卡密", "核销码")
_OTP_PICKUP_CUES = ("取件码", "取货码", "提货码", "取票码", "开锁码", "开门码")
_OTP_CUE = (
    r"(?P<cue>验证码|校验码|动态码|确认码|登录码|短信码|认证码|授权码|提取码|取件码|取货码|提货码|取票码|核销码|兑奖码|兑换码"
    r"|开锁码|开门码|激活码|卡密|一次性(?:密码|验证码|口令)|动态(?:密码|口令)|临时密码|验证代码"
    r"|(?:安全验证|验证|校验|认证|登录|短信)(?:用)?的码|收到(?:了)?(?:一?个|一条|的)?码"
    r"|(?<![A-Za-z])yzm(?![A-Za-z])"
    r"|(?<![A-Za-z])(?:otp|2fa\s*code|verification\s+code|security\s+code|auth(?:entication)?\s+code|login\s+code"
    r"|one[\s-]time\s+(?:code|password|passcode))(?![A-Za-z]))"
)
_OTP_VALUE = (
    r"(?<![\w\-])(?P<v>[A-Za-z0-9]{4,6}(?:-[A-Za-z0-9]{4,6}){2,5}"
    r"|(?:[A-Za-z]?\d{1,3}-){1,3}\d{2,5}|\d(?: \d){3,7}|\d{4,8}|[A-Za-z0-9]{4,32})(?![\w\-]|\.\d)"
)
_OTP = re.compile(_OTP_CUE + r"(?P<w>[^。！？；!?;\n\d]{0,12}?)" + _OTP_VALUE, _I)
_OTP_REVERSE = re.compile(
    r"(?<![\w\-])(?P<v>\d{4,8})\s*(?:就是|是|为)\s*(?:你|您|我)?(?:的)?(?:本次)?(?:的)?(?:登录|短信|手机|注册|支付|身份)?"
    + _OTP_CUE,
    _I,
)
_OTP_GAP_BLOCK = re.compile(
    r"不|没|未|别|重发|重新|几|多少|客服|电话|热线|拨|秒|分钟|倒计时|有效期|过期|失败|错误|号|金额|价格|元|地址|第|订单|位|算法"
)
_OTP_TIGHT_GAP = re.compile(r"^\s*(?:(?:是|为|就是|[:：=]|is)\s*)?$", _I)
_SERVICE_NUMBER = re.compile(r"^(?:100\d\d|95\d{3}|96\d{3}|12[0-3]\d\d|400\d*|800\d*)$", _A)
_CVV = re.compile(
    r"(?:(?<![A-Za-z])(?:cvv2?|cvc2?|cvn2?)(?![A-Za-z])|安全码|卡背面?(?:的)?(?:后)?三位(?:数字|数)?"
    r"|签名(?:栏|条)[^，。！？,!?\d]{0,8}?(?:三位|三个)(?:数字|数|码)?|卡背(?:面|后)?[^，。！？,!?\d]{0,8}?(?:三位|三个)(?:数字|数|码)?)"
    r"\s*(?:[(（][^)）]{0,16}[)）])?\s*(?:是|为|[:：])?\s*"
    r"(?<!\d)(?P<v>\d{3,4})(?!\d)",
    _I,
)

_CVV_REVERSE = re.compile(
    r"(?<!\d)(?P<v>\d{3,4})(?!\d)[^。！？!?\n\d]{0,8}?(?:就是|即|是)?\s*(?:(?<![A-Za-z])(?:cvv2?|cvc2?|cvn2?)(?![A-Za-z])|安全码)",
    _I,
)

# A lock's combination ("行李箱密码锁 179", "保险柜是 590314").
_LOCK_COMBINATION = re.compile(
    r"(?:密码锁|密码箱|行李箱|保险柜|保险箱|门锁|车锁|挂锁)[^，。！？,!?\d]{0,6}?(?:密码)?(?:是|为|[:：]|改成了?|换成了?)?\s*"
    r"(?<![\d.])(?P<v>\d{3,8})(?![\d.])"
)

_SQ_CUE = r"(?:密保|安全(?:提示)?问题|(?:密码)?提示问题|(?<![A-Za-z])security\s+questions?)"
_SQ_CONNECT = (
    r"(?:[:：=]|都是|就是|分别是|分别为|依次是|依次为|(?:按)?顺序是|是|为|is|(?:我)?(?:填|设|写|选|答|回答)的(?:是)?)"
)
_SQ_VALUE = r"(?P<v>[^，。！？,!?；,!?;\n]{1,40})"
_SECURITY_ANSWERS = (
    re.compile(rf"{_SQ_CUE}[^。！!\n]{{0,24}}?(?:答案|answer)\s*{_SQ_CONNECT}\s*{_SQ_VALUE}", _I),
    re.compile(rf"{_SQ_CUE}[^。！!\n]{{0,24}}?(?<![回问])答\s+{_SQ_VALUE}", _I),
    # "我填的是 x" gives the answer; "设的是 x" names the question chosen
    re.compile(rf"{_SQ_CUE}[^。！!\n]{{0,24}}?(?:我|当时)?(?:答|回答|填|写)的(?:是)?\s*{_SQ_VALUE}", _I),
    re.compile(
        rf"{_SQ_CUE}[^？?\n。:：]{{0,8}}[:：]\s*[^？?\n。]{{2,30}}[？?]\s*(?:答案\s*(?:是|为|[:：])?\s*)?{_SQ_VALUE}",
        _I,
    ),
    re.compile(rf"(?<![A-Za-z])security\s+answers?\s*{_SQ_CONNECT}\s*{_SQ_VALUE}", _I),
    re.compile(rf"{_SQ_CUE}[^。！？!?\n]{{0,24}}?(?:→|->|=>|⇒)\s*{_SQ_VALUE}", _I),
)
_SQ_NOT_AN_ANSWER = re.compile(r"^\s*(?:什么|啥|多少|忘|不|没|记不|想不|是什么|呢)|(?:吗|呢|么|\?|？)\s*$")

_RC_CUE = (
    r"(?:恢复码|恢复代码|备用码|备份码|备用验证码|救援码|紧急码"
    r"|(?<![A-Za-z])(?:recovery|backup|2fa|scratch)\s+codes?(?![A-Za-z]))"
)
_RC_CODE = r"(?:[A-Za-z0-9]{3,10}(?:-[A-Za-z0-9]{3,10})+|\d{4}\s\d{4}|[A-Za-z0-9]{6,12})"
_RECOVERY_CODES = re.compile(
    rf"{_RC_CUE}(?P<w>[^。！？!?\n\d]{{0,8}}?)(?<![\w\-])(?P<v>{_RC_CODE}(?:(?:\s*[,，、;；]\s*|\s+){_RC_CODE})*)(?![\w\-])",
    _I,
)
_RC_GAP_BLOCK = re.compile(r"丢|忘|用完|生成|下载|打印|保存|存|不|没|放|在哪|什么|多少|几")

# --- identity and card numbers ------------------------------------------------------------------

_ID_NUMBER = re.compile(
    r"(?<![\w])(?P<v>[1-8]\d{5} ?(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01]) ?\d{3}[\dXx])(?![\w])", _A
)
_OLD_ID_NUMBER = re.compile(r"(?<![\w])(?P<v>[1-8]\d{7}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3})(?![\w])", _A)
_ID_CUE = re.compile(r"身份证|证件|身份号|公民身份|实名|居民身份|id\s*card", _I)
_PASSPORT = re.compile(
    r"(?:护照|passport|港澳通行证|通行证)(?:号码?|\s*no\.?|\s*number)?\s*(?:是|为|[:：])?\s*(?<![\w])(?P<v>[A-Za-z]{1,2}\d{7,8})(?![\w])",
    _I,
)
_CARD = re.compile(
    r"(?<![\w.\-])(?P<v>\d{4}(?:[ \-]\d{4}){2,3}[ \-]\d{1,7}|\d{4}[ \-]\d{6}[ \-]\d{5}|\d{15,19})(?![\w\-]|\.\d)", _A
)
_CARD_CUE_BEFORE = re.compile(
    r"(?:银行卡|卡号|信用卡|借记卡|储蓄卡|工资卡|[工农中建招交浦兴光民邮]行卡|银联|card|转账到|打钱到|转到|汇款到|打到|收款|账户|开户|的卡)"
    r"[^，。！？,!?\d]{0,8}$",
    _I,
)
_CARD_CUE_AFTER = re.compile(r"^[^，。！？,!?\d]{0,6}(?:这张卡|的卡|那张卡|户名|开户|卡号)", _A)
_NOT_CARD_BEFORE = re.compile(
    r"(?:订单|单号|运单|快递|流水|交易号|编号|工单|发票|批次|序列号|条码|imei|tracking|order|uid|时间戳|timestamp|群号|qq|电话|手机"
    r"|学号|工号|考号|准考证|雪花|hash|哈希|(?<![A-Za-z])(?:id|sn)(?![A-Za-z]))[^，。！？,!?\d]{0,8}$",
    _I,
)

Span = tuple[int, int]
Rule = Callable[[str], Iterator[Span]]


def _value_spans(pattern: re.Pattern[str], check: Callable[[re.Match[str], str], bool]) -> Rule:
    def rule(text: str) -> Iterator[Span]:
        for match in pattern.finditer(text):
            if check(match, text):
                yield _trimmed(match, text)

    return rule


def _trimmed(match: re.Match[str], text: str) -> Span:
    """The value's span without trailing sentence punctuation that the value pattern let in."""
    start, end = match.span("v")
    while end > start + 1 and text[end - 1] in ".,?~":
        end -= 1
    return start, end


def _after(match: re.Match[str], text: str, group: str = "v") -> str:
    return text[match.end(group) : match.end(group) + 12]


def _password_ok(match: re.Match[str], text: str) -> bool:
    value = match.group("v")
    # A Chinese cue is rarely followed by an English word that is not the password itself.
    explicit = bool(match.groupdict().get("conn")) or match.group()[0] in "密口"
    if _NOT_A_VALUE_AFTER.match(_after(match, text)):
        return False
    return shapes.plausible_password(value.rstrip(".,?"), explicit=explicit)


def _password_loose_ok(match: re.Match[str], text: str) -> bool:
    gap = match.group("w")
    if _LOOSE_BLOCK.search(gap) or _NOT_A_VALUE_AFTER.match(_after(match, text)):
        return False
    return shapes.strong_password(match.group("v"))


def _password_reverse_ok(match: re.Match[str], text: str) -> bool:
    value = match.group("v")
    if _REVERSE_BLOCK.search(match.group("w")):
        return False
    return shapes.strong_password(value) or (value.isdigit() and len(value) >= 6)


def _account_pairs(text: str) -> Iterator[Span]:
    for pattern in (_ACCOUNT_PAIR, _ACCOUNT_AND_PASSWORD, _ACCOUNT_SLASH_PASSWORD):
        for match in pattern.finditer(text):
            value = match.group("v")
            if pattern is _ACCOUNT_SLASH_PASSWORD and not shapes.strong_password(value):
                continue
            if not shapes.plausible_password(value, explicit=True):
                continue
            if _NOT_A_VALUE_AFTER.match(_after(match, text)):
                continue
            yield match.span("acct")
            yield _trimmed(match, text)


_EMAIL = re.compile(r"[A-Za-z0-9_.+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}", _A)


def _bare_account_pairs(text: str) -> Iterator[Span]:
    for match in _BARE_ACCOUNT_PAIR.finditer(text):
        value = match.group("v")
        word_start = max(text.rfind(" ", 0, match.start()), text.rfind("\n", 0, match.start())) + 1
        inside_url = "://" in text[word_start : match.end() + 3]
        if _EMAIL.fullmatch(value) or inside_url or not shapes.strong_password(value):
            continue
        yield match.span("acct")
        yield match.span("v")


def _password_new_ok(match: re.Match[str], text: str) -> bool:
    if _NOT_A_VALUE_AFTER.match(_after(match, text)):
        return False
    return shapes.plausible_password(match.group("v").rstrip(".,?"), explicit=True)


def _cli_password_ok(match: re.Match[str], text: str) -> bool:
    value = match.group("v")
    if match.group().startswith("-") and not match.group().startswith("--") and not _CLI_TOOLS.search(text):
        return False
    return not shapes.is_placeholder(value) and not value.startswith(("$", "-")) and not value.isdigit()


def _cookie_ok(match: re.Match[str], text: str) -> bool:
    values = [pair.split("=", 1)[1] for pair in re.split(r"\s*;\s*", match.group("v")) if "=" in pair]
    return any(len(value) >= 6 and not shapes.is_placeholder(value) for value in values)


def _session_ok(match: re.Match[str], text: str) -> bool:
    name, value = match.group("k").lower(), match.group("v")
    if shapes.is_placeholder(value):
        return False
    if re.fullmatch(_SESSION_NAMED, name, _I):
        return len(set(value)) >= 5 and not value.isalpha()
    return shapes.high_entropy_key(value)


def _connection_ok(match: re.Match[str], text: str) -> bool:
    value = match.group("v")
    return not shapes.is_placeholder(value) and any(char.isascii() and char.isalnum() for char in value)


def _assignment_ok(match: re.Match[str], text: str) -> bool:
    name, value = match.group("k"), match.group("v")
    if _ASSIGNMENT_NOT_SECRET.search(name) or shapes.is_placeholder(value):
        return False
    if re.search(r"pass|pwd", name, _I):
        return shapes.plausible_password(value, explicit=True)
    return shapes.high_entropy_key(value)


def _key_ok(match: re.Match[str], text: str) -> bool:
    value = match.group("v")
    if _PUBLIC_BEFORE.search(text[max(0, match.start() - 8) : match.start()]):
        return False
    if value.startswith("/") or "//" in value or ("." in value and not any(char.isdigit() for char in value)):
        return False
    return shapes.high_entropy_key(value)


def _prefixed_keys(text: str) -> Iterator[Span]:
    for pattern in _PREFIXED_KEYS:
        for match in pattern.finditer(text):
            if len(set(match.group()[-16:])) > 3:  # ghp_XXXXXXXX… is a key masked in a tutorial
                yield match.span()


def _private_keys(text: str) -> Iterator[Span]:
    for match in _PRIVATE_KEY.finditer(text):
        start, end = match.span()
        while end > start and text[end - 1].isspace():
            end -= 1
        yield start, end


def _otp_ok(match: re.Match[str], text: str) -> bool:
    cue, gap, value = match.group("cue"), match.group("w"), match.group("v")
    if _OTP_GAP_BLOCK.search(gap):
        return False
    if value.replace(" ", "").isdigit():
        value = value.replace(" ", "")
        return (
            not _SERVICE_NUMBER.match(value)
            and not _NOT_A_VALUE_AFTER.match(_after(match, text))
            and not re.match(r"\s*(?:号|楼|栋|室|层|箱|排|座|公里|km)", _after(match, text), _I)
        )
    if "-" in value:
        return cue in _OTP_PICKUP_CUES or (cue in _OTP_ALNUM_CUES and bool(_OTP_TIGHT_GAP.match(gap)))
    return cue in _OTP_ALNUM_CUES and bool(_OTP_TIGHT_GAP.match(gap)) and not shapes.is_placeholder(value)


def _otp_reverse_ok(match: re.Match[str], text: str) -> bool:
    return not _SERVICE_NUMBER.match(match.group("v"))


def _cvv_ok(match: re.Match[str], text: str) -> bool:
    return not _NOT_A_VALUE_AFTER.match(_after(match, text))


def _security_answers(text: str) -> Iterator[Span]:
    for pattern in _SECURITY_ANSWERS:
        for match in pattern.finditer(text):
            value = match.group("v")
            if value.strip() and not _SQ_NOT_AN_ANSWER.search(value):
                start, end = match.span("v")
                start += len(value) - len(value.lstrip())
                yield start, end - (len(value) - len(value.rstrip()))


def _recovery_ok(match: re.Match[str], text: str) -> bool:
    return not _RC_GAP_BLOCK.search(match.group("w")) and any(char.isdigit() for char in match.group("v"))


def _id_numbers(text: str) -> Iterator[Span]:
    for match in _ID_NUMBER.finditer(text):
        value = match.group("v").replace(" ", "")
        if not shapes.id_card_date_valid(value):
            continue
        if shapes.id_card_checksum_valid(value) or _id_cued(match, text):
            yield match.span("v")
    for match in _OLD_ID_NUMBER.finditer(text):
        if _id_cued(match, text):
            yield match.span("v")


def _id_cued(match: re.Match[str], text: str) -> bool:
    before = text[max(0, match.start() - 12) : match.start()]
    after = text[match.end() : match.end() + 8]
    return bool(_ID_CUE.search(before) or _ID_CUE.search(after))


def _card_numbers(text: str) -> Iterator[Span]:
    for match in _CARD.finditer(text):
        digits = re.sub(r"[ \-]", "", match.group("v"))
        if not 15 <= len(digits) <= 19:
            continue
        before = text[max(0, match.start() - 14) : match.start()]
        if _NOT_CARD_BEFORE.search(before):
            continue
        cued = bool(_CARD_CUE_BEFORE.search(before) or _CARD_CUE_AFTER.match(text[match.end() : match.end() + 10]))
        bare = len(digits) >= 16 and digits[0] in "3456" and shapes.luhn_valid(digits)
        if cued or bare:
            yield match.span("v")


def _always(match: re.Match[str], text: str) -> bool:
    return True


_RULES: tuple[tuple[str, Rule], ...] = (
    ("private_key", _private_keys),
    ("api_key", _prefixed_keys),
    ("connection", _value_spans(_URL_CREDENTIALS, _connection_ok)),
    ("connection", _value_spans(_GO_DSN, _connection_ok)),
    ("cookie", _value_spans(_COOKIE, _cookie_ok)),
    ("session", _value_spans(_SESSION, _session_ok)),
    ("session", _value_spans(_AUTHORIZATION, _always)),
    ("assignment", _value_spans(_ASSIGNMENT, _assignment_ok)),
    ("account", _account_pairs),
    ("account", _bare_account_pairs),
    ("password", _value_spans(_CLI_PASSWORD, _cli_password_ok)),
    ("password", _value_spans(_PASSWORD, _password_ok)),
    ("password", _value_spans(_PASSWORD_LOOSE, _password_loose_ok)),
    ("password", _value_spans(_PASSWORD_REVERSE, _password_reverse_ok)),
    ("password", _value_spans(_PASSWORD_NEW, _password_new_ok)),
    ("api_key", _value_spans(_KEY, _key_ok)),
    ("seed_phrase", _value_spans(_SEED_PHRASE, _always)),
    ("one_time_code", _value_spans(_OTP, _otp_ok)),
    ("one_time_code", _value_spans(_OTP_REVERSE, _otp_reverse_ok)),
    ("cvv", _value_spans(_CVV, _cvv_ok)),
    ("cvv", _value_spans(_CVV_REVERSE, _cvv_ok)),
    ("password", _value_spans(_LOCK_COMBINATION, _cvv_ok)),
    ("security_answer", _security_answers),
    ("recovery_code", _value_spans(_RECOVERY_CODES, _recovery_ok)),
    ("id_card", _id_numbers),
    ("passport", _value_spans(_PASSPORT, _always)),
    ("bank_card", _card_numbers),
)


def find_secrets(text: str) -> list[Secret]:
    """Secret values in ``text`` (already folded), merged where they overlap, in order."""
    found = sorted(
        [(start, end, kind) for kind, rule in _RULES for start, end in rule(text) if end > start]
        + [(start, end, kind) for start, end, kind in contextual_secrets(text) if end > start]
    )
    merged: list[Secret] = []
    for start, end, kind in found:
        if merged and start <= merged[-1].end:
            last = merged[-1]
            merged[-1] = Secret(last.start, max(last.end, end), last.kind)
        else:
            merged.append(Secret(start, end, kind))
    return merged
