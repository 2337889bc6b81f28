from django.urls import path

from . import views

app_name = "studio"
urlpatterns = [
    path("", views.project_list, name="project_list"),
    path("p/<slug:slug>/", views.project_home, name="project_home"),
    path("p/<slug:slug>/settings/", views.project_settings, name="project_settings"),
    path("p/<slug:slug>/settings/model-endpoint/", views.model_endpoint, name="model_endpoint"),
    path("p/<slug:slug>/settings/model-endpoint/test/", views.model_endpoint_test, name="model_endpoint_test"),
    path("p/<slug:slug>/jobs/<int:job_id>/", views.job_status, name="job_status"),
    path("p/<slug:slug>/jobs/<int:job_id>/retry/", views.job_retry_view, name="job_retry"),
]
