import random

from veracity.bench.reading.swaps import SWAP_SUFFIX, swapped_question, swapped_questions
from veracity.reader.features import ReadingExample

CHOPIN = (
    "Chopin left Warsaw in 1830. In Paris he met George Sand, and the two spent a winter in "
    "Majorca. The Conservatory gave him his last report in 1829."
)
TESLA = "Nikola Tesla was born in Smiljan. He moved to New York City and worked for Thomas Edison."


def example(
    question: str, context: str = CHOPIN, title: str = "Frédéric_Chopin", **kw: object
) -> ReadingExample:
    fields: dict[str, object] = {
        "example_id": "q1",
        "source": "squad",
        "language": "en",
        "title": title,
        "context": context,
        "question": question,
        "answers": (("1830", context.find("1830")),),
        "impossible": False,
    }
    fields.update(kw)
    return ReadingExample(**fields)  # type: ignore[arg-type]


def test_a_swap_asks_about_something_the_paragraph_never_mentions() -> None:
    pools = {1: ["Majorca", "Smiljan", "Edison"], 2: ["George Sand", "Nikola Tesla", "Thomas Edison"]}
    for seed in range(20):
        original = example("When did Chopin leave Warsaw?")
        made = swapped_question(original, pools, ["Frédéric Chopin", "Nikola Tesla"], random.Random(seed))
        assert made is not None
        assert made.impossible and made.answers == original.answers
        assert made.example_id == "q1" + SWAP_SUFFIX
        assert made.question != original.question
        replaced = {"Chopin", "Warsaw"} - set(made.question.rstrip("?").split())
        assert len(replaced) == 1
        added = {"Smiljan", "Edison"} & set(made.question.rstrip("?").split())
        assert all(word.lower() not in CHOPIN.lower() for word in added)


def test_years_move_to_a_nearby_year_the_paragraph_lacks() -> None:
    made = swapped_question(example("what happened in 1830?"), {}, [], random.Random(0))
    assert made is not None
    year = int(made.question.split()[-1].rstrip("?"))
    assert year != 1830 and abs(year - 1830) <= 30 and str(year) not in CHOPIN


def test_nothing_to_swap_gives_none() -> None:
    assert swapped_question(example("where did he go?"), {1: ["Smiljan"]}, [], random.Random(0)) is None


def test_names_come_from_other_paragraphs_never_from_a_sentence_opening() -> None:
    examples = [
        example("When did Chopin leave Warsaw?"),
        example("Where was Tesla born?", context=TESLA, title="Nikola_Tesla", example_id="q2"),
        example("Unanswerable?", impossible=True, answers=(), example_id="q3"),
    ]
    made = swapped_questions(examples, share=1.0, seed=0)
    assert {m.example_id for m in made} <= {"q1:swap", "q2:swap"}
    for seed in range(30):
        for m in swapped_questions(examples, share=1.0, seed=seed):
            # "He" opens a sentence of TESLA and "The" one of CHOPIN: never taken as names
            assert " He " not in f" {m.question} " and " The " not in f" {m.question} "


def test_share_zero_makes_none() -> None:
    assert swapped_questions([example("When did Chopin leave Warsaw?")], share=0.0) == []
