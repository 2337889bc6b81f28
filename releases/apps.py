from django.apps import AppConfig


class ReleasesConfig(AppConfig):
    name = "releases"

    def ready(self) -> None:
        from . import receivers  # noqa: F401 - connects the signal receivers
