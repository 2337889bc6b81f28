import json

import pytest
from django.urls import reverse

from annotator.models import ItemStatus
from jobs.models import BackgroundJob, JobStatus
from tests import factories

pytestmark = pytest.mark.django_db


def test_login_required_everywhere(client, project):
    for url in (reverse("studio:project_list"), reverse("studio:project_home", args=[project.slug])):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


def test_project_list_shows_only_my_projects(client, people, project):
    other = factories.ProjectFactory(name="Secret project")
    factories.MembershipFactory(project=other, user=people["admin"], role="annotator")
    client.force_login(people["admin"])
    response = client.get(reverse("studio:project_list"))
    assert response.status_code == 200
    assert project.name in response.text and "Secret project" in response.text

    client.force_login(people["annotator"])
    # A single project takes an annotator straight to it.
    response = client.get(reverse("studio:project_list"))
    assert response.status_code == 302
    assert response["Location"] == reverse("studio:project_home", args=[project.slug])
    response = client.get(reverse("studio:project_list") + "?all=1")
    assert "Secret project" not in response.text


def test_project_home_is_404_for_strangers_and_missing(client, people, project):
    client.force_login(people["outsider"])
    assert client.get(reverse("studio:project_home", args=[project.slug])).status_code == 404
    assert client.get(reverse("studio:project_home", args=["no-such"])).status_code == 404


def test_project_home_says_what_to_do_next_per_role(client, people, project):
    video = factories.VideoFactory(project=project)
    for i, status in enumerate(
        [ItemStatus.ANNOTATING, ItemStatus.ANNOTATING, ItemStatus.EXAMINING, ItemStatus.FLAGGED]
    ):
        factories.QAChainFactory(clip=factories.ClipFactory(video=video, index=i), status=status)

    client.force_login(people["annotator"])
    page = client.get(reverse("studio:project_home", args=[project.slug])).text
    assert "Annotate drafted items" in page
    assert "Examine submitted items" not in page

    client.force_login(people["examiner"])
    page = client.get(reverse("studio:project_home", args=[project.slug])).text
    assert "Examine submitted items" in page and "Annotate drafted items" not in page

    client.force_login(people["admin"])
    page = client.get(reverse("studio:project_home", args=[project.slug])).text
    assert "Curate videos that have no decision yet" in page


def test_project_home_query_count_does_not_grow_with_items(client, people, project, django_assert_max_num_queries):
    client.force_login(people["admin"])
    url = reverse("studio:project_home", args=[project.slug])
    video = factories.VideoFactory(project=project, duration_s=600.0)
    factories.QAChainFactory(clip=factories.ClipFactory(video=video, index=0))
    with django_assert_max_num_queries(14) as small:
        client.get(url)
    for i in range(1, 30):
        factories.QAChainFactory(clip=factories.ClipFactory(video=video, index=i))
        BackgroundJob.objects.create(project=project, kind="videos.probe", status=JobStatus.FAILED, error="x")
    with django_assert_max_num_queries(len(small.captured_queries)):
        client.get(url)


def test_job_fragment_polls_until_finished_and_retry_is_admin_only(
    client, people, project, django_capture_on_commit_callbacks, monkeypatch
):
    sent = []
    monkeypatch.setattr(
        "jobs.services.current_app.send_task",
        lambda name, args: sent.append((name, args)) or type("R", (), {"id": "t1"})(),
    )
    job = BackgroundJob.objects.create(
        project=project, kind="videos.probe", status=JobStatus.RUNNING, progress_done=3, progress_total=4
    )
    url = reverse("studio:job_status", args=[project.slug, job.pk])
    client.force_login(people["annotator"])
    fragment = client.get(url, headers={"HX-Request": "true"}).text
    assert 'hx-trigger="every 1s"' in fragment and "75%" in fragment and "<html" not in fragment

    job.status = JobStatus.FAILED
    job.error = "ffprobe: not a video"
    job.save()
    response = client.get(url, headers={"HX-Request": "true"})
    fragment = response.text
    assert "hx-trigger" not in fragment and "not a video" in fragment and "Retry" not in fragment
    # The page around it hears that the job ended (the video list reloads its rows).
    assert json.loads(response.headers["HX-Trigger-After-Settle"]) == {"job-finished": {"job": job.pk}}

    retry = reverse("studio:job_retry", args=[project.slug, job.pk])
    assert client.post(retry).status_code == 403
    client.force_login(people["admin"])
    assert "Retry" in client.get(url, headers={"HX-Request": "true"}).text
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(retry, headers={"HX-Request": "true"})
    assert response.status_code == 200
    new_job = BackgroundJob.objects.exclude(pk=job.pk).get()
    assert new_job.kind == "videos.probe" and new_job.status == JobStatus.QUEUED
    assert sent == [("videos.probe", [new_job.pk])]


def test_project_admins_edit_settings_and_contradictions_are_refused(client, people, project):
    url = reverse("studio:project_settings", args=[project.slug])
    client.force_login(people["annotator"])
    assert client.get(url).status_code == 403
    client.force_login(people["admin"])
    from studio.forms import ProjectSettingsForm

    data = {k: v for k, v in ProjectSettingsForm(instance=project).initial.items() if v is not None}
    data.update(
        curation_rules='["duration", "scene_count"]',
        external_score_thresholds='{"aesthetic": {"min": 4.5}}',
        models_per_step="{}",
        min_duration_s="90",
        judge_enabled="on",
    )
    response = client.post(url, data)
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.min_duration_s == 90 and project.curation_rules == ["duration", "scene_count"]

    response = client.post(url, {**data, "curation_rules": '["no_such_rule"]'})
    assert response.status_code == 200 and "A list of rule codes" in response.text
    response = client.post(url, {**data, "min_scenes": "20", "max_scenes": "5"})
    assert response.status_code == 200 and "minimum number of scenes is above the maximum" in response.text
    project.refresh_from_db()
    assert project.min_scenes == 5
