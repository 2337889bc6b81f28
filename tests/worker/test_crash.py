"""A worker killed in the middle of a video's processing: the job still ends, once, and can be retried.

Real processes on the real stack: a Celery worker (with beat, so the stale-job sweep runs every
second) on its own Redis database, so the suite's shared worker never takes these messages. The
worker's ffmpeg is a stand-in that, while a hold file exists, stops before running the real one and
writes its own pid and its parent's (the pool process running the task): the test kills the worker
exactly there, in the middle of scene detection, with the job running and its heartbeat beating.
"""

import os
import shutil
import signal
import time
from pathlib import Path

import pytest
from celery import Celery
from django.urls import reverse

from config.celery import app as project_app
from jobs.heartbeat import job_is_stale
from jobs.models import BackgroundJob, JobStatus
from videos.models import Video, VideoStatus
from videos.synthetic import SceneSpec, make_scene_video

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

# Short enough for a test, long enough that a loaded machine never lets a live job's heartbeat lapse.
TIMINGS = {"JOB_HEARTBEAT_S": "0.5", "JOB_STALE_AFTER_S": "4", "JOB_SWEEP_PERIOD_S": "1"}
CRASH_REDIS_DB = 7


def _poll(what: str, check, timeout: float = 60, log=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout:.0f} s\n{log() if log else ''}")


class Stage:
    """The worker side of a test: workers to start and kill, and the ffmpeg that holds still."""

    def __init__(self, base: Path, env: dict[str, str]):
        self.base, self.env = base, env
        self.hold = base / "hold"
        self.workers = []

    def start_worker(self, **env):
        from scripts.loopback_services import start_celery_worker

        worker = start_celery_worker(
            self.base / f"worker-{len(self.workers)}", {**self.env, **env}, concurrency=2, beat=True
        )
        self.workers.append(worker)
        return worker

    def log(self) -> str:
        return "\n\n".join(f"--- {w.log_path}\n{w.log_tail(60)}" for w in self.workers)

    def held_process(self, job: BackgroundJob) -> tuple[int, int]:
        """Hold the next ffmpeg; once the job's task reached it, (ffmpeg's pid, the pool process's pid)."""
        paused = Path(f"{self.hold}.paused")
        _poll("ffmpeg held", paused.exists, log=self.log)
        pids = _poll("pids written", lambda: paused.read_text().split() if paused.exists() else None)
        job.refresh_from_db()
        assert job.status == JobStatus.RUNNING and job.heartbeat_at and job.attempts == 1, job.__dict__
        return int(pids[0]), int(pids[1])

    def release(self) -> None:
        self.hold.unlink(missing_ok=True)
        Path(f"{self.hold}.paused").unlink(missing_ok=True)


@pytest.fixture
def stage(transactional_db, settings, tmp_path):
    """A crash-test worker setup; the test's own task messages go to the same Redis database."""
    from django.db import connection

    if not os.environ.get("REDIS_URL"):
        pytest.fail("REDIS_URL is not set: run the suite with `make test`, which starts Redis and PostgreSQL")
    redis_url = os.environ["REDIS_URL"].rsplit("/", 1)[0] + f"/{CRASH_REDIS_DB}"
    db_url = os.environ["DATABASE_URL"].rsplit("/", 1)[0] + "/" + connection.settings_dict["NAME"]
    hold = tmp_path / "hold"
    ffmpeg = tmp_path / "ffmpeg-held"
    ffmpeg.write_text(
        "#!/bin/sh\n"
        f'if [ -e "{hold}" ]; then\n'
        f'  echo "$$ $PPID" > "{hold}.tmp" && mv "{hold}.tmp" "{hold}.paused"\n'
        f'  i=0; while [ -e "{hold}" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n'
        "fi\n"
        f'exec {shutil.which("ffmpeg")} "$@"\n'
    )
    ffmpeg.chmod(0o755)
    for name, value in TIMINGS.items():
        setattr(settings, name, float(value))
    env = {
        **TIMINGS,
        "REDIS_URL": redis_url,
        "DATABASE_URL": db_url,
        "DJANGO_MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "DATABASE_CONN_MAX_AGE": "0",
        "FFMPEG_BINARY": str(ffmpeg),
        "JOB_AUTO_RESTARTS": "3",
    }
    broker = Celery("crash-tests", broker=redis_url, set_as_current=False)
    broker.conf.broker_connection_retry_on_startup = True
    with broker.connection_for_write() as conn:
        conn.default_channel.client.flushdb()
    broker.set_current()  # jobs.services sends through celery.current_app
    stage = Stage(tmp_path, env)
    try:
        yield stage
    finally:
        project_app.set_current()
        stage.release()
        for worker in stage.workers:
            worker.stop()
        broker.close()


def _upload(client, project, admin, tmp_path) -> BackgroundJob:
    path = tmp_path / "two_scenes.mp4"
    make_scene_video(path, [SceneSpec(3.0), SceneSpec(3.0)], width=320, height=180)
    client.force_login(admin)
    with open(path, "rb") as fh:
        response = client.post(reverse("videos:upload", args=[project.slug]), {"file": fh})
    assert response.status_code == 201, response.content
    return BackgroundJob.objects.get(kind="videos.process")


def _finished(stage: Stage, job: BackgroundJob, timeout: float = 60) -> BackgroundJob:
    def done():
        job.refresh_from_db()
        return job.is_finished

    _poll(f"job {job.pk} finished", done, timeout=timeout, log=stage.log)
    return job


def _assert_processed_once(job: BackgroundJob, stage: Stage) -> Video:
    assert job.status == JobStatus.SUCCEEDED, f"{job.error}\n{stage.log()}"
    video = Video.objects.get(pk=job.target_id)
    assert video.status == VideoStatus.READY and video.status_reason == ""
    assert len(video.scenes) == 2 and video.clips.count() == 2  # nothing doubled by the second run
    return video


@pytest.fixture
def people_and_project():
    from tests import factories

    project = factories.ProjectFactory()
    return project, factories.people_for(project)


def test_a_killed_pool_process_is_run_again_and_the_job_ends_once(client, stage, people_and_project, tmp_path):
    project, people = people_and_project
    stage.start_worker()
    stage.hold.touch()
    job = _upload(client, project, people["admin"], tmp_path)
    ffmpeg_pid, pool_pid = stage.held_process(job)

    os.kill(pool_pid, signal.SIGKILL)  # the pool process first, so its ffmpeg never "fails"
    os.kill(ffmpeg_pid, signal.SIGKILL)
    stage.release()

    job = _finished(stage, job)
    assert job.attempts == 2, stage.log()  # the dead run and the one that finished
    video = _assert_processed_once(job, stage)

    # Reprocessing works and still leaves one clip per scene.
    response = client.post(f"/api/projects/{project.slug}/videos/{video.pk}/reprocess/")
    assert response.status_code == 202, response.content
    again = _finished(stage, BackgroundJob.objects.get(pk=response.json()["id"]))
    _assert_processed_once(again, stage)


def test_a_killed_worker_s_job_is_run_again_by_the_next_worker(client, stage, people_and_project, tmp_path):
    project, people = people_and_project
    worker = stage.start_worker()
    stage.hold.touch()
    job = _upload(client, project, people["admin"], tmp_path)
    stage.held_process(job)

    os.killpg(worker.proc.pid, signal.SIGKILL)  # the main process, its pool, its beat and the held ffmpeg
    worker.proc.wait(10)
    stage.release()
    stage.start_worker()

    job = _finished(stage, job)
    assert job.attempts == 2, stage.log()
    _assert_processed_once(job, stage)


def test_retry_replaces_a_job_whose_worker_was_killed(client, stage, people_and_project, tmp_path, settings):
    project, people = people_and_project
    worker = stage.start_worker()
    stage.hold.touch()
    job = _upload(client, project, people["admin"], tmp_path)
    stage.held_process(job)
    os.killpg(worker.proc.pid, signal.SIGKILL)
    worker.proc.wait(10)
    stage.release()

    # No worker runs, so nothing sweeps: the job stays "running" until its heartbeat is old.
    _poll("heartbeat stale", lambda: job_is_stale(BackgroundJob.objects.get(pk=job.pk)), timeout=30)
    response = client.post(f"/api/projects/{project.slug}/jobs/{job.pk}/retry/")
    assert response.status_code == 202, response.content
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED
    assert job.error.startswith("The worker running this job stopped (no sign of life for "), job.error
    video = Video.objects.get(pk=job.target_id)
    assert video.status == VideoStatus.FAILED and video.status_reason == job.error

    stage.start_worker()
    retried = _finished(stage, BackgroundJob.objects.get(pk=response.json()["id"]))
    assert retried.attempts == 1
    _assert_processed_once(retried, stage)
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED  # the abandoned run was not revived by anyone
