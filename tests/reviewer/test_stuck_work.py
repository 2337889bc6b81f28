"""The stuck-work page and its bulk actions: items waiting on a model, failed jobs, lapsed leases."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotator.lifecycle import REVISION_AUTHOR, item_history, item_transition, revision_owner
from annotator.models import ItemStatus
from jobs.models import BackgroundJob, JobStatus
from reviewer.models import Assignment, AssignmentStatus
from reviewer.quality_gate import JUDGE_TASK, REASON_NOT_SCORED
from reviewer.stuck_work import CAUSE_ADMIN, StuckRefused, stuck_move, stuck_work
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def sent_tasks(monkeypatch):
    sent = []
    monkeypatch.setattr(
        "jobs.services.current_app.send_task",
        lambda name, args: sent.append((name, args)) or type("R", (), {"id": "x"})(),
    )
    return sent


@pytest.fixture
def stuck(project, people):
    """One submitted MCQ and chain, a failed job, and a lapsed examining lease."""
    project.models_per_step = {"judge_kinds": ["qa_chain", "mcq"]}
    project.save()
    mcq = factories.MCQFactory(project=project, question="Which pmark colour?")
    item_transition(item=mcq, to_status=ItemStatus.SUBMITTED, actor=people["annotator"])
    video = factories.VideoFactory(project=project)
    clip = factories.ClipFactory(video=video, index=0, start_s=0.0, end_s=3.0)
    chain = factories.QAChainFactory(clip=clip, project=project, status=ItemStatus.ANNOTATING)
    item_transition(item=chain, to_status=ItemStatus.SUBMITTED, actor=people["annotator"])
    job = factories.BackgroundJobFactory(
        project=project,
        kind="videos.process",
        status=JobStatus.FAILED,
        error="ffprobe could not read the file",
        target_type="videos.video",
        target_id=video.pk,
    )
    held = factories.MCQFactory(project=project, status=ItemStatus.EXAMINING)
    queue = factories.ReviewQueueFactory(project=project, members=[people["examiner"], people["admin"]])
    long_ago = timezone.now() - timedelta(hours=2)
    lease = factories.AssignmentFactory(
        item=held,
        queue=queue,
        assignee=people["examiner"],
        status=AssignmentStatus.EXPIRED,
        leased_at=long_ago,
        lease_expires_at=long_ago + timedelta(minutes=30),
    )
    return {"mcq": mcq, "chain": chain, "job": job, "held": held, "lease": lease, "queue": queue}


def act(client, project, **form):
    return client.post(reverse("reviewer:stuck_work_act", args=[project.slug]), form, follow=True)


def test_the_page_lists_what_is_stuck_and_the_navigation_and_home_link_it(client, project, people, stuck):
    work = stuck_work(project=project)
    assert {row.item for row in work.waiting} == {stuck["mcq"], stuck["chain"]}
    assert work.failed_jobs == [stuck["job"]]
    assert work.lapsed_leases == [stuck["lease"]]

    client.force_login(people["admin"])
    url = reverse("reviewer:stuck_work", args=[project.slug])
    page = client.get(url).content.decode()
    assert "Which pmark colour?" in page and "ffprobe could not read the file" in page
    assert "never asked" in page and stuck["queue"].name in page
    home = client.get(reverse("studio:project_home", args=[project.slug])).content.decode()
    assert home.count(f'href="{url}"') == 2  # the navigation and "what to do next"

    client.force_login(people["annotator"])
    home = client.get(reverse("studio:project_home", args=[project.slug])).content.decode()
    assert url not in home
    assert client.get(url).status_code == 403


def test_bulk_move_to_examining_marks_each_item_not_scored(client, project, people, stuck):
    client.force_login(people["admin"])
    keys = [f"mcq:{stuck['mcq'].pk}", f"qa_chain:{stuck['chain'].pk}", "mcq:0", "nonsense"]
    page = act(client, project, action="examine", items=keys)
    assert "2 items moved on to examining, marked not scored." in [str(m) for m in page.context["messages"]]
    for item in (stuck["mcq"], stuck["chain"]):
        item.refresh_from_db()
        assert item.status == ItemStatus.EXAMINING
        event = item_history(item=item)[-1]
        assert event.reasons == [REASON_NOT_SCORED, CAUSE_ADMIN] and event.actor == people["admin"]
    # The examiner sees the mark.
    client.force_login(people["examiner"])
    examine = reverse("reviewer:examine_item", args=[project.slug, "qa_chain", stuck["chain"].pk])
    assert "Not scored by the judge: moved on by an admin" in client.get(examine).content.decode()


def test_bulk_move_back_to_the_author(client, project, people, stuck):
    client.force_login(people["admin"])
    act(client, project, action="author", items=[f"mcq:{stuck['mcq'].pk}"])
    stuck["mcq"].refresh_from_db()
    assert stuck["mcq"].status == ItemStatus.REVISING
    assert revision_owner(item=stuck["mcq"]) == REVISION_AUTHOR
    # Already moved: a second move is refused with a reason, not an error.
    page = act(client, project, action="author", items=[f"mcq:{stuck['mcq'].pk}"])
    assert any("not waiting any more" in str(m) for m in page.context["messages"])


def test_bulk_judge_again_queues_the_judge(
    client, project, people, stuck, fake_openai, sent_tasks, django_capture_on_commit_callbacks
):
    client.force_login(people["admin"])
    with django_capture_on_commit_callbacks(execute=True):
        act(client, project, action="judge", items=[f"mcq:{stuck['mcq'].pk}", f"qa_chain:{stuck['chain'].pk}"])
    jobs = BackgroundJob.objects.filter(kind=JUDGE_TASK)
    assert {(j.target_type, j.target_id) for j in jobs} == {
        ("annotator.mcq", stuck["mcq"].pk),
        ("annotator.qachain", stuck["chain"].pk),
    }
    assert [name for name, _args in sent_tasks] == [JUDGE_TASK, JUDGE_TASK]
    rows = {row.item.pk: row for row in stuck_work(project=project).waiting}
    assert rows[stuck["mcq"].pk].judge_active


def test_bulk_judge_again_with_no_endpoint_applies_the_fallback(client, project, people, stuck, settings):
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    client.force_login(people["admin"])
    act(client, project, action="judge", items=[f"mcq:{stuck['mcq'].pk}"])
    stuck["mcq"].refresh_from_db()
    assert stuck["mcq"].status == ItemStatus.EXAMINING
    assert item_history(item=stuck["mcq"])[-1].reasons == [REASON_NOT_SCORED, "no_model_endpoint"]


def test_bulk_retry_of_failed_jobs(client, project, people, stuck):
    client.force_login(people["admin"])
    page = act(client, project, action="retry", jobs=[stuck["job"].pk])
    assert "1 jobs retried." in [str(m) for m in page.context["messages"]]
    retried = BackgroundJob.objects.exclude(pk=stuck["job"].pk).get(kind="videos.process")
    assert retried.status == JobStatus.QUEUED and retried.target_id == stuck["job"].target_id
    assert stuck_work(project=project).failed_jobs == []  # replaced by its retry


def test_bulk_reassign_of_lapsed_leases(client, project, people, stuck):
    client.force_login(people["admin"])
    page = act(client, project, action="reassign", leases=[stuck["lease"].pk], assignee=people["admin"].pk)
    assert [str(m) for m in page.context["messages"]] == [f"1 items assigned to {people['admin'].get_username()}."]
    new = Assignment.objects.get(mcq=stuck["held"], status=AssignmentStatus.ACTIVE)
    assert new.assignee == people["admin"] and new.assigned_by == people["admin"]
    assert stuck_work(project=project).lapsed_leases == []


def test_reassign_needs_a_member_and_refuses_one_without_the_role(client, project, people, stuck):
    client.force_login(people["admin"])
    page = act(client, project, action="reassign", leases=[stuck["lease"].pk])
    assert "Choose the member" in str(list(page.context["messages"])[0])
    page = act(client, project, action="reassign", leases=[stuck["lease"].pk], assignee=people["annotator"].pk)
    assert any("no role" in str(m) for m in page.context["messages"])
    assert not Assignment.objects.filter(status=AssignmentStatus.ACTIVE).exists()


def test_only_admins_act_on_stuck_work(project, people, stuck):
    with pytest.raises(StuckRefused):
        stuck_move(
            project=project,
            user=people["examiner"],
            item_keys=[f"mcq:{stuck['mcq'].pk}"],
            to_status=ItemStatus.EXAMINING,
        )


def test_the_api_sets_the_fallback_and_switching_the_gate_off_releases(client, project, people, stuck):
    client.force_login(people["admin"])
    url = f"/api/projects/{project.slug}/settings/"
    assert client.get(url).json()["judge_fallback"] == "examine"
    response = client.patch(url, {"judge_fallback": "author", "judge_enabled": False}, content_type="application/json")
    assert response.status_code == 200, response.content
    project.refresh_from_db()
    assert project.judge_fallback == "author"
    for item in (stuck["mcq"], stuck["chain"]):
        item.refresh_from_db()
        assert item.status == ItemStatus.EXAMINING
        assert item_history(item=item)[-1].actor == people["admin"]


def test_the_not_scored_reason_logged_by_the_worker_reads_in_the_reader_s_language(project, people, stuck):
    from django.utils import translation

    from llm.endpoints import NO_ENDPOINT_MESSAGE
    from reviewer.stuck_work import not_scored_note

    chain = stuck["chain"]
    item_transition(
        item=chain,
        to_status=ItemStatus.EXAMINING,
        actor=None,
        reasons=[REASON_NOT_SCORED, "no_model_endpoint"],
        comment=NO_ENDPOINT_MESSAGE,
    )
    assert not_scored_note(chain).reason == NO_ENDPOINT_MESSAGE
    with translation.override("zh-hans"):
        note = not_scored_note(chain)
    assert note.reason == "本项目未设置模型端点：项目管理员可在“设置 → 模型端点”中设置。"
    assert "没有模型端点" in note.label
