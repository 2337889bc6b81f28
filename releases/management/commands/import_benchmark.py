"""Import existing benchmark files into a project from the shell, all or nothing.

    manage.py import_benchmark <project> <format> <folder, record file or .zip> [--status examining] \\
        [--by <username>] [--json]

format: longvideobench, svbench, mvpbench, livibench or generic. The folder is a release folder (or
the format's folder inside it); videos the records name are matched by name against the project's
videos, or imported from its `videos/` folder. Runs here, with progress on stderr; prints what was
imported, or every problem (file, record, field) and exits 1 with nothing imported.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotator.models import ItemStatus
from projects.models import Project
from projects.refusals import Refused
from releases.imports.archive import archive_unpack
from releases.imports.services import IMPORT_STATUSES, READERS, benchmark_import


class Command(BaseCommand):
    help = "Import LongVideoBench, SVBench, MVPBench, LiViBench or generic JSONL files into a project."

    def add_arguments(self, parser):
        parser.add_argument("project", help="project slug")
        parser.add_argument("format", choices=sorted(READERS))
        parser.add_argument("source", help="release folder, the format's folder, one record file, or a .zip")
        parser.add_argument("--status", default=ItemStatus.EXAMINING, choices=IMPORT_STATUSES)
        parser.add_argument("--by", default="", help="username recorded as the importer")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args, **options):
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"No project with slug {options['project']!r}.")
        user = None
        if options["by"]:
            user = get_user_model().objects.filter(username=options["by"], is_active=True).first()
            if user is None:
                raise CommandError(f"No active user {options['by']!r}.")
        source = Path(options["source"])
        if not source.exists():
            raise CommandError(f"{source} does not exist.")

        def progress(done: int, total: int, message: str) -> None:
            sys.stderr.write(f"\r{message[:70]:<70} {done}/{total}")
            sys.stderr.flush()

        try:
            with tempfile.TemporaryDirectory(prefix="benchmark-import-") as tmp:
                if source.is_file() and source.suffix.lower() == ".zip":
                    source = archive_unpack(archive=source, dest=Path(tmp))
                report = benchmark_import(
                    project=project,
                    format=options["format"],
                    source=source,
                    status=options["status"],
                    user=user,
                    progress=progress,
                    source_label=options["source"],
                )
        except Refused as exc:
            raise CommandError(str(exc)) from exc
        sys.stderr.write("\n")
        if options["json"]:
            self.stdout.write(json.dumps(report.as_dict(), indent=2, ensure_ascii=False))
        else:
            self.stdout.write(report.summary())
            for problem in report.problems:
                self.stdout.write(f"  {problem['message']}")
        if not report.ok:
            sys.exit(1)
