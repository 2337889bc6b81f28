"""MCQs for scripts: list, create (with content, in one step), read, change (version-checked), submit.

Thin over annotator.mcqs, the services of the browser's MCQ editor: a save refuses what can never
be right (422 `mcq_invalid`) and keeps what is merely unfinished; a submit refuses what is
unfinished (422 `not_ready`, with every blocker).
"""

import django_filters
from django.db import transaction
from django.db.models import Prefetch, QuerySet
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import exceptions, generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.concurrency import StaleVersion
from annotator.mcqs import mcq_create, mcq_findings, mcq_save, mcq_state, mcq_submit
from annotator.models import MCQ, MCQVideo, ReferredMoment, VideoRole
from projects.permissions import Action, get_project_or_404
from videos.models import Video

from .fields import JsonCharField, JsonIntegerField
from .filters import IdFilter
from .items import (
    CONFLICT,
    UNPROCESSABLE,
    ItemSubmittedSerializer,
    JsonFloatField,
    VersionConflict,
    VersionSerializer,
    editable_or_403,
    id_field,
    path_id,
    status_filter,
    submitted_payload,
    validated,
)
from .jobs import SLUG
from .mixins import ApiAuthMixin

MCQ_ID = path_id("mcq_id", "MCQ")
NO_SUCH_MCQ = gettext_lazy("No such MCQ in this project.")
TAGS = ["mcqs"]
# Far beyond any video, yet its frame number still fits the column at any real frame rate.
MAX_MOMENT_S = 10_000_000
# What a change may set; a field left out keeps its value (the MCQ service's own names).
CONTENT_FIELDS = (
    "question",
    "referring_start",
    "referring_end",
    "question_wo_referring_query",
    "options",
    "correct_index",
    "category",
    "level",
    "videos",
    "moments",
)


def _mcqs(project) -> QuerySet[MCQ]:
    return (
        MCQ.objects.filter(project=project)
        .select_related("author")
        .prefetch_related(
            Prefetch("mcq_videos", queryset=MCQVideo.objects.order_by("order")),
            Prefetch("moments", queryset=ReferredMoment.objects.order_by("order", "time_s", "pk")),
        )
    )


def _mcq_or_404(user, slug: str, mcq_id: int) -> MCQ:
    project = get_project_or_404(user, slug)
    mcq = _mcqs(project).filter(pk=mcq_id).first()
    if mcq is None:
        raise exceptions.NotFound(NO_SUCH_MCQ)
    mcq.project = project
    return mcq


def _fresh(mcq: MCQ) -> MCQ:
    fresh = _mcqs(mcq.project).get(pk=mcq.pk)
    fresh.project = mcq.project
    return fresh


# --- shapes --------------------------------------------------------------------------------------------


class MCQVideoSerializer(serializers.ModelSerializer):
    video_id = serializers.IntegerField()

    class Meta:
        model = MCQVideo
        fields = ["video_id", "role", "order"]
        ref_name = "MCQVideo"


class MomentSerializer(serializers.ModelSerializer):
    video_id = serializers.IntegerField()

    class Meta:
        model = ReferredMoment
        fields = ["video_id", "time_s", "frame_index"]
        ref_name = "ReferredMoment"


class FindingSerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    options = serializers.ListField(child=serializers.IntegerField(), help_text="Options it is about (from 0).")
    moments = serializers.ListField(child=serializers.IntegerField(), help_text="Moments it is about (from 0).")

    class Meta:
        ref_name = "MCQFinding"


class MCQSerializer(serializers.ModelSerializer):
    author = serializers.CharField(source="author.username", allow_null=True, default=None)
    options = serializers.ListField(child=serializers.CharField(allow_blank=True))
    videos = MCQVideoSerializer(many=True, source="mcq_videos")
    moments = MomentSerializer(many=True)

    class Meta:
        model = MCQ
        fields = [
            "id",
            "status",
            "version",
            "origin",
            "human_edited",
            "author",
            "question",
            "referring_start",
            "referring_end",
            "referring_query",
            "question_wo_referring_query",
            "options",
            "correct_index",
            "category",
            "level",
            "task_group",
            "videos",
            "moments",
            "created_at",
            "updated_at",
            "submitted_at",
        ]
        ref_name = "MCQ"


class MCQDetailSerializer(MCQSerializer):
    warnings = serializers.SerializerMethodField(help_text="What a careful annotator would look at again.")
    blockers = serializers.SerializerMethodField(help_text="What must be fixed before it can be submitted.")

    class Meta(MCQSerializer.Meta):
        fields = [*MCQSerializer.Meta.fields, "warnings", "blockers"]
        ref_name = "MCQDetail"

    def _findings(self, mcq):
        if not hasattr(mcq, "_api_findings"):
            mcq._api_findings = mcq_findings(mcq=mcq)
        return mcq._api_findings

    @extend_schema_field(FindingSerializer(many=True))
    def get_warnings(self, mcq) -> list[dict]:
        return [f.as_dict() for f in self._findings(mcq)[0]]

    @extend_schema_field(FindingSerializer(many=True))
    def get_blockers(self, mcq) -> list[dict]:
        return [f.as_dict() for f in self._findings(mcq)[1]]


class MCQVideoInputSerializer(serializers.Serializer):
    video_id = id_field(help_text="A video of this project.")
    role = serializers.ChoiceField(
        choices=VideoRole.choices,
        default=VideoRole.MAIN,
        help_text="`main` for a question over one video; one `reference` and `candidate`s for several.",
    )

    class Meta:
        ref_name = "MCQVideoInput"


class MomentInputSerializer(serializers.Serializer):
    video_id = id_field(help_text="One of the MCQ's videos.")
    time_s = JsonFloatField(
        min_value=0, max_value=MAX_MOMENT_S, help_text="Seconds from the start; the frame follows from it."
    )

    class Meta:
        ref_name = "ReferredMomentInput"


class MCQContentSerializer(serializers.Serializer):
    """The content of an MCQ; on a change, a field left out keeps its value."""

    question = JsonCharField(required=False, allow_blank=True)
    referring_start = JsonIntegerField(
        required=False,
        allow_null=True,
        min_value=0,
        help_text="The referring query as characters [start, end) of the question.",
    )
    referring_end = JsonIntegerField(required=False, allow_null=True, min_value=0)
    question_wo_referring_query = JsonCharField(
        required=False, allow_blank=True, help_text="Derived from the question and the span when empty."
    )
    options = serializers.ListField(child=JsonCharField(allow_blank=True), required=False)
    correct_index = JsonIntegerField(
        required=False, allow_null=True, min_value=0, help_text="The correct option, from 0."
    )
    category = JsonCharField(required=False, allow_blank=True, help_text="A category of the project.")
    level = JsonCharField(required=False, allow_blank=True)
    videos = MCQVideoInputSerializer(many=True, required=False, help_text="Replaces the MCQ's videos, in order.")
    moments = MomentInputSerializer(many=True, required=False, help_text="Replaces the referred moments.")


def _save(*, mcq: MCQ, version: int, changes: dict, user) -> None:
    """One mcq_save of the stored state with `changes` over it."""
    state = mcq_state(mcq=mcq, links=list(mcq.mcq_videos.select_related("video")), moments=list(mcq.moments.all()))
    values = {name: state[name] for name in CONTENT_FIELDS if name not in ("videos", "moments")}
    values.update({k: v for k, v in changes.items() if k in CONTENT_FIELDS})
    if {"question", "referring_start", "referring_end"} & set(changes) and "question_wo_referring_query" not in changes:
        values["question_wo_referring_query"] = None  # derived again from the new question and span
    if "videos" in values:
        values["videos"] = [{**dict(v), "order": i} for i, v in enumerate(values["videos"])]
    if "moments" in values:
        values["moments"] = [dict(m) for m in values["moments"]]
    mcq_save(mcq=mcq, expected_version=version, user=user, **values)


class MCQFilter(django_filters.FilterSet):
    status = status_filter()
    category = django_filters.CharFilter(help_text="Only MCQs of this category.")
    video = IdFilter(field_name="mcq_videos__video_id", distinct=True, help_text="Only MCQs over this video.")

    class Meta:
        model = MCQ
        fields = ["status", "category", "video"]


# --- views ---------------------------------------------------------------------------------------------


class MCQListApi(ApiAuthMixin, generics.ListAPIView):
    """The project's MCQs with their videos and referred moments, oldest first."""

    serializer_class = MCQSerializer
    filterset_class = MCQFilter

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation: no project to look up
            return MCQ.objects.none()
        project = get_project_or_404(self.request.user, self.kwargs["slug"])
        return _mcqs(project).order_by("pk")

    @extend_schema(operation_id="mcqs_list", tags=TAGS, parameters=[SLUG])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class MCQCreateApi(ApiAuthMixin, APIView):
    class InputSerializer(MCQContentSerializer):
        videos = MCQVideoInputSerializer(many=True, help_text="The videos it is over, in order (at least one).")

        class Meta:
            ref_name = "MCQCreateInput"

    @extend_schema(
        operation_id="mcqs_create",
        tags=TAGS,
        parameters=[SLUG],
        request=InputSerializer,
        responses={201: MCQDetailSerializer, 422: UNPROCESSABLE},
    )
    def post(self, request, slug):
        """A new MCQ over some videos, being annotated by you; with content, saved in the same step."""
        project = get_project_or_404(request.user, slug, Action.ANNOTATE)
        data = validated(MCQCreateApi.InputSerializer, request.data)
        ids = [v["video_id"] for v in data["videos"]]
        found = {v.pk: v for v in Video.objects.filter(project=project, pk__in=ids).defer("probe", "metadata")}
        missing = [i for i in ids if i not in found]
        if missing:
            raise exceptions.ValidationError(
                {"videos": [_("No video %(ids)s in this project.") % {"ids": ", ".join(map(str, missing))}]}
            )
        content = {k: v for k, v in data.items() if k != "videos"}
        with transaction.atomic():
            mcq = mcq_create(
                project=project, videos=[(found[v["video_id"]], v["role"]) for v in data["videos"]], user=request.user
            )
            mcq.project = project
            if content:
                _save(mcq=mcq, version=mcq.version, changes=content, user=request.user)
        return Response(MCQDetailSerializer(_fresh(mcq)).data, status=status.HTTP_201_CREATED)


class MCQDetailApi(ApiAuthMixin, APIView):
    @extend_schema(operation_id="mcqs_retrieve", tags=TAGS, parameters=[SLUG, MCQ_ID], responses=MCQDetailSerializer)
    def get(self, request, slug, mcq_id):
        """One MCQ, with its videos, moments, warnings and what still blocks its submit."""
        return Response(MCQDetailSerializer(_mcq_or_404(request.user, slug, mcq_id)).data)


class MCQUpdateApi(ApiAuthMixin, APIView):
    class InputSerializer(VersionSerializer, MCQContentSerializer):
        class Meta:
            ref_name = "MCQUpdateInput"

    @extend_schema(
        operation_id="mcqs_partial_update",
        tags=TAGS,
        parameters=[SLUG, MCQ_ID],
        request=InputSerializer,
        responses={200: MCQDetailSerializer, 409: CONFLICT, 422: UNPROCESSABLE},
    )
    def patch(self, request, slug, mcq_id):
        """Change the fields sent (the others keep their values), as one new version; refused on a stale
        `version`."""
        mcq = _mcq_or_404(request.user, slug, mcq_id)
        editable_or_403(request.user, mcq.project, mcq, "MCQ")
        data = validated(MCQUpdateApi.InputSerializer, request.data)
        changes = {k: v for k, v in data.items() if k != "version"}
        try:
            _save(mcq=mcq, version=data["version"], changes=changes, user=request.user)
        except StaleVersion as exc:
            raise VersionConflict(exc) from exc
        return Response(MCQDetailSerializer(_fresh(mcq)).data)


class MCQSubmitApi(ApiAuthMixin, APIView):
    @extend_schema(
        operation_id="mcqs_submit",
        tags=TAGS,
        parameters=[SLUG, MCQ_ID],
        request=VersionSerializer,
        responses={200: ItemSubmittedSerializer, 409: CONFLICT, 422: UNPROCESSABLE},
    )
    def post(self, request, slug, mcq_id):
        """Hand the MCQ on as it is at `version`, unless a blocker remains (422 `not_ready` lists them)."""
        mcq = _mcq_or_404(request.user, slug, mcq_id)
        editable_or_403(request.user, mcq.project, mcq, "MCQ")
        data = validated(VersionSerializer, request.data)
        try:
            submitted = mcq_submit(mcq=mcq, user=request.user, expected_version=data["version"])
        except StaleVersion as exc:
            raise VersionConflict(exc) from exc
        return Response(submitted_payload(mcq, submitted, noun="MCQ"))
