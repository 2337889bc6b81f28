"""Evaluation runs for scripts: list and start runs (admins start), one run with its figures, its
predictions (each with its item and model calls), cancel and resume, and two runs compared.

Thin over evaluations.runs / selectors, the code the leaderboard and `manage.py evaluate` use.
Refusals use the one error shape: `evaluation_invalid` (400), `evaluation_items_invalid` (400),
`no_model_endpoint` (409).
"""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluations.models import EvaluationRun, Prediction, Protocol
from evaluations.runs import evaluation_cancel, evaluation_resume, evaluation_start
from evaluations.selectors import ACTIVE, compare_runs, run_summary
from projects.permissions import Action, get_project_or_404
from releases.models import DatasetRelease

from .errors import ErrorResponseSerializer
from .fields import JsonBooleanField, JsonCharField, JsonIntegerField
from .jobs import SLUG, JobProgressSerializer
from .mixins import ApiAuthMixin

RUN_ID = OpenApiParameter("run_id", OpenApiTypes.INT, OpenApiParameter.PATH, description="The run's id.")


class EvaluationRunSerializer(serializers.ModelSerializer):
    release = serializers.CharField(source="release.version")
    release_id = serializers.IntegerField()
    has_api_key = serializers.SerializerMethodField(help_text="A key is stored for the run (never shown back).")
    job = serializers.SerializerMethodField()
    summary = serializers.SerializerMethodField(
        help_text="items, scored, answered, unreadable, failed, accuracy, se (clustered by video), interval_95, "
        "clusters, groups (per category, level, duration_group), calls, tokens, cost_usd."
    )

    class Meta:
        model = EvaluationRun
        fields = [
            "id",
            "name",
            "model",
            "release",
            "release_id",
            "file",
            "protocol",
            "frames",
            "base_url",
            "has_api_key",
            "use_extractor",
            "status",
            "summary",
            "job",
            "created_at",
            "finished_at",
        ]
        ref_name = "EvaluationRun"

    def get_has_api_key(self, run) -> bool:
        return bool(run.api_key)

    def get_job(self, run) -> dict | None:
        job = run.job
        if job is None:
            return None
        return {"id": job.pk, "status": job.status, "progress": JobProgressSerializer(job).data, "message": job.message}

    def get_summary(self, run) -> dict:
        return run_summary(run) if run.status in ACTIVE else run.summary


class EvaluationListApi(ApiAuthMixin, generics.ListAPIView):
    """The project's evaluation runs, newest first."""

    serializer_class = EvaluationRunSerializer

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return EvaluationRun.objects.none()
        project = get_project_or_404(self.request.user, self.kwargs["slug"])
        return (
            EvaluationRun.objects.filter(project=project)
            .select_related("release", "job")
            .order_by("-created_at", "-id")
        )

    @extend_schema(operation_id="evaluations_list", tags=["evaluations"], parameters=[SLUG])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class EvaluationCreateApi(ApiAuthMixin, APIView):
    """Start a run (admins): a background job; poll the run for its progress and figures."""

    class InputSerializer(serializers.Serializer):
        release_id = JsonIntegerField(min_value=1)
        model = JsonCharField(max_length=120, min_length=1)
        file = JsonCharField(
            max_length=300, required=False, default="", allow_blank=True, help_text="Default: the first question file."
        )
        protocol = serializers.ChoiceField(choices=Protocol.values, required=False, help_text="Default: the format's.")
        frames = JsonIntegerField(min_value=1, max_value=256, required=False, default=8)
        name = JsonCharField(max_length=120, required=False, default="", allow_blank=True)
        base_url = serializers.URLField(max_length=300, required=False, default="", allow_blank=True)
        api_key = JsonCharField(max_length=500, required=False, default="", allow_blank=True, write_only=True)
        use_extractor = JsonBooleanField(required=False, default=True)

        class Meta:
            ref_name = "EvaluationCreate"

    @extend_schema(
        operation_id="evaluations_create",
        tags=["evaluations"],
        parameters=[SLUG],
        request=InputSerializer,
        responses={
            202: OpenApiResponse(EvaluationRunSerializer, description="The run, queued."),
            409: OpenApiResponse(
                ErrorResponseSerializer, description="`no_model_endpoint`: nowhere to send the calls."
            ),
        },
    )
    def post(self, request, slug):
        project = get_project_or_404(request.user, slug, Action.ADMINISTER)
        data = EvaluationCreateApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        release = DatasetRelease.objects.filter(project=project, pk=values.pop("release_id")).first()
        if release is None:
            raise exceptions.ValidationError({"release_id": ["No such release in this project."]})
        run = evaluation_start(project=project, release=release, user=request.user, **values)
        return Response(EvaluationRunSerializer(run).data, status=status.HTTP_202_ACCEPTED)


def _run_or_404(user, slug, run_id, action=Action.VIEW) -> EvaluationRun:
    project = get_project_or_404(user, slug, action)
    run = EvaluationRun.objects.filter(project=project, pk=run_id).select_related("release", "job").first()
    if run is None:
        raise exceptions.NotFound("No such evaluation run in this project.")
    return run


class EvaluationDetailApi(ApiAuthMixin, APIView):
    @extend_schema(
        operation_id="evaluations_retrieve",
        tags=["evaluations"],
        parameters=[SLUG, RUN_ID],
        responses={200: EvaluationRunSerializer},
    )
    def get(self, request, slug, run_id):
        return Response(EvaluationRunSerializer(_run_or_404(request.user, slug, run_id)).data)


class PredictionSerializer(serializers.ModelSerializer):
    class Meta:
        model = Prediction
        fields = [
            "index",
            "record_id",
            "mcq",
            "video",
            "category",
            "level",
            "duration_group",
            "option_count",
            "correct_index",
            "outcome",
            "chosen_index",
            "score",
            "method",
            "reply",
            "reason",
            "call",
            "extract_call",
        ]
        ref_name = "EvaluationPrediction"


class PredictionListApi(ApiAuthMixin, generics.ListAPIView):
    """A run's predictions in record order: each names its item (`mcq`) and model calls (ids)."""

    serializer_class = PredictionSerializer

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Prediction.objects.none()
        run = _run_or_404(self.request.user, self.kwargs["slug"], self.kwargs["run_id"])
        return Prediction.objects.filter(run=run).order_by("index")

    @extend_schema(operation_id="evaluations_predictions", tags=["evaluations"], parameters=[SLUG, RUN_ID])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class EvaluationActApi(ApiAuthMixin, APIView):
    """Cancel a run under way, or resume one (only questions without an answer are asked)."""

    action = ""

    def post(self, request, slug, run_id):
        run = _run_or_404(request.user, slug, run_id, Action.ADMINISTER)
        act = evaluation_cancel if self.action == "cancel" else evaluation_resume
        run = act(run=run) if act is evaluation_cancel else act(run=run, user=request.user)
        return Response(EvaluationRunSerializer(run).data, status=status.HTTP_202_ACCEPTED)


class EvaluationCancelApi(EvaluationActApi):
    action = "cancel"

    @extend_schema(
        operation_id="evaluations_cancel",
        tags=["evaluations"],
        parameters=[SLUG, RUN_ID],
        request=None,
        responses={202: EvaluationRunSerializer},
    )
    def post(self, request, slug, run_id):
        return super().post(request, slug, run_id)


class EvaluationResumeApi(EvaluationActApi):
    action = "resume"

    @extend_schema(
        operation_id="evaluations_resume",
        tags=["evaluations"],
        parameters=[SLUG, RUN_ID],
        request=None,
        responses={
            202: EvaluationRunSerializer,
            409: OpenApiResponse(
                ErrorResponseSerializer,
                description="`job_already_running`: the run is queued or running; `no_model_endpoint`.",
            ),
        },
    )
    def post(self, request, slug, run_id):
        return super().post(request, slug, run_id)


class CompareSerializer(serializers.Serializer):
    a = serializers.IntegerField()
    b = serializers.IntegerField()
    common = serializers.IntegerField(help_text="Questions both runs scored.")
    accuracy_a = serializers.FloatField(allow_null=True)
    accuracy_b = serializers.FloatField(allow_null=True)
    difference = serializers.DictField(help_text="accuracy (A − B), se clustered by video, interval_95, n, clusters.")
    mcnemar = serializers.DictField(allow_null=True, help_text="a_only, b_only, p_value (exact, two-sided).")
    bootstrap_interval = serializers.ListField(child=serializers.FloatField(), allow_null=True)
    needed_for_2_points = serializers.IntegerField(allow_null=True)

    class Meta:
        ref_name = "EvaluationCompare"


class EvaluationCompareApi(ApiAuthMixin, APIView):
    @extend_schema(
        operation_id="evaluations_compare",
        tags=["evaluations"],
        parameters=[
            SLUG,
            OpenApiParameter("a", OpenApiTypes.INT, OpenApiParameter.QUERY, required=True),
            OpenApiParameter("b", OpenApiTypes.INT, OpenApiParameter.QUERY, required=True),
        ],
        responses={200: CompareSerializer},
    )
    def get(self, request, slug):
        get_project_or_404(request.user, slug)  # who may see the project, before what they asked
        try:
            a_id, b_id = int(request.query_params.get("a", "")), int(request.query_params.get("b", ""))
        except ValueError:
            raise exceptions.ValidationError({"a": ["Two run ids, a and b."]}) from None
        a, b = _run_or_404(request.user, slug, a_id), _run_or_404(request.user, slug, b_id)
        try:
            c = compare_runs(a, b)
        except ValueError as exc:
            raise exceptions.ValidationError({"b": [str(exc)]}) from None
        return Response(
            {
                "a": a.pk,
                "b": b.pk,
                "common": c.common,
                "accuracy_a": c.accuracy_a,
                "accuracy_b": c.accuracy_b,
                "difference": c.difference,
                "mcnemar": c.mcnemar,
                "bootstrap_interval": c.bootstrap_interval,
                "needed_for_2_points": c.needed_for_2_points,
            }
        )
