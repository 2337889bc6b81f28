from django.apps import AppConfig


class VideosConfig(AppConfig):
    name = "videos"

    def ready(self) -> None:
        from . import receivers  # noqa: F401 - connects the signal receivers
