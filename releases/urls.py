"""Release screens under /p/<slug>/releases/."""

from django.urls import path

from . import import_views, views

app_name = "releases"

urlpatterns = [
    path("p/<slug:slug>/releases/", views.release_list_view, name="list"),
    path("p/<slug:slug>/releases/new/", views.release_new, name="new"),
    path("p/<slug:slug>/releases/import/", import_views.benchmark_import_page, name="import"),
    path("p/<slug:slug>/releases/import/<int:job_id>/", import_views.benchmark_import_job, name="import_job"),
    path("p/<slug:slug>/releases/new/preview/", views.release_preview, name="preview"),
    path("p/<slug:slug>/releases/<int:release_id>/", views.release_detail, name="detail"),
    path("p/<slug:slug>/releases/<int:release_id>/row/", views.release_row, name="row"),
    path("p/<slug:slug>/releases/<int:release_id>/statistics/", views.release_statistics, name="statistics"),
    path(
        "p/<slug:slug>/releases/<int:release_id>/download.zip",
        views.release_download,
        {"archive": "zip"},
        name="download_zip",
    ),
    path(
        "p/<slug:slug>/releases/<int:release_id>/download.tar",
        views.release_download,
        {"archive": "tar"},
        name="download_tar",
    ),
    path("p/<slug:slug>/releases/<int:release_id>/delete/", views.release_delete_view, name="delete"),
]
