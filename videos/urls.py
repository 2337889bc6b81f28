from django.urls import path, register_converter

from . import media, player_views, views


class MediaKindConverter:
    regex = "|".join(media.MEDIA_KINDS)

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(MediaKindConverter, "media_kind")

app_name = "videos"

urlpatterns = [
    path("media/videos/<int:video_id>/<media_kind:kind>/", media.video_media, name="media"),
    path("p/<slug:slug>/videos/", views.video_list, name="list"),
    path("p/<slug:slug>/videos/upload/", views.video_upload, name="upload"),
    path("p/<slug:slug>/videos/scores/", views.external_scores_upload, name="scores_upload"),
    path("p/<slug:slug>/videos/<int:video_id>/reprocess/", views.video_reprocess, name="reprocess"),
    path("p/<slug:slug>/videos/<int:video_id>/run/<str:step>/", views.video_run_step, name="run_step"),
    path("p/<slug:slug>/videos/run/<str:step>/", views.videos_run_step, name="run_step_bulk"),
    path("p/<slug:slug>/videos/<int:video_id>/curation/", views.video_curation, name="curation"),
    path("p/<slug:slug>/videos/<int:video_id>/subtitles/", views.video_subtitles_upload, name="subtitles_upload"),
    path("p/<slug:slug>/videos/<int:video_id>/comments/import/", views.video_comments_upload, name="comments_upload"),
    path("p/<slug:slug>/videos/<int:video_id>/", player_views.player, name="player"),
    path("p/<slug:slug>/videos/<int:video_id>/subtitles.vtt", player_views.subtitles_vtt, name="player_subtitles"),
    path("p/<slug:slug>/videos/<int:video_id>/comments/", player_views.comments_json, name="player_comments"),
]
