"""What the item endpoints (QA chains, the relations of a chain pair, MCQs) share.

Items change through the same services as in the browser editors (annotator.chains, .relations,
.mcqs), and whoever may change an item is decided as there (annotator.edit_rights). Every write
names the `version` it was based on; a stale one is a 409 `stale_version` whose details carry the
version stored now and who saved it, so a script can fetch it again and decide.
"""

import django_filters
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import exceptions, serializers

from annotator.concurrency import StaleVersion
from annotator.edit_rights import may_edit, why_not_editable
from annotator.editor_endpoints import saved_by
from annotator.models import ItemStatus
from projects.refusals import Refused

from .errors import ErrorResponseSerializer
from .fields import JsonIntegerField
from .filters import ID_MAX

_STATUSES = ", ".join(f"`{s}`" for s in ItemStatus.values)

CONFLICT = OpenApiResponse(
    ErrorResponseSerializer,
    description="`stale_version`: someone saved the item after the `version` sent; `details.current_version` is "
    "the version stored now, `details.saved_by` who saved it (empty when unknown) and `details.your_version` "
    "the one sent. Fetch it again, merge, and send the current version. `not_editable`: the item has moved on "
    "in the workflow.",
)
UNPROCESSABLE = OpenApiResponse(
    ErrorResponseSerializer,
    description="The content cannot be saved as it is (`chain_invalid`, `relation_invalid`, `mcq_invalid`) or is "
    "not finished enough to submit (`not_ready`); `details` lists every problem.",
)


class VersionConflict(Refused):
    """A stale version, answered in the API's error shape with what a script needs to recover."""

    status, code = 409, "stale_version"

    def __init__(self, exc: StaleVersion):
        super().__init__(exc.message)
        self.current_version = exc.item.version
        self.your_version = exc.expected
        self.saved_by = saved_by(exc.item)

    @property
    def details(self) -> dict:
        return {
            "current_version": self.current_version,
            "your_version": self.your_version,
            "saved_by": self.saved_by,
        }


def editable_or_403(user, project, item, noun: str) -> None:
    """Refuse (403) unless this person may change the item at its stage, as the browser editors do."""
    if not may_edit(user, project, item):
        raise exceptions.PermissionDenied(why_not_editable(user, project, item, noun))


def id_field(**kwargs) -> JsonIntegerField:
    """A row's id in a JSON body: a bigint from 1 (anything else cannot name a row)."""
    return JsonIntegerField(min_value=1, max_value=ID_MAX, **kwargs)


class JsonFloatField(serializers.FloatField):
    """A JSON number, not a string holding one (api.fields: the schema says what is accepted)."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        return super().to_internal_value(data)


def path_id(name: str, what: str) -> OpenApiParameter:
    return OpenApiParameter(name, OpenApiTypes.INT, OpenApiParameter.PATH, description=f"The {what}'s id.")


def status_filter() -> django_filters.ChoiceFilter:
    return django_filters.ChoiceFilter(choices=ItemStatus.choices, help_text=f"Workflow status: {_STATUSES}.")


_VERSION_HELP = "The item's version your change is based on."


class VersionSerializer(serializers.Serializer):
    version = JsonIntegerField(min_value=1, help_text=_VERSION_HELP)


class VersionQuerySerializer(serializers.Serializer):
    """`?version=`, where the operation has no body (a query string is text)."""

    version = serializers.IntegerField(min_value=1, help_text=_VERSION_HELP)


class ItemSubmittedSerializer(serializers.Serializer):
    """A submit and where the item went."""

    id = serializers.IntegerField()
    status = serializers.CharField(help_text=f"The status now: {_STATUSES}.")
    version = serializers.IntegerField()
    outcome = serializers.ChoiceField(
        choices=["judge", "examining"],
        help_text="`judge`: queued for the LLM quality gate; `examining`: passed straight on to examiners.",
    )
    message = serializers.CharField(help_text="One sentence saying what happened, for people.")


def submitted_payload(item, submitted, *, noun: str) -> dict:
    return {
        "id": item.pk,
        "status": item.status,
        "version": item.version,
        "outcome": submitted.outcome,
        "message": submitted.message(noun),
    }


def validated(serializer_class, data, **context) -> dict:
    serializer = serializer_class(data=data, context=context)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
