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

