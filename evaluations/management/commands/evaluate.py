"""Evaluate models on a release from the shell.

    manage.py evaluate run <project> <release-version> --model NAME [--file F] [--protocol P] [--frames N]
                           [--base-url URL] [--name LABEL] [--no-extractor]
    manage.py evaluate resume <run-id>
    manage.py evaluate show <run-id> [--json]
    manage.py evaluate compare <run-id> <run-id> [--json]

`run` and `resume` answer the questions in this process (recorded as a job like the page's) and print
progress; only questions without an answer are asked, so `resume` of a finished run makes no call.
`show` prints the accuracy with its clustered standard error and the tables; `compare` the paired
difference, McNemar and the paired bootstrap. The API key of a run's own endpoint comes from the
environment variable EVAL_API_KEY, so it never appears in a shell history.
"""

from __future__ import annotations

import json
import os

from django.core.management.base import BaseCommand, CommandError

from evaluations.models import EvaluationRun, Protocol
from evaluations.runs import evaluation_resume, evaluation_start
from evaluations.selectors import compare_runs
from evaluations.tasks import evaluation_run
from projects.models import Project
from projects.refusals import Refused
from releases.models import DatasetRelease


class Command(BaseCommand):
    help = "Evaluate models on a release: run, resume, show, compare."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        run = sub.add_parser("run", help="evaluate a model on a release")
        run.add_argument("project")
        run.add_argument("release", help="the release's version label")
        run.add_argument("--model", required=True)
        run.add_argument("--file", default="")
        run.add_argument("--protocol", choices=Protocol.values, default="")
        run.add_argument("--frames", type=int, default=8)
        run.add_argument("--base-url", default="")
        run.add_argument("--name", default="")
        run.add_argument("--no-extractor", action="store_true")
        resume = sub.add_parser("resume", help="ask the questions a run has no answer for")
        resume.add_argument("run", type=int)
        show = sub.add_parser("show", help="a run's figures")
        show.add_argument("run", type=int)
        show.add_argument("--json", action="store_true")
        compare = sub.add_parser("compare", help="two runs on the same release file")
        compare.add_argument("a", type=int)
        compare.add_argument("b", type=int)
        compare.add_argument("--json", action="store_true")

    def handle(self, *args, action, **options):
        try:
            getattr(self, f"_{action}")(**options)
        except Refused as exc:
            raise CommandError(exc.message) from None

    def _get(self, pk: int) -> EvaluationRun:
        run = EvaluationRun.objects.select_related("project", "release").filter(pk=pk).first()
        if run is None:
            raise CommandError(f"No evaluation run {pk}.")
        return run

    def _run(self, *, project, release, model, file, protocol, frames, base_url, name, no_extractor, **_):
        found = Project.objects.filter(slug=project).first()
        if found is None:
            raise CommandError(f"No project with slug {project!r}.")
        rel = DatasetRelease.objects.filter(project=found, version=release).first()
        if rel is None:
            raise CommandError(f"No release {release!r} in {project}.")
        run = evaluation_start(
            project=found,
            release=rel,
            model=model,
            file=file,
            protocol=protocol,
            frames=frames,
            name=name,
            base_url=base_url,
            api_key=os.environ.get("EVAL_API_KEY", ""),
            use_extractor=not no_extractor,
            enqueue=False,
        )
        self.stdout.write(f"run {run.pk}: {run.model} on {rel.version} ({run.file}), {run.protocol}")
        self._finish(run)

    def _resume(self, *, run, **_):
        found = evaluation_resume(run=self._get(run), enqueue=False)
        self._finish(found)

    def _finish(self, run: EvaluationRun) -> None:
        evaluation_run(run.job_id)
        run.refresh_from_db()
        if run.job.status != "succeeded":
            raise CommandError(f"run {run.pk} failed: {run.job.error}")
        self._print(run)

    def _show(self, *, run, json: bool = False, **_):
        found = self._get(run)
        if json:
            self.stdout.write(_dumps({"id": found.pk, "status": found.status, **found.summary}))
        else:
            self._print(found)

    def _print(self, run: EvaluationRun) -> None:
        s, out = run.summary, self.stdout.write
        out(f"run {run.pk} {run.label}: {run.get_status_display()}")
        out(
            f"  scored {s.get('scored')} of {s.get('items')} ({s.get('unreadable')} unreadable), "
            f"{s.get('failed')} failed"
        )
        if s.get("accuracy") is not None:
            se = s.get("se")
            se_text = (
                f"SE {se:.4f} clustered over {s.get('clusters')} videos" if se is not None else "no SE (one video)"
            )
            out(f"  accuracy {s['accuracy']:.4f}, {se_text}")
            for group, rows in (s.get("groups") or {}).items():
                for row in rows:
                    out(f"  {group} {row['key'] or '-'}: {row['accuracy']:.4f} (n={row['n']})")

    def _compare(self, *, a, b, json: bool = False, **_):
        try:
            c = compare_runs(self._get(a), self._get(b))
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if json:
            self.stdout.write(
                _dumps(
                    {
                        "a": a,
                        "b": b,
                        "common": c.common,
                        "difference": c.difference,
                        "mcnemar": c.mcnemar,
                        "bootstrap_interval": c.bootstrap_interval,
                        "needed_for_2_points": c.needed_for_2_points,
                    }
                )
            )
            return
        d = c.difference
        self.stdout.write(f"{c.common} questions: difference {d['accuracy']:+.4f} (A - B)")
        if c.mcnemar:
            self.stdout.write(
                f"  McNemar p = {c.mcnemar['p_value']:.4g} ({c.mcnemar['a_only']} vs {c.mcnemar['b_only']})"
            )
        if c.bootstrap_interval:
            low, high = c.bootstrap_interval
            self.stdout.write(f"  paired bootstrap 95% {low:+.4f} .. {high:+.4f}")
        self.stdout.write(f"  questions needed to detect 2 points: {c.needed_for_2_points}")


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)
