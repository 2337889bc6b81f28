from django.apps import AppConfig


class ReviewerConfig(AppConfig):
    name = "reviewer"

    def ready(self):
        from simple_history.signals import pre_create_historical_record

        from annotator.models import Relation
        from annotator.submission import hand_on_connect

        # Celery's autodiscovery imports only `tasks` modules; the judge task lives in its own
        # module (several engineers add reviewer tasks), so register it here for the worker.
        from . import tasks_gate  # noqa: F401
        from .history import link_version_tag
        from .quality_gate import gate_on_submit
        from .queues import assignments_complete_on_submit

        # Link history rows name their chain pair's version, so its content versions can be rebuilt.
        pre_create_historical_record.connect(
            link_version_tag, sender=Relation.history.model, dispatch_uid="reviewer.link_version_tag"
        )

        # A submitted item goes through the LLM quality gate (a judge job, or on to examiners), and
        # the submitter's lease on it is completed: the items' app announces submits, this app reacts.
        hand_on_connect(route=gate_on_submit, work_done=assignments_complete_on_submit)
