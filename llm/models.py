from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from projects.models import Project


class PromptTemplate(models.Model):
    """A versioned prompt; editing one makes a new version so every call names what it used."""

    project = models.ForeignKey(Project, null=True, blank=True, on_delete=models.CASCADE, related_name="prompts")
    key = models.CharField(max_length=60, help_text="Which step uses it, e.g. qa_chain, relations, judge")
    version = models.PositiveIntegerField(default=1)
    system = models.TextField(blank=True)
    body = models.TextField(help_text="Python str.format template")
    response_schema = models.JSONField(null=True, blank=True, help_text="JSON Schema the answer must satisfy")
    is_active = models.BooleanField(default=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["key", "-version"]
        constraints = [
            # nulls_distinct=False: global templates (project NULL) are unique too (PostgreSQL 15+).
            models.UniqueConstraint(
                fields=["project", "key", "version"], name="prompt_unique_version", nulls_distinct=False
            ),
            models.UniqueConstraint(
                fields=["project", "key"],
                condition=Q(is_active=True),
                name="prompt_one_active_per_key",
                nulls_distinct=False,
            ),
        ]

    def __str__(self) -> str:
        return f"{self.key} v{self.version}"


class CallOutcome(models.TextChoices):
    OK = "ok", _("OK")
    REPAIRED = "repaired", _("OK after a repair retry")
    INVALID = "invalid", _("Invalid answer")
    ERROR = "error", _("Error")
    TIMEOUT = "timeout", _("Timed out")
    RATE_LIMITED = "rate_limited", _("Rate limited")


class LLMCall(models.Model):
    """Provenance of one model call: enough to explain, cost and reproduce every draft."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="llm_calls")
    step = models.CharField(max_length=60)
    endpoint = models.CharField(max_length=300, blank=True)
    model = models.CharField(max_length=120)
    template = models.ForeignKey(PromptTemplate, null=True, blank=True, on_delete=models.SET_NULL, related_name="calls")
    template_key = models.CharField(max_length=60, blank=True)
    template_version = models.PositiveIntegerField(null=True, blank=True)
    parameters = models.JSONField(default=dict, blank=True)
    request = models.JSONField(default=dict, blank=True, help_text="Messages sent, with images summarised")
    raw_response = models.TextField(blank=True)
    parsed = models.JSONField(null=True, blank=True)
    outcome = models.CharField(max_length=20, choices=CallOutcome.choices)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=1)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["project", "step", "created_at"]), models.Index(fields=["outcome"])]

    def __str__(self) -> str:
        return f"{self.step} {self.model} {self.outcome}"


class ModelUse(models.TextChoices):
    """What a model is for; each use may name its own model on a project's endpoint."""

    DRAFTS = "drafts", _("Drafts (text)")
    VISION = "vision", _("Vision (frames)")
    JUDGE = "judge", _("Judge")
    TRANSCRIPTION = "transcription", _("Transcription")
    PROBES = "probes", _("Probes")


class ModelEndpoint(models.Model):
    """A project's own OpenAI-compatible endpoint; whatever it leaves blank comes from the environment.

    The API key is stored as given (no encryption library is part of the deployment): it is only
    ever read by the LLM layer, and no page or API answer shows it back, only whether one is set.
    """

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="model_endpoint")
    base_url = models.URLField(
        _("base URL"), max_length=300, blank=True, help_text=_("e.g. https://api.openai.com/v1 or http://vllm:8000/v1")
    )
    api_key = models.CharField(_("API key"), max_length=500, blank=True)
    drafts_model = models.CharField(_("drafts model"), max_length=120, blank=True)
    vision_model = models.CharField(_("vision model"), max_length=120, blank=True)
    judge_model = models.CharField(_("judge model"), max_length=120, blank=True)
    transcription_model = models.CharField(_("transcription model"), max_length=120, blank=True)
    probes_model = models.CharField(_("probes model"), max_length=120, blank=True)
    # model name → [input $ per 1M tokens, output $ per 1M tokens]; overrides llm.pricing's table.
    prices = models.JSONField(default=dict, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    def __str__(self) -> str:
        return f"{self.project} → {self.base_url or '(environment)'}"

    def model_for(self, use: str) -> str:
        return getattr(self, f"{use}_model", "") or ""
