"""What the shortcut probes asked and what the models answered, one row per probe call.

A probe asks a model one multiple-choice question while hiding something the question needs (see
audits/probes.py). A row is keyed by what the prompt showed (`input_hash`), so a second run over
unchanged items asks nothing again, and an edited item is asked afresh.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from annotator.models import MCQ
from jobs.models import BackgroundJob
from llm.models import LLMCall
from projects.models import Project


class Probe(models.TextChoices):
    TEXT = "text", _("Text only")
    TRANSCRIPT = "transcript", _("Transcript only")
    FRAME = "frame", _("Single frame")
    OPTIONS = "options", _("Options only")


class ProbeRun(models.Model):
    """One audit run over a project's MCQs: which probes and models, and what it did."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="probe_runs")
    job = models.ForeignKey(BackgroundJob, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    probes = models.JSONField(default=list)
    probe_models = models.JSONField(default=list)
    shuffles = models.PositiveSmallIntegerField(default=3)
    frames = models.PositiveSmallIntegerField(default=4)
    # MCQ ids when the run was limited to some; null for every MCQ of the project.
    mcq_ids = models.JSONField(null=True, blank=True)
    # asked / reused / failed / skipped calls, and the items seen.
    counts = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"probe run {self.pk} of {self.project}"


class ProbeAnswer(models.Model):
    """One probe call's outcome for one MCQ: the choice read from the reply, or why there is none."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    mcq = models.ForeignKey(MCQ, on_delete=models.CASCADE, related_name="probe_answers")
    run = models.ForeignKey(ProbeRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="answers")
    probe = models.CharField(max_length=12, choices=Probe.choices)
    # Which call of the probe: "order 2" (text-only), "frame 12.500" (single frame), "" otherwise.
    variant = models.CharField(max_length=40, blank=True)
    model = models.CharField(max_length=120)
    # sha256 of everything the prompt showed; a changed item gives a new hash and a new call.
    input_hash = models.CharField(max_length=64)
    item_version = models.PositiveIntegerField()
    # Shown position → the option's index in the item, so a choice maps back to the item's options.
    shown_order = models.JSONField(default=list)
    option_count = models.PositiveSmallIntegerField()
    ok = models.BooleanField(help_text="A choice was read from the reply; failures never count as answers")
    chosen_index = models.PositiveSmallIntegerField(null=True, blank=True)
    correct = models.BooleanField(null=True)
    reason = models.TextField(blank=True)
    reply = models.TextField(blank=True)
    method = models.CharField(max_length=12, blank=True)
    call = models.ForeignKey(LLMCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["mcq", "probe", "model", "variant"]
        constraints = [
            models.UniqueConstraint(fields=["mcq", "probe", "variant", "model"], name="probe_answer_unique_call"),
            models.CheckConstraint(
                condition=models.Q(ok=False, correct__isnull=True) | models.Q(ok=True, correct__isnull=False),
                name="probe_answer_ok_has_verdict",
            ),
        ]
        indexes = [models.Index(fields=["project", "probe"])]

    def __str__(self) -> str:
        verdict = "failed" if not self.ok else ("correct" if self.correct else "wrong")
        return f"MCQ {self.mcq_id} {self.probe} {self.variant} {self.model}: {verdict}"

    @property
    def chance(self) -> float:
        return 1.0 / self.option_count if self.option_count else 0.0
