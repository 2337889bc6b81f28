from django.apps import AppConfig


class StudioConfig(AppConfig):
    """The browser shell: project list, project home, job progress. Views only; no models."""

    name = "studio"
