"""Starting a probe run, and sending audited items back to review with the findings as reasons."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import transaction
from django.utils.translation import gettext as _

from annotator.lifecycle import TransitionRefused, item_transition
from annotator.models import MCQ, ItemStatus
from jobs.models import BackgroundJob
from jobs.services import job_create, job_progress, job_start_check_register
from llm.endpoints import endpoint_require
from projects.refusals import Refused
from projects.services import project_refuse_if_archived

from .models import Probe, ProbeRun
from .probes import PROBES, probe_models, probe_run_execute

PROBE_TASK = "audits.probe_run"

job_start_check_register(kinds=[PROBE_TASK], check=endpoint_require)


class ProbeRunRefused(Refused):
    status, code = 400, "probe_run_invalid"


def probe_run_start(
    *,
    project,
    user=None,
    probes: Iterable[str] | None = None,
    models: Iterable[str] | None = None,
    mcq_ids: Iterable[int] | None = None,
    enqueue: bool = True,
) -> ProbeRun:
    """Record a run and queue its job. Refuses at once with no model endpoint or an unknown probe.

    `enqueue=False` records the job without sending it to the worker, for a caller that runs it
    in-process (`manage.py audit run`).
    """
    project_refuse_if_archived(project=project)
    endpoint_require(project=project)
    chosen = list(dict.fromkeys(probes or PROBES))
    unknown = [p for p in chosen if p not in Probe.values]
    if unknown:
        raise ProbeRunRefused(
            _("Unknown probe(s) %(names)s; the probes are %(known)s.")
            % {"names": ", ".join(map(str, unknown)), "known": ", ".join(Probe.values)}
        )
    ids = None
    if mcq_ids is not None:
        ids = sorted({int(i) for i in mcq_ids})
        found = set(MCQ.objects.filter(project=project, pk__in=ids).values_list("pk", flat=True))
        missing = [i for i in ids if i not in found]
        if missing:
            raise ProbeRunRefused(_("No MCQ %(ids)s in this project.") % {"ids": ", ".join(map(str, missing))})
    with transaction.atomic():
        run = ProbeRun.objects.create(
            project=project,
            created_by=user if user is not None and user.is_authenticated else None,
            probes=chosen,
            probe_models=probe_models(project=project, models=models),
            shuffles=project.probe_shuffles,
            frames=project.probe_frames,
            mcq_ids=ids,
        )
        if enqueue:
            run.job = job_create(project=project, kind=PROBE_TASK, target=run, user=user)
        else:
            run.job = BackgroundJob.objects.create(
                project=project,
                kind=PROBE_TASK,
                target_type=run._meta.label_lower,
                target_id=run.pk,
                created_by=user if user is not None and user.is_authenticated else None,
            )
        run.save(update_fields=["job"])
    return run


def probe_job_run(*, job) -> None:
    run = ProbeRun.objects.select_related("project").get(pk=job.target_id)

    def progress(done: int, total: int, message: str) -> None:
        job_progress(job, done=done, total=total, message=message)

    counts = probe_run_execute(run=run, progress=progress)
    job.result = counts
    job.message = _("%(asked)s calls made (%(failed)s failed), %(reused)s answers reused.") % counts


@dataclass
class SentToReview:
    sent: list[int] = field(default_factory=list)
    refused: dict[int, str] = field(default_factory=dict)  # MCQ id → why it stayed


# Where an item goes: to the revisers (flagged, or reopened) from wherever review has it.
_SEND_TO = {
    ItemStatus.EXAMINING: ItemStatus.FLAGGED,
    ItemStatus.SUBMITTED: ItemStatus.REVISING,
    ItemStatus.SCORED: ItemStatus.REVISING,
    ItemStatus.ACCEPTED: ItemStatus.REVISING,
}


def audit_send_to_review(*, project, user, reasons: dict[int, list[str]], comment: str = "") -> SentToReview:
    """Send items back to review with their findings as the flag reasons, each on its own.

    An item being examined is flagged; a submitted, scored or accepted one goes to revising. One
    already in someone's hands (a draft, annotating, revising or flagged) stays, with the reason.
    """
    project_refuse_if_archived(project=project)
    outcome = SentToReview()
    items = {m.pk: m for m in MCQ.objects.filter(project=project, pk__in=list(reasons))}
    for pk in sorted(reasons):
        mcq = items.get(pk)
        if mcq is None:
            outcome.refused[pk] = _("No such MCQ in this project.")
            continue
        target = _SEND_TO.get(mcq.status)
        if target is None:
            outcome.refused[pk] = _("It is %(status)s already: it is in someone's hands.") % {
                "status": mcq.get_status_display().lower()
            }
            continue
        try:
            item_transition(
                item=mcq,
                to_status=target,
                actor=user,
                reasons=list(reasons[pk]),
                comment=comment or _("Sent back to review from the benchmark audit."),
                expect_from=mcq.status,
            )
        except TransitionRefused as exc:
            outcome.refused[pk] = exc.message
            continue
        outcome.sent.append(pk)
    return outcome
