from django.apps import AppConfig


class ReviewerConfig(AppConfig):
    name = "reviewer"

    def ready(self):
        from simple_history.signals import pre_create_historical_record

        from annotator.models import Relation

        # Celery's autodiscovery imports only `tasks` modules; the judge task lives in its own
        # module (several engineers add reviewer tasks), so register it here for the worker.
        from . import tasks_gate  # noqa: F401
        from .history import link_version_tag

        # Link history rows name their chain pair's version, so its content versions can be rebuilt.
        pre_create_historical_record.connect(
            link_version_tag, sender=Relation.history.model, dispatch_uid="reviewer.link_version_tag"
        )
