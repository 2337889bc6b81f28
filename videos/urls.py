from django.urls import path, register_converter

from . import media


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
]
