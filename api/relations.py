"""The relations (links) of a chain pair for scripts: list, add, change, remove, submit.

Thin over annotator.relations, the services of the browser's relation editor. The links of a chain
pair are reviewed together, so they share one version, the chain pair's: every write names it and
answers with the new one.
"""

from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.concurrency import StaleVersion
from annotator.models import ChainPair, Relation, RelationDecision
from annotator.relations import (
    chain_pair_submit,
    relation_add,
    relation_decide,
    relation_remove,
    relation_retype,
    relation_rewrite,
)
from annotator.selectors import chain_pair_contents, chain_pair_for_editor
from projects.permissions import get_project_or_404

from .errors import ErrorResponseSerializer
from .fields import JsonCharField
from .items import (
    CONFLICT,
    UNPROCESSABLE,
    ItemSubmittedSerializer,
    VersionConflict,
    VersionQuerySerializer,
    VersionSerializer,
    editable_or_403,
    id_field,
    path_id,
    submitted_payload,
    validated,
)
from .jobs import SLUG
from .mixins import ApiAuthMixin

CHAIN_PAIR_ID = path_id("chain_pair_id", "chain pair")
RELATION_ID = path_id("relation_id", "relation")
NO_SUCH_CHAIN_PAIR = gettext_lazy("No such chain pair in this project.")
NO_SUCH_RELATION = gettext_lazy("No such relation in this chain pair.")
NOUN = "set of links"
TAGS = ["relations"]


def _chain_pair_or_404(user, slug: str, chain_pair_id: int) -> ChainPair:
    project = get_project_or_404(user, slug)
    chain_pair = chain_pair_for_editor(project=project, pair_id=chain_pair_id)
    if chain_pair is None:
        raise exceptions.NotFound(NO_SUCH_CHAIN_PAIR)
    return chain_pair


def _relation_or_404(chain_pair: ChainPair, relation_id: int) -> Relation:
    relation = Relation.objects.filter(pk=relation_id, chain_pair=chain_pair).first()
    if relation is None:
        raise exceptions.NotFound(NO_SUCH_RELATION)
    relation.chain_pair = chain_pair
    return relation


def _editable_chain_pair(user, slug: str, chain_pair_id: int) -> ChainPair:
    chain_pair = _chain_pair_or_404(user, slug, chain_pair_id)
    editable_or_403(user, chain_pair.project, chain_pair, NOUN)
    return chain_pair


# --- shapes --------------------------------------------------------------------------------------------


class ChainPairSummarySerializer(serializers.ModelSerializer):
    """The chain pair the links belong to: its status and the version the next write must name."""

    chain_before = serializers.IntegerField(source="chain_before_id")
    chain_after = serializers.IntegerField(source="chain_after_id")
    video = serializers.IntegerField(source="video_id")

    class Meta:
        model = ChainPair
        fields = ["id", "video", "before_index", "chain_before", "chain_after", "status", "version", "updated_at"]
        ref_name = "ChainPairSummary"


class RelationSerializer(serializers.ModelSerializer):
    from_pair = serializers.IntegerField(source="from_pair_id", help_text="The turn of the earlier chain.")
    to_pair = serializers.IntegerField(source="to_pair_id", help_text="The turn of the later chain.")
    from_turn = serializers.SerializerMethodField(help_text="The earlier turn's number in its chain, from 1.")
    to_turn = serializers.SerializerMethodField(help_text="The later turn's number in its chain, from 1.")

    class Meta:
        model = Relation
        fields = [
            "id",
            "from_pair",
            "to_pair",
            "from_turn",
            "to_turn",
            "relation_type",
            "origin",
            "decision",
            "rationale",
            "original_question",
            "original_answer",
            "rewritten_question",
            "rewritten_answer",
            "created_at",
            "updated_at",
        ]
        ref_name = "Relation"

    def get_from_turn(self, relation) -> int:
        return relation.from_pair.index + 1

    def get_to_turn(self, relation) -> int:
        return relation.to_pair.index + 1


class RelationsSerializer(serializers.Serializer):
    chain_pair = ChainPairSummarySerializer()
    relations = RelationSerializer(many=True)

    class Meta:
        ref_name = "ChainPairRelations"


class RelationWrittenSerializer(serializers.Serializer):
    chain_pair = ChainPairSummarySerializer()
    relation = RelationSerializer()

    class Meta:
        ref_name = "RelationWritten"


class ChainPairWrittenSerializer(serializers.Serializer):
    chain_pair = ChainPairSummarySerializer()

    class Meta:
        ref_name = "ChainPairWritten"


def _fresh_pair(chain_pair: ChainPair) -> ChainPair:
    return chain_pair_for_editor(project=chain_pair.project, pair_id=chain_pair.pk)


def _written(chain_pair: ChainPair, relation: Relation | None = None) -> dict:
    """The chain pair as stored now (its new version), and the relation as stored, if any."""
    fresh = _fresh_pair(chain_pair)
    payload = {"chain_pair": ChainPairSummarySerializer(fresh).data}
    if relation is not None:
        _, _, relations = chain_pair_contents(chain_pair=fresh)
        stored = next(r for r in relations if r.pk == relation.pk)
        payload["relation"] = RelationSerializer(stored).data
    return payload


# --- views ---------------------------------------------------------------------------------------------


class RelationListApi(ApiAuthMixin, APIView):
    @extend_schema(
        operation_id="relations_list", tags=TAGS, parameters=[SLUG, CHAIN_PAIR_ID], responses=RelationsSerializer
    )
    def get(self, request, slug, chain_pair_id):
        """The links between the turns of a chain pair's two chains, in turn order, with the pair's version."""
        chain_pair = _chain_pair_or_404(request.user, slug, chain_pair_id)
        _, _, relations = chain_pair_contents(chain_pair=chain_pair)
        return Response(RelationsSerializer({"chain_pair": chain_pair, "relations": relations}).data)


class RelationAddApi(ApiAuthMixin, APIView):
    class InputSerializer(VersionSerializer):
        from_pair = id_field(help_text="A turn of the earlier chain.")
        to_pair = id_field(help_text="A turn of the later chain.")
        relation_type = JsonCharField(help_text="A relation type code of the project's taxonomy.")
        rationale = JsonCharField(required=False, allow_blank=True, default="")

        class Meta:
            ref_name = "RelationAddInput"

    @extend_schema(
        operation_id="relations_create",
        tags=TAGS,
        parameters=[SLUG, CHAIN_PAIR_ID],
        request=InputSerializer,
        responses={201: RelationWrittenSerializer, 409: CONFLICT, 422: UNPROCESSABLE},
    )
    def post(self, request, slug, chain_pair_id):
        """Draw a link from a turn of the earlier chain to one of the later chain; it is accepted at once."""
        chain_pair = _editable_chain_pair(request.user, slug, chain_pair_id)
        data = validated(RelationAddApi.InputSerializer, request.data)
        try:
            relation = relation_add(
                chain_pair=chain_pair,
                from_pair_id=data["from_pair"],
                to_pair_id=data["to_pair"],
                relation_type=data["relation_type"],
                rationale=data["rationale"],
                expected_version=data["version"],
                user=request.user,
            )
        except StaleVersion as exc:
            raise VersionConflict(exc) from exc
        return Response(_written(chain_pair, relation), status=status.HTTP_201_CREATED)


class RelationUpdateApi(ApiAuthMixin, APIView):
    class InputSerializer(VersionSerializer):
        decision = serializers.ChoiceField(
            choices=RelationDecision.choices,
            required=False,
            help_text="Accept or reject the link (or put it back to `candidate`); accepting applies its rewrite.",
        )
        relation_type = JsonCharField(required=False, help_text="A relation type code of the project.")
        rewritten_question = JsonCharField(required=False, allow_blank=True)
        rewritten_answer = JsonCharField(required=False, allow_blank=True)

        class Meta:
            ref_name = "RelationUpdateInput"

        def validate(self, attrs):
            rewrite = {"rewritten_question", "rewritten_answer"} & set(attrs)
            if len(rewrite) == 1:
                raise serializers.ValidationError(
                    _("Send the rewritten question and answer together (both empty clears).")
                )
            if set(attrs) == {"version"}:
                raise serializers.ValidationError(_("Nothing to change: send a decision, a type or a rewrite."))
            return attrs

    @extend_schema(
        operation_id="relations_partial_update",
        tags=TAGS,
        parameters=[SLUG, CHAIN_PAIR_ID, RELATION_ID],
        request=InputSerializer,
        responses={200: RelationWrittenSerializer, 409: CONFLICT, 422: UNPROCESSABLE},
    )
    def patch(self, request, slug, chain_pair_id, relation_id):
        """Change a link: its type, the rewrite of the later turn, its decision; all or nothing.

        Each change is a version of the chain pair, in that order (type, rewrite, decision): a change
        of two things moves the version on by two.
        """
        chain_pair = _editable_chain_pair(request.user, slug, chain_pair_id)
        relation = _relation_or_404(chain_pair, relation_id)
        data = validated(RelationUpdateApi.InputSerializer, request.data)
        version = data["version"]
        try:
            with transaction.atomic():
                if "relation_type" in data:
                    relation_retype(
                        relation=relation,
                        relation_type=data["relation_type"],
                        expected_version=version,
                        user=request.user,
                    )
                    version += 1
                if "rewritten_question" in data:
                    relation_rewrite(
                        relation=relation,
                        question=data["rewritten_question"],
                        answer=data["rewritten_answer"],
                        expected_version=version,
                        user=request.user,
                    )
                    version += 1
                if "decision" in data:
                    relation_decide(
                        relation=relation, decision=data["decision"], expected_version=version, user=request.user
                    )
        except StaleVersion as exc:
            raise VersionConflict(exc) from exc
        return Response(_written(chain_pair, relation))


class RelationRemoveApi(ApiAuthMixin, APIView):
    @extend_schema(
        operation_id="relations_destroy",
        tags=TAGS,
        parameters=[SLUG, CHAIN_PAIR_ID, RELATION_ID, VersionQuerySerializer],
        request=None,
        responses={
            200: ChainPairWrittenSerializer,
            400: OpenApiResponse(
                ErrorResponseSerializer, description="`validation_error`: `version` is missing or not a whole number."
            ),
            409: CONFLICT,
            422: UNPROCESSABLE,
        },
    )
    def delete(self, request, slug, chain_pair_id, relation_id):
        """Remove a link a person drew (`?version=` the chain pair's); a machine's proposal is rejected
        instead (422), so it stays on record."""
        chain_pair = _editable_chain_pair(request.user, slug, chain_pair_id)
        relation = _relation_or_404(chain_pair, relation_id)
        data = validated(VersionQuerySerializer, request.query_params)
        try:
            relation_remove(relation=relation, expected_version=data["version"], user=request.user)
        except StaleVersion as exc:
            raise VersionConflict(exc) from exc
        return Response(_written(chain_pair))


class ChainPairSubmitApi(ApiAuthMixin, APIView):
    @extend_schema(
        operation_id="chain_pairs_submit",
        tags=TAGS,
        parameters=[SLUG, CHAIN_PAIR_ID],
        request=VersionSerializer,
        responses={200: ItemSubmittedSerializer, 409: CONFLICT, 422: UNPROCESSABLE},
    )
    def post(self, request, slug, chain_pair_id):
        """Hand the chain pair's links on once no candidate is left undecided."""
        chain_pair = _editable_chain_pair(request.user, slug, chain_pair_id)
        data = validated(VersionSerializer, request.data)
        try:
            submitted = chain_pair_submit(chain_pair=chain_pair, user=request.user, expected_version=data["version"])
        except StaleVersion as exc:
            raise VersionConflict(exc) from exc
        fresh = _fresh_pair(chain_pair)
        return Response(submitted_payload(fresh, submitted, noun="Links"))
