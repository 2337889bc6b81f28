from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from projects.models import Project


def video_upload_to(instance: "Video", filename: str) -> str:
    return f"projects/{instance.project_id}/videos/{filename}"


def derived_upload_to(instance: "Video", filename: str) -> str:
    return f"projects/{instance.project_id}/derived/{filename}"


class VideoStatus(models.TextChoices):
    UPLOADED = "uploaded", _("Uploaded")
    PROCESSING = "processing", _("Processing")
    READY = "ready", _("Ready")
    FAILED = "failed", _("Failed")


class CurationStatus(models.TextChoices):
    PENDING = "pending", _("Not yet curated")
    KEPT = "kept", _("Kept")
    REJECTED = "rejected", _("Rejected")


class Split(models.TextChoices):
    UNASSIGNED = "", _("Unassigned")
    TRAIN = "train", _("Train")
    EVAL = "eval", _("Eval")
    TEST = "test", _("Test")


class Video(models.Model):
    """A source video of a project: the original file, its probe and where it is in the pipeline."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="videos")
    name = models.CharField(max_length=255, help_text="Stable name used in releases (Video_Name / video_id)")
    original = models.FileField(upload_to=video_upload_to, max_length=500)
    original_filename = models.CharField(max_length=255, blank=True)
    sha256 = models.CharField(max_length=64, db_index=True)
    size_bytes = models.BigIntegerField(default=0)
    # Browser-playable H.264/AAC copy, made only when the original cannot play; releases use the original.
    proxy = models.FileField(upload_to=derived_upload_to, max_length=500, blank=True)
    poster = models.FileField(upload_to=derived_upload_to, max_length=500, blank=True)

    # Probe metadata (ffprobe).
    duration_s = models.FloatField(null=True, blank=True)
    fps = models.FloatField(null=True, blank=True)
    fps_is_variable = models.BooleanField(default=False)
    frame_count = models.PositiveIntegerField(null=True, blank=True)
    width = models.PositiveIntegerField(null=True, blank=True)
    height = models.PositiveIntegerField(null=True, blank=True)
    rotation = models.SmallIntegerField(default=0)
    container = models.CharField(max_length=100, blank=True)
    video_codec = models.CharField(max_length=50, blank=True)
    audio_codec = models.CharField(max_length=50, blank=True)
    has_audio = models.BooleanField(default=False)
    start_time_s = models.FloatField(default=0.0)
    probe = models.JSONField(default=dict, blank=True, help_text="Raw ffprobe output")
    # Detected scenes [[start, end], ...] before merging and padding; curation and the timeline read it.
    scenes = models.JSONField(null=True, blank=True)

    status = models.CharField(max_length=20, choices=VideoStatus.choices, default=VideoStatus.UPLOADED)
    status_reason = models.TextField(blank=True)
    curation_status = models.CharField(max_length=20, choices=CurationStatus.choices, default=CurationStatus.PENDING)
    curation_overridden_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    complexity_score = models.PositiveSmallIntegerField(null=True, blank=True)
    unusable_reason = models.CharField(max_length=40, blank=True)
    unusable_note = models.TextField(blank=True)
    unusable_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # A video keeps its split across releases so versions never leak into each other.
    split = models.CharField(max_length=10, choices=Split.choices, default=Split.UNASSIGNED, blank=True)

    # Metadata used by releases.
    topic_category = models.CharField(max_length=20, blank=True)
    view_count = models.BigIntegerField(null=True, blank=True)
    source_url = models.URLField(max_length=1000, blank=True)
    language = models.CharField(max_length=10, blank=True)
    metadata = models.JSONField(default=dict, blank=True)

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["project", "name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "sha256"], name="video_unique_content_per_project"),
            models.UniqueConstraint(fields=["project", "name"], name="video_unique_name_per_project"),
            models.CheckConstraint(
                condition=Q(duration_s__isnull=True) | Q(duration_s__gt=0), name="video_duration_positive"
            ),
            models.CheckConstraint(condition=Q(size_bytes__gte=0), name="video_size_nonnegative"),
        ]
        indexes = [
            models.Index(fields=["project", "status"]),
            models.Index(fields=["project", "curation_status"]),
            models.Index(fields=["project", "split"]),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def playable_file(self):
        return self.proxy if self.proxy else self.original

    def frame_index(self, seconds: float) -> int:
        return int(round(seconds * (self.fps or 0)))


class Clip(models.Model):
    """A time range over the source video (not a re-encoded file)."""

    video = models.ForeignKey(Video, on_delete=models.CASCADE, related_name="clips")
    index = models.PositiveIntegerField()
    start_s = models.FloatField()
    end_s = models.FloatField()
    # The detected scene this clip came from, before padding; kept to explain the numbers.
    scene_start_s = models.FloatField(null=True, blank=True)
    scene_end_s = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["video", "index"]
        constraints = [
            models.UniqueConstraint(fields=["video", "index"], name="clip_unique_index"),
            models.CheckConstraint(
                condition=Q(start_s__gte=0) & Q(start_s__lt=models.F("end_s")), name="clip_start_before_end"
            ),
            # end_s <= the video's duration is enforced by a trigger (see migrations): a check
            # constraint cannot look at another table.
        ]

    def __str__(self) -> str:
        return f"{self.video.name} #{self.index} [{self.start_s:.2f}–{self.end_s:.2f}]"

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s


class CueSource(models.TextChoices):
    SRT = "srt", _("SRT")
    VTT = "vtt", _("WebVTT")
    LVB_JSON = "lvb_json", _("LongVideoBench JSON")
    ASR = "asr", _("Speech recognition")
    MANUAL = "manual", _("Manual")


class SubtitleCue(models.Model):
    """One subtitle or transcript line; every source lands in this one table."""

    video = models.ForeignKey(Video, on_delete=models.CASCADE, related_name="cues")
    start_s = models.FloatField()
    end_s = models.FloatField()
    text = models.TextField()
    source = models.CharField(max_length=20, choices=CueSource.choices)
    language = models.CharField(max_length=10, blank=True)

    class Meta:
        ordering = ["video", "start_s", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(start_s__gte=0) & Q(start_s__lte=models.F("end_s")), name="cue_start_before_end"
            ),
        ]
        indexes = [models.Index(fields=["video", "start_s"])]

    def __str__(self) -> str:
        return f"{self.start_s:.2f}–{self.end_s:.2f} {self.text[:40]}"


class Comment(models.Model):
    """A real-time viewer comment (danmaku); millions per project, read by time window."""

    video = models.ForeignKey(Video, on_delete=models.CASCADE, related_name="comments")
    time_s = models.FloatField()
    text = models.TextField()
    user = models.CharField(max_length=200, blank=True)
    metadata = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["video", "time_s", "id"]
        constraints = [models.CheckConstraint(condition=Q(time_s__gte=0), name="comment_time_nonnegative")]
        # With id, a time window in (time_s, id) order with a LIMIT is read straight off the index.
        indexes = [models.Index(fields=["video", "time_s", "id"], name="comment_window")]

    def __str__(self) -> str:
        return f"{self.time_s:.1f}s {self.text[:40]}"


class CurationDecision(models.Model):
    """The outcome of one filter rule on one video, with its reason; an admin may override it."""

    video = models.ForeignKey(Video, on_delete=models.CASCADE, related_name="curation_decisions")
    rule = models.CharField(max_length=60)
    passed = models.BooleanField()
    value = models.FloatField(null=True, blank=True)
    reason = models.TextField()
    overridden_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    override_note = models.TextField(blank=True)
    decided_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["video", "rule"], name="curation_one_decision_per_rule")]
        indexes = [models.Index(fields=["rule", "passed"])]

    def __str__(self) -> str:
        return f"{self.video} {self.rule}: {'pass' if self.passed else 'fail'}"


class ExternalScore(models.Model):
    """A score computed outside the app (aesthetic, optical flow, quality), imported per video."""

    video = models.ForeignKey(Video, on_delete=models.CASCADE, related_name="external_scores")
    name = models.CharField(max_length=60)
    value = models.FloatField()
    source = models.CharField(max_length=255, blank=True)
    imported_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["video", "name"], name="external_score_unique")]

    def __str__(self) -> str:
        return f"{self.video_id} {self.name}={self.value:g}"
