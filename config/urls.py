from django.contrib import admin
from django.urls import include, path

from config.csp_report import csp_report
from config.health import health

urlpatterns = [
    path("healthz", health, name="healthz"),
    # The Content-Security-Policy's report-uri (settings.CSP_REPORT_PATH).
    path("csp-report", csp_report, name="csp_report"),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/", include("api.urls")),
    path("", include("videos.urls")),
    path("", include("annotator.urls")),
    path("", include("reviewer.urls")),
    path("", include("releases.urls")),
    path("", include("studio.urls")),
]
