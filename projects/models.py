from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from . import taxonomies


class ProjectKind(models.TextChoices):
    SVBENCH = "svbench", _("SVBench (streaming QA chains)")
    LONGVIDEOBENCH = "longvideobench", _("LongVideoBench (referring MCQs)")
    LIVIBENCH = "livibench", _("LiViBench (livestream MCQs)")
    MVPBENCH = "mvpbench", _("MVPBench (multi-video MCQs)")
    GENERIC = "generic", _("Generic")


class JudgeFallback(models.TextChoices):
    """What happens to a submitted item the judge cannot score (no endpoint, the model failing, unusable answers)."""

    EXAMINE = "examine", _("On to examining, marked “not scored” with the reason")
    AUTHOR = "author", _("Back to the author, with the reason")
    WAIT = "wait", _("Wait in “submitted” for an admin")


class AuditGate(models.TextChoices):
    """What a release does when its audit finds blockers, or questions answered without watching."""

    OFF = "off", _("Off: releases ignore the audit")
    WARN = "warn", _("Warn: the release says what the audit found")
    REFUSE = "refuse", _("Refuse: no release until the findings are fixed")


class Project(models.Model):
    """A benchmark under construction: its taxonomies, thresholds and pipeline settings."""

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    kind = models.CharField(max_length=20, choices=ProjectKind.choices, default=ProjectKind.SVBENCH)
    description = models.TextField(blank=True)
    primary_language = models.CharField(max_length=10, default="en")
    # Taxonomies are project data, edited per project; defaults come from projects.taxonomies.
    taxonomies = models.JSONField(default=taxonomies.default_taxonomies, blank=True)

    # Curation (SVBench and LongVideoBench defaults).
    min_duration_s = models.FloatField(default=60.0)
    min_scenes = models.PositiveIntegerField(default=5)
    max_scenes = models.PositiveIntegerField(default=15)
    min_mean_scene_s = models.FloatField(default=5.0)
    max_mean_scene_s = models.FloatField(default=30.0)
    min_height_px = models.PositiveIntegerField(default=0, help_text="LongVideoBench: 720")
    min_complexity = models.PositiveSmallIntegerField(default=3)
    # Which filter rules apply (codes from videos.curation.RULES); empty means the defaults of the kind.
    curation_rules = models.JSONField(default=list, blank=True)
    # Imported external scores that gate curation: {"aesthetic": {"min": 4.5}, "flow": {"max": 30}}.
    external_score_thresholds = models.JSONField(default=dict, blank=True)

    # Scene detection and clips.
    scene_threshold = models.FloatField(default=27.0, help_text="PySceneDetect ContentDetector threshold")
    scene_min_s = models.FloatField(default=2.0, help_text="Scenes shorter than this merge into a neighbour")
    clip_pad_s = models.FloatField(default=0.5, help_text="Padding added at both ends of every clip")

    # Machine drafts.
    frames_per_clip = models.PositiveSmallIntegerField(default=8)
    frame_max_side_px = models.PositiveIntegerField(default=512)
    chain_min_turns = models.PositiveSmallIntegerField(default=5)
    chain_max_turns = models.PositiveSmallIntegerField(default=6)
    # Per-step model names; an empty entry falls back to the deployment's defaults.
    models_per_step = models.JSONField(default=dict, blank=True)

    # Quality gate and releases.
    judge_enabled = models.BooleanField(default=True)
    judge_threshold = models.PositiveSmallIntegerField(default=90)
    # Work never waits silently on a judge that cannot answer: by default it goes on, marked.
    judge_fallback = models.CharField(
        _("when the judge cannot score an item"),
        max_length=10,
        choices=JudgeFallback.choices,
        default=JudgeFallback.EXAMINE,
    )
    path_jump_probability = models.FloatField(default=0.8)
    # The benchmark audit (audits app): shortcut probes and the release gate.
    audit_gate = models.CharField(_("release gate"), max_length=10, choices=AuditGate.choices, default=AuditGate.WARN)
    # Points of blind (text-only) accuracy above chance the gate lets through.
    audit_gate_margin = models.FloatField(_("blind accuracy margin (points)"), default=5.0)
    probe_shuffles = models.PositiveSmallIntegerField(_("option orders per text-only probe"), default=3)
    probe_frames = models.PositiveSmallIntegerField(_("uniform frames where an item has no moment"), default=4)
    # Probe models; empty means the model endpoint's probes model.
    probe_models = models.JSONField(_("probe models"), default=list, blank=True)

    # An archived project takes no new work (claims, imports, drafts) but stays readable and releasable.
    archived_at = models.DateTimeField(null=True, blank=True)

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(judge_threshold__lte=100),
                name="project_threshold_0_100",
                violation_error_message="The judge threshold is a score from 0 to 100.",
            ),
            models.CheckConstraint(
                condition=Q(path_jump_probability__gte=0) & Q(path_jump_probability__lte=1),
                name="project_jump_probability_0_1",
                violation_error_message="The path jump probability is between 0 and 1.",
            ),
            models.CheckConstraint(
                condition=Q(min_scenes__lte=models.F("max_scenes")),
                name="project_scene_range",
                violation_error_message="The minimum number of scenes is above the maximum.",
            ),
            models.CheckConstraint(
                condition=Q(chain_min_turns__gte=1) & Q(chain_min_turns__lte=models.F("chain_max_turns")),
                name="project_chain_turn_range",
                violation_error_message="A chain needs at least one turn, and no more minimum turns than maximum.",
            ),
            models.CheckConstraint(
                condition=Q(audit_gate_margin__gte=0) & Q(audit_gate_margin__lte=100),
                name="project_audit_margin_0_100",
                violation_error_message="The blind accuracy margin is from 0 to 100 points.",
            ),
            models.CheckConstraint(
                condition=Q(probe_shuffles__gte=1)
                & Q(probe_shuffles__lte=10)
                & Q(probe_frames__gte=1)
                & Q(probe_frames__lte=16),
                name="project_probe_counts",
                violation_error_message="Probes take 1 to 10 option orders and 1 to 16 frames.",
            ),
            models.CheckConstraint(
                condition=Q(scene_min_s__gte=0) & Q(clip_pad_s__gte=0),
                name="project_clip_numbers",
                violation_error_message="The shortest scene and the clip padding cannot be negative.",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_archived(self) -> bool:
        return self.archived_at is not None

    def taxonomy(self, key: str) -> list:
        return self.taxonomies.get(key) or taxonomies.default_taxonomies()[key]


class Role(models.TextChoices):
    ADMIN = "admin", _("Admin")
    ANNOTATOR = "annotator", _("Annotator")
    EXAMINER = "examiner", _("Examiner")
    REVISER = "reviser", _("Reviser")


class Membership(models.Model):
    """One role of one person in one project; a person may hold several roles."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=20, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "user", "role"], name="membership_unique_role")]
        indexes = [models.Index(fields=["user", "project"])]

    def __str__(self) -> str:
        return f"{self.user} · {self.role} · {self.project}"


def _invitation_token() -> str:
    import secrets

    return secrets.token_urlsafe(32)


class Invitation(models.Model):
    """A link that makes whoever follows it a member of a project, with the roles fixed here.

    The token is the whole secret: anyone with the link may use it once, before it expires,
    unless an admin revokes it.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="invitations")
    # Several roles as a list of Role values; one Membership row per role on acceptance.
    roles = models.JSONField(default=list)
    email = models.EmailField(blank=True)
    token = models.CharField(max_length=64, unique=True, default=_invitation_token)
    expires_at = models.DateTimeField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(used_at__isnull=True) | Q(revoked_at__isnull=True),
                name="invitation_used_or_revoked",
                violation_error_message="An invitation is either used or revoked, not both.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.project} · {', '.join(self.roles)}"

    def state(self, now=None) -> str:
        """open, used, revoked or expired: what the link does when followed now."""
        from django.utils import timezone

        if self.used_at:
            return "used"
        if self.revoked_at:
            return "revoked"
        if self.expires_at <= (now or timezone.now()):
            return "expired"
        return "open"


class UserPreference(models.Model):
    """What a person chose for the interface, applied again at each login on any browser."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preference")
    # A code of settings.LANGUAGES; checked by projects.preferences, not by choices, so adding a
    # language needs no migration.
    language = models.CharField(max_length=10, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.user} · {self.language or '-'}"
