"""The production settings pass Django's deployment checklist (`manage.py check --deploy`) with no warning."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

from django.conf import settings


def _production_env(tmp_path: Path, **extra) -> dict:
    # What docker-compose.yml gives the app containers, with dummy values: the check connects to nothing.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "REDIS_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_ALLOWED_HOSTS="vidqa.example.org",
        DATABASE_URL="postgres://vidqa:dummy@postgres.invalid:5432/vidqa",
        REDIS_URL="redis://redis.invalid:6379/0",
        MEDIA_ACCEL_REDIRECT_PREFIX="/protected-media/",
        VIDQA_VAR_DIR=str(tmp_path / "var"),
        **extra,
    )
    return env


def _run(tmp_path, *args, **extra):
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=settings.BASE_DIR,
        env=_production_env(tmp_path, **extra),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_is_clean_with_the_production_settings(tmp_path):
    result = _run(tmp_path, "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout, result.stdout + result.stderr


def test_production_sends_hsts_and_redirects_plain_http(tmp_path):
    script = (
        "from django.conf import settings as s; "
        "print(s.SECURE_HSTS_SECONDS, s.SECURE_HSTS_INCLUDE_SUBDOMAINS, s.SECURE_SSL_REDIRECT, "
        "s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE)"
    )
    result = _run(tmp_path, "shell", "--no-imports", "-c", script)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(365 * 24 * 3600), "True", "True", "True", "True"]
