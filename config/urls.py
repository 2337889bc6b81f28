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

# The API answers its errors in its own shape, never as an HTML page (config/request_errors.py).
handler400 = "config.request_errors.bad_request"
handler403 = "config.request_errors.permission_denied"
handler404 = "config.request_errors.page_not_found"
handler500 = "config.request_errors.server_error"
