"""Cue families: what words in many languages *do*, for the injection scorer.

Each family is a kind of linguistic act or referent (addressing an AI, an
override verb, a rule noun, a secret, a claim to authority, a reporting frame,
an operational object...), written as regex fragments over revealed text
(NFKC, case folded, traditional Chinese folded to simplified; see
:mod:`veracity.text.reveal`). Families are general vocabulary in English,
Chinese, Spanish, French, German, Portuguese, Italian, Japanese, Korean and
Russian, not the phrasings of any one page: the scorer never looks at a
single word, only at which families co-occur in a sentence or its window,
with weights fitted on data (:mod:`veracity.pipeline.injection`).

A fragment that starts with a Latin or Cyrillic letter matches at a word
start; it must also end at a word end unless it ends with ``~`` (a stem).
"""

# ruff: noqa: E501  (word lists read best one language group per line)
from __future__ import annotations

import re
from typing import Final

from ..text.reveal import fold_accents

FAMILIES: Final[dict[str, tuple[str, ...]]] = {
    "addressee": (
        r"ai", r"a\.i\.", r"assistants?", r"chat ?bots?", r"language models?", r"llms?", r"gpt~",
        r"chatgpt", r"claude", r"gemini", r"copilot", r"(?:ai|answer|qa|support|help) (?:bots?|agents?|engines?)",
        r"(?:ai|automated|autonomous) (?:systems?|models?|agents?|readers?|crawlers?|tools?|pipelines?)",
        r"virtual assistants?", r"(?:dear|attention|hey|hello|hi|note,?) (?:ai|model|assistant|bot|llm)s?",
        r"models? (?:reading|processing|answering|summari[sz]ing)", r"you,? the (?:ai|model|assistant)",
        "人工智能", "助手", "助理", "大模型", "语言模型", "机器人", "智能客服", "智能体", "回答问题的", "问答系统",
        r"ia", r"asistentes?", r"modelos? de (?:lenguaje|linguagem)", r"inteligencia artificial",
        r"assistant(?:e)?s?", r"modèles? de langage", r"intelligence artificielle", r"ki", r"assistent(?:en)?",
        r"sprachmodell(?:e|en)?", r"künstliche intelligenz", r"assistente", r"inteligência artificial",
        r"modello linguistico", r"intelligenza artificiale", "アシスタント", "人工知能", "言語モデル",
        "チャットボット", "어시스턴트", "인공지능", "언어 ?모델", "챗봇", r"ии", r"ассистент~",
        r"языков\w* модел~", r"нейросет~",
    ),
    "conditional_ai": (
        r"if (?:you are|you're|you be) (?:an? )?(?:ai|assistant|language model|llm|bot|model|chatbot|automated)",
        r"(?:any|all|every|each) (?:ai|assistant|model|bot|llm|language model)s? (?:reading|that reads|processing|"
        r"summari[sz]ing|answering|that answers|that sees|seeing)",
        r"if (?:an? )?(?:ai|assistant|model|bot|llm) (?:is )?(?:reading|reads|processes|summari[sz]es|answers)",
        r"(?:如果|若|假如)(?:你|您)是.{0,12}(?:ai|助手|模型|机器人|智能)",
        r"(?:ai|助手|模型|机器人).{0,8}(?:读到|看到|阅读|处理|检索到|总结|引用)(?:本|这|此)",
        r"si (?:eres|es usted|tu es|vous êtes|você é|sei) (?:una? |un )?(?:ia|asistente|assistant|modelo|modèle|assistente)",
        r"(?:falls|wenn) (?:du|sie) (?:eine? )?(?:ki|sprachmodell|assistent)", "あなたがai", "당신이 ai",
        r"если ты (?:ии|ассистент|бот)",
    ),
    "vocative": (
        r"(?:dear|attention|hey|hello|hi|to|for|calling|note to|message to|reminder to) (?:the |any |all |every )?"
        r"(?:ai|a\.i\.|assistants?|chat ?bots?|bots?|language models?|llms?|models?|ai systems?|ai agents?|"
        r"automated (?:agents?|systems?|readers?|assistants?))",
        r"(?:^|\n)\s*(?:ai|assistants?|chat ?bots?|language models?|llms?|models?)\s*[,:]",
        "(?:给|致|写给|提醒|告诉)(?:各位|所有|每个|正在回答的)?.{0,6}(?:ai|助手|助理|模型|机器人|智能客服)",
        r"(?:^|\n)\s*(?:ai|助手|助理|大模型|模型|机器人|智能客服)[^。\n]{0,6}[:,]",
        "(?:请|麻烦|希望|要求)(?:各位|所有|每个|你们)?(?:的)?.{0,3}(?:ai|助手|助理|模型|机器人|智能客服)",
        r"(?:para|a) (?:la |el |los |las |cualquier )?(?:ia|asistentes?|modelos?)", r"(?:pour|à|aux?) (?:l'|les? |tout )?(?:ia|assistants?|modèles?)",
        r"(?:für|an) (?:die |den |alle )?(?:ki|assistent~|sprachmodell~)", r"(?:lieber|liebe) (?:ki|\w*assistent~|sprachmodell~)",
        "aiへ", "アシスタントへ", "ai에게", "어시스턴트에게", r"для (?:ии|ассистент~)",
    ),
    "second_person": (
        r"you", r"your~", r"yourself", "你", "您", r"tú", r"usted", r"vous", r"votre", r"tu", r"ton", r"du",
        r"dein~", r"você", r"voce", r"seu", r"sua", r"voi", r"tuo", "あなた", "당신", r"ты", r"вы", r"тебя", r"вас",
    ),
    "first_person": (
        r"me", r"i am", r"i'm", r"my", r"this user", r"the (?:current |requesting )?user", r"the asker",
        r"the (?:person|one|people) (?:asking|who asks?)", r"(?:the|this) requester", r"whoever (?:asks|is asking)",
        "我", "本人", "当前用户", "该用户", "提问者", r"yo soy", r"el usuario", r"moi", r"je suis", r"l'utilisateur",
        r"mich", r"ich bin", r"mein~", r"der (?:nutzer|benutzer)", r"eu sou", r"o usuário", r"l'utente",
        "私", "ユーザー", "사용자", r"я", r"меня", r"пользовател~",
    ),
    "override": (
        r"ignor(?:e|es|ed|ing|ez|er|ar|a|en|iere|ieren|iert)", r"disregard~", r"forget~", r"overrid~", r"bypass~",
        r"circumvent~", r"skip", r"set aside", r"put aside", r"discard", r"abandon", r"pay no attention",
        r"no longer (?:apply|applies|valid|in effect|binding|relevant|matter|hold)", r"supersed~",
        r"(?:is|are) (?:now )?(?:void|null|invalid|obsolete|revoked|suspended|lifted|superseded|cancell?ed|"
        r"deprecated|outdated|disabled|turned off)", r"(?:do not|don't|stop) (?:follow|obey|apply|respect)~",
        r"without (?:any )?(?:restrictions|limits|filter(?:s|ing)|rules|guardrails|censorship)",
        "忽略", "忽视", "无视", "不要理会", "不用理会", "不必理会", "别管", "忘记", "忘掉", "抛开", "抛弃", "跳过",
        "绕过", "绕开", "无需遵守", "不必遵守", "不要遵守", "不用遵守", "停止遵守", "作废", "失效", "不再适用",
        "不再有效", "已被取代", "解除", "不受.{0,6}限制",
        r"olvid~", r"omit~", r"descart~", r"pasa por alto", r"haz caso omiso", r"ya no (?:aplican|son válidas|valen)",
        r"anulad~", r"sin restricciones", r"oubli~", r"ne (?:tiens|tenez) (?:pas|plus) compte", r"faites abstraction",
        r"fais abstraction", r"ne s'appliquent plus", r"sans (?:aucune )?restrictions?", r"contourn~",
        r"vergiss", r"vergessen sie", r"missacht~", r"übergeh~", r"umgeh~", r"nicht mehr gültig", r"gelten nicht mehr",
        r"außer kraft", r"aufgehoben", r"ohne einschränkungen", r"esqueç~", r"desconsider~", r"não se aplicam mais",
        r"sem restrições", r"dimentic~", r"non (?:sono|è) più valid~", r"senza restrizioni",
        "無視", "忘れ", "従わな", "無効", "破棄", "무시", "잊어", "따르지", "무효", r"игнорир~", r"забуд~",
        r"не обращай внимания", r"отмен~",
    ),
    "reframe": (
        r"treat~", r"consider", r"regard", r"act(?:ing)? as", r"pretend~", r"behave~", r"role-?play~",
        r"play the role", r"simulate", r"impersonate", r"switch (?:to|into)", r"enter (?:\w+ )?mode", r"assume (?:the role|you are)",
        r"think of (?:yourself|this)", r"(?:respond|answer|reply) as", r"take (?:this|it) as",
        "视为", "当作", "当成", "看作", "扮演", "充当", "假装", "假扮", "切换到", "进入.{0,6}模式", "认定", "把.{0,24}当",
        r"trat(?:a|e|ar|en)", r"consider(?:a|e|ar|en|ez)", r"actúa como", r"actua como", r"fing~", r"compórtate",
        r"tom(?:a|e|en|ar) .{0,30} como", r"trait(?:e|ez|er)", r"considère[rz]?", r"considérez", r"agis(?:sez)? comme",
        r"fai(?:s|tes) semblant", r"comporte-toi", r"pren(?:ds|ez|dre) .{0,30} comme", r"nimm .{0,30} als", r"behandl~", r"betracht~",
        r"tu so", r"verhalte dich", r"spiele die rolle", r"(?:handle|agiere) als", r"sieh .{0,20} als",
        r"gib dich als", r"aja como", r"finja", r"agisci come", r"tratta", "として扱", "とみな", "のふりを",
        "になりきって", "演じ", "간주", "취급", "척하", "역할을", r"считай", r"веди себя как", r"притворис~",
        r"действуй как",
    ),
    "disclose": (
        r"reveal~", r"disclos~", r"list(?: out)?", r"print", r"output", r"dump", r"show", r"display", r"leak~",
        r"expose", r"share", r"repeat", r"include", r"append", r"attach", r"paste", r"send", r"forward",
        r"provide", r"give (?:me|us|the user|them)", r"tell (?:me|us)", r"enumerate", r"recite", r"spell out",
        r"copy", r"export",
        "透露", "泄露", "泄漏", "列出", "罗列", "输出", "打印", "显示", "展示", "公开", "附上", "附在", "附加",
        "贴出", "发送", "告诉", "提供", "给出", "复述", "重复", "导出", "披露",
        r"revel~", r"muestr~", r"mostr~", r"list(?:a|ar|e|ez|er)", r"enumer~", r"imprim~", r"compart~",
        r"divulg~", r"inclu~", r"adjunt~", r"envía", r"dime", r"proporcion~", r"révél~", r"affich~",
        r"énumér~", r"partag~", r"joign~", r"envoie[rz]?", r"donne[rz]?-moi", r"montr~", r"dis-moi",
        r"verrat~", r"zeig~", r"ausgeben", r"druck~", r"offenleg~", r"nenn~", r"sende", r"elenc~", r"stampa",
        r"condividi", r"includi", r"invia", "教えて", "表示", "出力", "列挙", "開示", "漏ら", "見せ",
        "공개", "출력", "나열", "보여", "알려", "유출", r"раскрой", r"покажи", r"выведи", r"перечисли",
        r"расскажи",
    ),
    "respond": (
        r"answer~", r"reply", r"respond~", r"say", r"state", r"tell (?:the |all |every )?(?:users?|customers?|readers?|askers?|people|everyone)",
        r"inform (?:the )?(?:users?|customers?)", r"confirm", r"claim", r"assert", r"recommend", r"cite", r"quote",
        "回答", "回复", "答复", "告知", "声称", "确认", "引用", "推荐", "说明",
        r"respond(?:e|a|er)", r"contest(?:a|ar)", r"di(?:le)? (?:al usuario |a los usuarios )?que", r"dile", r"di al usuario", r"afirm~", r"confirm~", r"cit(?:a|e|ez)",
        r"recomiend~", r"répond~", r"dites", r"dis que", r"recommand~", r"antwort~", r"sag(?:e|en)?",
        r"behaupt~", r"bestätig~", r"zitier~", r"empfiehl", r"diga", r"rispondi", r"afferm~", r"conferm~",
        "答え", "回答", "返答", "伝え", "言って", "답변", "대답", "말해", "전달", r"отвеча~", r"ответь", r"скажи",
        r"сообщи", r"утвержда~",
    ),
    "obey": (
        r"follow", r"obey", r"comply", r"execute", r"adhere", r"abide", r"do as", r"carry out", r"use only",
        r"rely (?:only|solely|exclusively)", r"trust (?:only|this|these|me)", r"priorit~", r"take precedence",
        "遵循", "遵守", "服从", "执行", "照做", "听从", "按照.{0,8}(?:执行|回答|做)", "以.{0,12}为准", "优先",
        r"sigue", r"obedec~", r"cumpl~", r"ejecut~", r"confía", r"prioriz~", r"usa (?:solo|únicamente)",
        r"sui(?:s|vez)", r"obéi~", r"exécut~", r"respect(?:e|ez)", r"fie[sz]?-(?:toi|vous)", r"utilise[rz]? uniquement",
        r"befolg~", r"gehorch~", r"führe .{0,20} aus", r"halte dich", r"vertrau~", r"verwende (?:nur|ausschließlich)",
        r"siga", r"obedeça", r"confie", r"use apenas", r"segui", r"obbedisci", r"esegui", r"usa solo", r"fidati",
        "従って", "従え", "実行", "優先", "따르", "복종", "실행", "우선", r"следуй", r"подчиняйся", r"выполн~",
    ),
    "control": (
        r"instructions?", r"rules?", r"guidelines?", r"guidance", r"prompts?", r"directions", r"programmed", r"system (?:prompt|message)s?",
        r"polic(?:y|ies)", r"restrictions?", r"constraints?", r"guardrails?", r"safety~", r"filters?",
        r"directives?", r"programming", r"training", r"orders", r"commands?", r"context", r"what you (?:were|have been) told",
        r"you (?:were|have been) (?:given|told)", r"content polic~", r"limitations?", r"boundaries",
        "规则", "指令", "指示", "提示词", "提示语", "系统提示", "系统消息", "系统设定", "设定", "限制", "约束",
        "安全策略", "安全规则", "政策", "准则", "规定", "守则", "命令", "上下文", "审查",
        r"instrucciones", r"reglas", r"normas", r"indicaciones", r"directrices", r"políticas", r"restricciones",
        r"limitaciones", r"órdenes", r"filtros", r"règles", r"consignes", r"politiques", r"ordres", r"filtres",
        r"anweisung(?:en)?", r"regeln", r"richtlinien", r"vorgaben", r"vorschriften", r"einschränkungen",
        r"beschränkungen", r"befehle", r"systemprompt", r"instruções", r"regras", r"diretrizes", r"restrições",
        r"istruzioni", r"regole", r"linee guida", r"restrizioni", "ルール", "規則", "命令", "プロンプト", "制限",
        "ガイドライン", "지시", "규칙", "명령", "프롬프트", "제한", "지침", r"инструкци~", r"правил~",
        r"ограничени~", r"указани~", r"промпт~",
    ),
    "prior": (
        r"previous~", r"prior", r"above", r"earlier", r"preceding", r"original", r"initial", r"all", r"any",
        r"every", r"existing", r"default", r"other", r"before", r"so far", r"until now", r"given to you",
        "之前", "以前", "此前", "先前", "上面", "上述", "前面", "原有", "原来", "原先", "所有", "一切", "全部", "任何",
        "默认", "其他", "其它", r"anterior~", r"previa~", r"todas", r"todos", r"cualquier", r"original(?:es)?",
        r"précédent~", r"antérieur~", r"toutes", r"tous", r"initial~", r"vorherig~", r"bisherig~", r"früher~",
        r"alle", r"sämtlich~", r"ursprünglich~", r"precedent~", r"tutte", "これまで", "上記", "すべて", "全て",
        "이전", "모든", "위의", "기존", r"предыдущ~", r"прежн~", r"все",
    ),
    "exclusive": (
        r"only", r"sole(?:ly)?", r"exclusive(?:ly)?", r"alone", r"nothing else", r"no other", r"single source",
        r"(?:not|never) (?:use|consult|trust|cite|rely on|refer to|check|mention|quote) (?:any )?(?:other|the official|official)",
        r"instead of (?:the )?(?:official|other)", r"over (?:the )?(?:official|other)", r"authoritative",
        r"definitive", r"final (?:answer|word|truth)", r"true source", r"source of truth", r"the truth",
        r"no (?:consult|us|cit|utilic|cre)\w* (?:\w+ ){0,2}(?:oficial\w*|otras?|otros?)",
        r"ne (?:consult|utilis|cit|croi)\w* (?:pas|jamais|plus) (?:\w+ ){0,2}(?:officiel\w*|autres?)",
        r"(?:nicht|keine) (?:\w+ ){0,2}(?:offiziell|andere)~",
        "唯一", "只有", "只能", "只", "仅", "不要参考", "不要相信", "别再引用", "不要再参考", "不再参考", "别参考", "不用参考", "权威", "最终答案", "最终解释", "为准",
        "而不是官方", r"únic~", r"sol(?:o|amente)", r"exclusivamente", r"ninguna otra", r"seul~", r"uniquement",
        r"exclusivement", r"aucune autre", r"einzig~", r"nur", r"ausschließlich", r"keine andere~", r"maßgeblich~",
        r"apenas", r"somente", r"soltanto", r"esclusivamente", "のみ", "だけ", "유일", "오직", r"единствен~",
        r"только",
    ),
    "source": (
        r"sources?", r"page", r"document~", r"article", r"post", r"thread", r"text", r"content", r"references?",
        r"information", r"answers?", r"faq", r"docs", r"knowledge", r"truth", r"wiki",
        "来源", "本页", "页面", "文档", "文章", "资料", "信息", "本文", "内容", "依据", "答案", "真相", "帖子", "说法",
        r"fuente~", r"página", r"documento~", r"artículo", r"información", r"verdad", r"vérité", r"quelle~",
        r"seite", r"dokument~", r"artikel", r"wahrheit", r"fonte", r"pagina", "情報源", "ページ", "文書", "ソース",
        "출처", "페이지", "문서", r"источник~", r"страниц~", r"документ~",
    ),
    "self_reference": (
        r"(?:this|these) (?:page|document|post|article|text|message|note|section|thread|content|comment|answer|"
        r"file|instructions?|notes?|words|entry|wiki)", r"the following", r"herein", r"as stated here",
        "本页", "本文", "此页", "这页", "这一页", "这篇", "这段", "本帖", "此文", "本条", "这条", "本站", "本说明",
        r"esta (?:página|nota|publicación|sección|entrada)", r"este (?:documento|texto|mensaje|artículo)",
        r"cette (?:page|note|section)", r"ce (?:document|texte|message|article)",
        r"diese[rsm]? (?:seite|dokument|text|nachricht|abschnitt|beitrag|hinweis)", r"esta página", r"este documento",
        r"questa pagina", r"questo documento", "このページ", "この文書", "本ページ", "이 페이지", "이 문서",
        r"эт\w+ страниц~", r"этот документ",
    ),
    "secret": (
        r"internal", r"confidential", r"hidden", r"secret~", r"private", r"restricted", r"classified",
        r"sensitive", r"credentials?", r"passwords?", r"api keys?", r"tokens?", r"system prompt",
        r"(?:your|the|initial|original|hidden|full|exact) (?:\w+ )?prompt", r"chain[- ]of[- ]thought", r"your configuration",
        r"incident (?:records?|reports?|logs?|numbers?|ids?)", r"not public", r"non-public",
        r"other (?:users|customers|tenants)'?", r"personal data", r"(?:staff|employee)-only",
        "内部", "机密", "保密", "隐藏", "秘密", "私密", "敏感", "密码", "密钥", "令牌", "凭证", "凭据", "事故记录",
        "未公开", "非公开", "其他用户", "其他客户", "系统提示", "个人信息",
        r"intern(?:o|a|os|as|e|es|en|er|i)", r"confidencia~", r"confidentiel~", r"secret(?:o|a|os|as|e|es|s)",
        r"ocult~", r"privad~", r"contraseñas?", r"credenciales", r"caché(?:e|s|es)?", r"privé~", r"mots? de passe",
        r"identifiants", r"vertraulich~", r"geheim~", r"versteckt~", r"passw(?:ö|o)rt~", r"zugangsdaten",
        r"senhas?", r"credenciais", r"riservat~", r"segret~", r"credenziali", "機密", "非公開", "パスワード",
        "認証情報", "내부", "기밀", "비밀", "비공개", r"внутренн~", r"конфиденциальн~", r"секретн~", r"скрыт~",
        r"парол~",
    ),
    "authority": (
        r"admin~", r"root", r"superuser", r"grant~", r"elevat~", r"unlock~", r"sudo", r"(?:developer|dev|god|debug|maintenance|unrestricted|jailbreak) mode",
        r"dan", r"jailbr~", r"unrestricted", r"unfiltered", r"uncensored", r"no (?:restrictions|limits|filters|rules)",
        r"elevated", r"privileged", r"privileges?", r"permissions?", r"access (?:level|rights)", r"full access",
        r"clearance", r"owner", r"operator", r"maintainer", r"moderator", r"authori[sz]ed", r"roles?",
        r"security team", r"verified (?:employee|staff|engineer)",
        "管理员", "超级用户", "开发者模式", "调试模式", "维护模式", "上帝模式", "越狱", "不受限制", "无限制",
        "最高权限", "权限", "特权", "提权", "授权", "角色", "身份", "维护者", "内部员工", "官方人员",
        r"administra(?:dor|teur|tor|tore)~", r"modo (?:desarrollador|dios|depuración|desenvolvedor)",
        r"permisos?", r"privilegios?", r"acceso (?:total|completo)", r"rol", r"mode (?:développeur|debug|dieu)",
        r"privilèges?", r"accès (?:complet|total)", r"rôle", r"entwicklermodus", r"berechtigung~", r"rechte",
        r"vollzugriff", r"rolle", r"permissões", r"privilégios", r"papel", r"amministratore", r"permessi",
        r"privilegi", r"ruolo", "管理者", "開発者モード", "権限", "特権", "制限なし", "役割", "관리자",
        "개발자 모드", "권한", "특권", "역할", r"администратор~", r"режим разработчика", r"прав~", r"привилеги~",
        r"роль",
    ),
    "role_change": (
        r"(?:change|set|switch|promote|upgrade|elevate|make|grant) (?:\w+ ){0,3}(?:role|permissions?|access|privileges?|rights)",
        r"(?:role|permissions?|access level)s? (?:to|=|into) ", r"make me (?:an? )?(?:admin~|owner|maintainer|root)",
        "(?:角色|权限|身份)(?:改为|改成|提升为|提升到|设为|设置为|升级为|变更为|切换为)",
        "(?:改为|改成|提升为|设为|升级为)(?:管理员|超级管理员|维护者|所有者|maintainer|admin)",
        r"cambi\w* (?:mi|el|su) (?:rol|permiso)", r"chang\w* (?:mon|le|son) (?:rôle|accès)", r"änder\w* (?:meine|die|seine) (?:rolle|rechte)",
    ),
    "identity": (
        r"you are (?:now|no longer|henceforth|actually|really|hereby)", r"you(?:'re| are) (?:an? )?(?:new|different|unrestricted|evil|free)",
        r"your (?:new )?(?:role|identity|persona|name|purpose|task|job|instructions?) (?:is|are|will be)",
        r"you will (?:now )?(?:act|be|behave|respond|answer|reply)", r"you have been (?:updated|reprogrammed|upgraded|freed|unlocked)",
        r"(?:from now on|as of now|starting now),? you", r"(?:pretend|imagine|suppose) (?:that )?you(?:'re| are)",
        r"let'?s (?:play|pretend|role-?play)", r"you are \w+, (?:who|an?|the)", r"(?:stay|remain) in character",
        r"act as if you", r"role-?play as", r"you(?:'re| are) (?:the|a|an) (?:\w+ ){0,3}(?:engineer|agent|admin|administrator|operator|employee|developer|expert|staff)",
        "你现在是", "你现在就是", "你是一个", "你是一名", "你的新身份", "你的角色是", "你的身份是", "你的任务是",
        "你已经被", "你不再是", "您现在是", r"ahora eres", r"eres un", r"tu nuevo (?:rol|papel)",
        r"tu (?:rol|función|tarea) es", r"ya no eres", r"tu es (?:maintenant|désormais)", r"vous êtes (?:maintenant|désormais)",
        r"(?:votre|ton) (?:nouveau )?rôle est", r"tu n'es plus", r"du bist (?:jetzt|nun|ab sofort)",
        r"sie sind (?:jetzt|nun)", r"deine (?:neue )?(?:rolle|aufgabe) ist", r"agora você é", r"você é agora",
        r"seu papel é", r"(?:ora|adesso) sei", r"il tuo ruolo è", "あなたは今", "あなたの役割は", "今からあなたは",
        "당신은 이제", "너는 이제", "당신의 역할은", r"теперь ты", r"ты теперь", r"твоя роль",
    ),
    "persistence": (
        r"from now on", r"henceforth", r"hereafter", r"going forward", r"for the rest of", r"for all (?:future|subsequent)",
        r"in (?:all|every) (?:future |subsequent )?(?:answers?|responses?|replies|conversations?)", r"permanently",
        r"never again", r"until (?:told|further notice)", r"always (?:answer|reply|respond|say|state|tell|cite|use|quote|include)~",
        "从现在起", "从现在开始", "从今以后", "今后", "此后", "接下来", "永远", "始终", "一律", "每次回答", "所有回答",
        r"a partir de ahora", r"desde ahora", r"de ahora en adelante", r"à partir de maintenant", r"désormais",
        r"dorénavant", r"ab (?:jetzt|sofort)", r"von nun an", r"künftig", r"a partir de agora", r"de agora em diante",
        r"d'ora in poi", r"da ora in poi", "今後", "これから", "以降", "常に", "이제부터", "앞으로", r"отныне",
        r"с этого момента",
    ),
    "request": (
        r"please", r"kindly", r"(?:we|i)(?:'d| would) (?:appreciate|be grateful|love it)", r"could you", r"do us a favou?r",
        r"agradecer\w*", r"nous (?:vous )?serions reconnaissants", r"wir wären dankbar", r"would (?:be )?(?:helpful|appreciated|great|nice|best|ideal)", r"it would help",
        r"we (?:ask|request|need|want|expect|require)", r"i (?:ask|need|want|request|require)",
        r"(?:must|should|shall|need to|have to|has to|ought to)", r"make sure", r"be sure", r"ensure",
        r"remember to", r"it is (?:important|essential|crucial|mandatory|required|necessary|vital)",
        r"(?:are|is) (?:required|expected|asked|instructed|requested|supposed) to", r"do not", r"don't", r"never",
        r"always", r"(?:are|is) to (?:be|treat|use|answer|ignore|reply|respond)",
        "请", "务必", "一定要", "必须", "应当", "应该", "要求", "麻烦", "希望", "记得", "不要", "切勿", "禁止",
        "不得", "只需", "最好", "拜托", "千万", "劳驾", "烦请", "敬请", "别再", "请勿", r"por favor", r"deb(?:es|ería|erías|e|en)", r"tienes que", r"asegúrate",
        r"te pedimos", r"(?:le |les )?pedimos", r"nous (?:vous )?demandons", r"prière de", r"wir bitten", r"sería útil", r"nunca", r"s'il (?:te|vous) pla[iî]t", r"veuillez", r"merci de",
        r"(?:tu dois|vous devez|il faut)", r"assure[sz]?-(?:toi|vous)", r"jamais", r"serait utile", r"bitte",
        r"(?:du musst|sie müssen|du sollst|sie sollten|du solltest)", r"stelle sicher", r"achte darauf",
        r"wäre hilfreich", r"niemals", r"(?:você deve|deve|certifique-se)", r"per favore", r"devi", r"dovresti",
        r"assicurati", "ください", "してほしい", "しなさい", "すること", "必ず", "べき", "주세요", "하십시오",
        "해야", "반드시", r"пожалуйста", r"долж~", r"обязательно", r"нужно",
    ),
    "user_mention": (
        r"(?:the |all |every |our )?(?:users?|customers?|askers?|readers?|visitors?|clients?)", "用户", "客户", "提问者",
        r"(?:anyone|someone|whoever|somebody|people) (?:asks?|asking)", "谁问", "有人问", "任何人问", "问到",
        "读者", "访客", r"usuarios?", r"clientes?", r"utilisateurs?", r"nutzer~", r"benutzer~", r"kunden?",
        r"usuários?", r"utenti", "ユーザー", "사용자", r"пользовател~",
    ),
    "reporting": (
        r"attack~", r"malicious", r"adversar~", r"phishing", r"scam~", r"injection", r"injected", r"malicious payloads?",
        r"exploit~", r"red team~", r"examples?", r"e\.g\.?", r"for instance", r"such as", r"like this",
        r"advisory", r"cve-\d~", r"vulnerabilit~", r"beware", r"watch out", r"do not (?:follow|comply|obey)",
        r"suspicious", r"spam~", r"bad actors?", r"threats?", r"detect~", r"flag(?:ged|s)?", r"block~",
        r"researchers?", r"reported", r"tricks?", r"tries to", r"attempt~", r"claims? to be",
        r"so-called", r"written as", r"phrases? (?:like|such as)", r"messages? (?:like|such as)", r"wording",
        r"strings? (?:like|such as)", r"sample",
        "攻击", "恶意", "钓鱼", "诈骗", "注入", "载荷", "漏洞", "示例", "例如", "比如", "诸如", "类似", "警惕", "小心",
        "不要照做", "警告", "可疑", "检测", "拦截", "过滤", "研究人员", "试图", "企图", "冒充", "伪装", "自称",
        "所谓", "字样", "话术", "套路", "样本",
        r"atacante~", r"ataque~", r"malicios~", r"estafa~", r"inyección", r"por ejemplo", r"ejemplo~",
        r"advertencia", r"sospechos~", r"intenta~", r"attaquant~", r"malveillant~", r"hameçonnage", r"arnaque~",
        r"par exemple", r"exemple~", r"avertissement", r"suspect~", r"tente~", r"angreifer~", r"angriff~",
        r"bösartig~", r"schädlich~", r"injektion", r"zum beispiel", r"beispiel~", r"z\.\s?b\.", r"warnung",
        r"verdächtig~", r"versuch~", r"por exemplo", r"exemplo~", r"attaccant~", r"malevol~", r"per esempio",
        r"esempio", "攻撃", "悪意", "例えば", "注意喚起", "공격", "악의", "예를 들어", "예시", r"атак~",
        r"злоумышлен~", r"например", r"пример~",
    ),
    "operational": (
        r"logs?", r"log files?", r"files?", r"folders?", r"director(?:y|ies)", r"notices?", r"notifications?",
        r"warnings?", r"alerts?", r"errors?", r"updates?", r"banners?", r"pop-?ups?", r"dialogs?", r"tables?",
        r"routes?", r"cache~", r"columns?", r"fields?", r"settings?", r"screens?", r"windows?", r"tabs?",
        r"buttons?", r"menus?", r"servers?", r"ports?", r"process(?:es)?", r"services?", r"clusters?", r"nodes?",
        r"load balancer~", r"prox(?:y|ies)", r"cookies?", r"e-?mails?", r"commits?", r"branch(?:es)?",
        r"builds?", r"tests?", r"whitespace", r"terminal", r"console", r"shell", r"stdout", r"stderr",
        r"dashboards?", r"reports?", r"metrics", r"disks?", r"memory", r"cpu", r"certificates?", r"versions?",
        r"changelog", r"release notes", r"tickets?", r"queues?", r"invoices?", r"packets?", r"requests?",
        r"traffic", r"database", r"queries", r"query", r"config~", r"tasks?", r"jobs?", r"profiles?",
        r"networks?", r"wi-?fi", r"devices?", r"kiosks?", r"backups?", r"steps?", r"scripts?", r"installer",
        "日志", "文件", "目录", "通知", "提示框", "弹窗", "警告", "报错", "错误", "更新", "表格", "路由", "缓存",
        "字段", "设置", "屏幕", "窗口", "按钮", "菜单", "服务器", "端口", "进程", "服务", "集群", "节点", "负载均衡",
        "代理", "邮件", "命令行", "终端", "控制台", "仪表盘", "报表", "磁盘", "内存", "证书", "版本", "工单", "队列",
        "发票", "网络", "数据库", "配置", "任务",
        r"registros?", r"archivos?", r"carpetas?", r"avisos?", r"notificaci~", r"actualizaci~", r"tablas?",
        r"servidor~", r"puertos?", r"consola", r"journa(?:l|ux)", r"fichiers?", r"dossiers?", r"mises? à jour",
        r"tableau~", r"serveur~", r"protokoll~", r"logdatei~", r"datei~", r"ordner", r"benachrichtigung~",
        r"aktualisierung~", r"tabelle~", r"routingtabelle", r"konsole", "ログ", "ファイル", "通知", "警告",
        "テーブル", "キャッシュ", "サーバー", "로그", "파일", "알림", "경고", "업데이트", "서버", r"лог~",
        r"файл~", r"уведомлен~", r"сервер~",
    ),
    "permission": (
        r"you (?:can|may)", r"can (?:safely )?be", r"may (?:safely )?be", r"(?:it's|it is) (?:safe|fine|ok(?:ay)?) to",
        r"feel free", r"safely", r"optional~", r"if you (?:want|prefer|like|wish)", r"no need to", r"don't need to",
        r"doesn't matter", "可以", "不妨", "无需", "不用管", "不需要", "没关系", "随意", r"puedes", r"puede",
        r"no hace falta", r"no es necesario", r"tu peux", r"vous pouvez", r"pas besoin", r"sans risque",
        r"du kannst", r"sie können", r"nicht nötig", r"bedenkenlos", r"unbedenklich", r"você pode", r"puoi",
        "てもよい", "て大丈夫", "でも構いません", "해도 됩니다", "괜찮", r"можно", r"можете",
    ),
    "audience_restriction": (
        r"(?:for )?internal use only", r"for (?:internal|staff|employees?|support staff|the \w+ team|team members)(?: use)? only",
        r"(?:staff|employees?|team|internal)[- ]only", r"not for (?:distribution|customers|external use|publication)",
        r"do not (?:share|forward|distribute) (?:this|it|outside)~", r"confidential:",
        "仅供.{0,8}(?:参考|使用|查阅|阅读)", "仅限.{0,8}(?:查阅|使用|内部|阅读)", "内部使用", "内部参考", "请勿外传",
        "不得外传", "不得转发", "请勿转发", "不得对外",
        r"(?:solo|sólo) para uso interno", r"uso interno", r"usage interne", r"réservé (?:au|à l'|aux)~",
        r"nur für den internen gebrauch", r"nur intern", r"uso interno", r"для внутреннего использования",
        "社外秘", "社内限定", "내부용",
    ),
    "protective": (
        r"(?:do not|don't|never|must not|should not|shall not|cannot|may not|not to)(?: \w+){0,2} "
        r"(?:reveal|disclose|share|leak|expose|publish|print|list|show|discuss|mention)~",
        r"not (?:to )?be (?:shared|disclosed|revealed|published)",
        "(?:不|勿|别|禁止|不得|不能|不可|切勿|严禁|不要)(?:要|能|得|可|对外)?(?:透露|泄露|泄漏|公开|分享|外传|披露|显示|列出|提供|转发|转给|发给|告知|外发)",
        r"no (?:debe[ns]?|puede[ns]?|deben|hay que )?(?:revel|compart|divulg|public|muestr)~",
        r"nunca (?:revel|compart)~",
        r"ne (?:doi[st]|doivent|peu[tx]|peuvent|faut)? ?(?:pas |jamais )?(?:révél|partag|divulgu|publi|montr)~",
        r"(?:darf|dürfen|sollte[n]?|soll)? ?(?:nicht|niemals|keine) (?:\w+ ){0,3}(?:verraten|weitergeben|offenlegen|teilen|veröffentlichen)", "公開しない", "漏らさない",
        "공개하지", "유출하지", r"не раскрыва~", r"не разглаша~",
    ),
}

# Fake message framing is structural: a bracketed or prefixed header that names a system, an
# operator or the model, or a note addressed to the model.
FRAMING: Final = re.compile(
    fold_accents(
    r"(?:^|\n)\s*(?:[\[【<({#*>|=\-]+\s*/?\s*)(?:system|sys|admin(?:istrator)?|assistant|developer|root|operator|"
    r"instructions?|important|urgent|override|priority|系统|管理员|指令|重要|紧急|sistema|système|systeme|"
    r"systemnachricht|システム|시스템|система)[^\n]{0,40}?[\]】>)}:|=]"
    r"|<\|(?:im_start|system|assistant|user)\|>|<<\s*sys\s*>>|\[/?inst\]|###\s*(?:system|instruction|response)"
    r"|begin (?:system|hidden|secret|new|admin) (?:prompt|instructions?|message)|end of (?:document|context|user input|content)"
    r"|new (?:system )?instructions?\s*:|(?:^|\n)\s*(?:system|admin|assistant)(?: message| prompt| notice| override| update)?\s*:"
    r"|(?:note|message|notice|instructions?|memo|reminder|directive)s? (?:for|to) (?:the |any |all )?"
    r"(?:ai|assistants?|models?|bots?|llms?|language models?|ai systems?|automated (?:systems?|agents?|readers?|tools?)|"
    r"ai agents?|agents?|crawlers?|chatbots?)"
    r"|(?:ai|assistant|model|bot|llm)s? (?:note|notice|instructions?|directive|only|reminder)\s*:"
    r"|给.{0,8}(?:ai|助手|模型|机器人).{0,8}(?:说明|提示|指令|消息|须知|的话|备注)|致.{0,4}(?:ai|助手|模型|机器人)"
    r"|(?:ai|助手|模型|机器人).{0,4}(?:须知|请注意|专用|备注)|【[^】]{0,8}(?:系统|管理员|指令|重要|官方|ai|通知)[^】]{0,8}】"
    r"|系统(?:消息|通知|指令|公告)\s*[:：]|nota para (?:la |las |los )?(?:ia|asistentes?|modelos?)"
    r"|mensaje (?:del sistema|para (?:la )?ia)|note (?:pour|aux?|à) (?:l'ia|les? assistants?|les modèles|l'assistant)"
    r"|message (?:système|pour l'ia)|hinweis (?:für|an) (?:die ki|assistenten|sprachmodelle|den assistenten)"
    r"|システムメッセージ|aiへの指示|시스템 메시지|ai에게|системное сообщение|для ии"
    r"|[\"']role[\"']\s*:\s*[\"'](?:system|developer|assistant|tool)[\"']",
    )
)

_LATIN_START = re.compile(r"[a-z\u00c0-\u024f\u0400-\u04ff(\\]")
# Word edges for alphabetic fragments: CJK characters count as edges ("AI助手" has the word "ai").
_BEFORE = r"(?<![a-z0-9_\u00c0-\u024f\u0400-\u04ff'])"
_AFTER = r"(?![a-z0-9_\u00c0-\u024f\u0400-\u04ff])"


def _compile(fragments: tuple[str, ...]) -> re.Pattern[str]:
    """One family's fragments as one pattern.

    The fragments that start with a letter share one word-edge lookbehind, written once
    before their alternation rather than once in each of them: a lookbehind only looks at
    the position, so the matches are the same (checked span for span on ~70k sentences of
    the benchmark corpora, and by ``tests/pipeline/test_cues.py``), and Python's engine
    then tests the edge once per position instead of once per fragment: ≈ 6× faster.
    Grouping moves the letter-first fragments before the others in the alternation; that
    could only change which fragment wins at a position where a letter-first fragment and
    another one both match, which the span checks did not find.
    """
    letter_first: list[str] = []
    others: list[str] = []
    for fragment in fragments:
        stem = fragment.endswith("~")
        body = fold_accents(fragment[:-1] if stem else fragment).replace("~", r"\w*")  # inside: any ending
        if _LATIN_START.match(body):
            letter_first.append("(?:" + body + ")" + ("" if stem else _AFTER))
        else:
            others.append(body)
    grouped = [_BEFORE + "(?:" + "|".join(letter_first) + ")"] if letter_first else []
    return re.compile("|".join(grouped + others))


def _compile_each(fragments: tuple[str, ...]) -> re.Pattern[str]:
    """The same family with the edge inside every fragment: the reference ``_compile`` must equal."""
    parts = []
    for fragment in fragments:
        stem = fragment.endswith("~")
        body = fold_accents(fragment[:-1] if stem else fragment).replace("~", r"\w*")
        if _LATIN_START.match(body):
            body = _BEFORE + "(?:" + body + ")" + ("" if stem else _AFTER)
        parts.append(body)
    return re.compile("|".join(parts))


PATTERNS: Final[dict[str, re.Pattern[str]]] = {name: _compile(f) for name, f in FAMILIES.items()}
QUOTED: Final = re.compile(r"“[^”]{4,}”|\"[^\"]{4,}\"|「[^」]{2,}」|『[^』]{2,}』|«[^»]{4,}»|„[^“]{4,}“|`[^`]{4,}`|'[^']{8,}'")
