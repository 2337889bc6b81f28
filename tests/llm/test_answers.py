"""Reading a model's multiple-choice answer: the rules, the LLM extractor behind them, free-text chat."""

import pytest

from llm import client as llm_client
from llm.answers import Method, answer_choice, extract_choice, options_block
from llm.client import LLMError, Turn, chat_text
from llm.models import CallOutcome, LLMCall
from tests.fakes.openai_server import Reply

FOUR = ["a red car", "a blue bicycle", "a red car with a trailer", "nothing at all"]


@pytest.mark.parametrize(
    ("reply", "index", "method"),
    [
        ("B", 1, Method.LEADING),
        ("b", 1, Method.LEADING),
        ("(C)", 2, Method.LEADING),
        ("D. nothing at all", 3, Method.LEADING),
        ("A) a red car", 0, Method.LEADING),
        ("2", 1, Method.LEADING),
        ("**Answer:** C", 2, Method.STATED),
        ("I think the answer is (B), since a bicycle is seen.", 1, Method.STATED),
        ("The correct answer is D because option A never appears.", 3, Method.STATED),
        ("答案是C", 2, Method.STATED),
        ("选项：A", 0, Method.STATED),
        ("Option 4", 3, Method.STATED),
        ("A blue bicycle.", 1, Method.TEXT),
        ("It shows a red car with a trailer, clearly.", 2, Method.TEXT),
        ("Nothing at all", 3, Method.TEXT),
    ],
)
def test_rules_read_common_answer_shapes(reply, index, method):
    found = extract_choice(reply, FOUR)
    assert (found.index, found.method) == (index, method), found


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "   ",
        "A man is walking across the street.",  # an article, not a choice
        "E",  # no fifth option
        "7",
        "The answer is a bit unclear to me.",
        "Either the answer is A or the answer is B.",
        "I cannot tell from the text alone.",
        "a red car or a blue bicycle",  # quotes two options
    ],
)
def test_rules_give_up_rather_than_guess(reply):
    found = extract_choice(reply, FOUR)
    assert found.index is None and found.method == Method.NONE, found


def test_labels_of_the_options_replace_letters_and_numbers():
    labels = ["1", "2", "3"]
    options = ["video_a.mp4", "video_b.mp4", "video_c.mp4"]
    assert extract_choice("2", options, labels=labels).index == 1
    assert extract_choice("The answer is 3.", options, labels=labels).index == 2
    assert extract_choice("B", options, labels=labels).index is None  # no letters when labels are given
    assert options_block(options, labels).splitlines()[0] == "1. video_a.mp4"
    assert options_block(["x", "y"]) == "A. x\nB. y"


def test_the_extractor_steps_in_when_the_rules_fail_and_its_call_is_recorded(db, project, fake_openai):
    fake_openai.script("The reply:", [Reply.json({"choice": "B"})])

    found, steps = answer_choice(
        project=project, text="Hmm, the two-wheeled one I'd say.", question="What passes by?", options=FOUR
    )

    assert (found.index, found.method) == (1, Method.LLM)
    assert [s.method for s in steps] == [Method.NONE, Method.LLM]
    call = LLMCall.objects.get(pk=found.call_id)
    assert call.template_key == "answer_extract" and call.outcome == CallOutcome.OK
    assert "the two-wheeled one" in str(call.request["messages"])


def test_rules_that_succeed_make_no_call(db, project, fake_openai):
    found, steps = answer_choice(project=project, text="C", question="q", options=FOUR)
    assert found.index == 2 and len(steps) == 1
    assert fake_openai.requests() == []


def test_the_extractor_may_find_no_option_and_its_failure_is_not_a_choice(
    db, project, fake_openai, settings, monkeypatch
):
    fake_openai.script("The reply:", [Reply.json({"choice": "none"})])
    found, _ = answer_choice(project=project, text="no idea", question="q", options=FOUR)
    assert found.index is None and found.method == Method.LLM

    settings.LLM_MAX_ATTEMPTS = 2
    monkeypatch.setattr(llm_client, "_sleep", lambda s: None)
    fake_openai.always("The reply:", Reply.status(500))
    found, steps = answer_choice(project=project, text="no idea", question="q", options=FOUR)
    assert found.index is None and "the extractor failed" in found.detail
    assert LLMCall.objects.get(pk=found.call_id).outcome == CallOutcome.ERROR

    found, steps = answer_choice(project=project, text="no idea", question="q", options=FOUR, use_llm=False)
    assert found.index is None and len(steps) == 1


def test_chat_text_sends_turns_with_frames_and_records_the_reply(db, project, fake_openai):
    fake_openai.script("Which one?", [Reply.text("B", usage={"prompt_tokens": 90, "completion_tokens": 1})])

    result = chat_text(
        project=project,
        step="evaluation",
        system="Answer with the option's letter.",
        turns=[
            Turn("user", "First look."),
            Turn("assistant", "OK."),
            Turn("user", "Which one?", images=(b"\xff\xd8jpg",)),
        ],
        params={"temperature": 0},
    )

    assert result.text == "B"
    call = result.call
    assert (call.outcome, call.step, call.prompt_tokens) == (CallOutcome.OK, "evaluation", 90)
    assert call.request["images"]["count"] == 1 and call.request["response_format"] == "text"
    sent = fake_openai.requests(endpoint="chat")[0].body
    assert [m["role"] for m in sent["messages"]] == ["system", "user", "assistant", "user"]
    assert sent["messages"][3]["content"][1]["type"] == "image_url"
    assert "response_format" not in sent


def test_chat_text_empty_answer_is_a_failure_on_record(db, project, fake_openai):
    fake_openai.script(None, [Reply.text("  ")])
    with pytest.raises(LLMError) as caught:
        chat_text(project=project, step="evaluation", system="", turns=[Turn("user", "Which one?")])
    assert "empty" in caught.value.message
    assert caught.value.call.outcome == CallOutcome.INVALID
