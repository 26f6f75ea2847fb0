"""Closed-class words of questions (grammar, never the vocabulary of a corpus): question words,
auxiliaries and modals, pronouns, determiners, prepositions, conjunctions and particles.

Question analysis (:mod:`veracity.text.questions`) leaves them out of a sub-question's terms; the
question's surface (:mod:`veracity.text.question_surface`) and the retry's rewrites
(:mod:`veracity.pipeline.retry`) leave them out of what they compare.
"""

from __future__ import annotations

from typing import Final

# Closed-class English words: question words, auxiliaries and modals, pronouns,
# determiners, prepositions, conjunctions, and the verbs people use to ask.
ENGLISH_FUNCTION_WORDS: Final = frozenset(
    """what which who whom whose when where why how whether
    do does did done doing is am are was were be been being have has had having
    can could will would shall should may might must ought need needs
    i me my mine myself we us our ours ourselves you your yours yourself yourselves
    he him his himself she her hers herself it its itself they them their theirs themselves
    this that these those there here some any each every all both either neither other another
    such own same than too very just also only not no nor yes
    a an the of to in on at by for with from into onto about as per via over under
    and or but if so then else because while after before since until unless though although
    many much tell know please want wish like get got let lets make
    can't cant won't wont don't dont doesn't doesnt didn't didnt isn't isnt aren't arent
    wasn't wasnt shouldn't shouldnt couldn't couldnt wouldn't wouldnt i'm i've i'd""".split()
)
ENGLISH_QUESTION_WORDS: Final = frozenset("what which who whom whose when where why how whether".split())
ENGLISH_AUXILIARIES: Final = frozenset(
    "do does did is am are was were can could will would shall should may might must have has had".split()
)
ENGLISH_POSSESSIVES: Final = frozenset("my our".split())
ENGLISH_CONDITIONS: Final = frozenset(
    "if when whenever after once unless before while assuming suppose".split()
)

# Chinese: question words and phrases, auxiliaries, pronouns, particles.
CHINESE_FUNCTION_WORDS: Final = frozenset(
    """什么 什么样 哪 哪个 哪些 哪里 哪儿 哪位 哪种 哪一 哪年 哪天 谁 何 何时 何处 何地 何种 为何 为什么
    多少 几 几个 几年 几月 几号 多久 多长 多大 多高 多远 多重 怎么 怎样 怎么样 如何 怎么办 怎么回事
    是否 是不是 能否 可否 有没有 能不能 会不会 可不可以 要不要 吗 呢 吧 啊 么 呀
    可以 能 能够 会 要 需要 应该 应当 得 是 有 被 把 让 给 对 向 从 到 在 于 以 由 与 和 跟 及 或 或者 还是
    我 我们 你 你们 您 他 她 它 他们 她们 它们 自己 大家 这 那 这个 那个 这些 那些 这里 那里 此 该 其
    的 了 着 过 地 也 都 就 还 又 再 才 而 并 且 但 但是 如果 假如 要是 若 当 之后 以后 之前 以前 时 时候
    请问 请 想 想要 知道 一下 告诉
    啥 为啥 干嘛 干啥 咋 咋办 咋样 咋回事 回事 怎么搞 怎么弄 嘛 呗 哈 咯 啦 哦 的话 就行 不想""".split()
)
# The second line: the spoken forms people type into a support box (为啥 = 为什么, 咋 = 怎么,
# 干嘛 = 做什么) and the particles around them ("…就行", "…的话").
# Question and demonstrative morphemes that start a word (哪一年, 几个, 这家, 那种).
CHINESE_FUNCTION_PREFIXES: Final = ("哪", "几", "什么", "多少", "这", "那")
CHINESE_POSSESSIVES: Final = frozenset("我们 我 我们的 我的 我司 本公司".split())
CHINESE_CONDITIONS: Final = frozenset("如果 假如 要是 若 当 一旦 之后 以后".split())
# A Chinese premise also ends with a postposition of time or condition ("升级到 3.2 后，…",
# "迁移的时候，…", "需要的话，…").
CHINESE_CONDITION_ENDS: Final = ("后", "之后", "以后", "时", "时候", "的话", "前", "之前", "以前")
