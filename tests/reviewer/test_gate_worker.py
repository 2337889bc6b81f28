"""The quality gate with the real worker and a judge that fails every call: nothing waits silently.

By the default fallback a failing judge passes the item on to examining, marked not scored with the
reason; a project that waits for an admin keeps its items submitted until the stuck-work page
retries their jobs in bulk, or the gate is switched off and releases them.
"""

import time

import pytest

from annotator.lifecycle import item_history
from annotator.models import ItemStatus, QAChain, QAPair
from jobs.models import BackgroundJob, JobStatus
from projects.models import JudgeFallback
from projects.services import project_update
from projects.taxonomies import CHAIN_JUDGE_DIMENSIONS
from reviewer.quality_gate import JUDGE_TASK, REASON_GATE_OFF, REASON_NOT_SCORED, item_submit_and_gate
from reviewer.stuck_work import stuck_jobs_retry, stuck_work
from tests import factories
from tests.browser.helpers import playable_video
from tests.fakes.openai_server import Reply
from videos.models import Clip
from videos.synthetic import SceneSpec, make_scene_video

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

S = ItemStatus
JUDGE = "vidqa:judge:"


@pytest.fixture
def world(settings, celery_worker_process, tmp_path):
    settings.MEDIA_ROOT = celery_worker_process.extra["media_root"]  # the worker samples the clips' frames
    source = tmp_path / "generated" / "kitchen.mp4"
    source.parent.mkdir()
    make_scene_video(source, [SceneSpec(3.0), SceneSpec(3.0)], width=320, height=180, fps=25)
    project = factories.ProjectFactory(name="Failing judge", slug="failing-judge", judge_enabled=True)
    people = factories.people_for(project)
    video = playable_video(project, source, tmp_path, durations=(3.0, 3.0), fps=25)
    chains = []
    for index in range(3):
        clip = Clip.objects.create(
            video=video, index=index, start_s=index * 1.0, end_s=index + 2.0, scene_start_s=0.0, scene_end_s=3.0
        )
        chain = QAChain.objects.create(project=project, clip=clip, status=S.ANNOTATING)
        QAPair.objects.create(chain=chain, index=0, question=f"What happens in clip {index}?", answer="She cooks.")
        chains.append(chain)
    return project, people, chains


def wait_for(check, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    jobs = list(BackgroundJob.objects.values_list("kind", "status", "message", "error"))
    raise AssertionError(f"{what} did not happen in {timeout} s; jobs: {jobs}")


def status_of(chain) -> str:
    chain.refresh_from_db()
    return chain.status


def latest_judge_job(chain) -> BackgroundJob | None:
    return BackgroundJob.objects.filter(kind=JUDGE_TASK, target_id=chain.pk).order_by("-pk").first()


def test_a_judge_failing_every_call_never_leaves_work_waiting_silently(world, fake_openai_shared):
    project, people, (first, second, third) = world
    fake_openai_shared.always(JUDGE, Reply.status(500))

    # The default: on to examining, marked not scored, with the reason.
    item_submit_and_gate(item=first, user=people["annotator"])
    wait_for(lambda: status_of(first) == S.EXAMINING, "the fallback move to examining")
    event = item_history(item=first)[-1]
    assert event.reasons == [REASON_NOT_SCORED, "judge_model_failed"] and "500" in event.comment
    assert latest_judge_job(first).status == JobStatus.SUCCEEDED

    # A project that waits for an admin: the items stay submitted and their jobs fail with the reason.
    project.judge_fallback = JudgeFallback.WAIT
    project.save(update_fields=["judge_fallback"])
    for chain in (second, third):
        item_submit_and_gate(item=chain, user=people["annotator"])
    for chain in (second, third):
        wait_for(lambda c=chain: getattr(latest_judge_job(c), "status", "") == JobStatus.FAILED, "a failed judge job")
        assert status_of(chain) == S.SUBMITTED
    work = stuck_work(project=project)
    assert {row.item.pk for row in work.waiting} == {second.pk, third.pk}
    assert {job.target_id for job in work.failed_jobs} == {second.pk, third.pk}

    # The stuck-work page retries the second's job in bulk; the judge answers this time.
    fake_openai_shared.reset()
    scores = dict.fromkeys(CHAIN_JUDGE_DIMENSIONS, 95)
    fake_openai_shared.always(JUDGE, Reply.json({"scores": scores, "overall": 95, "comments": "Fine."}))
    outcome = stuck_jobs_retry(project=project, user=people["admin"], job_ids=[latest_judge_job(second).pk])
    assert outcome.done == 1 and not outcome.refused
    wait_for(lambda: status_of(second) == S.SCORED, "the retried judge to score it")

    # Switching the gate off releases the one still waiting, with the reason.
    project_update(project=project, user=people["admin"], judge_enabled=False)
    assert status_of(third) == S.EXAMINING
    assert item_history(item=third)[-1].reasons == [REASON_GATE_OFF]
