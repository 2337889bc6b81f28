"""Evaluation runs: a model answering a release's questions, one prediction per record.

A run reads the release's own files (what the benchmark's loader reads), so an item edited after
the release does not change what the run is scored on; each prediction names its record and, via the
manifest's `items`, links to the item it came from.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from annotator.models import MCQ
from jobs.models import BackgroundJob
from llm.models import LLMCall
from projects.models import Project
from releases.models import DatasetRelease


class Protocol(models.TextChoices):
    """How the questions are put to the model; the default follows the release file's format."""

    FRAMES = "frames", _("Frames, then the question")
    FRAMES_SUBTITLES = "frames_subtitles", _("Frames interleaved with the subtitles of their time")
    MULTI_VIDEO = "multi_video", _("Each video's frames in order, one placeholder per video")
    LIVE = "live", _("Frames, speech and real-time comments")
    SV_STREAMING = "sv_streaming", _("A chain's turns as one conversation, frames up to the chain's end (SVBench)")
    SV_SINGLE = "sv_single", _("Each question alone, frames up to its chain's end (SVBench)")
    TEXT_ONLY = "text_only", _("The question alone (no video: a blind baseline)")


class RunStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    FINISHED = "finished", _("Finished")
    INCOMPLETE = "incomplete", _("Finished with failed calls")
    FAILED = "failed", _("Failed")
    CANCELLED = "cancelled", _("Cancelled")


class EvaluationRun(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="evaluation_runs")
    release = models.ForeignKey(DatasetRelease, on_delete=models.PROTECT, related_name="evaluation_runs")
    file = models.CharField(
        max_length=300, help_text="The release file of questions, e.g. longvideobench/lvb_test.json"
    )
    name = models.CharField(max_length=120, blank=True, help_text="A label for the leaderboard")
    model = models.CharField(max_length=120)
    # Blank: the project's model endpoint. The key is stored server-side and never shown back.
    base_url = models.URLField(max_length=300, blank=True)
    api_key = models.CharField(max_length=500, blank=True)
    protocol = models.CharField(max_length=20, choices=Protocol.choices)
    frames = models.PositiveSmallIntegerField(default=8)
    use_extractor = models.BooleanField(
        default=True, help_text="Ask the extractor model when the rules cannot read a reply"
    )
    status = models.CharField(max_length=12, choices=RunStatus.choices, default=RunStatus.QUEUED)
    cancel_requested = models.BooleanField(default=False)
    job = models.ForeignKey(BackgroundJob, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    summary = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(frames__gte=1) & models.Q(frames__lte=256), name="evaluation_frames_range"
            )
        ]

    def __str__(self) -> str:
        return f"{self.label} on {self.release.version}"

    @property
    def label(self) -> str:
        return self.name or self.model


class Outcome(models.TextChoices):
    ANSWERED = "answered", _("Answered")
    UNREADABLE = "unreadable", _("No option could be read (scored wrong)")
    FAILED = "failed", _("The call failed (not scored; a resumed run asks again)")


class Prediction(models.Model):
    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="predictions")
    index = models.PositiveIntegerField(help_text="The record's position in the run's file")
    record_id = models.CharField(max_length=300)
    mcq = models.ForeignKey(MCQ, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    video = models.CharField(max_length=255, help_text="The record's (first) video: the cluster of its standard error")
    category = models.CharField(max_length=60, blank=True)
    level = models.CharField(max_length=40, blank=True)
    duration_group = models.CharField(max_length=20, blank=True)
    # Multiple choice; null for an open question (SVBench), scored by the judge against its reference.
    option_count = models.PositiveSmallIntegerField(null=True, blank=True)
    correct_index = models.PositiveSmallIntegerField(null=True, blank=True)
    outcome = models.CharField(max_length=12, choices=Outcome.choices)
    chosen_index = models.PositiveSmallIntegerField(null=True, blank=True)
    score = models.FloatField(
        null=True,
        blank=True,
        help_text="1 right, 0 wrong or unreadable; an open answer's overall ÷ 100; null when failed",
    )
    # An open answer's judge scores, 0–100 per SVBench evaluation dimension.
    dimensions = models.JSONField(default=dict, blank=True)
    method = models.CharField(max_length=12, blank=True)
    reply = models.TextField(blank=True)
    reason = models.TextField(blank=True)
    call = models.ForeignKey(LLMCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    extract_call = models.ForeignKey(LLMCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    judge_call = models.ForeignKey(LLMCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["run", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="prediction_once_per_record")]
        indexes = [models.Index(fields=["run", "outcome"])]

    def __str__(self) -> str:
        return f"run {self.run_id} #{self.index}: {self.outcome}"
