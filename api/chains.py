"""QA chains for scripts: list, create on a clip, read, replace the turns (version-checked), submit.

Thin over annotator.chains, the services of the browser's chain editor. A chain has no delete:
the workflow keeps every item it logged, and a chain that should not be released is rejected in
review instead.
"""

import django_filters
from django.db.models import Prefetch, QuerySet
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.chains import chain_create, chain_save, chain_submit, chain_warnings
from annotator.concurrency import StaleVersion
from annotator.models import QAChain, QAPair
from projects.permissions import Action, get_project_or_404
from videos.models import Clip

from .errors import ErrorResponseSerializer
from .fields import JsonCharField
from .filters import IdFilter
from .items import (
    CONFLICT,
    UNPROCESSABLE,
    ItemSubmittedSerializer,
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

CHAIN_ID = path_id("chain_id", "chain")
NO_SUCH_CHAIN = gettext_lazy("No such chain in this project.")
TAGS = ["chains"]
CHAIN_EXISTS = OpenApiResponse(
    ErrorResponseSerializer, description="`chain_exists`: the clip already has a chain; `details.chain_id` is its id."
)


def _chains(project) -> QuerySet[QAChain]:
    # API-specific shape (turns nested in every row); each list or read is a fixed number of queries.
    return (
        QAChain.objects.filter(project=project)
        .select_related("clip", "author")
        .prefetch_related(Prefetch("pairs", queryset=QAPair.objects.order_by("index", "pk")))
    )


def _chain_or_404(user, slug: str, chain_id: int) -> QAChain:
    project = get_project_or_404(user, slug)
    chain = _chains(project).filter(pk=chain_id).first()
    if chain is None:
        raise exceptions.NotFound(NO_SUCH_CHAIN)
    chain.project = project
    return chain


def _fresh(chain: QAChain) -> QAChain:
    fresh = _chains(chain.project).get(pk=chain.pk)
    fresh.project = chain.project
    return fresh


# --- shapes --------------------------------------------------------------------------------------------


class TurnSerializer(serializers.ModelSerializer):
    class Meta:
        model = QAPair
        fields = ["id", "index", "question", "answer", "skill"]
        ref_name = "ChainTurn"


class TurnInputSerializer(serializers.Serializer):
    id = id_field(
        required=False, allow_null=True, help_text="The turn's id to keep or change it; omit or null for a new turn."
    )
    question = JsonCharField(allow_blank=True)
    answer = JsonCharField(allow_blank=True)
    skill = JsonCharField(
        required=False, allow_blank=True, default="", help_text="A skill code of the project's taxonomy, or empty."
    )

    class Meta:
        ref_name = "ChainTurnInput"


class ChainSerializer(serializers.ModelSerializer):
    clip = serializers.IntegerField(source="clip_id")
    video = serializers.IntegerField(source="clip.video_id")
    clip_index = serializers.IntegerField(source="clip.index")
    author = serializers.CharField(source="author.username", allow_null=True, default=None)
    turns = TurnSerializer(many=True, source="pairs")

    class Meta:
        model = QAChain
        fields = [
            "id",
            "clip",
            "video",
            "clip_index",
            "status",
            "version",
            "origin",
            "human_edited",
            "author",
            "created_at",
            "updated_at",
            "submitted_at",
            "turns",
        ]
        ref_name = "Chain"


class ChainDetailSerializer(ChainSerializer):
    warnings = serializers.SerializerMethodField(
        help_text="What the project asks for and this chain does not (yet) meet; saving is still allowed."
    )

    class Meta(ChainSerializer.Meta):
        fields = [*ChainSerializer.Meta.fields, "warnings"]
        ref_name = "ChainDetail"

    def get_warnings(self, chain) -> list[str]:
        return chain_warnings(chain=chain, pairs=list(chain.pairs.all()))


class ChainFilter(django_filters.FilterSet):
    status = status_filter()
    clip = IdFilter(field_name="clip_id", help_text="Only the chain of this clip.")
    video = IdFilter(field_name="clip__video_id", help_text="Only chains on clips of this video.")

    class Meta:
        model = QAChain
        fields = ["status", "clip", "video"]


# --- views ---------------------------------------------------------------------------------------------


class ChainListApi(ApiAuthMixin, generics.ListAPIView):
    """The project's QA chains with their turns, by video and clip."""

    serializer_class = ChainSerializer
    filterset_class = ChainFilter

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation: no project to look up
            return QAChain.objects.none()
        project = get_project_or_404(self.request.user, self.kwargs["slug"])
        return _chains(project).order_by("clip__video_id", "clip__index", "pk")

    @extend_schema(operation_id="chains_list", tags=TAGS, parameters=[SLUG])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class ChainCreateApi(ApiAuthMixin, APIView):
    class InputSerializer(serializers.Serializer):
        clip = id_field(help_text="The clip (of a video of this project) the chain is about.")
        turns = TurnInputSerializer(many=True, required=False, default=list, help_text="The turns, in order.")

        class Meta:
            ref_name = "ChainCreateInput"

    @extend_schema(
        operation_id="chains_create",
        tags=TAGS,
        parameters=[SLUG],
        request=InputSerializer,
        responses={
            201: ChainDetailSerializer,
            409: CHAIN_EXISTS,
            422: UNPROCESSABLE,
        },
    )
    def post(self, request, slug):
        """Write a chain by hand on a clip that has none; it starts as your work, being annotated."""
        project = get_project_or_404(request.user, slug, Action.ANNOTATE)
        data = validated(ChainCreateApi.InputSerializer, request.data)
        clip = Clip.objects.filter(pk=data["clip"], video__project=project).select_related("video").first()
        if clip is None:
            raise exceptions.ValidationError({"clip": [_("No such clip in this project.")]})
        clip.video.project = project
        saved = chain_create(clip=clip, user=request.user, turns=[dict(t) for t in data["turns"]])
        return Response(ChainDetailSerializer(_fresh(saved.chain)).data, status=status.HTTP_201_CREATED)


class ChainDetailApi(ApiAuthMixin, APIView):
    @extend_schema(
        operation_id="chains_retrieve", tags=TAGS, parameters=[SLUG, CHAIN_ID], responses=ChainDetailSerializer
    )
    def get(self, request, slug, chain_id):
        """One QA chain with its turns and what it does not yet meet."""
        chain = _chain_or_404(request.user, slug, chain_id)
        return Response(ChainDetailSerializer(chain).data)


class ChainUpdateApi(ApiAuthMixin, APIView):
    class InputSerializer(VersionSerializer):
        turns = TurnInputSerializer(
            many=True,
            help_text="The whole list of turns, in order: a turn with an `id` keeps it (changed or not), one "
            "without is new, a turn left out is deleted (with its relations).",
        )

        class Meta:
            ref_name = "ChainUpdateInput"

    @extend_schema(
        operation_id="chains_update",
        tags=TAGS,
        parameters=[SLUG, CHAIN_ID],
        request=InputSerializer,
        responses={200: ChainDetailSerializer, 409: CONFLICT, 422: UNPROCESSABLE},
    )
    def put(self, request, slug, chain_id):
        """Replace the chain's turns, as one new version; refused on a stale `version`."""
        chain = _chain_or_404(request.user, slug, chain_id)
        editable_or_403(request.user, chain.project, chain, "chain")
        data = validated(ChainUpdateApi.InputSerializer, request.data)
        turns = [{**t, "id": t.get("id")} for t in data["turns"]]
        try:
            chain_save(chain=chain, expected_version=data["version"], pairs=turns, user=request.user)
        except StaleVersion as exc:
            raise VersionConflict(exc) from exc
        return Response(ChainDetailSerializer(_fresh(chain)).data)


class ChainSubmitApi(ApiAuthMixin, APIView):
    @extend_schema(
        operation_id="chains_submit",
        tags=TAGS,
        parameters=[SLUG, CHAIN_ID],
        request=VersionSerializer,
        responses={200: ItemSubmittedSerializer, 409: CONFLICT, 422: UNPROCESSABLE},
    )
    def post(self, request, slug, chain_id):
        """Hand the chain on as it is at `version`: to the LLM judge when the project's gate covers chains,
        else to examiners."""
        chain = _chain_or_404(request.user, slug, chain_id)
        editable_or_403(request.user, chain.project, chain, "chain")
        data = validated(VersionSerializer, request.data)
        try:
            submitted = chain_submit(chain=chain, user=request.user, expected_version=data["version"])
        except StaleVersion as exc:
            raise VersionConflict(exc) from exc
        return Response(submitted_payload(chain, submitted, noun="Chain"))
