"""Which endpoint, key and model a project's model call uses: `endpoint_for`, the one resolver.

A project may set its own endpoint (llm.models.ModelEndpoint); whatever it leaves blank comes from
the deployment's environment (OPENAI_BASE_URL, OPENAI_API_KEY, LLM_*_MODEL). The deployment's key
only ever goes to the deployment's URL: a project that names its own base URL sends its own key
(or none), so a project admin cannot point the server's key at a server of their choosing.

A job that would call a model asks `endpoint_require` before its row is created, so a project with
no usable endpoint gets one plain sentence instead of a job that fails on "Name or service not known".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from projects.refusals import Refused

from .models import ModelEndpoint, ModelUse

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
TRANSCRIBE_STEP = "transcribe"
JUDGE_STEPS = frozenset({"judge", "answer_judge"})
PROBE_STEP_PREFIX = "probe"


NO_ENDPOINT_MESSAGE = gettext_noop(
    "No model endpoint is set for this project: a project admin can set one under Settings → Model endpoint."
)


class NoModelEndpoint(Refused):
    """The project has no endpoint to send a model call to (none of its own, none in the environment)."""

    status, code = 409, "no_model_endpoint"

    def __init__(self, message: str = ""):
        super().__init__(message or _(NO_ENDPOINT_MESSAGE))


@dataclass(frozen=True)
class Endpoint:
    """Where one call goes. The key is kept out of repr so a log line or a traceback never shows it."""

    base_url: str
    model: str
    source: str  # "project" or "environment": where the base URL came from
    api_key: str = field(default="", repr=False)
    prices: dict = field(default_factory=dict, repr=False)


def use_for_step(step: str, *, vision: bool = False) -> str:
    """The use (ModelUse) a model step falls under."""
    if step == TRANSCRIBE_STEP:
        return ModelUse.TRANSCRIPTION
    if step in JUDGE_STEPS:
        return ModelUse.JUDGE
    if step.startswith(PROBE_STEP_PREFIX):
        return ModelUse.PROBES
    return ModelUse.VISION if vision else ModelUse.DRAFTS


def environment_model(use: str) -> str:
    """The deployment's default model for a use."""
    return {
        ModelUse.DRAFTS: settings.LLM_DEFAULT_MODEL,
        ModelUse.VISION: settings.LLM_VISION_MODEL,
        ModelUse.JUDGE: settings.LLM_JUDGE_MODEL,
        ModelUse.TRANSCRIPTION: settings.LLM_TRANSCRIBE_MODEL,
        ModelUse.PROBES: getattr(settings, "LLM_PROBE_MODEL", "") or settings.LLM_DEFAULT_MODEL,
    }[ModelUse(use)]


def model_endpoint_of(project) -> ModelEndpoint | None:
    """The project's own endpoint row, or None. Read afresh each call: a saved change applies at once."""
    if project is None or project.pk is None:
        return None
    return ModelEndpoint.objects.filter(project_id=project.pk).first()


def endpoint_for(*, project, use: str) -> Endpoint:
    """The endpoint, key and model for one use in this project (project settings over the environment).

    Raises NoModelEndpoint when neither the project nor the environment names a base URL or a key.
    A key alone means OpenAI's own API, as the SDK assumes.
    """
    own = model_endpoint_of(project)
    own_url = (own.base_url if own else "").strip()
    if own_url:
        base_url, api_key, source = own_url, own.api_key, "project"
    else:
        base_url = (settings.OPENAI_BASE_URL or "").strip()
        api_key = (own.api_key if own and own.api_key else "") or settings.OPENAI_API_KEY or ""
        source = "environment"
    if not base_url and not api_key:
        raise NoModelEndpoint()
    return Endpoint(
        base_url=(base_url or OPENAI_DEFAULT_BASE_URL).rstrip("/"),
        model=(own.model_for(use) if own else "") or environment_model(use),
        source=source,
        api_key=api_key,
        prices=dict(own.prices or {}) if own else {},
    )


def model_for_use(*, project, use: str) -> str:
    """The project's endpoint's model for a use, else the deployment's (even with no endpoint anywhere)."""
    own = model_endpoint_of(project)
    return (own.model_for(use) if own else "") or environment_model(use)


def endpoint_require(*, project) -> Endpoint:
    """Refuse (NoModelEndpoint) before a model job starts when the project has nowhere to send it."""
    return endpoint_for(project=project, use=ModelUse.DRAFTS)


def endpoint_usable(*, project) -> bool:
    try:
        endpoint_require(project=project)
    except NoModelEndpoint:
        return False
    return True


def model_endpoint_save(
    *,
    project,
    user,
    base_url: str,
    models: dict[str, str],
    prices: dict[str, list[float]],
    new_key: str = "",
    clear_key: bool = False,
) -> ModelEndpoint:
    """Set the project's endpoint. The stored key stays unless a new one is given or it is cleared."""
    with transaction.atomic():
        endpoint, _created = ModelEndpoint.objects.select_for_update().get_or_create(project=project)
        endpoint.base_url = base_url.strip()
        for use in ModelUse.values:
            setattr(endpoint, f"{use}_model", (models.get(use) or "").strip())
        endpoint.prices = prices
        if clear_key:
            endpoint.api_key = ""
        if new_key.strip():
            endpoint.api_key = new_key.strip()
        endpoint.updated_by = user if user is not None and user.is_authenticated else None
        endpoint.save()
    return endpoint
