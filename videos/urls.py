from django.urls import path, register_converter

from . import media, player_views


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
    # Issue 3: path("media/videos/<int:video_id>/subtitles.vtt", media.video_subtitles, name="subtitles"),
    path("p/<slug:slug>/videos/<int:video_id>/", player_views.player, name="player"),
    path("p/<slug:slug>/videos/<int:video_id>/subtitles.vtt", player_views.subtitles_vtt, name="player_subtitles"),
    path("p/<slug:slug>/videos/<int:video_id>/comments/", player_views.comments_json, name="player_comments"),
]
