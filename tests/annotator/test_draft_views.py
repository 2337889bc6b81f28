"""The draft-run screen and the seed-question curation screen: permissions, starting runs, summaries,
and keep/reject/edit/add (through the views, and by keyboard in Chromium)."""

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from annotator import tasks
from annotator.models import QAChain, SeedQuestion, SeedStatus
from jobs.models import BackgroundJob, JobStatus
from llm.models import LLMCall
from tests import factories
from tests.fakes.openai_server import Reply
from videos.ingest import video_import
from videos.models import Clip, VideoStatus
from videos.synthetic import SceneSpec, make_scene_video

pytestmark = pytest.mark.django_db

TASKS = [
    {"group": "coarse perception", "task": "video topic"},
    {"group": "fine perception", "task": "event recognition"},
]


@pytest.fixture(autouse=True)
def _no_worker(request, monkeypatch, settings):
    if request.node.get_closest_marker("worker") is None:  # the worker test sends its job for real
        monkeypatch.setattr("jobs.services.current_app.send_task", lambda name, args: type("R", (), {"id": "x"})())
    settings.LLM_CONCURRENCY = 1


@pytest.fixture
def project(db):
    project = factories.ProjectFactory(kind="livibench")
    project.taxonomies = {**project.taxonomies, "tasks": TASKS}
    project.save()
    return project


@pytest.fixture
def admin(client, people):
    client.force_login(people["admin"])
    return people["admin"]


def _messages(response) -> list[str]:
    return [str(m) for m in response.context["messages"]] if response.context else []


# --- Permissions ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, args, method",
    [
        ("annotator:drafts", [], "get"),
        ("annotator:draft_start", [], "post"),
        ("annotator:seeds", [], "get"),
        ("annotator:seed_add", [], "post"),
    ],
)
def test_draft_screens_are_for_project_admins_only(client, people, project, name, args, method):
    url = reverse(name, args=[project.slug, *args])
    assert getattr(client, method)(url).status_code == 302  # to the login page
    client.force_login(people["annotator"])
    assert getattr(client, method)(url).status_code == 403
    client.force_login(people["outsider"])
    assert getattr(client, method)(url).status_code == 404
    assert not BackgroundJob.objects.exists() and not SeedQuestion.objects.exists()


def test_seed_changes_are_for_admins_only(client, people, project):
    seed = SeedQuestion.objects.create(project=project, task="video topic", text="What is it about?")
    client.force_login(people["examiner"])
    url = reverse("annotator:seed_change", args=[project.slug, seed.pk])
    assert client.post(url, {"action": "keep"}).status_code == 403
    seed.refresh_from_db()
    assert seed.status == SeedStatus.PROPOSED


# --- Starting runs ----------------------------------------------------------------------------------


def test_page_shows_the_steps_the_scope_and_what_exists(client, admin, project):
    factories.VideoFactory(project=project, name="alpha")
    factories.VideoFactory(project=project, name="broken", status=VideoStatus.FAILED)

    response = client.get(reverse("annotator:drafts", args=[project.slug]))

    assert response.status_code == 200
    html = response.content.decode()
    assert "QA chains, one per clip" in html and "Answers and distractors" in html
    assert "All 1 videos that can be drafted" in html
    assert '<option value="video topic">video topic — coarse perception</option>' in html
    assert "No draft run yet." in html


def test_start_a_run_over_the_project(client, admin, project):
    response = client.post(reverse("annotator:draft_start", args=[project.slug]), {"step": "chains", "scope": "all"})

    assert response.status_code == 302
    job = BackgroundJob.objects.get()
    assert (job.kind, job.params, job.target_id, job.created_by) == (
        "annotator.draft_chains",
        {"step": "chains"},
        None,
        admin,
    )
    page = client.get(response.url)
    assert f"Started: qa chains, one per clip for the project (job {job.pk})." in _messages(page)


NO_ENDPOINT = "No model endpoint is set for this project: a project admin can set one under Settings → Model endpoint."


@pytest.mark.parametrize("step", ["chains", "descriptions", "seeds"])
def test_a_run_with_no_model_endpoint_is_refused_before_any_job_exists(client, admin, project, settings, step):
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    before = BackgroundJob.objects.count()

    response = client.post(reverse("annotator:draft_start", args=[project.slug]), {"step": step, "scope": "all"})

    assert response.status_code == 302
    assert BackgroundJob.objects.count() == before
    assert _messages(client.get(response.url)) == [NO_ENDPOINT]


def test_start_a_run_over_the_filtered_videos_fixes_the_selection(client, admin, project):
    alpha = factories.VideoFactory(project=project, name="alpha-1")
    factories.VideoFactory(project=project, name="beta-2")
    url = reverse("annotator:draft_start", args=[project.slug])

    client.post(url, {"step": "descriptions", "scope": "filtered", "q": "alpha"})

    job = BackgroundJob.objects.get()
    assert job.params == {"step": "descriptions", "video_ids": [alpha.pk]}
    # Nothing matches: a clear message and no job.
    response = client.post(url, {"step": "descriptions", "scope": "filtered", "q": "gamma"}, follow=True)
    assert "No video matches these filters; nothing was started." in _messages(response)
    assert BackgroundJob.objects.count() == 1


def test_start_a_run_for_one_video_and_refuse_a_second_while_it_runs(client, admin, project):
    video = factories.VideoFactory(project=project, name="alpha")
    url = reverse("annotator:draft_start", args=[project.slug])

    client.post(url, {"step": "relations", "scope": "video", "video": video.pk})
    response = client.post(url, {"step": "relations", "scope": "video", "video": video.pk}, follow=True)

    job = BackgroundJob.objects.get()
    assert (job.target_type, job.target_id, job.params["video_ids"]) == ("videos.video", video.pk, [video.pk])
    assert any("already queued" in m for m in _messages(response))


@pytest.mark.parametrize(
    "data, message",
    [
        ({}, "Choose which draft step to run."),
        ({"step": "chains", "scope": "video", "video": ""}, "Choose the video to draft for"),
        ({"step": "chains", "scope": "video", "video": "abc"}, "The video must be a whole number, not “abc”."),
        ({"step": "seeds", "tasks": ["cooking"]}, "Not a task of this project: cooking."),
        ({"step": "mcqs", "count": "50"}, "Count must be between 1 and 20."),
    ],
)
def test_bad_input_gets_a_clear_message_and_starts_nothing(client, admin, project, data, message):
    response = client.post(reverse("annotator:draft_start", args=[project.slug]), data, follow=True)

    assert response.status_code == 200
    assert any(message in m for m in _messages(response)), _messages(response)
    assert not BackgroundJob.objects.exists()


def test_a_video_of_another_project_cannot_be_chosen(client, admin, project):
    other = factories.VideoFactory()
    response = client.post(
        reverse("annotator:draft_start", args=[project.slug]),
        {"step": "chains", "scope": "video", "video": other.pk},
        follow=True,
    )
    assert any("Choose the video to draft for" in m for m in _messages(response))
    assert not BackgroundJob.objects.exists()


def test_the_seed_screen_can_ask_for_more_and_come_back(client, admin, project):
    seeds_url = reverse("annotator:seeds", args=[project.slug])
    response = client.post(
        reverse("annotator:draft_start", args=[project.slug]),
        {"step": "seeds", "tasks": "video topic", "more": "1", "next": seeds_url},
    )
    assert response.url == seeds_url
    assert BackgroundJob.objects.get().params == {"step": "seeds", "tasks": ["video topic"], "more": True}
    # A second seeds run waits for the first; and `next` never leads off the site.
    refused = client.post(
        reverse("annotator:draft_start", args=[project.slug]),
        {"step": "seeds", "tasks": "event recognition", "next": "https://evil.example/"},
        follow=True,
    )
    assert any("already queued" in m for m in _messages(refused))
    assert refused.redirect_chain == [(reverse("annotator:drafts", args=[project.slug]), 302)]
    BackgroundJob.objects.update(status=JobStatus.SUCCEEDED)
    client.post(reverse("annotator:draft_start", args=[project.slug]), {"step": "seeds", "tasks": "event recognition"})
    assert BackgroundJob.objects.filter(status=JobStatus.QUEUED).get().params["tasks"] == ["event recognition"]


# --- Watching runs ------------------------------------------------------------------------------


def test_a_finished_run_shows_its_summary_failures_and_the_calls_it_made(
    client, people, project, tmp_path, fake_openai
):
    admin = people["admin"]
    admin.is_staff = True  # staff who may read model calls in the admin site
    admin.save(update_fields=["is_staff"])
    admin.user_permissions.add(Permission.objects.get(codename="view_llmcall"))
    client.force_login(admin)
    path = tmp_path / "two.mp4"
    make_scene_video(path, [SceneSpec(2.0), SceneSpec(2.0)], width=160, height=90)
    video = video_import(project=project, source=path, filename="two.mp4", process=False)
    video.status = VideoStatus.READY
    video.save(update_fields=["status"])
    for i in range(2):
        Clip.objects.create(video=video, index=i, start_s=2.0 * i, end_s=2.0 * i + 2.0)
    fake_openai.script("runs from 2 s to 4 s", [Reply.text("no json"), Reply.text("still no json")])
    client.post(reverse("annotator:draft_start", args=[project.slug]), {"step": "chains", "scope": "all"})
    job = BackgroundJob.objects.get()
    tasks.draft_chains(job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED and QAChain.objects.count() == 1

    html = client.get(reverse("annotator:drafts", args=[project.slug])).content.decode()

    failed_call = LLMCall.objects.get(outcome="invalid")
    assert "two clip 1</strong>: qa_chain: no usable answer after one repair" in html
    assert reverse("admin:llm_llmcall_change", args=[failed_call.pk]) in html
    calls = LLMCall.objects.order_by("pk")
    expected = (
        f"{reverse('admin:llm_llmcall_changelist')}?project__id__exact={project.pk}&amp;step__exact=qa_chain"
        f"&amp;id__gte={calls.first().pk}&amp;id__lte={calls.last().pk}"
    )
    assert expected in html
    # The admin list behind the link holds exactly the run's calls.
    listed = client.get(expected.replace("&amp;", "&"))
    assert listed.status_code == 200 and listed.context["cl"].result_count == 2
    assert f'hx-get="{reverse("annotator:draft_job", args=[project.slug, job.pk])}"' not in html  # finished: no polling


def test_a_running_run_polls_its_own_row(client, admin, project):
    job = factories.BackgroundJobFactory(
        project=project, kind="annotator.draft_chains", status="running", progress_done=3, progress_total=10
    )
    url = reverse("annotator:draft_job", args=[project.slug, job.pk])

    html = client.get(url, headers={"HX-Request": "true"}).content.decode()

    assert f'id="draft-job-{job.pk}"' in html and f'hx-get="{url}"' in html
    assert "30%" in html
    assert "Model calls" not in html  # no summary before the run has one
    # Other jobs are not draft runs: not shown here.
    other = factories.BackgroundJobFactory(project=project, kind="videos.process")
    assert client.get(reverse("annotator:draft_job", args=[project.slug, other.pk])).status_code == 404


def test_the_runs_list_takes_a_fixed_number_of_queries(client, admin, project, django_assert_max_num_queries):
    for n in range(15):
        factories.BackgroundJobFactory(
            project=project,
            kind="annotator.draft_chains",
            status="succeeded",
            created_by=admin,
            result={"step": "chains", "created": n, "failed": [], "calls": {"count": 0}},
        )
    with django_assert_max_num_queries(20):
        response = client.get(reverse("annotator:drafts", args=[project.slug]))
    assert response.content.decode().count('class="draft-run"') == 15


# --- Seed curation --------------------------------------------------------------------------------


def test_seeds_are_listed_per_task_with_their_counts(client, admin, project):
    SeedQuestion.objects.create(project=project, task="video topic", text="What is the stream about?", status="kept")
    SeedQuestion.objects.create(project=project, task="video topic", text="Who is the host?")
    SeedQuestion.objects.create(project=project, task="old task", text="A seed of a removed task.")

    html = client.get(reverse("annotator:seeds", args=[project.slug])).content.decode()

    assert "1 kept · 1 undecided · 0 rejected" in html
    assert "What is the stream about?" in html and "A seed of a removed task." in html
    assert html.index("video topic") < html.index("event recognition") < html.index("old task")


@pytest.mark.parametrize("action, status", [("keep", "kept"), ("reject", "rejected"), ("propose", "proposed")])
def test_keep_reject_or_undecide_a_seed_returns_its_row(client, admin, project, action, status):
    seed = SeedQuestion.objects.create(project=project, task="video topic", text="Who is the host?", status="kept")
    url = reverse("annotator:seed_change", args=[project.slug, seed.pk])

    response = client.post(url, {"action": action}, headers={"HX-Request": "true"})

    seed.refresh_from_db()
    assert seed.status == status
    html = response.content.decode()
    assert html.strip().startswith(f'<li class="seed seed-{status}" id="seed-{seed.pk}"')


def test_editing_a_seed_keeps_its_origin_and_refuses_empty_or_duplicate_text(client, admin, project):
    seed = SeedQuestion.objects.create(project=project, task="video topic", text="Who is the host?")
    SeedQuestion.objects.create(project=project, task="video topic", text="What is the stream about?")
    url = reverse("annotator:seed_change", args=[project.slug, seed.pk])
    hx = {"HX-Request": "true"}

    client.post(url, {"action": "edit", "text": "  Who hosts   the stream? "}, headers=hx)
    seed.refresh_from_db()
    assert (seed.text, seed.origin) == ("Who hosts the stream?", "machine")

    empty = client.post(url, {"action": "edit", "text": "   "}, headers=hx).content.decode()
    duplicate = client.post(url, {"action": "edit", "text": "what is the STREAM about?"}, headers=hx).content.decode()
    seed.refresh_from_db()
    assert seed.text == "Who hosts the stream?"
    assert "A seed question needs some text." in empty
    assert "The library of video topic already holds this question." in duplicate
    assert 'value="what is the STREAM about?"' in duplicate  # what was typed is not lost
    # Without htmx: back to the page with the message.
    response = client.post(url, {"action": "edit", "text": ""}, follow=True)
    assert "A seed question needs some text." in _messages(response)


def test_adding_a_seed_keeps_it_at_once(client, admin, project):
    url = reverse("annotator:seed_add", args=[project.slug])

    row = client.post(url, {"task": "event recognition", "text": "What happens first?"}, headers={"HX-Request": "true"})

    seed = SeedQuestion.objects.get()
    assert (seed.task, seed.status, seed.origin, seed.created_by) == ("event recognition", "kept", "human", admin)
    assert f'id="seed-{seed.pk}"' in row.content.decode()
    again = client.post(
        url, {"task": "event recognition", "text": "what happens first?"}, headers={"HX-Request": "true"}
    )
    assert again["HX-Retarget"] == "#add-error-event-recognition"
    assert "already holds this question" in again.content.decode()
    unknown = client.post(url, {"task": "cooking", "text": "Anything?"}, follow=True)
    assert "“cooking” is not a task of this project." in _messages(unknown)
    assert SeedQuestion.objects.count() == 1


# --- Keyboard curation in Chromium -------------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_curate_seeds_with_the_keyboard_alone(live_server, page):
    project = factories.ProjectFactory(kind="livibench", slug="seeds-kb")
    project.taxonomies = {**project.taxonomies, "tasks": TASKS}
    project.save()
    admin = factories.people_for(project)["admin"]
    first = SeedQuestion.objects.create(project=project, task="video topic", text="What is the stream about?")
    second = SeedQuestion.objects.create(project=project, task="video topic", text="Who is the host?")
    third = SeedQuestion.objects.create(project=project, task="video topic", text="Where is it filmed?")

    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", admin.username)
    page.fill("input[name=password]", factories.PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/p/seeds-kb/")
    page.goto(f"{live_server.url}/p/seeds-kb/drafts/seeds/")

    page.keyboard.press("j")  # the first seed
    page.keyboard.press("y")  # keep it; the focus moves on to the second
    page.locator(f"#seed-{first.pk}.seed-kept").wait_for()
    page.keyboard.press("x")  # reject the second
    page.locator(f"#seed-{second.pk}.seed-rejected").wait_for()
    page.keyboard.press("e")  # edit the third
    page.keyboard.press("Control+a")
    page.keyboard.type("Where is the stream filmed?")
    page.keyboard.press("Enter")
    page.locator(f"#seed-{third.pk} .seed-text", has_text="Where is the stream filmed?").wait_for()
    page.keyboard.press("a")  # add to this task
    page.keyboard.type("What happens at the start?")
    page.keyboard.press("Enter")
    page.locator("li.seed", has_text="What happens at the start?").wait_for()

    statuses = dict(SeedQuestion.objects.values_list("text", "status"))
    assert statuses == {
        "What is the stream about?": "kept",
        "Who is the host?": "rejected",
        "Where is the stream filmed?": "proposed",
        "What happens at the start?": "kept",
    }


# --- Through the real worker ------------------------------------------------------------------------


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_run_started_in_the_browser_is_drafted_by_the_worker(
    client, settings, celery_worker_process, fake_openai_shared, tmp_path
):
    import time

    settings.MEDIA_ROOT = celery_worker_process.extra["media_root"]  # the worker reads the same files
    project = factories.ProjectFactory(slug="worker-drafts", frames_per_clip=2)
    client.force_login(factories.people_for(project)["admin"])
    path = tmp_path / "two.mp4"
    make_scene_video(path, [SceneSpec(2.0), SceneSpec(2.0)], width=160, height=90)
    video = video_import(project=project, source=path, filename="two.mp4", process=False)
    video.status = VideoStatus.READY
    video.save(update_fields=["status"])
    for i in range(2):
        Clip.objects.create(video=video, index=i, start_s=2.0 * i, end_s=2.0 * i + 2.0)

    client.post(
        reverse("annotator:draft_start", args=[project.slug]), {"step": "chains", "scope": "video", "video": video.pk}
    )

    job = BackgroundJob.objects.get(kind="annotator.draft_chains")
    deadline = time.monotonic() + 90
    while not job.is_finished and time.monotonic() < deadline:
        time.sleep(0.25)
        job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, f"{job.error}\n{celery_worker_process.log_tail()}"
    assert job.result["created"] == 2 and job.progress_done == job.progress_total == 2
    assert QAChain.objects.filter(clip__video=video, status="draft").count() == 2
    assert len(fake_openai_shared.requests(match=f"vidqa:qa_chain:project-{project.pk}")) == 2
