"""The benchmark audit for scripts (project admins): the static findings, the probes' figures and the
release gate's verdict in one read; start a probe run; send items back to review.

Thin over audits.static_checks / selectors / gate / services, the code the audit page and
`manage.py audit` use. Refusals use the one error shape: `no_model_endpoint` (409) when the project
has nowhere to send probe calls, `probe_run_invalid` (400), `validation_error`.
"""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from annotator.models import MCQ, ItemStatus
from audits.gate import release_gate
from audits.models import Probe, ProbeRun
from audits.selectors import Accuracy, probe_summary
from audits.services import audit_send_to_review, probe_run_start
from audits.static_checks import project_static_audit
from projects.permissions import Action, get_project_or_404

from .errors import ErrorResponseSerializer
from .fields import JsonCharField, JsonIntegerField
from .jobs import SLUG, JobProgressSerializer
from .mixins import ApiAuthMixin


class AccuracySerializer(serializers.Serializer):
    key = serializers.CharField(help_text="The probe, category or model the figure is for.")
    answered = serializers.IntegerField()
    correct = serializers.IntegerField()
    failed = serializers.IntegerField(help_text="Calls that ended without a readable answer; never counted as answers.")
    accuracy = serializers.FloatField(allow_null=True)
    interval_95 = serializers.ListField(child=serializers.FloatField(), allow_null=True, help_text="Wilson.")
    chance = serializers.FloatField(help_text="Mean of 1 ÷ options over the answered calls.")
    above_chance = serializers.BooleanField(help_text="The interval's lower end is above chance.")

    class Meta:
        ref_name = "AuditAccuracy"


def _accuracy(a: Accuracy) -> dict:
    return {
        "key": a.key,
        "answered": a.answered,
        "correct": a.correct,
        "failed": a.failed,
        "accuracy": a.accuracy,
        "interval_95": list(a.interval) if a.interval else None,
        "chance": a.chance,
        "above_chance": a.above_chance,
    }


class FindingSerializer(serializers.Serializer):
    code = serializers.CharField()
    severity = serializers.ChoiceField(choices=["blocker", "warning"])
    field = serializers.CharField()
    message = serializers.CharField()

    class Meta:
        ref_name = "AuditFinding"


class AuditItemSerializer(serializers.Serializer):
    mcq_id = serializers.IntegerField()
    findings = FindingSerializer(many=True)
    shortcut_score = serializers.FloatField(allow_null=True, help_text="Share of answered probe calls that were right.")
    answered = serializers.IntegerField()
    failed = serializers.IntegerField()
    probes_correct = serializers.ListField(child=serializers.CharField())

    class Meta:
        ref_name = "AuditItem"


class AuditSerializer(serializers.Serializer):
    mcqs_checked = serializers.IntegerField()
    finding_counts = serializers.DictField(child=serializers.IntegerField())
    probes = AccuracySerializer(many=True, help_text="Per probe, over every probed MCQ.")
    probes_by_category = serializers.DictField(child=AccuracySerializer(many=True))
    gate = serializers.DictField(
        help_text="The release gate's verdict on the accepted MCQs (as a manifest records it)."
    )
    items = AuditItemSerializer(many=True, help_text="MCQs with a finding or a probe answer.")

    class Meta:
        ref_name = "Audit"


class AuditApi(ApiAuthMixin, APIView):
    """The project's audit: static findings, probe figures, the gate's verdict on the accepted MCQs."""

    @extend_schema(operation_id="audit_read", tags=["audit"], parameters=[SLUG], responses={200: AuditSerializer})
    def get(self, request, slug):
        project = get_project_or_404(request.user, slug, Action.ADMINISTER)
        audit = project_static_audit(project=project)
        summary = probe_summary(project=project)
        accepted = MCQ.objects.filter(project=project, status=ItemStatus.ACCEPTED).values_list("pk", flat=True)
        gate = release_gate(project=project, mcq_ids=accepted)
        items = []
        for pk in sorted(set(audit.items) | set(summary.items)):
            score = summary.items.get(pk)
            items.append(
                {
                    "mcq_id": pk,
                    "findings": [
                        {"code": f.code, "severity": f.severity, "field": f.field, "message": f.message}
                        for f in audit.items.get(pk, [])
                    ],
                    "shortcut_score": score.score if score else None,
                    "answered": score.answered if score else 0,
                    "failed": score.failed if score else 0,
                    "probes_correct": sorted(score.probes) if score else [],
                }
            )
        return Response(
            {
                "mcqs_checked": audit.checked,
                "finding_counts": audit.counts,
                "probes": [_accuracy(a) for a in summary.by_probe],
                "probes_by_category": {p: [_accuracy(a) for a in rows] for p, rows in summary.by_category.items()},
                "gate": {**gate.manifest(), "messages": gate.messages()},
                "items": items,
            }
        )


class ProbeRunSerializer(serializers.ModelSerializer):
    job = serializers.SerializerMethodField()

    class Meta:
        model = ProbeRun
        fields = [
            "id",
            "probes",
            "probe_models",
            "shuffles",
            "frames",
            "mcq_ids",
            "counts",
            "created_at",
            "finished_at",
            "job",
        ]
        ref_name = "ProbeRun"

    def get_job(self, run) -> dict | None:
        job = run.job
        if job is None:
            return None
        url = reverse(
            "api:job-detail", kwargs={"slug": run.project.slug, "job_id": job.pk}, request=self.context["request"]
        )
        return {
            "id": job.pk,
            "status": job.status,
            "progress": JobProgressSerializer(job).data,
            "message": job.message,
            "url": url,
        }


class ProbeRunCreateApi(ApiAuthMixin, APIView):
    """Start a probe run (admins): a background job; answers to unchanged prompts are reused."""

    class InputSerializer(serializers.Serializer):
        probes = serializers.ListField(
            child=serializers.ChoiceField(choices=Probe.values),
            required=False,
            help_text=f"Any of {', '.join(Probe.values)}; default all.",
        )
        models = serializers.ListField(
            child=JsonCharField(max_length=120, min_length=1),
            required=False,
            help_text="Probe models; default the project's probe models, else the endpoint's probes model.",
        )
        mcq_ids = serializers.ListField(child=JsonIntegerField(min_value=1), required=False, max_length=100000)

        class Meta:
            ref_name = "ProbeRunCreate"

    @extend_schema(
        operation_id="audit_probe_run_create",
        tags=["audit"],
        parameters=[SLUG],
        request=InputSerializer,
        responses={
            202: OpenApiResponse(ProbeRunSerializer, description="The run, queued."),
            409: OpenApiResponse(
                ErrorResponseSerializer,
                description="`no_model_endpoint`: nowhere to send the calls; `job_already_running`.",
            ),
        },
    )
    def post(self, request, slug):
        project = get_project_or_404(request.user, slug, Action.ADMINISTER)
        data = ProbeRunCreateApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        run = probe_run_start(project=project, user=request.user, **data.validated_data)
        return Response(ProbeRunSerializer(run, context={"request": request}).data, status=status.HTTP_202_ACCEPTED)


class _SendItemSerializer(serializers.Serializer):
    mcq_id = JsonIntegerField(min_value=1)
    reasons = serializers.ListField(child=JsonCharField(max_length=200), min_length=1, max_length=100)

    class Meta:
        ref_name = "SendToReviewItem"


class SendToReviewApi(ApiAuthMixin, APIView):
    """Send MCQs back to review with reasons (admins): examining → flagged, submitted/accepted → revising."""

    class InputSerializer(serializers.Serializer):
        items = _SendItemSerializer(
            many=True,
            allow_empty=False,
            max_length=10000,
            help_text='The MCQs and their reasons, e.g. `[{"mcq_id": 12, "reasons": ["shortcut:text"]}]`.',
        )

        class Meta:
            ref_name = "SendToReview"

    class OutputSerializer(serializers.Serializer):
        sent = serializers.ListField(child=serializers.IntegerField())
        refused = serializers.DictField(child=serializers.CharField(), help_text="MCQ id → why it stayed.")

        class Meta:
            ref_name = "SentToReview"

    @extend_schema(
        operation_id="audit_send_to_review",
        tags=["audit"],
        parameters=[SLUG],
        request=InputSerializer,
        responses={200: OutputSerializer},
    )
    def post(self, request, slug):
        project = get_project_or_404(request.user, slug, Action.ADMINISTER)
        data = SendToReviewApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        reasons = {row["mcq_id"]: row["reasons"] for row in data.validated_data["items"]}
        outcome = audit_send_to_review(project=project, user=request.user, reasons=reasons)
        return Response({"sent": outcome.sent, "refused": {str(k): v for k, v in outcome.refused.items()}})
