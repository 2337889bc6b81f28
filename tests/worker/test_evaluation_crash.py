"""An evaluation run whose worker is killed mid-way finishes on the next worker, every question answered
exactly once; starting the finished run again makes no call.

Real processes, as in test_crash.py: a Celery worker with beat (the stale-job sweep requeues the
run), the fake model answering slowly so the kill lands between answers.
"""

import os
import signal

import pytest

from evaluations.models import EvaluationRun, Prediction, RunStatus
from evaluations.runs import evaluation_resume, evaluation_start
from jobs.models import BackgroundJob
from tests.evaluations.world import QUESTIONS, build_release, responder
from tests.worker.test_crash import _finished, _poll, stage  # noqa: F401 - the fixture is used by name

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def _answers(run) -> int:
    return Prediction.objects.filter(run=run).count()


def test_a_killed_run_finishes_on_the_next_worker_each_question_once(stage, fake_openai_session, settings, tmp_path):  # noqa: F811
    fake_openai_session.reset()
    fake_openai_session.set_default(responder)
    fake_openai_session.latency_ms = 400
    settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY = fake_openai_session.base_url, "sk-fake"
    env = {
        "OPENAI_BASE_URL": fake_openai_session.base_url,
        "OPENAI_API_KEY": "sk-fake",
        "LLM_CONCURRENCY": "1",
        # The killed worker's slot frees itself after 3 s rather than the call's timeout + 60 s.
        "LLM_SLOT_LEASE_S": "3",
    }
    stage.env.update(env)
    release = build_release(tmp_path, settings)
    worker = stage.start_worker()
    run = evaluation_start(project=release.project, release=release, model="model-a", frames=2)

    _poll("two answers written", lambda: _answers(run) >= 2, log=stage.log)
    os.killpg(worker.proc.pid, signal.SIGKILL)
    worker.proc.wait(10)
    assert _answers(run) < len(QUESTIONS), "the run ended before the kill: slow the fake model down"
    stage.start_worker()
    job = _finished(stage, BackgroundJob.objects.get(pk=run.job_id), timeout=90)
    run.refresh_from_db()
    assert job.status == "succeeded" and job.attempts == 2, stage.log()
    assert run.status == RunStatus.FINISHED and run.summary["scored"] == len(QUESTIONS)
    assert sorted(Prediction.objects.filter(run=run).values_list("index", flat=True)) == list(range(len(QUESTIONS)))
    assert run.summary["accuracy"] == 0.5  # the same answers as an uninterrupted run

    asked = len(fake_openai_session.requests("chat"))
    evaluation_resume(run=run)
    again = _finished(stage, BackgroundJob.objects.get(pk=EvaluationRun.objects.get(pk=run.pk).job_id))
    assert again.status == "succeeded"
    assert len(fake_openai_session.requests("chat")) == asked  # a finished run asks nothing
    fake_openai_session.latency_ms = 0
    fake_openai_session.reset()
