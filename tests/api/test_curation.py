"""Curation decisions, admin overrides and external-score imports through the API."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests import factories
from videos.curation import video_curate
from videos.models import CurationDecision, CurationStatus, ExternalScore

from .error_shape import assert_error

pytestmark = pytest.mark.django_db


@pytest.fixture
def video(project):
    """120 s in three 40 s scenes: long enough, but too few and too long scenes for SVBench's rules."""
    scenes = [[0, 40], [40, 80], [80, 120]]
    video = factories.VideoFactory(project=project, name="kitchen", duration_s=120.0, scenes=scenes)
    video_curate(video=video)
    video.refresh_from_db()
    return video


def _url(project, video):
    return f"/api/projects/{project.slug}/videos/{video.pk}/curation/"


def test_decisions_carry_rule_outcome_value_and_reason(client, project, people, video):
    client.force_login(people["annotator"])  # reading is for every member
    body = client.get(_url(project, video)).json()
    assert body["video_id"] == video.pk and body["curation_status"] == CurationStatus.REJECTED
    assert body["overridden_by"] is None
    assert body["rules"] == [
        {"rule": "duration", "label": "Minimum duration"},
        {"rule": "scene_count", "label": "Number of scenes"},
        {"rule": "mean_scene", "label": "Mean scene length"},
    ]
    decisions = {d["rule"]: d for d in body["decisions"]}
    assert [d["rule"] for d in body["decisions"]] == ["duration", "mean_scene", "scene_count"]
    assert decisions["duration"]["passed"] is True and decisions["duration"]["value"] == 120.0
    assert decisions["scene_count"] == {
        "rule": "scene_count",
        "label": "Number of scenes",
        "passed": False,
        "value": 3.0,
        "reason": "3 scenes; wanted 5–15",
        "overridden_by": None,
        "override_note": "",
        "decided_at": decisions["scene_count"]["decided_at"],
    }
    assert "mean scene 40.0 s" in decisions["mean_scene"]["reason"]


def test_override_keeps_a_rejected_video_and_pending_hands_it_back(client, project, people, video):
    client.force_login(people["admin"])
    response = client.post(
        _url(project, video), {"status": "kept", "note": "Great cooking footage."}, content_type="application/json"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["curation_status"] == "kept" and body["overridden_by"] == people["admin"].username
    assert {d["overridden_by"] for d in body["decisions"]} == {people["admin"].username}
    assert {d["override_note"] for d in body["decisions"]} == {"Great cooking footage."}
    assert any(not d["passed"] for d in body["decisions"])  # the rules' verdicts stay visible
    video.refresh_from_db()
    assert video.curation_status == CurationStatus.KEPT and video.curation_overridden_by == people["admin"]

    # Re-running the rules does not undo the override ...
    video_curate(video=video)
    assert client.get(_url(project, video)).json()["curation_status"] == "kept"
    # ... handing it back to the rules does.
    body = client.post(_url(project, video), {"status": "pending"}, content_type="application/json").json()
    assert body["curation_status"] == "rejected" and body["overridden_by"] is None
    assert {d["overridden_by"] for d in body["decisions"]} == {None}


def test_override_input_is_validated(client, project, people, video):
    client.force_login(people["admin"])
    error = assert_error(
        client.post(_url(project, video), {"status": "maybe"}, content_type="application/json"), 400, "validation_error"
    )
    assert list(error["details"]) == ["status"]
    response = client.post(_url(project, video), {}, content_type="application/json")
    error = assert_error(response, 400, "validation_error")
    assert list(error["details"]) == ["status"]
    video.refresh_from_db()
    assert video.curation_status == CurationStatus.REJECTED and video.curation_overridden_by is None


def test_override_is_for_admins_reading_is_for_members(client, project, people, video):
    url = _url(project, video)
    assert_error(client.get(url), 401, "not_authenticated")
    assert_error(client.post(url, {"status": "kept"}, content_type="application/json"), 401, "not_authenticated")
    client.force_login(people["annotator"])
    assert client.get(url).status_code == 200
    assert_error(client.post(url, {"status": "kept"}, content_type="application/json"), 403, "permission_denied")
    client.force_login(people["outsider"])
    assert_error(client.get(url), 404, "not_found")
    assert_error(client.post(url, {"status": "kept"}, content_type="application/json"), 404, "not_found")
    foreign = factories.VideoFactory()
    client.force_login(people["admin"])
    wrong = client.get(f"/api/projects/{project.slug}/videos/{foreign.pk}/curation/")
    missing = client.get(f"/api/projects/{project.slug}/videos/999999/curation/")
    assert assert_error(wrong, 404, "not_found") == assert_error(missing, 404, "not_found")
    video.refresh_from_db()
    assert video.curation_overridden_by is None


def test_curation_query_count_does_not_grow_with_decisions(client, project, people, video, token_for):
    headers = token_for(people["annotator"])

    def count():
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(_url(project, video), headers=headers).status_code == 200
        return len(ctx.captured_queries)

    few = count()
    for n in range(6):
        factories.CurationDecisionFactory(video=video, rule=f"external:score{n}", overridden_by=factories.UserFactory())
        ExternalScore.objects.create(video=video, name=f"score{n}", value=n)
    assert count() == few
    # Token + user, project, roles, video (with its overrider), decisions (with theirs), scores.
    assert few == 6


# ---------------------------------------------------------------------------------------------
# POST scores/


def _scores_of(video) -> dict:
    return dict(ExternalScore.objects.filter(video=video).values_list("name", "value"))


def _scores(client, project, data: bytes, name="scores.csv"):
    return client.post(f"/api/projects/{project.slug}/scores/", {"file": SimpleUploadedFile(name, data)})


def test_wide_scores_import_and_re_curate_the_videos(client, project, people, video):
    project.external_score_thresholds = {"aesthetic": {"min": 5.0}}
    project.save()
    other = factories.VideoFactory(project=project, name="street")
    client.force_login(people["admin"])
    response = _scores(client, project, b"video,aesthetic,flow\nkitchen,4.5,0.3\nstreet,6,\nghost,1,1\n")
    assert response.status_code == 200, response.content
    assert response.json() == {"imported": 3, "videos": 2, "unknown_videos": ["ghost"]}
    assert _scores_of(video) == {"aesthetic": 4.5, "flow": 0.3}
    assert _scores_of(other) == {"aesthetic": 6.0}

    decision = CurationDecision.objects.get(video=video, rule="external:aesthetic")
    assert decision.passed is False and "wanted ≥ 5" in decision.reason
    body = client.get(_url(project, video)).json()
    assert {"rule": "external:aesthetic", "label": "External score: aesthetic"}.items() <= next(
        d for d in body["decisions"] if d["rule"] == "external:aesthetic"
    ).items()
    assert [(s["name"], s["value"]) for s in body["external_scores"]] == [("aesthetic", 4.5), ("flow", 0.3)]


def test_long_form_scores(client, project, people, video):
    client.force_login(people["admin"])
    body = _scores(client, project, b"video,name,value\nkitchen,quality,0.9\nkitchen,flow,12\n").json()
    assert body == {"imported": 2, "videos": 1, "unknown_videos": []}
    # A second import replaces a score rather than adding one.
    _scores(client, project, b"video,name,value\nkitchen,quality,0.5\n")
    assert _scores_of(video) == {"quality": 0.5, "flow": 12.0}


@pytest.mark.parametrize(
    "data, reason",
    [
        (b"clip,aesthetic\nkitchen,5\n", "scores.csv: the first column must be named video"),
        (b"video,aesthetic\nkitchen,5\nkitchen,lovely\n", "scores.csv: line 3"),
        (b"video,aesthetic\nkitchen,nan\n", "scores.csv: line 2: 'nan' is not a finite number"),
        (b"video,name,value\nkitchen,quality\n", "scores.csv: line 2: expected three columns"),
        (b"", "The submitted file is empty."),
        (bytes(range(256)) * 8, "scores.csv: not a text file"),
    ],
    ids=["no-video-column", "not-a-number", "nan", "short-row", "empty", "binary"],
)
def test_a_bad_scores_file_is_400_with_the_line_and_imports_nothing(client, project, people, video, data, reason):
    client.force_login(people["admin"])
    error = assert_error(_scores(client, project, data), 400, "validation_error")
    assert error["details"]["file"][0].startswith(reason)
    assert not ExternalScore.objects.exists()


def test_scores_import_is_for_admins(client, project, people, video):
    data = b"video,aesthetic\nkitchen,5\n"
    assert_error(_scores(client, project, data), 401, "not_authenticated")
    client.force_login(people["annotator"])
    assert_error(_scores(client, project, data), 403, "permission_denied")
    client.force_login(people["outsider"])
    assert_error(_scores(client, project, data), 404, "not_found")
    assert not ExternalScore.objects.exists()
