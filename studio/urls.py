from django.urls import path

from . import views

app_name = "studio"
urlpatterns = [
    path("", views.project_list, name="project_list"),
    path("p/<slug:slug>/", views.project_home, name="project_home"),
    path("new/", views.project_new, name="project_new"),
    path("p/<slug:slug>/settings/", views.project_settings, name="project_settings"),
    path("p/<slug:slug>/archive/", views.project_archive_view, name="project_archive"),
    path("p/<slug:slug>/jobs/<int:job_id>/", views.job_status, name="job_status"),
    path("p/<slug:slug>/jobs/<int:job_id>/retry/", views.job_retry_view, name="job_retry"),
]
