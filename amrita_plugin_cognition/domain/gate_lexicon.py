"""Word lists of the absoluteness gate (see ``gate.py``).

The gate segments a fact by leftmost-longest matching over two kinds of entries: *problem* entries
(pronouns, relative time, relative place) and *safe* entries, ordinary words that merely contain a
problem word (其他, 吉他, 自我, 日本, 之后, 相当, 爱上 …). A safe word that starts earlier, or
starts at the same place and runs longer, wins, which is how "爱上周杰伦" escapes 上周, "相当天真"
escapes 当天 and "日本人" escapes 本人. Some problem entries carry a *rule*, a context check the
gate runs afterwards (an anaphor such as 当天 is fine once an absolute date came before it).

Decisions on the ambiguous cases (tests/unit/test_gate.py pins them):

* 家里 / 老家 / 公司 are anchored to the fact's subject: fine. 附近 / 楼下 / 隔壁 / 对面 / 旁边 are
  fine after a named anchor ("春熙路附近", "公司楼下"), flagged when bare ("住在附近").
* 本地 is flagged except in its technical sense (本地化, 本地部署, 本地运行 …); 当地 is flagged except
  in 当地时间 ("北京当地时间 20:00" names its place).
* 该群 is fine once a group number came before it; 上面说的, 上述 (what was said earlier) are not.
* 他人 (others), 其他, 我国 and idioms (你我他, 不分你我, 自我) are not references. 它们 is.
* 自己 is fine once a QQ user was named before it; 本人 is fine right after a name ("小明本人").
* Demonstrative determiners (这个项目, 那家店) are flagged as pronouns: a self-contained fact names
  the thing. They pass when the thing is named in place ("这个项目叫Apollo", "这款名为…的游戏").
* Windows relative to the moment of speaking are flagged: 昨天, 最近, 三天前, 下周, 今年, 月底, 上次.
  Unbounded past or future (以前, 之前, 以后, 曾经, 将来) and present state (现在, 目前) are not: they
  stay true against the fact's recorded time.
* Habits are absolute: 每天, 天天, 每个周末, bare 周末, 每周五. A bare weekday (周五) is flagged
  unless the clause marks a habit (每, 一般, 通常 …) or a date sits next to it.
* Month-days without a year (生日是3月14日) and bare festival names (春节回老家) pass; a festival
  with 前/后/期间 needs a year or 每年 ("2026年春节前").
* Anaphors (那天, 当天, 当时, 第二天, 同年) pass once an absolute date (a year for 同年/当年) came
  before them in the fact.
"""

from __future__ import annotations

PRONOUN = "pronoun"
RELATIVE_TIME = "relative_time"
RELATIVE_PLACE = "relative_place"
SAFE = "safe"

# (kind, rule, regular expression). Rules are implemented in gate.py; "" means none.
PROBLEM_ENTRIES: tuple[tuple[str, str, str], ...] = (
    # --- pronouns
    (PRONOUN, "", r"他们|她们|它们|他俩|她俩|它俩|我们|咱们|俺们|你们|您们|他|她|它|我|咱|俺|你|您"),
    (PRONOUN, "", r"(?<![A-Za-z])(?:TA|Ta|ta)们?(?![A-Za-z])"),
    (
        PRONOUN,
        "",
        r"对方|人家|这人|那人|此人|这位|那位|这家伙|那家伙|这货|那货|这厮|此君|这小子|那小子"
        r"|这哥们儿?|那哥们儿?|这姐们儿?|那姐们儿?|这俩|那俩",
    ),
    (PRONOUN, "", r"这件事|那件事|这些事|那些事|这回事|那回事|这事儿?|那事儿?|此事"),
    # what was said earlier in the chat, and 该 as a determiner ("在该群", "该用户")
    (PRONOUN, "", r"上面(?:说|提到|讲|聊)的?|前面(?:说|提到|讲|聊)的?|上述|上文|前文|下文"),
    # the previous poster of a thread (楼上 as a place is below, under relative places)
    (
        PRONOUN,
        "",
        r"(?<=回复|引用|赞同|同意|反驳|感谢|指出|艾特)楼上|(?<=@)楼上|楼上(?=(?:提交|发|说|问|回复|讲|贴|分享|推荐)的?)"
        r"|楼主|层主",
    ),
    # 该群: which group? Fine once a group number came before it ("群123456789…，该群…")
    (PRONOUN, "group_before", r"(?<![应活本不理就更早谁也都还又才])该群"),
    (PRONOUN, "demonstrative", r"[这那](?:个|些|款|家|部|本|首|件|只|篇|条|张|台|辆|套|份|项|场|支|群|间|座|所|门)"),
    (PRONOUN, "self", r"自己"),
    (PRONOUN, "named_before", r"本人"),
    # --- relative time
    (
        RELATIVE_TIME,
        "",
        r"大前天|大后天|前天|昨天|昨日|昨晚|昨夜|昨儿个?|今天|今日|今晚|今早|今晨|今夜|今儿个?"
        r"|明天|明日|明晚|明早|明晨|明儿个?|后天|大前年|大后年|今年度?|去年|前年|明年|后年"
        r"|[上下本]年度|上一年|下一年|本年|上年|他日|改天|改日|刚才|刚刚|方才|适才|稍后|待会儿?|等会儿"
        r"|晚点|晚些时候|早些时候|近来|近日|近期|近几天|近几年|近年来?|近些年"
        r"|[这那前]几天|[这那前]两天|[这那前]些天|前些日子|[这那]些日子|[这那前]阵子|前一阵子?"
        r"|[这那前]段时间|[这那]段日子|[这那前]些年|[这那前]几年|早些年|早几年"
        r"|过两天|过几天|过些天|过段时间|过阵子|不久[之以]?前|不久[之以]?后"
        r"|[上下这那]次|[上下这那]回|[上下这那]一次|刚(?=[\u4e00-\u9fff])",
    ),
    (RELATIVE_TIME, "nearest", r"最近"),
    (
        RELATIVE_TIME,
        "",
        r"(?:上上|下下|[上下这本])一?个?(?:周末|周[一二三四五六日天]?|星期[一二三四五六日天]?"
        r"|礼拜[一二三四五六日天]?|月|季度|学期|赛季|学年|财年)",
    ),
    (
        RELATIVE_TIME,
        "year_anchor",
        r"[上下]半年|[上下]半月|年初|年底|年末|年中|年终|月初|月底|月末|月中|[上中下]旬|年前|年后|节前|节后",
    ),
    (
        RELATIVE_TIME,
        "anaphoric_day",
        r"那天|这天|当天|当日|当晚|当夜|那晚|那夜|那一天|同一天|同日|次日|翌日|第二天|隔天|头一天"
        r"|前一天|后一天|当月|次月|同月|那时候?|那会儿|当时|彼时|届时|此时|此刻|[这那]个?时候",
    ),
    (RELATIVE_TIME, "anaphoric_year", r"那一?年|这一年|当年|同年|次年|翌年|那个年代"),
    (
        RELATIVE_TIME,
        "duration",
        r"(?:[0-9０-９]{1,12}|[一二两俩三四五六七八九十百千几半数多]{1,12})(?:多|余|来)?"
        r"(?:个(?:多|半)?(?:月|星期|礼拜|小时|钟头|世纪)|天|日|周|星期|礼拜|年|小时|钟头|分钟|秒钟?)"
        r"(?:多|半|左右)?(?:以前|之前|以后|之后|前|后)",
    ),
    (RELATIVE_TIME, "weekday", r"(?:周|星期|礼拜)[一二三四五六日天]"),
    (
        RELATIVE_TIME,
        "holiday",
        r"(?:春节|过年|新年|跨年|国庆节?|中秋节?|元旦|端午节?|清明节?|五一|元宵节?|七夕|圣诞节?|除夕"
        r"|寒假|暑假|双十一|双11|开学|放假|假期|年假|小长假|长假)(?:前后|前夕|[之以]前|[之以]后|期间|前|后|时)",
    ),
    # --- relative place
    (
        RELATIVE_PLACE,
        "",
        r"这里|那里|这儿|那儿|这边|那边|此地|此处|彼处|[这那]块儿|[这那]个?地方|[这那]一带|本地|当地"
        r"|本[市省县区镇村校群班店站]|本部门|本科室|本小区|此群|[这那]个群|[这那]群里|[这那][个座]城市|本单位|本公司"
        r"|[我贵]司|[我贵]校|我[市省县区]",
    ),
    (RELATIVE_PLACE, "bare_place", r"附近|楼下|楼上|隔壁|对面|旁边|周边|周围"),
)

# Ordinary words that contain a problem word, and idioms: the common words of the language, never the name
# of one product, title or person (a rule that names one is tuned to the facts it was written for), so an
# unquoted name such as 今日头条 is flagged like the day word it holds. Regular expressions in SAFE_PATTERNS.
_SAFE_WORDS_TEXT = """
    其他 其它 吉他 他乡 他国 他山 他者 利他 排他 无他 他杀 他用 他法 他意 他处 他律 他妈的 他娘的
    她经济 她力量 她时代 她世纪 自我 忘我 无我 本我 超我 唯我 敌我 物我 我国 我行我素
    尔虞我诈 舍我其谁 卿卿我我 你我他 不分你我 你追我赶 你来我往 你死我活 你争我夺 你情我愿 你侬我侬
    你画我猜 非你莫属 迷你 您好
    对方便 对方块 对方格 对方阵 对方案 对方法 对方式 对方向 对方针 对方言 对方程 对方面
    相对 绝对 针对 反对 面对 核对 比对 校对
    应对 派对 配对 成对 作对 不对 敌对
    这人工 这人生 这人群 这人类 这人口 那人工 那人生 那人群 那人类 此人工 这位置 那位置 这货车 这货物
    这个世界 这个社会 这个时代 这个道理 这本身 这本来 这首先 这条件 那条件 这支持 这天气 这所谓 那所谓
    明日黄花 昨日黄花 今非昔比
    改天换地 刚刚好 刚好 刚需 刚性 刚强 刚柔 刚烈 刚正 刚毅 刚度 刚体 刚直 刚劲 金刚 阳刚
    最近邻 周一次 年终奖 上月球 上月台 上年纪
    后天性 后天形成 后天培养 后天努力 后天习得 后天因素 后天养成 后天环境 后天的努力
    晚上 早上 马上 线上
    网上 路上 身上 桌上 会上 班上 世上 之上 以上 向上 往上 至上 北上 街上 天上 地上 床上 车上 手上
    墙上 台上 场上 海上 山上 镇上
    以下 之下 南下 天下 地下 私下 底下 留下 放下 拿下 剩下 记下 写下 买下 接下 签下 打下 立下 创下
    许下 乡下 树下 手下 部下 眼下 当下 一下 两下 几下 上下 落下 坐下 躺下 停下 倒下 吃下 喝下 按下
    拍下 录下 存下 攒下 省下 丢下 扔下 抛下 线下
    清明 光明 黎明 聪明 发明 证明 表明 透明 文明 鲜明 分明 声明 照明 不明 标明 注明 阐明 查明 指明
    简明 精明 神明 失明 天明
    相当 应当 适当 恰当 担当 正当 妥当 充当 理当 便当 勾当 停当 稳当 得当 上当 典当 行当 家当 难当
    不当 失当 每当
    目前 提前 之前 以前 空前 面前 跟前 眼前 生前 事前 门前 胸前 当前 日前 史前 战前 赛前 饭前 睡前
    会前 课前 考前 婚前 产前 此前 先前 向前 往前 超前 桌前 床前 窗前 身前 阵前 台前 幕前 车前 楼前
    上前 最前 靠前 朝前 头前
    之后 以后 然后 最后 随后 此后 今后 日后 过后 往后 落后 背后 先后 前后 身后 幕后 善后 午后 饭后
    课后 会后 赛后 婚后 产后 战后 事后 考后 睡后 退后 皇后 太后 王后 殿后 断后 下班后 放学后 毕业后
    入职后 离职后 结婚后 退休后 回家后 回国后 到家后 完后
    接近 靠近 将近 邻近 亲近 贴近 逼近 趋近 相近 远近 就近
    所以 可以 难以 予以 加以 得以 足以 用以 借以 据以 给以
    日本 根本 基本 资本 成本 样本 版本 课本 剧本 账本 笔记本 读本 原本 文本 标本 范本 副本 书本 脚本
    民本 老本 血本 绘本 台本 话本 底本 母本 蓝本 抄本 稿本
    刹那 至今 如今 当今 古今 现今 迄今 而今
    过去 失去 回去 出去 离去 死去 老去 除去 进去 下去 上去 远去 逝去
    经过 度过 超过 不过 通过 难过 跳过 错过 路过 闪过 越过 穿过 透过 放过 看过 吃过 去过 做过 用过
    玩过 听过 见过 到过 试过 学过 住过
    招待 接待 款待 优待 虐待 期待 对待 等待 看待 善待 厚待 亏待
    首次 再次 依次 层次 档次 名次 班次 批次 车次 航次 场次 席次 屡次 每次 其次 初次 多次
    相同 共同 不同 如同 等同 陪同 连同 协同 认同 赞同 合同 胡同 雷同
    修改 更改 篡改 批改 整改 删改 涂改 悔改 间隔 相隔 分隔 阻隔
    岁月 蜜月 满月 赏月 登月 明月 风月 日月
    青年 少年 中年 老年 童年 成年 晚年 早年 学年 周年 往年 常年 历年 全年 终年 多年 长年 拜年 百年 千年 万年
    季节 环节 细节 章节 情节 关节 礼节 音节 调节 春节
"""
SAFE_WORDS: tuple[str, ...] = tuple(_SAFE_WORDS_TEXT.split())

SAFE_PATTERNS: tuple[str, ...] = (
    # a verb ending in 上 (爱上周杰伦 is not 上周), unless 上次 / 上回 follows it ("比上次加深了")
    r"(?:爱|迷|恋|看|赶|遇|碰|跟|登|踏|走|追|比|配|加|算|用|穿|戴|考|当|排|挂|写|填|放|关|吃|喝|住|过|搭|坐|乘)上(?![次回]|一[次回])",
    # a word ending in 此 (因此, 对此), unless 此事 / 此人 / 此地 / 此处 follows it ("对此事不发表意见")
    r"(?:因|彼|如|就|从|至|据|为|特|由|借|长|对|以|凭)此(?![事人地处])",
    r"人家[庭族属电具居]",  # 工人家庭, 病人家属: not 人家 (I)
    # a company, a shop or a studio named after a day ("成都明日网络科技有限公司")
    r"(?:今|明|昨)[天日][^\s，。、；去在到和跟给从要会被把的了是为]{0,8}?(?:有限公司|有限责任公司|工作室|出版社)",
    # the technical term after a named place ("纽约当地时间 8:00"); bare ("于当地时间 8:00") it is not
    r"(?<=[^于在到从自，,。、；;：:\s（(])当地时间",
    r"他人(?![很挺真蛮太还特非比超不也就都])|[对给向为替帮]他人",  # 他人 = others, not 他 + 人很好
    r"你好(?![好像看厉棒美帅漂])",  # the greeting, not 你好像 / 你好厉害
    r"本地(?:化|部署|运行|模型|服务|文件|存储|缓存|环境|仓库|开发|数据|测试|代码|端|主机|机器|网络|磁盘"
    r"|硬盘|调试|编译|构建|备份|版本|分支|目录|路径|配置|推理|训练|微调|大模型|知识库|搭建|跑|安装|向量|端口"
    r"|客户端|生活)",
    r"这只(?:是|能|有|要|会|不|需|在|好)",
    r"[0-9０-９]{2}后|[〇零一二三四五六七八九]{2}后",  # 90后, 00后
    r"(?:[大小几一两三四五六七八九十百千多数]户|穷|富|老|好|别|书香|普通|有钱|庄稼|平常|寻常|百姓|殷实|农|正经)人家",
    r"[0-9０-９一二两三四五六七八九十几多数]{1,12}次",
    r"[班车机船铁]晚点",
    r"前天才(?:少年|少女|选手|程序员|儿童|棋手|画家|歌手|球员|运动员|作家|黑客)",  # a former prodigy
)

# Words in a clause that make a weekday or a festival a habit rather than one occasion.
HABIT_MARKERS = r"每|逢|通常|一般|总是|经常|常常|往往|习惯|固定|常年|一向|向来|平时|平常|历年|往年"

# Characters after which a place word such as 附近 or a span such as 三天前 is *bare*: nothing
# names what it is near to or after.
BARE_BEFORE = set(
    "在于到去从自往向朝回来住就这那我你他她它是了都也还才又已经要会将想能可再等说称讲道示算划备计定约好"
    "该须需得让叫请和与跟同及或并而且把被给对为"
)

# Before 本人: a reporting verb, or a verb taking it as object (出售本人的…), makes it first person ("说本人不去").
SPEECH_BEFORE = set("说称讲道示认为得想售卖买送找问帮替陪见约骂夸")

NAMING_WORDS = r"叫做|叫作|名为|名叫|称为|代号|叫|即"
