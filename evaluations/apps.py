from django.apps import AppConfig


class EvaluationsConfig(AppConfig):
    """Models evaluated on a release: runs, per-item predictions, the leaderboard and paired comparisons."""

    name = "evaluations"
