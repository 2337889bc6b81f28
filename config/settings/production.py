"""Production: behind nginx (see docker-compose.yml), PostgreSQL and Redis required."""

from .base import *  # noqa: F403
from .base import env

DEBUG = False
SECRET_KEY = env("DJANGO_SECRET_KEY")  # no fallback: refuse to start without one
DATABASES = {"default": env.db("DATABASE_URL")}
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
MEDIA_ACCEL_REDIRECT_PREFIX = env("MEDIA_ACCEL_REDIRECT_PREFIX", default="/protected-media/")
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
# HTTPS only: cookies only over HTTPS, plain-HTTP requests redirected, and browsers told to use
# HTTPS for a year (HSTS, sent on HTTPS answers only). A plain-HTTP trial turns all of it off with
# DJANGO_SECURE_COOKIES=false.
_https = env.bool("DJANGO_SECURE_COOKIES", default=True)
SESSION_COOKIE_SECURE = _https
CSRF_COOKIE_SECURE = _https
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=_https)
# Probes from inside the network ask over plain HTTP (deploy/healthcheck.py says https anyway).
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = env.int("DJANGO_HSTS_SECONDS", default=365 * 24 * 3600 if _https else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", default=True)
# Preloading puts the whole domain into browsers' built-in HTTPS-only lists, which is hard to undo
# and the domain owner's decision, not the app's: off unless asked for. The deploy check's warning
# about it is silenced while it is off on purpose.
SECURE_HSTS_PRELOAD = env.bool("DJANGO_HSTS_PRELOAD", default=False)
if not SECURE_HSTS_PRELOAD:
    SILENCED_SYSTEM_CHECKS = ["security.W021"]
