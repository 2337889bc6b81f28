"""MCQ screens through the real views: permissions, the JSON save contract, submit, the unusable
flag, and query counts that do not grow with the data."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotator.mcqs import mcq_create
from annotator.models import MCQ, ItemStatus, ReferredMoment, ReviewEvent, VideoRole
from tests import factories
from videos.models import Video

pytestmark = pytest.mark.django_db

QUESTION = "When the chef lifts the pan, what colour is the sauce?"


@pytest.fixture
def video(project):
    return factories.VideoFactory(project=project, name="kitchen", duration_s=60.0, fps=25.0)


@pytest.fixture
def mcq(project, video, people):
    return mcq_create(project=project, videos=[(video, VideoRole.MAIN)], user=people["annotator"])


def editor_url(mcq, slug=None):
    return reverse("annotator:mcq_editor", args=[slug or mcq.project.slug, mcq.pk])


def save_url(mcq):
    return reverse("annotator:mcq_save", args=[mcq.project.slug, mcq.pk])


def submit_url(mcq):
    return reverse("annotator:mcq_submit", args=[mcq.project.slug, mcq.pk])


def payload(video, **overrides) -> dict:
    body = {
        "version": 1,
        "question": QUESTION,
        "referring_start": 0,
        "referring_end": 27,
        "question_wo_referring_query": None,
        "options": ["Red", "Green", "Brown", "White"],
        "correct_index": 0,
        "category": "E2O",
        "videos": [{"video_id": video.pk, "role": "main", "order": 0}],
        "moments": [{"video_id": video.pk, "time_s": 12.5, "frame_index": 1}],
    }
    return body | overrides


def post_json(client, url, body):
    return client.post(url, data=json.dumps(body), content_type="application/json")


# --- permissions ---------------------------------------------------------------------------------


def test_anonymous_is_sent_to_login(client, mcq):
    for url in (editor_url(mcq), reverse("annotator:mcq_list", args=[mcq.project.slug])):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_members_see_the_editor_and_strangers_get_404(client, people, mcq, video):
    for role in ("annotator", "examiner", "reviser", "admin"):
        client.force_login(people[role])
        assert client.get(editor_url(mcq)).status_code == 200, role
    client.force_login(people["outsider"])
    assert client.get(editor_url(mcq)).status_code == 404
    assert post_json(client, save_url(mcq), payload(video)).status_code == 404
    assert post_json(client, submit_url(mcq), {"version": 1}).status_code == 404
    assert client.get(reverse("annotator:mcq_list", args=[mcq.project.slug])).status_code == 404


def test_an_mcq_of_another_project_is_a_404(client, people, mcq):
    client.force_login(people["annotator"])
    foreign = factories.MCQFactory(video=factories.VideoFactory())
    assert client.get(editor_url(foreign, slug=mcq.project.slug)).status_code == 404
    assert client.get(reverse("annotator:mcq_editor", args=[mcq.project.slug, 999_999])).status_code == 404


def test_examiners_may_look_but_not_save(client, people, mcq, video):
    client.force_login(people["examiner"])
    page = client.get(editor_url(mcq))
    assert page.context["editable"] is False
    response = post_json(client, save_url(mcq), payload(video))
    assert response.status_code == 403
    assert "does not annotate" in response.json()["error"]
    assert MCQ.objects.get(pk=mcq.pk).version == 1


def test_the_author_may_not_revise_their_own_item(client, people, mcq, video):
    MCQ.objects.filter(pk=mcq.pk).update(status=ItemStatus.REVISING)
    factories.MembershipFactory(project=mcq.project, user=people["annotator"], role="reviser")
    client.force_login(people["annotator"])
    response = post_json(client, save_url(mcq), payload(video))
    assert response.status_code == 403 and "a reviser who did not write it" in response.json()["error"]
    client.force_login(people["reviser"])
    assert post_json(client, save_url(mcq), payload(video)).status_code == 200


# --- save ----------------------------------------------------------------------------------------


def test_save_answers_with_the_stored_state_and_the_findings(client, people, mcq, video):
    client.force_login(people["annotator"])
    response = post_json(client, save_url(mcq), payload(video, moments=[{"video_id": video.pk, "time_s": 99.0}]))
    assert response.status_code == 200
    body = response.json()
    assert body["version"] == 2
    assert body["question_wo_referring_query"] == "What colour is the sauce?"
    assert body["level"] == "L1-Perception"
    assert body["moments"] == [{"video_id": video.pk, "time_s": 99.0, "frame_index": 2475}]
    assert [w["code"] for w in body["warnings"]] == ["moment_outside_video"]
    assert body["blockers"] == []


def test_a_stale_save_gets_409_with_both_versions(client, people, mcq, video):
    client.force_login(people["annotator"])
    assert post_json(client, save_url(mcq), payload(video)).status_code == 200
    client.force_login(people["admin"])
    mine = payload(video, question="When the chef lifts the pan, which sauce is it?")
    response = post_json(client, save_url(mcq), mine)
    assert response.status_code == 409
    body = response.json()
    assert body["conflict"] is True
    assert body["theirs"]["version"] == 2 and body["theirs"]["question"] == QUESTION
    assert body["theirs"]["savedBy"] == people["annotator"].username
    assert body["yours"]["question"] == mine["question"] and body["yours"]["version"] == 1
    assert "saved by annotator" in body["error"] and "Your text is kept" in body["error"]
    assert MCQ.objects.get(pk=mcq.pk).question == QUESTION


def test_content_that_cannot_be_saved_gets_422_with_field_messages(client, people, mcq, video):
    client.force_login(people["annotator"])
    response = post_json(client, save_url(mcq), payload(video, correct_index=7, options=list("abcdef")))
    assert response.status_code == 422
    errors = response.json()["errors"]
    assert [e["field"] for e in errors] == ["options", "correct_index"]
    assert "at most 5 options" in errors[0]["message"]
    assert "must be one of options 1–6" in errors[1]["message"]
    assert MCQ.objects.get(pk=mcq.pk).version == 1


@pytest.mark.parametrize(
    "body, message",
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (json.dumps({"question": "?"}).encode(), "Say which version"),
    ],
)
def test_malformed_requests_get_400(client, people, mcq, body, message):
    client.force_login(people["annotator"])
    response = client.post(save_url(mcq), data=body, content_type="application/json")
    assert response.status_code == 400 and message in response.json()["error"]


def test_get_is_refused_on_the_json_endpoints(client, people, mcq):
    client.force_login(people["annotator"])
    assert client.get(save_url(mcq)).status_code == 405
    assert client.get(submit_url(mcq)).status_code == 405


# --- submit --------------------------------------------------------------------------------------


def test_submit_lists_blockers_then_submits_and_logs(client, people, mcq, video):
    client.force_login(people["annotator"])
    response = post_json(client, submit_url(mcq), {"version": 1})
    assert response.status_code == 422
    assert [b["code"] for b in response.json()["blockers"]] == [
        "question_empty",
        "empty_option",
        "no_correct",
        "no_category",
    ]
    assert post_json(client, save_url(mcq), payload(video)).status_code == 200
    response = post_json(client, submit_url(mcq), {"version": 2})
    assert response.status_code == 200
    body = response.json()
    # MCQs skip the LLM judge unless the project's gate covers them: straight on to examiners.
    assert body["status"] == "examining" and body["next"].endswith(f"?after={mcq.pk}")
    assert body["outcome"] == "examining" and body["message"] == "MCQ submitted and passed on to examiners."
    assert ReviewEvent.objects.filter(mcq=mcq, to_status="submitted", actor=people["annotator"]).count() == 1
    # Submitted: no longer editable here.
    assert post_json(client, save_url(mcq), payload(video, version=2)).status_code == 403


def test_submit_of_a_stale_version_is_a_conflict(client, people, mcq, video):
    client.force_login(people["annotator"])
    post_json(client, save_url(mcq), payload(video))
    response = post_json(client, submit_url(mcq), {"version": 1})
    assert response.status_code == 409 and response.json()["theirs"]["version"] == 2
    assert MCQ.objects.get(pk=mcq.pk).status == ItemStatus.ANNOTATING


# --- undo ----------------------------------------------------------------------------------------


def test_undo_answers_with_the_restored_state(client, people, mcq, video):
    client.force_login(people["annotator"])
    url = reverse("annotator:mcq_undo", args=[mcq.project.slug, mcq.pk])
    response = post_json(client, url, {"version": 1})
    assert response.status_code == 409 and response.json()["conflict"] is False
    assert "no earlier version" in response.json()["error"]
    post_json(client, save_url(mcq), payload(video))
    response = post_json(client, url, {"version": 2})
    assert response.status_code == 200
    body = response.json()
    assert (body["version"], body["restoredVersion"], body["question"]) == (3, 1, "")
    assert post_json(client, url, {"version": 2}).status_code == 409  # stale
    client.force_login(people["examiner"])
    assert post_json(client, url, {"version": 3}).status_code == 403


# --- list, new, next -----------------------------------------------------------------------------


def test_new_mcq_for_a_chosen_video_opens_its_editor(client, people, project, video):
    client.force_login(people["annotator"])
    response = client.post(reverse("annotator:mcq_new", args=[project.slug]), {"video": video.pk})
    mcq = MCQ.objects.get()
    assert response.status_code == 302 and response["Location"] == editor_url(mcq)
    assert mcq.author == people["annotator"] and mcq.status == ItemStatus.ANNOTATING


def test_new_mcq_needs_a_video_of_this_project_and_the_annotate_role(client, people, project):
    client.force_login(people["annotator"])
    foreign = factories.VideoFactory()
    response = client.post(reverse("annotator:mcq_new", args=[project.slug]), {"video": foreign.pk}, follow=True)
    assert "Choose a video of this project" in response.content.decode()
    client.force_login(people["examiner"])
    assert client.post(reverse("annotator:mcq_new", args=[project.slug]), {"video": 1}).status_code == 403
    assert not MCQ.objects.exists()


def test_next_item_goes_to_the_following_editable_mcq(client, people, project, video):
    first, second = (factories.MCQFactory(project=project, video=video) for _ in range(2))
    factories.MCQFactory(project=project, video=video, status=ItemStatus.SUBMITTED)
    client.force_login(people["annotator"])
    url = reverse("annotator:mcq_next", args=[project.slug])
    assert client.get(f"{url}?after={first.pk}")["Location"] == editor_url(second)
    assert client.get(f"{url}?after={second.pk}")["Location"] == editor_url(first)
    client.force_login(people["examiner"])  # nothing an examiner edits here
    assert client.get(url)["Location"] == reverse("annotator:mcq_list", args=[project.slug])


def test_list_filters_by_status_and_category(client, people, project, video):
    a = factories.MCQFactory(project=project, video=video, category="E2O")
    b = factories.MCQFactory(project=project, video=video, category="S2E", status=ItemStatus.SUBMITTED)
    client.force_login(people["annotator"])
    url = reverse("annotator:mcq_list", args=[project.slug])
    assert [m.pk for m in client.get(url).context["page"].object_list] == [a.pk, b.pk]
    assert [m.pk for m in client.get(url, {"status": "submitted"}).context["page"].object_list] == [b.pk]
    assert [m.pk for m in client.get(url, {"category": "E2O"}).context["page"].object_list] == [a.pk]
    fragment = client.get(url, {"category": "S2E"}, HTTP_HX_REQUEST="true")
    assert 'id="mcq-rows"' in fragment.content.decode() and "<html" not in fragment.content.decode()


# --- query counts --------------------------------------------------------------------------------


def _queries(client, url) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


def test_list_queries_do_not_grow_with_items(client, people, project, video):
    client.force_login(people["annotator"])
    url = reverse("annotator:mcq_list", args=[project.slug])
    factories.MCQFactory(project=project, video=video)
    few = _queries(client, url)
    for _ in range(12):
        mcq = factories.MCQFactory(project=project, video=factories.VideoFactory(project=project))
        ReferredMoment.objects.create(mcq=mcq, video=mcq.mcq_videos.get().video, time_s=1.0, frame_index=25)
    assert _queries(client, url) == few


def test_editor_queries_do_not_grow_with_moments_videos_or_cues(client, people, project, video):
    client.force_login(people["annotator"])
    ref = factories.VideoFactory(project=project)
    mcq = mcq_create(
        project=project, videos=[(ref, VideoRole.REFERENCE), (video, VideoRole.CANDIDATE)], user=people["annotator"]
    )
    factories.SubtitleCueFactory(video=ref)
    few = _queries(client, editor_url(mcq))
    extra = [factories.VideoFactory(project=project) for _ in range(3)]
    body = {
        "version": 1,
        "question": "<video> Which? 1. <video>",
        "options": ["1", "2", "3", "4"],
        "videos": [
            {"video_id": v.pk, "role": "reference" if i == 0 else "candidate", "order": i}
            for i, v in enumerate([ref, video, *extra])
        ],
        "moments": [{"video_id": video.pk, "time_s": float(t)} for t in range(10)],
    }
    assert post_json(client, save_url(mcq), body).status_code == 200
    factories.SubtitleCueFactory.create_batch(5, video=ref)
    factories.CommentFactory.create_batch(5, video=ref)
    assert _queries(client, editor_url(mcq)) == few


# --- unusable flag -------------------------------------------------------------------------------


def unusable_url(video):
    return reverse("annotator:video_unusable", args=[video.project.slug, video.pk])


def test_an_annotator_flags_and_only_an_admin_clears(client, people, video, mcq):
    client.force_login(people["annotator"])
    response = client.post(unusable_url(video), {"reason": "still_frames", "note": "frozen", "next": editor_url(mcq)})
    assert response.status_code == 302 and response["Location"] == editor_url(mcq)
    assert Video.objects.get(pk=video.pk).unusable_reason == "still_frames"
    assert client.post(unusable_url(video), {"action": "clear"}).status_code == 403
    assert Video.objects.get(pk=video.pk).unusable_reason == "still_frames"
    # The editor warns about the flagged video.
    page = client.get(editor_url(mcq))
    assert "video_unusable" in [w.code for w in page.context["warnings"]]
    client.force_login(people["admin"])
    client.post(unusable_url(video), {"action": "clear"})
    assert Video.objects.get(pk=video.pk).unusable_reason == ""


def test_flag_refusals_are_shown_and_change_nothing(client, people, video):
    client.force_login(people["annotator"])
    response = client.post(
        unusable_url(video), {"reason": "other", "note": "", "next": "/p/x/mcqs/1/"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    assert "Say in the note" in response.content.decode()
    # The form comes back pointing at the page it sits on, not at this endpoint.
    assert 'name="next" value="/p/x/mcqs/1/"' in response.content.decode()
    assert Video.objects.get(pk=video.pk).unusable_reason == ""
    assert "HX-Trigger" not in response


def test_htmx_flag_returns_the_fragment_and_tells_the_editor(client, people, video):
    client.force_login(people["annotator"])
    response = client.post(unusable_url(video), {"reason": "incomplete_subtitles"}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert "Flagged unusable" in html and "Incomplete subtitles" in html and "<html" not in html
    event = json.loads(response["HX-Trigger"])["vidqa:unusable-changed"]
    assert event == {"videoId": video.pk, "label": "Incomplete subtitles"}


def test_examiners_and_strangers_cannot_flag(client, people, video):
    client.force_login(people["examiner"])
    assert client.post(unusable_url(video), {"reason": "still_frames"}).status_code == 403
    client.force_login(people["outsider"])
    assert client.post(unusable_url(video), {"reason": "still_frames"}).status_code == 404
    assert Video.objects.get(pk=video.pk).unusable_reason == ""


def test_next_never_leaves_the_site(client, people, video):
    client.force_login(people["annotator"])
    response = client.post(unusable_url(video), {"reason": "still_frames", "next": "https://evil.example/"})
    assert response["Location"] == reverse("videos:player", args=[video.project.slug, video.pk])
