"""The MCQ rules as pure functions: every warning and blocker, and the derived question."""

import pytest

from annotator.mcq_checks import (
    LIVIBENCH_RULES,
    LONGVIDEOBENCH_RULES,
    MVPBENCH_RULES,
    DraftMoment,
    DraftVideo,
    MCQDraft,
    content_words,
    mcq_blockers,
    mcq_warnings,
    normalise,
    question_without_span,
    rules_for,
)

QUESTION = "When the chef lifts the pan, what colour is the sauce?"
SPAN = (0, 27)  # "When the chef lifts the pan"
VIDEO = DraftVideo(video_id=1, name="kitchen", duration_s=60.0)


def draft(**overrides) -> MCQDraft:
    """A clean LongVideoBench item: no warning, no blocker."""
    fields = {
        "question": QUESTION,
        "referring_start": SPAN[0],
        "referring_end": SPAN[1],
        "options": ("Red", "Green", "Brown", "White"),
        "correct_index": 0,
        "category": "E2O",
        "videos": (VIDEO,),
        "moments": (DraftMoment(video_id=1, time_s=12.5),),
    }
    return MCQDraft(**(fields | overrides))


def codes(findings) -> list[str]:
    return [f.code for f in findings]


def test_a_clean_item_has_no_finding():
    assert mcq_warnings(draft(), LONGVIDEOBENCH_RULES) == []
    assert mcq_blockers(draft(), LONGVIDEOBENCH_RULES) == []


# --- warnings ------------------------------------------------------------------------------------


def test_duplicate_options_ignore_case_spacing_and_punctuation():
    found = mcq_warnings(draft(options=("Red", "Green", " red! ", "White")), LONGVIDEOBENCH_RULES)
    assert codes(found) == ["duplicate_options"]
    assert found[0].options == (0, 2)
    assert found[0].message == "Options 1 and 3 are the same once case and punctuation are ignored."


def test_near_duplicate_options_by_similarity():
    options = ("A red cube slides left", "A red cube slides left.", "A blue ball", "A green cone")
    # The trailing dot normalises away: that pair is a duplicate, not "near".
    assert codes(mcq_warnings(draft(options=options), LONGVIDEOBENCH_RULES)) == ["duplicate_options"]

    options = ("The red cube slides left", "The red cubes slide left", "A blue ball", "A green cone")
    found = mcq_warnings(draft(options=options), LONGVIDEOBENCH_RULES)
    assert codes(found) == ["near_duplicate_options"]
    assert found[0].options == (0, 1)
    assert "nearly the same (9" in found[0].message


def test_options_that_differ_in_a_number_are_not_near_duplicates():
    options = ("15 minutes", "16 minutes", "20 minutes", "2 hours")
    assert mcq_warnings(draft(options=options), LONGVIDEOBENCH_RULES) == []


def test_the_correct_option_longest_by_a_margin():
    options = ("A bright crimson glaze over noodles", "Green", "Brown", "White")
    found = mcq_warnings(draft(options=options), LONGVIDEOBENCH_RULES)
    assert codes(found) == ["correct_longest"]
    assert found[0].options == (0,)
    # Longest by a few letters only is normal.
    assert mcq_warnings(draft(options=("Crimson", "Green", "Brown", "White")), LONGVIDEOBENCH_RULES) == []
    # Longest when a distractor is about as long: fine too.
    options = ("A red sauce poured slowly", "A green sauce poured fast", "Brown", "White")
    assert mcq_warnings(draft(options=options), LONGVIDEOBENCH_RULES) == []


def test_no_moment_stamped():
    found = mcq_warnings(draft(moments=()), LONGVIDEOBENCH_RULES)
    assert codes(found) == ["no_moment"]
    # LiViBench and MVPBench questions point at no moment.
    assert mcq_warnings(draft(moments=()), LIVIBENCH_RULES) == []


def test_moment_outside_its_video():
    moments = (DraftMoment(video_id=1, time_s=12.0), DraftMoment(video_id=1, time_s=61.5))
    found = mcq_warnings(draft(moments=moments), LONGVIDEOBENCH_RULES)
    assert codes(found) == ["moment_outside_video"]
    assert found[0].moments == (1,)
    assert found[0].message == "Moment 2 at 01:01.500 is outside video kitchen (0 – 01:00.000)."
    # At the very end is inside; an unknown duration cannot be checked.
    assert mcq_warnings(draft(moments=(DraftMoment(1, 60.0),)), LONGVIDEOBENCH_RULES) == []
    unknown = DraftVideo(video_id=1, name="kitchen", duration_s=None)
    assert mcq_warnings(draft(videos=(unknown,), moments=(DraftMoment(1, 999.0),)), LONGVIDEOBENCH_RULES) == []


def test_moment_on_a_video_the_question_does_not_use():
    found = mcq_warnings(draft(moments=(DraftMoment(video_id=7, time_s=1.0),)), LONGVIDEOBENCH_RULES)
    assert codes(found) == ["moment_foreign_video"]


def test_referring_query_missing():
    found = mcq_warnings(draft(referring_start=None, referring_end=None), LONGVIDEOBENCH_RULES)
    assert codes(found) == ["referring_missing"]
    # Only LongVideoBench-style items need one.
    assert mcq_warnings(draft(referring_start=None, referring_end=None), LIVIBENCH_RULES) == []


@pytest.mark.parametrize("span", [(20, 200), (5, 5), (-1, 4), (10, None), (28, 29)])
def test_referring_query_not_inside_the_question(span):
    found = mcq_warnings(draft(referring_start=span[0], referring_end=span[1]), LONGVIDEOBENCH_RULES)
    assert codes(found) == ["referring_outside"]  # (28, 29) is the space after the comma: no words


def test_answer_words_leaked_into_the_question():
    question = "When the chef lifts the pan, what colour is the tomato sauce?"
    options = ("Tomato red", "Leaf green", "Dark brown", "Snow white")
    found = mcq_warnings(draft(question=question, options=options), LONGVIDEOBENCH_RULES)
    assert codes(found) == ["answer_leaked"]
    assert found[0].message.startswith('The question gives the answer away: "tomato" appears')
    # A word every option shares tells nothing: no leak.
    options = ("Tomato red", "Tomato green", "Tomato brown", "Tomato white")
    assert mcq_warnings(draft(question=question, options=options), LONGVIDEOBENCH_RULES) == []
    # Function words never count.
    options = ("The red", "Green", "Brown", "White")
    assert mcq_warnings(draft(options=options), LONGVIDEOBENCH_RULES) == []


def test_answer_leak_in_chinese_text_is_found_inside_runs_of_characters():
    question = "当厨师举起锅时，红色的酱汁是什么颜色？"
    options = ("红色", "绿色", "棕色", "白色")
    found = mcq_warnings(
        draft(question=question, referring_start=0, referring_end=7, options=options), LONGVIDEOBENCH_RULES
    )
    assert codes(found) == ["answer_leaked"]


def test_flagged_video_is_warned():
    video = DraftVideo(video_id=1, name="kitchen", duration_s=60.0, unusable="Still frames / no motion")
    found = mcq_warnings(draft(videos=(video,)), LONGVIDEOBENCH_RULES)
    assert codes(found) == ["video_unusable"]
    assert "Still frames" in found[0].message


def test_label_options_skip_text_checks():
    videos = (
        DraftVideo(1, "ref", role="reference", duration_s=10.0),
        DraftVideo(2, "a", role="candidate", duration_s=10.0),
        DraftVideo(3, "b", role="candidate", duration_s=10.0),
    )
    item = draft(
        question="<video> Which candidate matches? 1. <video> 2. <video>",
        referring_start=None,
        referring_end=None,
        options=("1", "2"),
        correct_index=1,
        category="",
        videos=videos,
        moments=(),
    )
    rules = rules_for(kind="svbench", multi_video=True, has_categories=False)
    assert rules.label_options
    assert mcq_warnings(item, rules) == []
    assert mcq_blockers(item, rules) == []


# --- blockers ------------------------------------------------------------------------------------


def test_blockers_list_every_missing_piece():
    item = draft(question=" ", options=("Red", "", "Brown"), correct_index=None, category="")
    found = mcq_blockers(item, LONGVIDEOBENCH_RULES)
    assert codes(found) == ["question_empty", "too_few_options", "empty_option", "no_correct", "no_category"]
    assert found[1].message == "Give at least 4 options; there are 3."
    assert found[2].message == "Option 2 is empty: fill in or remove." and found[2].options == (1,)


def test_too_many_options_and_a_correct_index_out_of_range():
    found = mcq_blockers(draft(options=tuple("abcdef"), correct_index=6), LONGVIDEOBENCH_RULES)
    assert codes(found) == ["too_many_options", "correct_out_of_range"]


def test_multi_video_items_need_a_reference_candidates_and_one_label_each():
    ref = DraftVideo(1, "ref", role="reference")
    cands = (DraftVideo(2, "a", role="candidate"), DraftVideo(3, "b", role="candidate"))
    item = draft(options=("1", "2", "3"), videos=(ref, *cands), category="")
    assert codes(mcq_blockers(item, MVPBENCH_RULES)) == ["no_category", "options_not_candidates"]
    assert codes(mcq_blockers(draft(options=("1", "2"), videos=(ref,)), MVPBENCH_RULES)) == ["no_candidates"]
    assert codes(mcq_blockers(draft(options=("1", "2"), videos=cands), MVPBENCH_RULES)) == ["no_reference"]


def test_rules_follow_the_kind_and_the_roles():
    assert rules_for(kind="longvideobench", multi_video=False, has_categories=True) == LONGVIDEOBENCH_RULES
    assert rules_for(kind="livibench", multi_video=False, has_categories=True) == LIVIBENCH_RULES
    assert rules_for(kind="mvpbench", multi_video=False, has_categories=True).label_options
    assert not rules_for(kind="generic", multi_video=False, has_categories=False).category_required


# --- text ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "question, query, expected",
    [
        (QUESTION, "When the chef lifts the pan", "What colour is the sauce?"),
        (
            "What colour is the cube after the chef lifts the pan?",
            "after the chef lifts the pan",
            "What colour is the cube?",
        ),
        (
            "What colour is the sauce, when the chef lifts the pan?",
            "when the chef lifts the pan",
            "What colour is the sauce?",
        ),
        (
            'Right after the host says "the signal is gone", what appears?',
            'Right after the host says "the signal is gone"',
            "What appears?",
        ),
        ("In the kitchen scene the chef  holds what?", "In the kitchen scene", "The chef holds what?"),
        ("当厨师举起锅时，酱汁是什么颜色？", "当厨师举起锅时", "酱汁是什么颜色？"),
        ("酱汁在厨师举起锅时是什么颜色？", "在厨师举起锅时", "酱汁是什么颜色？"),
        ("No span here?", None, "No span here?"),
    ],
)
def test_question_without_the_referring_query(question, query, expected):
    start = question.index(query) if query else None
    end = start + len(query) if query else None
    assert question_without_span(question, start, end) == expected


def test_normalise_and_content_words():
    assert normalise("  A Red-Cube!  ") == "a red cube"
    assert content_words("The 3 red cubes of the chef") == ["3", "red", "cubes", "chef"]
