"""Audit a project's MCQs from the shell.

    manage.py audit show <project> [--json]
    manage.py audit run <project> [--probe text ...] [--model NAME ...] [--mcq ID ...]

`show` runs the static checks (audits.static_checks, the same as the audit page): counts per
finding, the answer-position table, every flagged item with its findings, the probes' figures and
the release gate's verdict on the accepted MCQs. It exits 1 when an item has a blocker, so a script
can stop before cutting a release.

`run` runs the shortcut probes in this process (recorded as a job like the page's), printing its
progress; answers to unchanged prompts are reused. It exits 1 when the project has no model endpoint.
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from annotator.models import MCQ, ItemStatus
from audits.gate import release_gate
from audits.models import Probe
from audits.selectors import probe_summary
from audits.services import probe_run_start
from audits.static_checks import project_static_audit
from audits.tasks import probe_run
from jobs.models import BackgroundJob
from projects.models import Project
from projects.refusals import Refused


class Command(BaseCommand):
    help = "Audit a project's MCQs: `show` prints the static checks' findings."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        show = sub.add_parser("show", help="the static findings of a project's MCQs")
        show.add_argument("project", help="the project's slug")
        show.add_argument("--json", action="store_true", help="print JSON instead of text")
        run = sub.add_parser("run", help="run the shortcut probes over a project's MCQs")
        run.add_argument("project", help="the project's slug")
        run.add_argument("--probe", action="append", choices=Probe.values, help="a probe to run (default all)")
        run.add_argument("--model", action="append", help="a probe model (default the project's)")
        run.add_argument("--mcq", action="append", type=int, help="only this MCQ (repeatable)")

    def handle(self, *args, action, project, json: bool = False, **options):
        found = Project.objects.filter(slug=project).first()
        if found is None:
            raise CommandError(f"No project with slug {project!r}.")
        if action == "run":
            return self._run(found, options)
        audit = project_static_audit(project=found)
        summary = probe_summary(project=found)
        accepted = MCQ.objects.filter(project=found, status=ItemStatus.ACCEPTED).values_list("pk", flat=True)
        gate = release_gate(project=found, mcq_ids=accepted)
        if json:
            self.stdout.write(_as_json(audit, summary, gate))
        else:
            self._text(found, audit)
            self._probes(summary, gate)
        if audit.blocked:
            raise SystemExit(1)

    def _run(self, project, options) -> None:
        try:
            run = probe_run_start(
                project=project,
                probes=options.get("probe"),
                models=options.get("model"),
                mcq_ids=options.get("mcq"),
                enqueue=False,
            )
        except Refused as exc:
            self.stderr.write(exc.message)
            raise SystemExit(1) from None
        self.stdout.write(f"probe run {run.pk}: {', '.join(run.probes)} with {', '.join(run.probe_models)}")
        probe_run(run.job_id)
        job = BackgroundJob.objects.get(pk=run.job_id)
        if job.status != "succeeded":
            raise CommandError(f"probe run {run.pk} failed: {job.error}")
        run.refresh_from_db()
        self.stdout.write(
            "{asked} calls made ({answered} answered, {failed} failed), {reused} reused, {skipped} skipped".format(
                **run.counts
            )
        )

    def _probes(self, summary, gate) -> None:
        out = self.stdout.write
        for a in summary.by_probe:
            if a.answered:
                low, high = a.interval
                mark = "  ABOVE CHANCE" if a.above_chance else ""
                out(
                    f"  probe {a.key}: {a.correct}/{a.answered} = {a.accuracy:.3f} "
                    f"(95% {low:.3f}-{high:.3f}) chance {a.chance:.3f}, {a.failed} failed{mark}"
                )
        verdict = "passes" if not gate.failing else ("REFUSES" if gate.refuses else "fails (" + gate.setting + ")")
        out(f"release gate on {gate.checked} accepted MCQs: {verdict}")
        for message in gate.messages():
            out(f"  {message}")

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


def _as_json(audit, summary, gate) -> str:
    return json.dumps(
        {
            "probes": [
                {"probe": a.key, "answered": a.answered, "correct": a.correct, "failed": a.failed, "chance": a.chance}
                for a in summary.by_probe
            ],
            "gate": gate.manifest(),
            "checked": audit.checked,
            "blocked": audit.blocked,
            "counts": audit.counts,
            "positions": [p.__dict__ | {"counts": list(p.counts)} for p in audit.positions],
            "items": {str(pk): [f.__dict__ for f in findings] for pk, findings in audit.items.items()},
        },
        ensure_ascii=False,
        indent=2,
    )
