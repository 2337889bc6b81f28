from django.apps import AppConfig


class ReviewerConfig(AppConfig):
    name = "reviewer"

    def ready(self):
        # Celery's autodiscovery imports only `tasks` modules; the judge task lives in its own
        # module (several engineers add reviewer tasks), so register it here for the worker.
        from . import tasks_gate  # noqa: F401
