from django.apps import AppConfig


class AuditsConfig(AppConfig):
    """Benchmark quality: project-wide static checks, model shortcut probes and the release gate."""

    name = "audits"
