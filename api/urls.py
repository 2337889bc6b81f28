from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from . import auth, errors, projects, videos

app_name = "api"

urlpatterns = [
    path("auth/token/", auth.TokenObtainApi.as_view(), name="token-obtain"),
    path("auth/token/revoke/", auth.TokenRevokeApi.as_view(), name="token-revoke"),
    path("projects/", projects.ProjectListApi.as_view(), name="project-list"),
    path("projects/<slug:slug>/", projects.ProjectDetailApi.as_view(), name="project-detail"),
    path("projects/<slug:slug>/videos/", videos.VideoListApi.as_view(), name="video-list"),
    path("projects/<slug:slug>/videos/<int:video_id>/", videos.VideoDetailApi.as_view(), name="video-detail"),
    # Schema and docs are public: they describe the API, not anyone's data.
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api:schema"), name="redoc"),
    # Last: any other /api/ path answers in the API's error shape.
    re_path(r"^.*$", errors.ApiNotFoundView.as_view(), name="not-found"),
]
