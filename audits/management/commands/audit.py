"""Audit a project's MCQs from the shell.

    manage.py audit show <project> [--json]

`show` runs the static checks (audits.static_checks, the same as the audit page): counts per
finding, the answer-position table, and every flagged item with its findings. It exits 1 when an
item has a blocker, so a script can stop before cutting a release.
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from audits.static_checks import project_static_audit
from projects.models import Project


class Command(BaseCommand):
    help = "Audit a project's MCQs: `show` prints the static checks' findings."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        show = sub.add_parser("show", help="the static findings of a project's MCQs")
        show.add_argument("project", help="the project's slug")
        show.add_argument("--json", action="store_true", help="print JSON instead of text")

    def handle(self, *args, action, project, json: bool = False, **options):
        found = Project.objects.filter(slug=project).first()
        if found is None:
            raise CommandError(f"No project with slug {project!r}.")
        audit = project_static_audit(project=found)
        if json:
            self.stdout.write(_as_json(audit))
        else:
            self._text(found, audit)
        if audit.blocked:
            raise SystemExit(1)

    def _text(self, project, audit) -> None:
        out = self.stdout.write
        out(f"{project.slug}: {audit.checked} MCQs checked, {len(audit.items)} flagged, {len(audit.blocked)} blocked")
        for code, n in sorted(audit.counts.items(), key=lambda kv: (-kv[1], kv[0])):
            out(f"  {code}: {n}")
        for p in audit.positions:
            if p.judged:
                mark = "  UNBALANCED" if p.biased else ""
                name = p.category or "all"
                out(
                    f"  key positions, {name}, {p.options} options: {list(p.counts)} "
                    f"chi2={p.statistic:.2f} ({p.dof} d.f.) p={p.p_value:.3g}{mark}"
                )
        for pk, findings in audit.items.items():
            for f in findings:
                out(f"MCQ {pk}\t{f.severity}\t{f.code}\t{f.message}")


def _as_json(audit) -> str:
    return json.dumps(
        {
            "checked": audit.checked,
            "blocked": audit.blocked,
            "counts": audit.counts,
            "positions": [p.__dict__ | {"counts": list(p.counts)} for p in audit.positions],
            "items": {str(pk): [f.__dict__ for f in findings] for pk, findings in audit.items.items()},
        },
        ensure_ascii=False,
        indent=2,
    )
