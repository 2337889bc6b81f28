from django.contrib import admin
from django.urls import include, path
from django.views.i18n import JavaScriptCatalog

from config.csp_report import csp_report
from config.health import health
from studio.locale import language_set

urlpatterns = [
    path("healthz", health, name="healthz"),
    # The Content-Security-Policy's report-uri (settings.CSP_REPORT_PATH).
    path("csp-report", csp_report, name="csp_report"),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    # The interface's language: chosen in the header (POST), and the JavaScript catalogue of the
    # page modules' strings in the active language.
    path("i18n/setlang/", language_set, name="set_language"),
    path("jsi18n/", JavaScriptCatalog.as_view(), name="javascript-catalog"),
    path("api/", include("api.urls")),
    path("", include("videos.urls")),
    path("", include("annotator.urls")),
    path("", include("reviewer.urls")),
    path("", include("releases.urls")),
    path("", include("audits.urls")),
    path("", include("evaluations.urls")),
    path("", include("studio.urls")),
]

# The API answers its errors in its own shape, never as an HTML page (config/request_errors.py).
handler400 = "config.request_errors.bad_request"
handler403 = "config.request_errors.permission_denied"
handler404 = "config.request_errors.page_not_found"
handler500 = "config.request_errors.server_error"
