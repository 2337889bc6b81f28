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
    "csp",
    "axes",
    # Domain apps, lowest first: nothing imports "up" this list.
    "projects",
    "jobs",
    "llm",
    "videos",
    "annotator",
    "reviewer",
    "audits",
    "evaluations",
    "releases",
    # Interfaces.
    "studio",
    "api",
    "demo",
    "backups",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # Django's LocaleMiddleware (after sessions, before common), keeping the API in English.
    "studio.locale.InterfaceLocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "config.request_errors.RequestLimitsMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    # Last, as django-axes asks: turns a locked-out login into config.lockout's answer.
    "axes.middleware.AxesMiddleware",
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
# Proxies in front of the app that append to X-Forwarded-For (nginx: 1). None by default: the client
# address is the connection's, and a client-written X-Forwarded-For is ignored (config/client_address.py).
VIDQA_TRUSTED_PROXY_COUNT = env.int("VIDQA_TRUSTED_PROXY_COUNT", default=0)
# Failed logins (browser and API token) are counted per account and per client address by django-axes;
# at the limit both lock until the cool-off ends or an admin unlocks (admin, `manage.py axes_reset_username`).
AUTHENTICATION_BACKENDS = [
    "config.lockout.LoginLockoutBackend",
    "django.contrib.auth.backends.ModelBackend",
]
VIDQA_LOGIN_FAILURE_LIMIT = env.int("VIDQA_LOGIN_FAILURE_LIMIT", default=10)
VIDQA_LOGIN_COOLOFF_MINUTES = env.int("VIDQA_LOGIN_COOLOFF_MINUTES", default=60)  # 0: until an admin unlocks
AXES_FAILURE_LIMIT = VIDQA_LOGIN_FAILURE_LIMIT
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_COOLOFF_TIME = VIDQA_LOGIN_COOLOFF_MINUTES / 60 if VIDQA_LOGIN_COOLOFF_MINUTES else None  # hours
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "config.client_address.client_ip"
AXES_LOCKOUT_CALLABLE = "config.lockout.lockout_response"
AXES_HTTP_RESPONSE_CODE = 429
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "studio:project_list"
LOGOUT_REDIRECT_URL = "login"
# Invitations and set-password links go out by mail; `make run` prints them on the console.
# The dummy backend means "no mail here": the pages then say to share links by hand.
EMAIL_BACKEND = env("EMAIL_BACKEND", default="django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="VidQA Studio <noreply@localhost>")
EMAIL_HOST = env("EMAIL_HOST", default="localhost")
EMAIL_PORT = env.int("EMAIL_PORT", default=25)
EMAIL_HOST_USER = env("EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD = env("EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=False)
PASSWORD_RESET_TIMEOUT = env.int("PASSWORD_RESET_TIMEOUT", default=7 * 24 * 3600)

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
# Manifest URLs never reach loopback, private, link-local or reserved addresses (videos/safe_fetch.py)
# except these: CIDR networks (e.g. "10.20.0.0/16") and host names of a lab's own storage.
VIDQA_FETCH_ALLOWED_NETWORKS = env.list("VIDQA_FETCH_ALLOWED_NETWORKS", default=[])
VIDQA_FETCH_ALLOWED_HOSTS = env.list("VIDQA_FETCH_ALLOWED_HOSTS", default=[])

# --- Content-Security-Policy ------------------------------------------------------------------
# Enforced in every environment (`make run` and the tests too, so a page that breaks it fails
# there first): scripts and styles only from our own static files, so no inline <script>, no
# on*= attribute, no javascript: URL and no style= attribute runs. Server data reaches scripts
# through data- attributes and json_script (type="application/json" is data, never executed).
# The API docs pages relax it for themselves (api/docs_views.py); nginx sends the same policy
# for the files it serves (deploy/nginx.conf).
# Media comes from our origin, or, with object storage, from the storage's presigned URLs.
_storage_origins = env.list("CSP_STORAGE_ORIGINS", default=[])
if STORAGE_BACKEND == "s3" and not _storage_origins and env("S3_ENDPOINT_URL", default=""):
    from urllib.parse import urlsplit

    _endpoint = urlsplit(env("S3_ENDPOINT_URL"))
    _storage_origins = [f"{_endpoint.scheme}://{_endpoint.netloc}"]
CSP_REPORT_PATH = "/csp-report"
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", *_storage_origins],
        "media-src": ["'self'", *_storage_origins],
        "connect-src": ["'self'"],
        "font-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
        "report-uri": [CSP_REPORT_PATH],
    },
}

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
    # Throttles key on the address our proxies saw, not on a client-written X-Forwarded-For.
    "NUM_PROXIES": VIDQA_TRUSTED_PROXY_COUNT,
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
        "ItemStatusEnum": "annotator.models.ItemStatus",
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
# 0: a call's timeout + 60 s. How long a slot held by a process that died stays taken.
LLM_SLOT_LEASE_S = env.float("LLM_SLOT_LEASE_S", default=0.0)
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
