from django.core.management.base import BaseCommand, CommandError
from django.urls import NoReverseMatch, reverse

from demo.services import DemoRefused, demo_project_load
from videos.ingest import ImportRefused
from videos.probe import ProbeError
from videos.synthetic import SyntheticVideoError


class Command(BaseCommand):
    help = (
        "Load the demo project (generated videos, subtitles, comments, chains, relations, MCQs) and one login "
        "per role. Does nothing when it is already there; --reset rebuilds it."
    )

    def add_arguments(self, parser):
        parser.add_argument("--reset", action="store_true", help="Delete the demo project and build it again.")
        parser.add_argument(
            "--force",
            action="store_true",
            help="Load even into a production-like database (DEBUG off on PostgreSQL), with the published passwords.",
        )

    def handle(self, *args, reset: bool, force: bool, **options):
        try:
            result = demo_project_load(reset=reset, force=force)
        except DemoRefused as exc:
            raise CommandError(str(exc)) from exc
        except (SyntheticVideoError, ProbeError, ImportRefused) as exc:
            raise CommandError(f"Could not generate the demo videos (is ffmpeg installed?): {exc}") from exc

        project = result.project
        try:
            where = f" at {reverse('studio:project_home', kwargs={'slug': project.slug})}"
        except NoReverseMatch:
            where = ""
        if result.created:
            self.stdout.write(self.style.SUCCESS(f'Loaded the demo project "{project.name}"{where}.'))
        else:
            self.stdout.write(
                f'The demo project "{project.name}" is already loaded; nothing to do (use --reset to rebuild it).'
            )
        self.stdout.write("  " + ", ".join(f"{n} {name.replace('_', ' ')}" for name, n in result.counts.items()))
        self.stdout.write("  logins: " + ", ".join(f"{user} / {password}" for user, password, _ in result.logins))
