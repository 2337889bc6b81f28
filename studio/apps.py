from django.apps import AppConfig


class StudioConfig(AppConfig):
    """The browser shell: project list, project home, job progress. Views only; no models."""

    name = "studio"

    def ready(self):
        from . import locale  # noqa: F401  (connects the login receiver that applies a saved language)
