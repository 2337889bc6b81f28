"""Curation: each rule's decision on a video with its reason, an admin's override, external scores."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from projects.permissions import Action, get_project_or_404
from videos.curation import RULES, external_scores_import, rules_for, video_curation_override
from videos.models import CurationDecision, CurationStatus, ExternalScore, Video
from videos.score_files import score_rows

from .errors import ErrorResponseSerializer
from .fields import JsonCharField
from .jobs import SLUG, VIDEO_ID
from .lookups import video_or_404
from .mixins import ApiAuthMixin

EXTERNAL_PREFIX = "external:"
SCORES_MAX_BYTES = 20 * 1024 * 1024


def _rule_label(rule: str) -> str:
    if rule.startswith(EXTERNAL_PREFIX):
        return f"External score: {rule.removeprefix(EXTERNAL_PREFIX)}"
    return RULES[rule][0] if rule in RULES else rule


class RuleSerializer(serializers.Serializer):
    rule = serializers.CharField(help_text="Rule code, e.g. `duration`, `scene_count`, `external:aesthetic`.")
    label = serializers.CharField()


class CurationDecisionSerializer(serializers.ModelSerializer):
    label = serializers.SerializerMethodField()
    overridden_by = serializers.CharField(
        source="overridden_by.username",
        allow_null=True,
        read_only=True,
        help_text="The admin whose override stands over this decision, if any.",
    )

    class Meta:
        model = CurationDecision
        fields = ["rule", "label", "passed", "value", "reason", "overridden_by", "override_note", "decided_at"]
        ref_name = "CurationDecision"

    def get_label(self, decision) -> str:
        return _rule_label(decision.rule)


class ExternalScoreSerializer(serializers.ModelSerializer):
    class Meta:
        model = ExternalScore
        fields = ["name", "value", "source", "imported_at"]
        ref_name = "ExternalScore"


class CurationSerializer(serializers.Serializer):
    """The whole curation state of one video; GET and POST answer with it."""

    video_id = serializers.IntegerField(source="video.pk")
    curation_status = serializers.ChoiceField(choices=CurationStatus.choices, source="video.curation_status")
    overridden_by = serializers.CharField(
        source="video.curation_overridden_by.username",
        allow_null=True,
        read_only=True,
        help_text="The admin who kept or rejected the video whatever the rules say; null when the rules decide.",
    )
    complexity_score = serializers.IntegerField(source="video.complexity_score", allow_null=True)
    rules = RuleSerializer(many=True, help_text="The rules this project applies, in order.")
    decisions = CurationDecisionSerializer(many=True, help_text="One per rule that could be evaluated.")
    external_scores = ExternalScoreSerializer(many=True)

    class Meta:
        ref_name = "VideoCuration"


def _curation_state(video: Video) -> dict:
    """Everything the answer shows, in a fixed number of queries (the video's overrider comes with it)."""
    decisions = CurationDecision.objects.filter(video=video).select_related("overridden_by").order_by("rule")
    return {
        "video": video,
        "rules": [{"rule": code, "label": _rule_label(code)} for code in rules_for(video.project)],
        "decisions": list(decisions),
        "external_scores": list(ExternalScore.objects.filter(video=video).order_by("name")),
    }


def _video(user, slug, video_id, action) -> Video:
    return video_or_404(user, slug, video_id, action, select_related=["curation_overridden_by"])


class CurationDetailApi(ApiAuthMixin, APIView):
    """How the project's filter rules judged the video, each decision with its reason, and any override."""

    @extend_schema(
        operation_id="videos_curation_retrieve",
        tags=["curation"],
        parameters=[SLUG, VIDEO_ID],
        responses={200: CurationSerializer},
    )
    def get(self, request, slug, video_id):
        video = _video(request.user, slug, video_id, Action.VIEW)
        return Response(CurationSerializer(_curation_state(video)).data)


class CurationOverrideApi(ApiAuthMixin, APIView):
    class InputSerializer(serializers.Serializer):
        status = serializers.ChoiceField(
            choices=CurationStatus.choices,
            help_text="`kept` or `rejected` overrides the rules; `pending` removes the override and lets the rules "
            "decide again.",
        )
        note = JsonCharField(
            required=False, allow_blank=True, default="", max_length=2000, help_text="Why; kept beside each decision."
        )

        class Meta:
            ref_name = "CurationOverride"

    @extend_schema(
        operation_id="videos_curation_override",
        tags=["curation"],
        parameters=[SLUG, VIDEO_ID],
        request=InputSerializer,
        responses={200: CurationSerializer},
    )
    def post(self, request, slug, video_id):
        """Keep or reject the video whatever the rules say, or hand it back to the rules (admins).

        The override survives re-processing; the rules' decisions stay visible beside it.
        """
        video = video_or_404(request.user, slug, video_id, Action.ADMINISTER)
        data = CurationOverrideApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            video_curation_override(video=video, user=request.user, **data.validated_data)
        except ValueError as exc:  # the serializer already limits the choices; the service has the last word
            raise exceptions.ValidationError({"status": [str(exc)]}) from exc
        video = _video(request.user, slug, video_id, Action.ADMINISTER)  # as the override left it
        return Response(CurationSerializer(_curation_state(video)).data)


class ExternalScoresImportApi(ApiAuthMixin, APIView):
    """Import externally computed scores per video from a CSV (admins); curation re-runs for those videos.

    Either `video,<score>,<score>...` (one column per score, empty cell = no score) or `video,name,value`
    (one score per row). Videos are named as in the project; unknown names are listed and skipped.
    A score counts in curation when the project sets bounds for it (`external_score_thresholds`).
    """

    parser_classes = [MultiPartParser, FormParser]

    class InputSerializer(serializers.Serializer):
        file = serializers.FileField(help_text="CSV of scores; the first column is named `video`.")

        class Meta:
            ref_name = "ExternalScoresImport"

    class OutputSerializer(serializers.Serializer):
        imported = serializers.IntegerField(help_text="Scores stored (new or replaced).")
        videos = serializers.IntegerField(help_text="Videos they belong to; their curation was re-run.")
        unknown_videos = serializers.ListField(child=serializers.CharField(), help_text="Names not in the project.")

        class Meta:
            ref_name = "ExternalScoresImportResult"

    @extend_schema(
        operation_id="scores_import",
        tags=["curation"],
        parameters=[SLUG],
        request={"multipart/form-data": InputSerializer},
        responses={
            200: OutputSerializer,
            400: OpenApiResponse(
                ErrorResponseSerializer,
                description="The file cannot be read (`validation_error`): `details.file` says why, with the line. "
                "Nothing was imported.",
            ),
        },
    )
    def post(self, request, slug):
        project = get_project_or_404(request.user, slug, Action.ADMINISTER)
        data = ExternalScoresImportApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        if upload.size > SCORES_MAX_BYTES:
            too_big = f"{upload.name} is larger than {SCORES_MAX_BYTES // 2**20} MB."
            raise exceptions.ValidationError({"file": [too_big]})
        try:
            rows = list(score_rows(upload.read()))
        except ValueError as exc:
            raise exceptions.ValidationError({"file": [f"{upload.name}: {exc}"]}) from exc
        outcome = external_scores_import(project=project, rows=rows)
        return Response(ExternalScoresImportApi.OutputSerializer(outcome).data, status=status.HTTP_200_OK)
