from django.apps import AppConfig


class ReviewerConfig(AppConfig):
    name = "reviewer"

    def ready(self):
        from annotator.submission import hand_on_connect

        # Celery's autodiscovery imports only `tasks` modules; the judge task lives in its own
        # module (several engineers add reviewer tasks), so register it here for the worker.
        from . import tasks_gate  # noqa: F401
        from .quality_gate import gate_on_submit
        from .queues import assignments_complete_on_submit

        # A submitted item goes through the LLM quality gate (a judge job, or on to examiners), and
        # the submitter's lease on it is completed: the items' app announces submits, this app reacts.
        hand_on_connect(route=gate_on_submit, work_done=assignments_complete_on_submit)

        # A quality gate switched off (or narrowed) in the project's settings releases the items it held.
        from projects.services import project_settings_changed_connect

        from .stuck_work import gate_settings_changed

        project_settings_changed_connect(gate_settings_changed)
