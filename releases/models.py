from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from annotator.models import ONE_ITEM, ItemRef, ItemStatus
from jobs.models import BackgroundJob
from projects.models import Project


class ReleaseFormat(models.TextChoices):
    SVBENCH = "svbench", _("SVBench")
    LONGVIDEOBENCH = "longvideobench", _("LongVideoBench")
    MVPBENCH = "mvpbench", _("MVPBench")
    LIVIBENCH = "livibench", _("LiViBench (VidQA JSONL v1)")
    GENERIC = "generic", _("Generic JSONL with provenance")


class ReleaseStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    BUILDING = "building", _("Building")
    READY = "ready", _("Ready")
    FAILED = "failed", _("Failed")
    DELETED = "deleted", _("Deleted")


class DatasetRelease(models.Model):
    """An immutable, versioned snapshot of accepted items written in one or more formats."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="releases")
    version = models.CharField(max_length=40)
    formats = models.JSONField(default=list, help_text="ReleaseFormat values")
    filters = models.JSONField(default=dict, blank=True)
    split_config = models.JSONField(default=dict, blank=True)
    seed = models.BigIntegerField(default=0)
    test_style = models.BooleanField(default=False, help_text="Omit answers (e.g. LongVideoBench correct_choice)")
    status = models.CharField(max_length=20, choices=ReleaseStatus.choices, default=ReleaseStatus.QUEUED)
    job = models.ForeignKey(BackgroundJob, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    storage_prefix = models.CharField(max_length=500, blank=True)
    archive = models.FileField(max_length=500, blank=True)
    files = models.JSONField(default=list, blank=True, help_text="[{path, sha256, bytes}]")
    manifest = models.JSONField(default=dict, blank=True)
    statistics = models.JSONField(default=dict, blank=True)
    validation_errors = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    deleted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["project", "-created_at"]
        constraints = [models.UniqueConstraint(fields=["project", "version"], name="release_unique_version")]

    def __str__(self) -> str:
        return f"{self.project} {self.version}"


class BenchmarkImport(models.Model):
    """One import of existing benchmark files into a project (releases.imports): what came in, by whom."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="benchmark_imports")
    format = models.CharField(max_length=20, choices=ReleaseFormat.choices)
    source = models.CharField(max_length=1000, blank=True, help_text="The folder or upload the files came from")
    item_status = models.CharField(
        max_length=20, choices=ItemStatus.choices, help_text="The status the imported items were given"
    )
    files = models.JSONField(default=list, blank=True, help_text="[{path, sha256, bytes}] of the files read")
    counts = models.JSONField(default=dict, blank=True)
    job = models.ForeignKey(BackgroundJob, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "-created_at"]

    def __str__(self) -> str:
        return f"{self.project} {self.format} import {self.pk}"


class ImportedRecord(ItemRef):
    """Where one imported item came from: the file (path inside the import), the record (its place in
    the file and its own id) and the file's sha256."""

    benchmark_import = models.ForeignKey(BenchmarkImport, on_delete=models.CASCADE, related_name="records")
    file = models.CharField(max_length=500)
    record_index = models.PositiveIntegerField()
    record_id = models.CharField(max_length=300, blank=True)
    sha256 = models.CharField(max_length=64)

    class Meta:
        ordering = ["benchmark_import", "file", "record_index"]
        constraints = [models.CheckConstraint(condition=ONE_ITEM, name="importedrecord_exactly_one_item")]
        indexes = [models.Index(fields=["item_kind", "mcq"]), models.Index(fields=["item_kind", "qa_chain"])]

    def __str__(self) -> str:
        return f"{self.file} #{self.record_index} ({self.record_id})"
