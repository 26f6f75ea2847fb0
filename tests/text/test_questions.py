"""Question analysis: content terms, term roles, answer types, sub-questions, languages."""

from __future__ import annotations

import pytest

from veracity.model.errors import ValidationError
from veracity.text.answer_types import answer_type_match
from veracity.text.language import detect_language
from veracity.text.question_surface import read_surface
from veracity.text.questions import (
    MAX_QUESTION_CHARS,
    MAX_SUBQUESTIONS,
    AnswerType,
    TermRole,
    analyze_question,
    check_question,
    split_subquestions,
)
from veracity.text.tokens import tokenize


def _roles(question: str) -> dict[str, TermRole]:
    (sub,) = split_subquestions(question)
    return dict(zip(sub.terms, sub.roles, strict=True))


def test_english_question_words_and_auxiliaries_are_not_terms() -> None:
    roles = _roles("How do I keep using the SAML login after what our admin did?")
    assert {"how", "do", "i", "what", "did", "the"}.isdisjoint(roles)
    assert roles["saml"] is TermRole.ASKED and roles["login"] is TermRole.ASKED


def test_terms_are_stemmed_like_the_index() -> None:
    (sub,) = split_subquestions("Which settings control retries?")
    assert set(sub.terms) <= set(tokenize("the setting that controls a retry"))


def test_spoken_question_words_and_contractions_are_not_terms() -> None:
    assert {"为啥", "干嘛", "的话", "就行"}.isdisjoint(_roles("这个选项是干嘛的？不开的话就行吗，为啥？"))
    assert "选项" in _roles("这个选项是干嘛的？")
    assert {"wont", "cant", "dont"}.isdisjoint(_roles("Why won't the proxy work, I can't and don't know?"))


def test_contractions_stay_one_token() -> None:
    assert "won" not in tokenize("It won't start") and "t" not in tokenize("It won't start")


def test_answer_type_nouns_and_asker_nouns_weigh_less() -> None:
    assert _roles("In what country is Normandy located?")["countri"] is TermRole.ANSWER_TYPE
    assert _roles("潘淑是哪个国家的人？")["国家"] is TermRole.ANSWER_TYPE
    assert _roles("Can our company keep SAML?")["compani"] is TermRole.ASKER
    assert _roles("我们公司还能用 SAML 吗？")["公司"] is TermRole.ASKER


def test_the_adjective_after_how_names_the_answer_kind() -> None:
    roles = _roles("How long are backups kept on the Team plan?")
    assert roles["long"] is TermRole.ANSWER_TYPE and roles["backup"] is TermRole.ASKED
    assert _roles("How far is the data centre from Paris?")["far"] is TermRole.ANSWER_TYPE


def test_a_leading_condition_is_premise() -> None:
    roles = _roles("如果成员数超过上限，多出来的成员会被自动删除吗？")
    assert roles["上限"] is TermRole.PREMISE and roles["成员"] is TermRole.ASKED
    roles = _roles("If the quota is exceeded, are members deleted?")
    assert roles["quota"] is TermRole.PREMISE and roles["delet"] is TermRole.ASKED


def test_verbs_of_a_chinese_yes_no_question_may_be_answered_by_another_verb() -> None:
    roles = _roles("超额成员会在 30 天后被自动删除吗？")
    assert roles["删除"] is TermRole.PREDICATE and roles["成员"] is TermRole.ASKED
    assert _roles("超额成员会被怎么处理？").get("处理") is not TermRole.PREDICATE


def test_sentences_do_not_end_at_initials_or_abbreviations() -> None:
    from veracity.text.sentences import split_sentences

    text = "由汤玛斯·R. Holtz 建立。Use e.g. a key. It ended."
    assert [text[a:b] for a, b in split_sentences(text)] == [
        "由汤玛斯·R. Holtz 建立。",
        "Use e.g. a key.",
        "It ended.",
    ]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Who founded the company?", AnswerType.PERSON),
        ("When were the Normans in Normandy?", AnswerType.TIME),
        ("What year did it open?", AnswerType.TIME),
        ("How many members can a team have?", AnswerType.NUMBER),
        ("How long are backups kept?", AnswerType.NUMBER),
        ("Where is the config file?", AnswerType.PLACE),
        ("How do I rotate the key?", AnswerType.PROCEDURE),
        ("Why does the sync fail?", AnswerType.REASON),
        ("Is SAML supported?", AnswerType.YES_NO),
        ("What is the default port?", AnswerType.ENTITY),
        ("谁创办了这家公司？", AnswerType.PERSON),
        ("哪一年成立的？", AnswerType.TIME),
        ("团队最多有多少成员？", AnswerType.NUMBER),
        ("配置文件在哪里？", AnswerType.PLACE),
        ("怎么轮换密钥？", AnswerType.PROCEDURE),
        ("为什么同步失败？", AnswerType.REASON),
        ("3.2 支持 SAML 吗？", AnswerType.YES_NO),
        ("改了配置没生效，咋回事？", AnswerType.REASON),
        ("变量是 undefined，为啥？", AnswerType.REASON),
        ("端口被占了咋办？", AnswerType.PROCEDURE),
    ],
)
def test_expected_answer_type(question: str, expected: AnswerType) -> None:
    (sub,) = split_subquestions(question)
    assert sub.answer_type is expected


def test_context_sentences_are_not_subquestions() -> None:
    subs = split_subquestions(
        "We run 2.8 with SAML. After the upgrade, can we keep SAML? Will members be deleted?"
    )
    assert [s.text for s in subs] == ["After the upgrade, can we keep SAML?", "Will members be deleted?"]
    subs = split_subquestions("我们正在使用 2.8。升级后还能用 SAML 吗？多出来的成员会被删除吗？")
    assert len(subs) == 2 and all(s.language == "zh" for s in subs)


def test_a_text_without_question_mark_is_one_subquestion() -> None:
    (sub,) = split_subquestions("starship migrate sso --to oidc")
    assert "--to" in sub.terms and "oidc" in sub.terms


@pytest.mark.parametrize(
    ("text", "language"),
    [("升级到 3.2 以后 Team 计划还能用 SAML 吗", "zh"), ("How do I rotate keys?", "en"), ("12345", "und")],
)
def test_detect_language(text: str, language: str) -> None:
    assert detect_language(text) == language


@pytest.mark.parametrize(
    ("kind", "sentence", "question", "expected"),
    [
        (AnswerType.TIME, "The Normans arrived in the 10th century.", "When did the Normans arrive?", 1.0),
        (AnswerType.TIME, "The Normans arrived by sea.", "When did the Normans arrive?", 0.0),
        (AnswerType.NUMBER, "默认端口是 5173。", "默认端口是多少？", 1.0),
        (AnswerType.NUMBER, "Version 3.2 adds SSO.", "What does version 3.2 add in 3.2?", 0.0),
        (AnswerType.PERSON, "The abbey was founded by Richard of Normandy.", "Who founded the abbey?", 1.0),
        (AnswerType.REASON, "It fails because the token expired.", "Why does it fail?", 1.0),
        (AnswerType.YES_NO, "Team supports OIDC only.", "Does Team support SAML?", 0.5),
    ],
)
def test_answer_type_match(kind: AnswerType, sentence: str, question: str, expected: float) -> None:
    assert answer_type_match(kind, sentence, read_surface(question).casefolded) == expected


def test_a_function_character_glued_to_a_name_is_not_part_of_the_term() -> None:
    # rjieba reads "刘七是" and "黄华麒是" as one noun; the evidence says 刘七 and 黄华麒
    assert split_subquestions("刘七是怎么死的？")[0].terms == ("刘七",)
    assert "黄华麒" in split_subquestions("黄华麒是哪个大学毕业的？")[0].terms
    # words that end in such a character but are not nouns stay whole
    assert "现在" in split_subquestions("白岳峰现在在哪里工作？")[0].terms


def test_a_question_is_read_once_into_everything_the_stages_need() -> None:
    analysed = analyze_question("If the quota is exceeded, is the gateway restarted? Who restarts it?")
    assert analysed.language == "en"
    assert [s.text for s in analysed.subquestions] == [
        "If the quota is exceeded, is the gateway restarted?",
        "Who restarts it?",
    ]
    assert analysed.answer_types[1] is AnswerType.PERSON
    assert analysed.premise_terms == ("quota", "exceed")  # the scene the first part sets
    assert list(analysed.terms) == sorted({t for s in analysed.subquestions for t in s.terms})
    assert analysed.tokens == tuple(tokenize(analysed.text))
    assert ("restarted", "restart") in analysed.words
    assert analysed.subquestions[1].surface.wh_en == ("restart",)  # the word after "who"


def test_a_repeated_question_is_one_sub_question() -> None:
    subs = split_subquestions("v-show 和 v-if 有什么区别？" * 50)
    assert [s.text for s in subs] == ["v-show 和 v-if 有什么区别？"]
    check_question("v-show 和 v-if 有什么区别？" * 50)  # 650 characters of one question: taken


def test_a_question_too_long_or_with_too_many_parts_is_refused_with_the_limit() -> None:
    with pytest.raises(ValidationError, match=f"at most {MAX_QUESTION_CHARS:,} are taken"):
        check_question("快照" * (MAX_QUESTION_CHARS // 2 + 1))
    many = "".join(f"第 {n} 个快照保留多久？" for n in range(MAX_SUBQUESTIONS + 1))
    with pytest.raises(ValidationError, match=f"holds {MAX_SUBQUESTIONS + 1} questions"):
        check_question(many)
    check_question("".join(f"第 {n} 个快照保留多久？" for n in range(MAX_SUBQUESTIONS)))
    with pytest.raises(ValidationError, match="the query is empty"):
        check_question("  ", "query")
