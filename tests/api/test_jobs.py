from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from jobs.models import BackgroundJob, JobStatus
from tests import factories

from .error_shape import assert_error

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch):
    """Tasks handed to Celery; nothing needs a worker."""
    names = []

    def send_task(name, args):
        names.append((name, args))
        return type("AsyncResult", (), {"id": "t1"})()

    monkeypatch.setattr("jobs.services.current_app.send_task", send_task)
    return names


def _url(project, suffix=""):
    return f"/api/projects/{project.slug}/jobs/{suffix}"


def _job(project, **kwargs):
    return factories.BackgroundJobFactory(project=project, **kwargs)


@pytest.fixture
def jobs(project, people):
    video = factories.VideoFactory(project=project)
    now = timezone.now()
    made = {
        "done": _job(
            project,
            kind="videos.process",
            target_type="videos.video",
            target_id=video.pk,
            status=JobStatus.SUCCEEDED,
            progress_done=100,
            progress_total=100,
            message="Ready: 3 scenes",
            result={"clips": 3},
            started_at=now,
            finished_at=now,
            created_by=people["admin"],
        ),
        "failed": _job(
            project,
            kind="videos.transcribe",
            target_type="videos.video",
            target_id=video.pk,
            status=JobStatus.FAILED,
            error="speech endpoint said 500",
            progress_done=1,
            progress_total=4,
        ),
        "queued": _job(project, kind="videos.import_manifest", params={"rows": [{"line": 2}]}),
    }
    # Distinct creation times, oldest first in the dict's order.
    for age, job in enumerate(reversed(made.values())):
        BackgroundJob.objects.filter(pk=job.pk).update(created_at=now - timedelta(minutes=age))
    made["video"] = video
    return made


def _ids(response):
    assert response.status_code == 200, response.content
    return [j["id"] for j in response.json()["results"]]


def test_list_is_newest_first_and_scoped_to_the_project(client, project, people, jobs):
    _job(factories.ProjectFactory())  # someone else's
    client.force_login(people["annotator"])  # reading jobs is for every member
    assert _ids(client.get(_url(project))) == [jobs["queued"].pk, jobs["failed"].pk, jobs["done"].pk]


@pytest.mark.parametrize(
    "query, expected",
    [
        ("status=failed", ["failed"]),
        ("status=queued", ["queued"]),
        ("kind=videos.process", ["done"]),
        ("target_type=videos.video", ["failed", "done"]),
        ("ordering=created_at", ["done", "failed", "queued"]),
    ],
)
def test_filters(client, project, people, jobs, query, expected):
    client.force_login(people["reviser"])
    assert _ids(client.get(_url(project, f"?{query}"))) == [jobs[name].pk for name in expected]


def test_filter_by_target(client, project, people, jobs):
    other_video = factories.VideoFactory(project=project)
    _job(project, target_type="videos.video", target_id=other_video.pk)
    client.force_login(people["annotator"])
    query = f"?target_type=videos.video&target_id={jobs['video'].pk}"
    assert _ids(client.get(_url(project, query))) == [jobs["failed"].pk, jobs["done"].pk]


def test_invalid_filter_is_a_validation_error(client, project, people, jobs):
    client.force_login(people["annotator"])
    error = assert_error(client.get(_url(project, "?status=exploded")), 400, "validation_error")
    assert list(error["details"]) == ["status"]


def test_list_item_shape(client, project, people, jobs):
    client.force_login(people["annotator"])
    rows = {j["id"]: j for j in client.get(_url(project)).json()["results"]}
    done, failed = rows[jobs["done"].pk], rows[jobs["failed"].pk]
    assert done["progress"] == {"done": 100, "total": 100, "percent": 100}
    assert done["created_by"] == people["admin"].username and failed["created_by"] is None
    assert done["links"]["retry"] is None
    failed_id, video_id = jobs["failed"].pk, jobs["video"].pk
    assert failed["links"]["retry"] == f"http://testserver/api/projects/{project.slug}/jobs/{failed_id}/retry/"
    assert failed["links"]["target"] == f"http://testserver/api/projects/{project.slug}/videos/{video_id}/"
    assert rows[jobs["queued"].pk]["links"]["target"] is None
    assert failed["progress"]["percent"] == 25 and failed["error"] == "speech endpoint said 500"
    assert "result" not in done and "params" not in done  # the list stays small


def test_list_query_count_does_not_grow_with_jobs(client, project, people, token_for):
    headers = token_for(people["annotator"])

    def count():
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(_url(project), headers=headers).status_code == 200
        return len(ctx.captured_queries)

    _job(project, created_by=people["admin"])
    few = count()
    for _ in range(10):
        _job(
            project,
            created_by=factories.UserFactory(),
            target_type="videos.video",
            target_id=factories.VideoFactory(project=project).pk,
        )
    assert count() == few
    # Token + user, project, the caller's roles, count, rows (with their creators).
    assert few == 5


def test_detail_has_progress_result_error_and_timestamps(client, project, people, jobs):
    client.force_login(people["examiner"])
    body = client.get(_url(project, f"{jobs['done'].pk}/")).json()
    assert body["status"] == "succeeded" and body["kind"] == "videos.process"
    assert body["result"] == {"clips": 3} and body["message"] == "Ready: 3 scenes"
    assert body["started_at"] and body["finished_at"] and body["created_at"]
    assert body["progress"] == {"done": 100, "total": 100, "percent": 100}
    failed = client.get(_url(project, f"{jobs['failed'].pk}/")).json()
    assert failed["error"] == "speech endpoint said 500" and failed["finished_at"] is None
    queued = client.get(_url(project, f"{jobs['queued'].pk}/")).json()
    assert queued["progress"]["percent"] is None  # total not known yet
    assert "params" not in queued  # may hold a whole manifest or a staged file's name


def test_detail_gives_the_same_404_for_missing_and_another_projects_job(client, project, people):
    foreign = _job(factories.ProjectFactory())
    client.force_login(people["annotator"])
    wrong = client.get(_url(project, f"{foreign.pk}/"))
    missing = client.get(_url(project, "999999/"))
    assert assert_error(wrong, 404, "not_found") == assert_error(missing, 404, "not_found")


def test_stranger_gets_404_and_anonymous_401(client, project, people, jobs):
    assert_error(client.get(_url(project)), 401, "not_authenticated")
    assert_error(client.get(_url(project, f"{jobs['done'].pk}/")), 401, "not_authenticated")
    client.force_login(people["outsider"])
    assert_error(client.get(_url(project)), 404, "not_found")
    assert_error(client.get(_url(project, f"{jobs['done'].pk}/")), 404, "not_found")


def test_retry_queues_a_new_job_with_the_same_kind_target_and_params(
    client, project, people, jobs, sent, django_capture_on_commit_callbacks
):
    failed = jobs["failed"]
    BackgroundJob.objects.filter(pk=failed.pk).update(params={"language": "en"})
    client.force_login(people["admin"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(_url(project, f"{failed.pk}/retry/"))
    assert response.status_code == 202, response.content
    body = response.json()
    new = BackgroundJob.objects.get(pk=body["id"])
    assert new.pk != failed.pk and body["status"] == "queued"
    assert (new.kind, new.target_type, new.target_id, new.params) == (
        "videos.transcribe",
        "videos.video",
        jobs["video"].pk,
        {"language": "en"},
    )
    assert new.created_by == people["admin"]
    assert sent == [("videos.transcribe", [new.pk])]


def test_retry_while_the_retry_runs_is_409_with_the_running_job(client, project, people, jobs, sent):
    client.force_login(people["admin"])
    first = client.post(_url(project, f"{jobs['failed'].pk}/retry/")).json()
    error = assert_error(client.post(_url(project, f"{jobs['failed'].pk}/retry/")), 409, "job_already_running")
    assert error["details"]["job"]["id"] == first["id"]
    assert error["details"]["job"]["status"] == "queued"
    assert BackgroundJob.objects.filter(kind="videos.transcribe").count() == 2  # the failed one and one retry


def test_only_failed_or_cancelled_jobs_are_retried(client, project, people, jobs, sent):
    client.force_login(people["admin"])
    for name in ("done", "queued"):
        error = assert_error(client.post(_url(project, f"{jobs[name].pk}/retry/")), 409, "not_retryable")
        assert "failed or cancelled" in error["message"]
    assert BackgroundJob.objects.count() == 3 and not sent


def test_retry_of_a_job_whose_video_was_deleted_says_so(client, project, people, jobs, sent):
    jobs["video"].delete()
    client.force_login(people["admin"])
    error = assert_error(client.post(_url(project, f"{jobs['failed'].pk}/retry/")), 409, "target_gone")
    assert "no longer exists" in error["message"]


def test_retry_is_for_admins(client, project, people, jobs, sent):
    url = _url(project, f"{jobs['failed'].pk}/retry/")
    assert_error(client.post(url), 401, "not_authenticated")
    client.force_login(people["annotator"])
    assert_error(client.post(url), 403, "permission_denied")
    client.force_login(people["outsider"])
    assert_error(client.post(url), 404, "not_found")
    assert BackgroundJob.objects.count() == 3 and not sent
