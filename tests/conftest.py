"""Fixtures shared by the whole suite: real worker process, headless Chromium, people and projects."""

import os
from pathlib import Path

import pytest

from tests import factories

pytest_plugins = ["tests.fakes.fixtures"]

# Playwright's sync API runs an event loop in the test thread; the ORM calls beside it are still
# synchronous, so Django's async-safety guard would be a false alarm here.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--autoplay-policy=no-user-gesture-required",
]


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path):
    """Each test writes files into its own folder."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MEDIA_ROOT.mkdir()


@pytest.fixture(autouse=True)
def _model_endpoint_in_environment(settings):
    """The deployment under test has a model endpoint, as a real one must for model jobs to start.

    It points at a closed loopback port: a test that really calls a model scripts the fake server
    (`fake_openai`), and a test of a project with no endpoint clears OPENAI_BASE_URL itself.
    """
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    settings.OPENAI_API_KEY = ""


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup, django_db_blocker, tmp_path_factory, fake_openai_session):
    """A real, separate Celery worker on the harness's Redis and the test database."""
    from django.db import connection

    from scripts.loopback_services import start_celery_worker

    if not os.environ.get("REDIS_URL"):
        pytest.fail("REDIS_URL is not set: run the suite with `make test`, which starts Redis and PostgreSQL")
    db_url = os.environ["DATABASE_URL"].rsplit("/", 1)[0] + "/" + connection.settings_dict["NAME"]
    media = tmp_path_factory.mktemp("worker-media")
    worker = start_celery_worker(
        tmp_path_factory.mktemp("celery"),
        {
            "DATABASE_URL": db_url,
            "DJANGO_MEDIA_ROOT": str(media),
            "DATABASE_CONN_MAX_AGE": "0",
            # Model calls from the worker go to the suite's fake server (tests script it by marker).
            "OPENAI_BASE_URL": fake_openai_session.base_url,
            "OPENAI_API_KEY": "sk-fake-test-key",
            "LLM_RETRY_BASE_S": "0.001",
            "LLM_RETRY_MAX_S": "0.01",
        },
    )
    worker.extra["media_root"] = media
    yield worker
    worker.stop()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium is not installed at {CHROMIUM} (Debian package: chromium); `make test` installs it")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(15_000)
    pg = context.new_page()
    yield pg
    context.close()


@pytest.fixture
def project(db):
    return factories.ProjectFactory()


@pytest.fixture
def people(project):
    """One user per role in `project`, plus a member of another project; password is `pw`."""
    return factories.people_for(project)
