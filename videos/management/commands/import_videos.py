"""Import videos into a project from a server folder or a manifest, with a progress bar."""

import sys
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from projects.models import Project
from videos.manifest import ManifestError, folder_rows, import_rows, parse_manifest


class Command(BaseCommand):
    help = "Import videos from a folder (recursively) or a CSV/JSONL manifest of paths or URLs with metadata."

    def add_arguments(self, parser):
        parser.add_argument("project", help="Project slug")
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--folder", type=Path)
        source.add_argument("--manifest", type=Path, help="CSV or JSONL: path/url column plus metadata columns")
        parser.add_argument("--user", help="Username recorded as the importer")

    def handle(self, *args, project, folder, manifest, user, **options):
        try:
            project = Project.objects.get(slug=project)
        except Project.DoesNotExist:
            raise CommandError(f"No project with slug {project!r}.") from None
        importer = None
        if user:
            importer = get_user_model().objects.filter(username=user).first()
            if importer is None:
                raise CommandError(f"No user {user!r}.")
        try:
            if folder:
                rows, base = folder_rows(folder), folder
            else:
                rows, base = parse_manifest(manifest.read_bytes(), manifest.name), manifest.parent
        except (ManifestError, OSError) as exc:
            raise CommandError(str(exc)) from exc
        if not rows:
            raise CommandError("Nothing to import.")

        def progress(done, total, outcome):
            width = 30
            filled = int(width * done / total)
            mark = "ok " if outcome.ok else "ERR"
            bar = "#" * filled + "." * (width - filled)
            sys.stderr.write(f"\r[{bar}] {done}/{total} {mark} {Path(outcome.location).name[:40]:40}")
            sys.stderr.flush()
            if not outcome.ok:
                sys.stderr.write(f"\n  line {outcome.line}: {outcome.message}\n")

        result = import_rows(
            project=project, rows=rows, user=importer, base_dir=base, check_roots=False, progress=progress
        )
        sys.stderr.write("\n")
        self.stdout.write(
            f"{result.imported} imported, {result.refused} refused; processing continues in the background worker."
        )
        if result.refused and not result.imported:
            raise CommandError("No video was imported.")
