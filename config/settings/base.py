"""Settings for every environment, driven by environment variables.

Defaults give a working single-machine set-up (SQLite, a file-system broker, local storage)
so `make run` needs no server; `DATABASE_URL` and `REDIS_URL` switch to PostgreSQL and Redis.
"""

import secrets
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent.parent
env = environ.Env()

# Everything the app writes at run time lives under one folder (git-ignored).
VAR_DIR = Path(env("VIDQA_VAR_DIR", default=str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env.bool("DJANGO_DEBUG", default=False)


def _secret_key() -> str:
    key = env("DJANGO_SECRET_KEY", default="")
    if key:
        return key
    # Local runs keep a generated key on disk so sessions survive restarts; no secret lives in code.
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "template_partials",
    "simple_history",
    # Domain apps, lowest first: nothing imports "up" this list.
    "projects",
    "jobs",
    "llm",
    "videos",
    "annotator",
    "reviewer",
    "releases",
    # Interfaces.
    "studio",
    "api",
    "demo",
    "backups",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # Django's LocaleMiddleware (after sessions, before common), keeping the API in English.
    "studio.locale.InterfaceLocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -----------------------------------------------------------------------------
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web server and the worker write at once: WAL lets readers through, IMMEDIATE
    # transactions and a busy timeout make writers queue instead of failing with "locked".
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }
    # Deferrable and NULLS NOT DISTINCT unique constraints are PostgreSQL features; SQLite (the
    # single-machine default) skips those two, and PostgreSQL, the product's database, enforces them.
    SILENCED_SYSTEM_CHECKS = ["models.W038", "models.W047"]
else:
    DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DATABASE_CONN_MAX_AGE", default=60))
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Auth ---------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "studio:project_list"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
# The interface speaks these; a person's choice (saved per user, applied at login) wins over the
# browser's Accept-Language, which wins over LANGUAGE_CODE. The REST API stays English.
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]

# --- Static and media -----------------------------------------------------------------------
STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env("DJANGO_STATIC_ROOT", default=str(VAR_DIR / "static")))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
MEDIA_ROOT = Path(env("DJANGO_MEDIA_ROOT", default=str(VAR_DIR / "media")))
# Media is never served by a public URL: every byte goes through a permission check.
MEDIA_URL = "/media-not-public/"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# S3-compatible object storage by setting (MinIO, Ceph, AWS …); files are then served by
# short-lived presigned redirects after the same permission check.
STORAGE_BACKEND = env("STORAGE_BACKEND", default="local")
if STORAGE_BACKEND == "s3":
    STORAGES["default"] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": env("S3_BUCKET"),
            "endpoint_url": env("S3_ENDPOINT_URL", default=None),
            "region_name": env("S3_REGION", default=None),
            "access_key": env("S3_ACCESS_KEY_ID", default=None),
            "secret_key": env("S3_SECRET_ACCESS_KEY", default=None),
            "default_acl": None,
            "querystring_auth": True,
            "querystring_expire": env.int("S3_URL_EXPIRE_S", default=3600),
            "file_overwrite": False,
        },
    }
elif STORAGE_BACKEND != "local":
    raise environ.ImproperlyConfigured(f"STORAGE_BACKEND must be 'local' or 's3', not {STORAGE_BACKEND!r}")
MEDIA_REDIRECT_TO_STORAGE_URL = STORAGE_BACKEND == "s3"
# When set (production, behind nginx), protected files are handed to the front server with
# `X-Accel-Redirect: <prefix><relative path>` after the permission check.
MEDIA_ACCEL_REDIRECT_PREFIX = env("MEDIA_ACCEL_REDIRECT_PREFIX", default="")
FILE_UPLOAD_MAX_MEMORY_SIZE = 4 * 1024 * 1024
FILE_UPLOAD_HANDLERS = ["videos.upload_handlers.HashingUploadHandler"]
VIDEO_MAX_BYTES = env.int("VIDEO_MAX_BYTES", default=50 * 1024**3)
# Server folders that manifests submitted through the browser or API may read from.
VIDEO_IMPORT_ROOTS = env.list("VIDEO_IMPORT_ROOTS", default=[str(VAR_DIR / "imports")])
DATA_UPLOAD_MAX_MEMORY_SIZE = 16 * 1024 * 1024

# --- Celery -------------------------------------------------------------------------------
REDIS_URL = env("REDIS_URL", default="")
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    # How long an unacknowledged message waits before Redis hands it out again: what brings back a
    # task whose whole worker died before it finished. Above the hard limit of every acks_late task
    # that is not a job (expire_leases: 5 min); a job's task handed out again while it still runs
    # finds its heartbeat fresh and does nothing (jobs.services.job_running).
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT_S", default=15 * 60)}
else:
    # A broker that needs no server: messages are files in a folder both processes share.
    _broker_dir = VAR_DIR / "broker"
    for sub in ("out", "processed", "control"):
        (_broker_dir / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "out"),
        "data_folder_out": str(_broker_dir / "out"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
    }
# One cache for every process (throttles, semaphores) when Redis is there; per-process otherwise.
CACHES = (
    {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "vidqa",
        }
    }
    if REDIS_URL
    else {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
)
# Job state lives in the database (jobs.BackgroundJob), so no result backend is needed.
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = 3 * 3600
CELERY_TASK_SOFT_TIME_LIMIT = 3 * 3600 - 60
CELERY_TASK_ALWAYS_EAGER = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Periodic tasks, sent by one beat process (`make run`: embedded in the worker; docker-compose: the
# `beat` service). Each message expires before the next is due, so a stopped worker does not find a
# pile of identical sweeps when it comes back.
# A running job refreshes its heartbeat at least this often (seconds); one whose heartbeat is older
# than JOB_STALE_AFTER_S lost its worker (killed, out of memory, machine gone). The sweep, every
# JOB_SWEEP_PERIOD_S, runs such a job again when its task is safe to run twice, at most
# JOB_AUTO_RESTARTS times, and otherwise marks it failed with the reason.
JOB_HEARTBEAT_S = env.float("JOB_HEARTBEAT_S", default=30.0)
JOB_STALE_AFTER_S = env.float("JOB_STALE_AFTER_S", default=180.0)
JOB_SWEEP_PERIOD_S = env.float("JOB_SWEEP_PERIOD_S", default=60.0)
JOB_AUTO_RESTARTS = env.int("JOB_AUTO_RESTARTS", default=3)
CELERY_BEAT_SCHEDULE = {
    # Running jobs whose worker died: run again or marked failed, so nothing stays "running" for ever.
    "sweep-stale-jobs": {
        "task": "jobs.sweep_stale",
        "schedule": JOB_SWEEP_PERIOD_S,
        "options": {"expires": JOB_SWEEP_PERIOD_S * 0.9},
    },
    # Lapsed leases marked expired, so dashboards count them (their items are free already).
    "expire-leases": {"task": "reviewer.expire_leases", "schedule": 60.0, "options": {"expires": 55}},
    # Dashboard snapshots viewed in the last hour whose project had review activity since: recomputed.
    "dashboard-refresh": {"task": "reviewer.dashboard_refresh_due", "schedule": 60.0, "options": {"expires": 55}},
}
# Where beat remembers when each entry last ran (a shelve file; beat's only state).
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")

# --- REST framework ---------------------------------------------------------------------------
REST_FRAMEWORK = {
    # Token first, so an anonymous API caller gets 401 with a WWW-Authenticate header, not 403.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "api.pagination.StandardPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "api.errors.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "VidQA Studio API",
    "DESCRIPTION": "Build video question-answering benchmarks: videos, clips, annotations, reviews, releases.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Vendored UI assets: no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Several models have a `status`; name each choice set after its model instead of a hash.
    "ENUM_NAME_OVERRIDES": {
        "VideoStatusEnum": "videos.models.VideoStatus",
        "CurationStatusEnum": "videos.models.CurationStatus",
        "JobStatusEnum": "jobs.models.JobStatus",
    },
}

# --- Tools and model endpoints ------------------------------------------------------------------
FFMPEG_BINARY = env("FFMPEG_BINARY", default="ffmpeg")
FFPROBE_BINARY = env("FFPROBE_BINARY", default="ffprobe")
OPENAI_BASE_URL = env("OPENAI_BASE_URL", default="")
OPENAI_API_KEY = env("OPENAI_API_KEY", default="")
LLM_DEFAULT_MODEL = env("LLM_DEFAULT_MODEL", default="gpt-4o-mini")
LLM_VISION_MODEL = env("LLM_VISION_MODEL", default="gpt-4o")
LLM_JUDGE_MODEL = env("LLM_JUDGE_MODEL", default="gpt-4o")
LLM_TRANSCRIBE_MODEL = env("LLM_TRANSCRIBE_MODEL", default="whisper-1")
LLM_TIMEOUT_S = env.float("LLM_TIMEOUT_S", default=120.0)
LLM_MAX_ATTEMPTS = env.int("LLM_MAX_ATTEMPTS", default=4)
LLM_RETRY_BASE_S = env.float("LLM_RETRY_BASE_S", default=1.0)
LLM_RETRY_MAX_S = env.float("LLM_RETRY_MAX_S", default=30.0)
LLM_RETRY_AFTER_MAX_S = env.float("LLM_RETRY_AFTER_MAX_S", default=120.0)
# Calls in flight per endpoint across all workers (a Redis lease semaphore when REDIS_URL is set).
LLM_CONCURRENCY = env.int("LLM_CONCURRENCY", default=4)
LLM_CONCURRENCY_PER_ENDPOINT = env.json("LLM_CONCURRENCY_PER_ENDPOINT", default={})
LLM_SLOT_WAIT_S = env.float("LLM_SLOT_WAIT_S", default=900.0)
LLM_TRANSCRIBE_MAX_BYTES = env.int("LLM_TRANSCRIBE_MAX_BYTES", default=25 * 1024 * 1024)
# USD per million tokens by model family, e.g. {"gpt-4o": {"input": 2.5, "output": 10}}; see llm/pricing.py.
LLM_PRICES = env.json("LLM_PRICES", default={})

APP_VERSION = "0.1.0"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
}
