"""Periodic tasks: the beat schedule names real tasks, and every way of running the app sends them once."""

from pathlib import Path

import yaml
from django.conf import settings

from config.celery import app

REPO = Path(__file__).resolve().parents[2]


def test_the_schedule_sweeps_lapsed_leases_every_minute_with_a_registered_task():
    app.loader.import_default_modules()  # what a worker does at start: autodiscover every app's tasks
    entry = settings.CELERY_BEAT_SCHEDULE["expire-leases"]
    assert entry["task"] == "reviewer.expire_leases" and entry["schedule"] == 60.0
    assert entry["options"]["expires"] < entry["schedule"]  # a sweep not run in time is dropped, not piled up
    for name, item in settings.CELERY_BEAT_SCHEDULE.items():
        assert item["task"] in app.tasks, f"{name}: no task {item['task']!r} is registered"
    assert app.conf.beat_schedule == settings.CELERY_BEAT_SCHEDULE


def test_docker_compose_runs_exactly_one_beat_beside_the_workers():
    services = yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"]
    beat, worker = services["beat"], services["worker"]
    assert beat["command"] == ["beat"] and beat["deploy"]["replicas"] == 1
    assert (beat["image"], beat["environment"]) == (worker["image"], worker["environment"])
    assert beat["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
    entrypoint = (REPO / "deploy" / "entrypoint.sh").read_text()
    assert "\n  beat)\n" in entrypoint and "celery -A config beat" in entrypoint


# Periodic sweeps are not jobs: the next round does their work, so a message lost with a dead
# process costs nothing, while handing it back could loop on a task that kills its process.
NOT_JOBS = {
    "reviewer.expire_leases",
    "reviewer.dashboard_refresh",
    "reviewer.dashboard_refresh_due",
    "jobs.sweep_stale",
}


def test_stale_jobs_are_swept_often_and_job_tasks_come_back_when_their_process_dies():
    app.loader.import_default_modules()
    entry = settings.CELERY_BEAT_SCHEDULE["sweep-stale-jobs"]
    assert entry["task"] == "jobs.sweep_stale" and entry["schedule"] == settings.JOB_SWEEP_PERIOD_S
    assert entry["options"]["expires"] < entry["schedule"]
    # A live job beats several times before anyone may take it for dead.
    assert settings.JOB_STALE_AFTER_S >= 3 * settings.JOB_HEARTBEAT_S
    safe_twice = {name for name, task in app.tasks.items() if task.acks_late}
    assert safe_twice >= NOT_JOBS and "videos.process" in safe_twice
    for name in safe_twice - NOT_JOBS:
        assert app.tasks[name].reject_on_worker_lost, f"{name} is safe to run twice but lost with its process"
    # A copy of a sweep handed out again while it still runs would only repeat it; keep it rare.
    visibility = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("visibility_timeout")
    if visibility is not None:
        assert all(app.tasks[name].time_limit < visibility for name in NOT_JOBS)
