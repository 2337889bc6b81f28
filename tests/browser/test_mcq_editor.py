"""Headless Chromium edits an MCQ beside a real generated video: referring query marked, moments
stamped from the player, options and the correct one by key, autosave, conflict, submit."""

import json

import pytest
from playwright.sync_api import expect

from annotator.mcq_checks import (
    LIVIBENCH_RULES,
    LONGVIDEOBENCH_RULES,
    MVPBENCH_RULES,
    DraftMoment,
    DraftVideo,
    MCQDraft,
    mcq_blockers,
    mcq_warnings,
    question_without_span,
)
from annotator.mcqs import mcq_create, mcq_save
from annotator.models import MCQ, ItemStatus, ReferredMoment, ReviewEvent, VideoRole
from tests import factories
from tests.browser.helpers import login, playable_video
from videos.models import Video
from videos.synthetic import SceneSpec, make_scene_video

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FPS = 25
SCENES = (2.0, 2.0, 2.0)  # 6 s, cuts at 2 and 4 s
QUESTION = "When the red box slides right, what colour is the background?"
QUERY = "When the red box slides right"


@pytest.fixture(scope="module")
def scene_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("mcq") / "scenes.mp4"
    make_scene_video(path, [SceneSpec(d) for d in SCENES], width=320, height=180, fps=FPS, audio=True)
    return path


@pytest.fixture
def setup(scene_file, tmp_path):
    project = factories.ProjectFactory(name="Kitchen", slug="kitchen")
    people = factories.people_for(project)
    video = playable_video(project, scene_file, tmp_path, durations=SCENES, fps=FPS, audio=True)
    mcq = mcq_create(project=project, videos=[(video, VideoRole.MAIN)], user=people["annotator"])
    return project, people, video, mcq



def open_editor(page, live_server, mcq):
    page.goto(f"{live_server.url}/p/{mcq.project.slug}/mcqs/{mcq.pk}/")
    page.wait_for_function(
        "() => window.VidQA && VidQA.mcqEditor && VidQA.player && VidQA.player.video.readyState >= 1"
    )


def seek(page, t):
    page.evaluate(f"() => VidQA.player.seek({t})")
    page.wait_for_function(f"() => Math.abs(VidQA.player.currentTime - {t}) < 0.001 && !VidQA.player.video.seeking")


def wait_saved(page):
    page.wait_for_function(
        "() => !VidQA.mcqEditor.doc.dirty && document.getElementById('mcq-save-state').dataset.state === 'saved'"
    )


def test_an_mcq_is_written_beside_the_player_and_submitted(live_server, page, setup):
    _, people, video, mcq = setup
    login(page, live_server, people["annotator"])
    open_editor(page, live_server, mcq)
    assert page.evaluate("() => VidQA.player.video.error") is None

    # The question, then its referring query: selected in the box, marked with r once out of it.
    page.fill("#mcq-question", QUESTION)
    page.evaluate(f"() => document.getElementById('mcq-question').setSelectionRange(0, {len(QUERY)})")
    page.keyboard.press("Escape")  # leave the text box: single keys are shortcuts again
    page.keyboard.press("r")
    expect(page.locator("#mcq-referring")).to_have_text(QUERY)
    expect(page.locator("#mcq-wo")).to_have_value("What colour is the background?")
    expect(page.locator("#mcq-wo-mode")).to_have_text("(derived from the question)")

    # Options, then the correct one by its number key.
    for i, text in enumerate(["Black", "Blue", "White", "Green"]):
        page.locator("#mcq-options .option-text").nth(i).fill(text)
    page.keyboard.press("Escape")
    page.keyboard.press("2")
    expect(page.locator("#mcq-options li.correct .option-text")).to_have_value("Blue")
    page.select_option("#mcq-category", "S2E")
    expect(page.locator("#mcq-level")).to_have_text("L1-Perception")
    expect(page.locator("#mcq-warnings li[data-code=no_moment]")).to_have_count(1)

    # Two moments from the player: s here, and the player's own m.
    page.locator("h1").click()  # focus out of the select
    seek(page, 1.0)
    page.keyboard.press("s")
    seek(page, 3.2)
    page.keyboard.press("m")
    expect(page.locator("#mcq-moments li")).to_have_count(2)
    expect(page.locator("#mcq-moments li").nth(1)).to_contain_text("00:03.200 · frame 80")
    expect(page.locator("#mcq-warnings li")).to_have_count(0)
    expect(page.locator("#mcq-blockers li")).to_have_count(0)

    # A moment's button seeks the player back to it.
    page.locator("#mcq-moments .moment-seek").first.click()
    page.wait_for_function("() => Math.abs(VidQA.player.currentTime - 1.0) < 0.001")

    wait_saved(page)
    stored = MCQ.objects.get(pk=mcq.pk)
    assert stored.question == QUESTION
    assert (stored.referring_start, stored.referring_end) == (0, len(QUERY))
    assert stored.referring_query == QUERY
    assert stored.question_wo_referring_query == "What colour is the background?"
    assert stored.options == ["Black", "Blue", "White", "Green"] and stored.correct_index == 1
    assert (stored.category, stored.level) == ("S2E", "L1-Perception")
    moments = list(ReferredMoment.objects.filter(mcq=mcq).values_list("video_id", "time_s", "frame_index"))
    assert moments == [(video.pk, 1.0, 25), (video.pk, 3.2, 80)]

    # Submit with Ctrl+Enter from inside a text box.
    page.locator("#mcq-options .option-text").first.click()
    page.keyboard.press("Control+Enter")
    # MCQs skip the LLM judge unless the project's gate covers them: straight on to examiners.
    expect(page.locator("#mcq-message")).to_have_text(
        "MCQ submitted and passed on to examiners. Press n for the next item."
    )
    expect(page.locator("#mcq-status")).to_have_text("Examining")
    stored.refresh_from_db()
    assert stored.status == ItemStatus.EXAMINING
    event = ReviewEvent.objects.get(mcq=mcq, to_status=ItemStatus.SUBMITTED)
    assert event.actor == people["annotator"] and event.from_status == ItemStatus.ANNOTATING
    expect(page.locator("#mcq-question")).to_have_attribute("readonly", "")

    # n opens the next item waiting for annotation.
    # (Their own new item: one someone else has started writing is that person's to finish.)
    following = mcq_create(project=mcq.project, videos=[(video, VideoRole.MAIN)], user=people["annotator"])
    page.locator("h1").click()
    page.keyboard.press("n")
    page.wait_for_url(f"**/mcqs/{following.pk}/")


def test_marking_in_the_highlighted_preview_and_editing_around_the_span(live_server, page, setup):
    _, people, _, mcq = setup
    login(page, live_server, people["annotator"])
    open_editor(page, live_server, mcq)
    page.fill("#mcq-question", "What colour is the background after the red box slides right?")
    # Select words in the preview with the mouse's equivalent (a DOM range), then the button.
    page.evaluate(
        """() => {
        const node = document.getElementById('mcq-question-preview').firstChild;
        const text = node.textContent, start = text.indexOf(' after the red box');
        const range = document.createRange();
        range.setStart(node, start); range.setEnd(node, start + ' after the red box slides right'.length);
        const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
    }"""
    )
    page.click("#mcq-mark-referring")
    expect(page.locator("#mcq-referring")).to_have_text("after the red box slides right")  # the leading space trimmed
    expect(page.locator("#mcq-wo")).to_have_value("What colour is the background?")
    # Typing before the span moves it; the derived text follows.
    page.locator("#mcq-question").press("Home")
    page.keyboard.type("Look: ")
    expect(page.locator("#mcq-referring")).to_have_text("after the red box slides right")
    expect(page.locator("#mcq-wo")).to_have_value("Look: What colour is the background?")
    # A hand-written version stops following the question until derived again.
    page.fill("#mcq-wo", "Which colour is the background?")
    expect(page.locator("#mcq-wo-mode")).to_have_text("(edited by hand)")
    wait_saved(page)
    stored = MCQ.objects.get(pk=mcq.pk)
    assert stored.referring_query == "after the red box slides right"
    assert stored.question_wo_referring_query == "Which colour is the background?"
    page.click("#mcq-wo-derive")
    expect(page.locator("#mcq-wo")).to_have_value("Look: What colour is the background?")
    wait_saved(page)
    assert MCQ.objects.get(pk=mcq.pk).question_wo_referring_query == "Look: What colour is the background?"
    # Ctrl+z outside a text box brings back the version before: the hand-written text.
    page.locator("h1").click()
    page.keyboard.press("Control+z")
    expect(page.locator("#mcq-wo")).to_have_value("Which colour is the background?")
    expect(page.locator("#mcq-wo-mode")).to_have_text("(edited by hand)")
    expect(page.locator("#mcq-message")).to_contain_text("Undone")
    assert MCQ.objects.get(pk=mcq.pk).question_wo_referring_query == "Which colour is the background?"


def test_a_conflict_shows_both_versions_and_the_merge_loses_nothing(live_server, page, setup):
    _, people, video, mcq = setup
    login(page, live_server, people["annotator"])
    open_editor(page, live_server, mcq)
    # Someone else saves version 2 meanwhile.
    mcq_save(
        mcq=MCQ.objects.get(pk=mcq.pk),
        expected_version=1,
        user=people["admin"],
        question="Their question?",
        options=["A", "B", "C", "D"],
        correct_index=2,
        category="E2O",
    )
    page.fill("#mcq-question", "My question about the red box?")
    expect(page.locator("#mcq-conflict")).to_be_visible()
    expect(page.locator("#mcq-save-state")).to_have_attribute("data-state", "conflict")
    question_row = page.locator("#mcq-conflict tr[data-field=question]")
    expect(question_row.locator("td.conflict-text").nth(0)).to_have_text("My question about the red box?")
    expect(question_row.locator("td.conflict-text").nth(1)).to_have_text("Their question?")
    # Keep my question, take their options and category.
    page.locator("#mcq-conflict tr[data-field=options] .conflict-take").click()
    page.locator("#mcq-conflict tr[data-field=category] .conflict-take").click()
    page.click("#mcq-conflict-save")
    wait_saved(page)
    stored = MCQ.objects.get(pk=mcq.pk)
    assert stored.version == 3
    assert stored.question == "My question about the red box?"
    assert stored.options == ["A", "B", "C", "D"] and stored.correct_index == 2 and stored.category == "E2O"


def test_unsaved_text_survives_a_reload(live_server, page, setup):
    _, people, _, mcq = setup
    login(page, live_server, people["annotator"])
    open_editor(page, live_server, mcq)
    # The server is unreachable for saves: the text stays in the tab and comes back after a reload.
    page.route("**/save/", lambda route: route.abort())
    page.fill("#mcq-question", "Kept across the reload?")
    expect(page.locator("#mcq-save-state")).to_have_attribute("data-state", "offline")
    page.unroute("**/save/")
    page.reload()
    page.wait_for_function("() => window.VidQA && VidQA.mcqEditor")
    expect(page.locator("#mcq-question")).to_have_value("Kept across the reload?")
    wait_saved(page)
    assert MCQ.objects.get(pk=mcq.pk).question == "Kept across the reload?"


def test_flagging_the_video_unusable_warns_in_the_editor(live_server, page, setup):
    _, people, video, mcq = setup
    login(page, live_server, people["annotator"])
    open_editor(page, live_server, mcq)
    page.locator(".unusable-flag summary").click()
    page.locator(".unusable-flag input[value=still_frames]").check()
    page.locator(".unusable-flag textarea[name=note]").fill("frozen picture")
    page.locator(".unusable-flag button[type=submit]").click()
    expect(page.locator(".unusable-flag")).to_contain_text(
        "Flagged unusable: Still frames / no motion — frozen picture"
    )
    expect(page.locator("#mcq-warnings li[data-code=video_unusable]")).to_have_count(1)
    assert Video.objects.get(pk=video.pk).unusable_reason == "still_frames"


# --- the browser's checks give the server's answers ------------------------------------------------


def _draft_json(d: MCQDraft) -> dict:
    return {
        "question": d.question,
        "referring_start": d.referring_start,
        "referring_end": d.referring_end,
        "options": list(d.options),
        "correct_index": d.correct_index,
        "category": d.category,
        "videos": [
            {"video_id": v.video_id, "name": v.name, "role": v.role, "duration_s": v.duration_s, "unusable": v.unusable}
            for v in d.videos
        ],
        "moments": [{"video_id": m.video_id, "time_s": m.time_s} for m in d.moments],
    }


V = DraftVideo(video_id=1, name="kitchen", duration_s=60.0)
CASES = [
    MCQDraft(QUESTION, 0, len(QUERY), ("Black", "Dark blue", "White", "Green"), 1, "S2E", (V,), (DraftMoment(1, 3.0),)),
    MCQDraft("", None, None, ("", "x", " X! "), None, "", (V,), ()),
    MCQDraft(QUESTION, 5, 500, ("a" * 3, "b" * 20, "c", "d"), 1, "S2E", (V,), (DraftMoment(1, 61.0005),)),
    MCQDraft(QUESTION, 0, 4, tuple("abcdef"), 9, "E2O", (V,), (DraftMoment(2, 1.0),)),
    MCQDraft(
        "Which box is the red box with a stripe?",
        None,
        None,
        ("The red box with a stripe", "The red boxes with stripes", "15 minutes", "16 minutes"),
        0,
        "E2O",
        (DraftVideo(1, "k", duration_s=None, unusable="Still frames"),),
        (),
    ),
    MCQDraft("🍳🍳 当厨师举起锅时，红色的酱汁是什么颜色？", 2, 9, ("红色", "绿色", "棕色", "白色"), 0, "E2O", (V,), ()),
    MCQDraft("Ünïcode façade: which café?", 0, 7, ("Café Müller", "cafe muller", "Ärger", "Öl"), 0, "", (V,), ()),
    MCQDraft(
        "<video> Which one? 1. <video> 2. <video>",
        None,
        None,
        ("1", "2", "3"),
        1,
        "",
        (DraftVideo(1, "r", role="reference"), DraftVideo(2, "a", role="candidate")),
        (),
    ),
]
SPANS = [
    (QUESTION, QUERY),
    ("What colour, when the chef lifts the pan, is the sauce?", "when the chef lifts the pan"),
    ("What colour is the sauce, when the chef lifts the pan?", "when the chef lifts the pan"),
    ("当厨师举起锅时，酱汁是什么颜色？", "当厨师举起锅时"),
    ("酱汁在厨师举起锅时是什么颜色？", "在厨师举起锅时"),
    ("🍳 ß-Frage: wann? was ist das?", "🍳 ß-Frage: wann?"),
    ("Ends with the query when the pan lifts,\n", "when the pan lifts"),
]


def test_the_browser_checks_match_mcq_checks(live_server, page, setup):
    _, people, _, mcq = setup
    login(page, live_server, people["annotator"])
    open_editor(page, live_server, mcq)
    for rules in (LONGVIDEOBENCH_RULES, LIVIBENCH_RULES, MVPBENCH_RULES):
        expected = [
            {
                "warnings": [f.as_dict() for f in mcq_warnings(d, rules)],
                "blockers": [f.as_dict() for f in mcq_blockers(d, rules)],
            }
            for d in CASES
        ]
        got = page.evaluate(
            "([cases, rules]) => cases.map((d) => ({warnings: VidQA.mcqChecks.warnings(d, rules),"
            " blockers: VidQA.mcqChecks.blockers(d, rules)}))",
            [[_draft_json(d) for d in CASES], rules.as_dict()],
        )
        assert got == expected, json.dumps(rules.as_dict())
    for question, query in SPANS:
        start = question.index(query)
        cp_start, cp_end = len(question[:start]), len(question[:start]) + len(query)
        got = page.evaluate("([q, a, b]) => VidQA.mcqText.questionWithoutSpan(q, a, b)", [question, cp_start, cp_end])
        assert got == question_without_span(question, cp_start, cp_end), question
