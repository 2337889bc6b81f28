"""MCQ services: create, the one version-checked save, submit, and the next item."""

import pytest

from annotator.concurrency import StaleVersion
from annotator.mcqs import (
    MCQInvalid,
    MCQNotEditable,
    MCQNotReady,
    NothingToUndo,
    category_choices,
    mcq_create,
    mcq_next,
    mcq_save,
    mcq_submit,
    mcq_undo,
)
from annotator.models import MCQ, ItemStatus, MCQVideo, Origin, ReferredMoment, ReviewEvent, VideoRole
from projects.models import ProjectKind
from tests import factories

pytestmark = pytest.mark.django_db

QUESTION = "When the chef lifts the pan, what colour is the sauce?"


@pytest.fixture
def video(project):
    return factories.VideoFactory(project=project, name="kitchen", duration_s=60.0, fps=25.0)


@pytest.fixture
def mcq(project, video, people):
    return mcq_create(project=project, videos=[(video, VideoRole.MAIN)], user=people["annotator"])


def fields(video, **overrides) -> dict:
    """Everything the editor sends for a complete LongVideoBench item."""
    values = {
        "question": QUESTION,
        "referring_start": 0,
        "referring_end": 27,
        "question_wo_referring_query": None,
        "options": ["Red", "Green", "Brown", "White"],
        "correct_index": 0,
        "category": "E2O",
        "level": "",
        "videos": [{"video_id": video.pk, "role": "main", "order": 0}],
        "moments": [{"video_id": video.pk, "time_s": 12.5, "frame_index": 0}],
    }
    return values | overrides


def save(mcq, user, video, **overrides):
    return mcq_save(mcq=mcq, expected_version=mcq.version, user=user, **fields(video, **overrides))


# --- create ---------------------------------------------------------------------------------------


def test_create_starts_an_empty_item_in_annotation_and_logs_who(mcq, people, video):
    assert mcq.status == ItemStatus.ANNOTATING and mcq.origin == Origin.HUMAN
    assert mcq.author == people["annotator"] and mcq.version == 1
    assert mcq.options == ["", "", "", ""]
    assert [(link.video, link.role, link.order) for link in mcq.mcq_videos.all()] == [(video, "main", 0)]
    event = ReviewEvent.objects.get(mcq=mcq)
    assert (event.from_status, event.to_status, event.actor) == ("draft", "annotating", people["annotator"])


def test_create_multi_video_labels_one_option_per_candidate(project, people):
    ref, a, b = (factories.VideoFactory(project=project) for _ in range(3))
    mcq = mcq_create(
        project=project,
        videos=[(ref, VideoRole.REFERENCE), (a, VideoRole.CANDIDATE), (b, VideoRole.CANDIDATE)],
        user=people["annotator"],
    )
    assert mcq.options == ["1", "2"]
    assert list(mcq.mcq_videos.values_list("role", "order")) == [("reference", 0), ("candidate", 1), ("candidate", 2)]


def test_create_refuses_videos_of_another_project_and_bad_roles(project, people, video):
    foreign = factories.VideoFactory()
    with pytest.raises(MCQInvalid, match=f"No video {foreign.pk} in this project"):
        mcq_create(project=project, videos=[(foreign, VideoRole.MAIN)], user=people["annotator"])
    other = factories.VideoFactory(project=project)
    with pytest.raises(MCQInvalid, match="reference video comes first"):
        mcq_create(
            project=project,
            videos=[(video, VideoRole.CANDIDATE), (other, VideoRole.REFERENCE)],
            user=people["annotator"],
        )
    assert not MCQ.objects.exists()


# --- save ----------------------------------------------------------------------------------------


def test_save_writes_everything_and_bumps_the_version(mcq, people, video):
    saved = save(mcq, people["annotator"], video)
    mcq.refresh_from_db()
    assert mcq.version == 2 and saved.state["version"] == 2
    assert mcq.question == QUESTION
    assert mcq.referring_query == "When the chef lifts the pan"
    assert mcq.question_wo_referring_query == "What colour is the sauce?"  # derived
    assert mcq.options == ["Red", "Green", "Brown", "White"] and mcq.correct_index == 0
    assert (mcq.category, mcq.level) == ("E2O", "L1-Perception")  # the level follows the code
    assert saved.warnings == [] and saved.blockers == []


def test_the_question_without_the_referring_query_is_derived_unless_given(mcq, people, video):
    saved = save(mcq, people["annotator"], video, question_wo_referring_query="What colour does the sauce have?")
    assert saved.mcq.question_wo_referring_query == "What colour does the sauce have?"
    # Blank means "derive it again".
    saved = save(saved.mcq, people["annotator"], video, question_wo_referring_query="  ")
    assert saved.mcq.question_wo_referring_query == "What colour is the sauce?"


def test_a_selection_with_spaces_at_its_edges_is_trimmed(mcq, people, video):
    question = "What colour is the sauce when the chef lifts the pan today?"
    selection = " when the chef lifts the pan "
    start = question.index(selection)
    saved = save(
        mcq, people["annotator"], video, question=question, referring_start=start, referring_end=start + len(selection)
    )
    assert saved.mcq.referring_query == "when the chef lifts the pan"
    assert (saved.mcq.referring_start, saved.mcq.referring_end) == (start + 1, start + len(selection) - 1)
    assert saved.mcq.question_wo_referring_query == "What colour is the sauce today?"


def test_spans_count_characters_not_bytes_or_utf16_units(mcq, people, video):
    question = "🍳 When the chef lifts the pan, what colour is the sauce?"
    saved = save(mcq, people["annotator"], video, question=question, referring_start=2, referring_end=29)
    assert saved.mcq.referring_query == "When the chef lifts the pan"


def test_frame_index_is_recomputed_from_the_time_and_fps(mcq, people, video):
    saved = save(
        mcq,
        people["annotator"],
        video,
        moments=[
            {"video_id": video.pk, "time_s": 12.5, "frame_index": 9999},  # a wrong client number
            {"video_id": video.pk, "time_s": 3.02},  # none at all
        ],
    )
    stored = list(ReferredMoment.objects.filter(mcq=saved.mcq).values_list("time_s", "frame_index", "order"))
    assert stored == [(12.5, 312, 0), (3.02, 76, 1)]  # round(12.5 × 25) = 312 (half to even), 3.02 × 25 = 75.5 → 76
    assert saved.state["moments"][0]["frame_index"] == 312


def test_the_same_frame_stamped_twice_is_kept_once(mcq, people, video):
    moment = {"video_id": video.pk, "time_s": 4.0}
    saved = save(mcq, people["annotator"], video, moments=[moment, dict(moment, time_s=4.01), moment])
    assert ReferredMoment.objects.filter(mcq=saved.mcq).count() == 1


def test_a_moment_outside_the_video_is_saved_and_warned(mcq, people, video):
    saved = save(mcq, people["annotator"], video, moments=[{"video_id": video.pk, "time_s": 75.0}])
    assert ReferredMoment.objects.filter(mcq=saved.mcq, time_s=75.0).exists()
    assert [w.code for w in saved.warnings] == ["moment_outside_video"]


def test_moments_must_belong_to_the_questions_videos(mcq, people, video, project):
    other = factories.VideoFactory(project=project)
    with pytest.raises(MCQInvalid) as excinfo:
        save(mcq, people["annotator"], video, moments=[{"video_id": other.pk, "time_s": 1.0}])
    assert excinfo.value.errors["moments"] == [
        "Moment 1 is on a video this question does not use; remove it or add its video."
    ]


@pytest.mark.parametrize(
    "overrides, field, message",
    [
        ({"options": ["a", "b", "c", "d", "e", "f"]}, "options", "at most 5 options; remove 1"),
        ({"options": ["a", "b", 3, "d"]}, "options", "Options must be a list of texts"),
        ({"correct_index": 4}, "correct_index", "must be one of options 1–4; got 4"),
        ({"correct_index": True}, "correct_index", "must be one of options 1–4"),
        ({"referring_start": 30, "referring_end": 80}, "referring", "characters 30–80) is not inside the question (54"),
        ({"referring_start": 3, "referring_end": None}, "referring", "needs both a start and an end"),
        ({"referring_start": 28, "referring_end": 29}, "referring", "The referring query is empty"),
        ({"category": "XYZ"}, "category", '"XYZ" is not a category of this project'),
        ({"moments": [{"video_id": 0, "time_s": -1}]}, "moments", "does not use"),
        ({"question": "x" * 5001}, "question", "too long (5001 characters; at most 5000)"),
        ({"videos": []}, "videos", "at least one video"),
    ],
)
def test_invalid_saves_say_why_and_write_nothing(mcq, people, video, overrides, field, message):
    before = MCQ.objects.get(pk=mcq.pk)
    with pytest.raises(MCQInvalid) as excinfo:
        save(mcq, people["annotator"], video, **overrides)
    assert field in excinfo.value.errors
    assert message in " ".join(excinfo.value.errors[field])
    after = MCQ.objects.get(pk=mcq.pk)
    assert (after.version, after.question, after.options) == (before.version, before.question, before.options)


def test_negative_and_non_numeric_times_are_refused(mcq, people, video):
    for bad in (-0.5, "12", float("nan"), None):
        with pytest.raises(MCQInvalid, match="the time must be a number of seconds"):
            save(mcq, people["annotator"], video, moments=[{"video_id": video.pk, "time_s": bad}])


def test_a_stale_save_conflicts_and_loses_nothing(mcq, people, video):
    first = save(mcq, people["annotator"], video)
    assert first.mcq.version == 2
    stale = MCQ.objects.get(pk=mcq.pk)
    with pytest.raises(StaleVersion) as excinfo:
        mcq_save(mcq=stale, expected_version=1, user=people["admin"], **fields(video, question="Something else?"))
    assert excinfo.value.item.version == 2
    mcq.refresh_from_db()
    assert mcq.question == QUESTION and mcq.version == 2


def test_a_submitted_item_is_not_editable(mcq, people, video):
    save(mcq, people["annotator"], video)
    mcq_submit(mcq=mcq, user=people["annotator"])
    with pytest.raises(MCQNotEditable, match="examining"):  # the gate does not cover MCQs by default
        save(mcq, people["annotator"], video)


def test_the_first_human_save_takes_a_machine_draft_into_annotation(project, people, video):
    draft = factories.MCQFactory(project=project, status=ItemStatus.DRAFT, origin=Origin.MACHINE, video=video)
    saved = save(draft, people["annotator"], video)
    assert saved.mcq.status == ItemStatus.ANNOTATING and saved.mcq.human_edited
    assert saved.mcq.author == people["annotator"]
    event = ReviewEvent.objects.get(mcq=draft)
    assert (event.from_status, event.to_status) == ("draft", "annotating")
    # A later save logs no further transition.
    save(saved.mcq, people["annotator"], video, question="When the chef lifts the pan, what is the sauce?")
    assert ReviewEvent.objects.filter(mcq=draft).count() == 1


def test_videos_and_moments_left_out_are_kept(mcq, people, video):
    save(mcq, people["annotator"], video)
    saved = mcq_save(
        mcq=mcq, expected_version=mcq.version, user=people["annotator"], **fields(video, videos=None, moments=None)
    )
    assert saved.mcq.mcq_videos.count() == 1 and saved.mcq.moments.count() == 1


# --- multi-video ---------------------------------------------------------------------------------


@pytest.fixture
def trio(project):
    return [factories.VideoFactory(project=project, name=n, duration_s=30.0) for n in ("ref", "cand_a", "cand_b")]


def test_multi_video_roles_are_ordered_reference_first(project, people, trio):
    ref, a, b = trio
    mcq = mcq_create(
        project=project, videos=[(ref, VideoRole.REFERENCE), (a, VideoRole.CANDIDATE)], user=people["admin"]
    )
    saved = mcq_save(
        mcq=mcq,
        expected_version=mcq.version,
        user=people["admin"],
        question="<video> Which candidate shows the same kitchen? 1. <video> 2. <video>",
        options=["1", "2"],
        correct_index=1,
        # Given out of order: the order numbers decide and are renumbered 0, 1, 2.
        videos=[
            {"video_id": b.pk, "role": "candidate", "order": 7},
            {"video_id": ref.pk, "role": "reference", "order": 0},
            {"video_id": a.pk, "role": "candidate", "order": 3},
        ],
        moments=[],
    )
    links = list(MCQVideo.objects.filter(mcq=mcq).values_list("video__name", "role", "order"))
    assert links == [("ref", "reference", 0), ("cand_a", "candidate", 1), ("cand_b", "candidate", 2)]
    assert saved.blockers == [] and saved.warnings == []  # labels: no text checks, no referring query
    mcq_submit(mcq=mcq, user=people["admin"])
    assert MCQ.objects.get(pk=mcq.pk).status == ItemStatus.EXAMINING


@pytest.mark.parametrize(
    "roles, message",
    [
        (["candidate", "reference", "candidate"], "reference video comes first"),
        (["reference", "reference", "candidate"], "exactly one reference"),
        (["reference", "main", "candidate"], "no main video"),
        (["main", "main", "main"], "exactly one main video"),
        (["reference", "candidate", "boss"], 'role "boss" is not one of'),
    ],
)
def test_multi_video_role_mistakes_are_refused(project, people, trio, roles, message):
    mcq = mcq_create(project=project, videos=[(trio[0], VideoRole.MAIN)], user=people["admin"])
    videos = [{"video_id": v.pk, "role": r, "order": i} for i, (v, r) in enumerate(zip(trio, roles, strict=True))]
    with pytest.raises(MCQInvalid, match=message):
        mcq_save(mcq=mcq, expected_version=1, user=people["admin"], question="?", options=[], videos=videos, moments=[])


def test_removing_a_video_that_still_has_moments_is_refused(project, people, trio):
    ref, a, _ = trio
    mcq = mcq_create(
        project=project, videos=[(ref, VideoRole.REFERENCE), (a, VideoRole.CANDIDATE)], user=people["admin"]
    )
    mcq_save(
        mcq=mcq,
        expected_version=1,
        user=people["admin"],
        question="?",
        options=["1"],
        moments=[{"video_id": a.pk, "time_s": 2.0}],
    )
    with pytest.raises(MCQInvalid, match="on a video removed from this question"):
        mcq_save(
            mcq=mcq,
            expected_version=2,
            user=people["admin"],
            question="?",
            options=["1"],
            videos=[{"video_id": ref.pk, "role": "reference", "order": 0}],
        )


# --- categories by project kind --------------------------------------------------------------------


def test_livibench_categories_are_task_names_with_their_group(people):
    project = factories.ProjectFactory(kind=ProjectKind.LIVIBENCH)
    people = factories.people_for(project)
    video = factories.VideoFactory(project=project)
    mcq = mcq_create(project=project, videos=[(video, VideoRole.MAIN)], user=people["annotator"])
    saved = save(
        mcq, people["annotator"], video, category="temporal reasoning", referring_start=None, referring_end=None
    )
    assert (saved.mcq.category, saved.mcq.task_group, saved.mcq.level) == (
        "temporal reasoning",
        "general reasoning",
        "",
    )
    assert saved.warnings == []  # no referring query or moment needed
    with pytest.raises(MCQInvalid, match='"E2O" is not a category'):
        save(saved.mcq, people["annotator"], video, category="E2O")


def test_category_choices_come_from_the_project_taxonomy(project):
    project.taxonomies = project.taxonomies | {"question_categories": [{"code": "ZZZ", "level": "L9", "name": "z"}]}
    project.save()
    assert category_choices(project=project) == [{"value": "ZZZ", "label": "ZZZ · z", "level": "L9", "group": ""}]


def test_a_category_since_removed_from_the_taxonomy_is_kept_when_unchanged(project, people, video):
    mcq = factories.MCQFactory(project=project, video=video, category="OLD", level="L1-Perception")
    saved = save(mcq, people["annotator"], video, category="OLD")
    assert (saved.mcq.category, saved.mcq.level) == ("OLD", "L1-Perception")


# --- submit --------------------------------------------------------------------------------------


def test_submit_refuses_unfinished_work_and_lists_every_blocker(mcq, people, video):
    save(mcq, people["annotator"], video, options=["Red", "", "Brown"], correct_index=None)
    with pytest.raises(MCQNotReady) as excinfo:
        mcq_submit(mcq=mcq, user=people["annotator"])
    assert [p.code for p in excinfo.value.problems] == ["too_few_options", "empty_option", "no_correct"]
    assert MCQ.objects.get(pk=mcq.pk).status == ItemStatus.ANNOTATING
    assert ReviewEvent.objects.filter(mcq=mcq, to_status="submitted").count() == 0


def test_submit_hands_on_and_logs_an_event(mcq, people, video):
    saved = save(mcq, people["annotator"], video)
    result = mcq_submit(mcq=saved.mcq, user=people["annotator"], expected_version=saved.mcq.version)
    assert result.event.to_status == ItemStatus.SUBMITTED and result.event.actor == people["annotator"]
    stored = MCQ.objects.get(pk=mcq.pk)
    # The project's gate does not cover MCQs unless it says so: passed on to examiners at once.
    assert stored.status == ItemStatus.EXAMINING and stored.submitted_at and result.outcome == "examining"


def test_submit_of_a_version_someone_else_changed_is_refused(mcq, people, video):
    save(mcq, people["annotator"], video)
    with pytest.raises(StaleVersion):
        mcq_submit(mcq=mcq, user=people["annotator"], expected_version=1)
    assert MCQ.objects.get(pk=mcq.pk).status == ItemStatus.ANNOTATING


# --- next item -------------------------------------------------------------------------------------


def test_next_item_wraps_round_and_skips_unusable_videos(project, video):
    items = [factories.MCQFactory(project=project, video=video) for _ in range(3)]
    flagged_video = factories.VideoFactory(project=project, unusable_reason="still_frames")
    flagged = factories.MCQFactory(project=project, video=flagged_video)
    done = factories.MCQFactory(project=project, video=video, status=ItemStatus.SUBMITTED)
    editable = [ItemStatus.DRAFT, ItemStatus.ANNOTATING]
    assert mcq_next(project=project, statuses=editable, after_id=items[0].pk) == items[1]
    assert mcq_next(project=project, statuses=editable, after_id=items[2].pk) == items[0]
    assert mcq_next(project=project, statuses=editable) == items[0]
    assert flagged.pk > items[2].pk and done.pk > items[2].pk
    only = factories.ProjectFactory()
    assert mcq_next(project=only, statuses=editable) is None


# --- undo ----------------------------------------------------------------------------------------


def test_undo_brings_back_the_previous_version_and_walks_further_back(mcq, people, video):
    user = people["annotator"]
    save(mcq, user, video)  # v2
    save(
        mcq,
        user,
        video,
        question="When the pan tips over, what spills?",
        referring_start=0,
        referring_end=21,
        options=["Soup", "Rice", "Oil", "Milk"],
        moments=[{"video_id": video.pk, "time_s": 40.0}, {"video_id": video.pk, "time_s": 41.0}],
    )  # v3
    undone = mcq_undo(mcq=mcq, user=user, expected_version=3)
    assert undone.restored_version == 2 and undone.mcq.version == 4
    assert undone.mcq.question == QUESTION and undone.mcq.options == ["Red", "Green", "Brown", "White"]
    assert list(undone.mcq.moments.values_list("time_s", "frame_index")) == [(12.5, 312)]
    # Undo again: the version before the one just restored, the empty start.
    again = mcq_undo(mcq=mcq, user=user, expected_version=4)
    assert again.restored_version == 1 and again.mcq.version == 5
    assert again.mcq.question == "" and again.mcq.options == ["", "", "", ""] and not again.mcq.moments.exists()
    assert again.mcq.mcq_videos.count() == 1  # the videos it always had
    with pytest.raises(NothingToUndo):
        mcq_undo(mcq=mcq, user=user, expected_version=5)


def test_undo_of_the_first_human_save_brings_back_the_machine_draft(project, people, video):
    draft = factories.MCQFactory(project=project, status=ItemStatus.DRAFT, origin=Origin.MACHINE, video=video)
    ReferredMoment.objects.create(mcq=draft, video=video, time_s=5.0, frame_index=125)
    save(draft, people["annotator"], video, question="When the chef lifts the pan, what is in it?", moments=[])
    undone = mcq_undo(mcq=draft, user=people["annotator"], expected_version=2)
    assert undone.mcq.question == "When the chef lifts the pan, what colour is the sauce?"
    assert list(undone.mcq.moments.values_list("time_s", flat=True)) == [5.0]


def test_undo_checks_the_version_like_a_save(mcq, people, video):
    save(mcq, people["annotator"], video)
    with pytest.raises(StaleVersion):
        mcq_undo(mcq=mcq, user=people["annotator"], expected_version=1)
