"""Background jobs of a project: the list, one job's progress and outcome, and a retry.

Every endpoint that starts work (upload, imports, reprocess, model steps) answers with the job in
the shape defined here, and a second start while the first still runs is a 409 that carries the
running job, so a script can poll it instead of starting another.
"""

import django_filters
from django.core.exceptions import ObjectDoesNotExist
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from jobs.models import BackgroundJob, JobStatus
from jobs.selectors import jobs_for_project
from jobs.services import JobAlreadyRunning, job_retry
from projects.permissions import Action, get_project_or_404

from .errors import ErrorResponseSerializer, error_body
from .filters import IdFilter
from .lookups import job_or_404
from .mixins import ApiAuthMixin
from .ordering import StableOrderingFilter

SLUG = OpenApiParameter("slug", OpenApiTypes.STR, OpenApiParameter.PATH, description="The project's slug.")
VIDEO_ID = OpenApiParameter("video_id", OpenApiTypes.INT, OpenApiParameter.PATH, description="The video's id.")
JOB_ID = OpenApiParameter("job_id", OpenApiTypes.INT, OpenApiParameter.PATH, description="The job's id.")

JOB_RUNNING = OpenApiResponse(
    ErrorResponseSerializer,
    description="The same job is already queued or running (`job_already_running`); `details.job` is that job "
    "(shape `Job`): poll it rather than start another.",
)
_RETRYABLE = (JobStatus.FAILED, JobStatus.CANCELLED)


class JobProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField(source="progress_done", help_text="Units done (rows, percent, ...).")
    total = serializers.IntegerField(source="progress_total", help_text="Units in all; 0 while unknown.")
    percent = serializers.IntegerField(allow_null=True, help_text="0–100, or null while the total is unknown.")


class JobLinksSerializer(serializers.Serializer):
    self = serializers.URLField()
    retry = serializers.URLField(allow_null=True, help_text="POST here to run it again; only when failed or cancelled.")
    target = serializers.URLField(allow_null=True, help_text="The API resource the job works on, when it has one.")


def _job_links(job: BackgroundJob, *, slug: str, request) -> dict:
    def url(name, **kwargs):
        return reverse(f"api:{name}", kwargs={"slug": slug, **kwargs}, request=request)

    return {
        "self": url("job-detail", job_id=job.pk),
        "retry": url("job-retry", job_id=job.pk) if job.status in _RETRYABLE else None,
        "target": url("video-detail", video_id=job.target_id) if job.target_type == "videos.video" else None,
    }


class JobListItemSerializer(serializers.ModelSerializer):
    progress = JobProgressSerializer(source="*")
    created_by = serializers.CharField(source="created_by.username", allow_null=True, read_only=True)
    links = serializers.SerializerMethodField()

    class Meta:
        model = BackgroundJob
        fields = [
            "id",
            "kind",
            "status",
            "target_type",
            "target_id",
            "progress",
            "message",
            "error",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
            "links",
        ]
        ref_name = "JobListItem"

    @extend_schema_field(JobLinksSerializer)
    def get_links(self, job):
        return _job_links(job, slug=self.context["view"].kwargs["slug"], request=self.context["request"])


class JobSerializer(JobListItemSerializer):
    """A job with its outcome: `result` is what the step reports (counts, per-row failures, ...)."""

    class Meta(JobListItemSerializer.Meta):
        fields = [*JobListItemSerializer.Meta.fields, "result", "attempts"]
        ref_name = "Job"


def job_payload(job: BackgroundJob, *, view) -> dict:
    """The `Job` shape for any view under /api/projects/{slug}/."""
    return JobSerializer(job, context={"request": view.request, "view": view}).data


def job_conflict(exc: JobAlreadyRunning, *, view, message: str) -> Response:
    return Response(
        error_body(code="job_already_running", message=message, details={"job": job_payload(exc.job, view=view)}),
        status=status.HTTP_409_CONFLICT,
    )


class JobFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=JobStatus.choices, help_text="The job's state.")
    kind = django_filters.CharFilter(help_text="The step, e.g. `videos.process`, `videos.import_comments`.")
    target_type = django_filters.CharFilter(help_text="What the job works on, e.g. `videos.video`.")
    target_id = IdFilter(help_text="The id of what it works on (with `target_type`).")

    class Meta:
        model = BackgroundJob
        fields = ["status", "kind", "target_type", "target_id"]


class JobListApi(ApiAuthMixin, generics.ListAPIView):
    """The project's background jobs, newest first: processing, imports, model steps."""

    serializer_class = JobListItemSerializer
    filter_backends = [DjangoFilterBackend, StableOrderingFilter]
    filterset_class = JobFilter
    ordering_fields = ["created_at", "started_at", "finished_at", "status", "kind"]
    ordering = ["-created_at"]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation: no project to look up
            return BackgroundJob.objects.none()
        project = get_project_or_404(self.request.user, self.kwargs["slug"])
        # Parameters can hold a whole manifest and results every refused row: the list needs neither.
        return jobs_for_project(project=project).defer("params", "result")

    @extend_schema(operation_id="jobs_list", tags=["jobs"], parameters=[SLUG])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class JobDetailApi(ApiAuthMixin, APIView):
    """One job: state, progress, message, the error when it failed, its result and timestamps."""

    @extend_schema(
        operation_id="jobs_retrieve", tags=["jobs"], parameters=[SLUG, JOB_ID], responses={200: JobSerializer}
    )
    def get(self, request, slug, job_id):
        job = job_or_404(request.user, slug, job_id)
        return Response(job_payload(job, view=self))


class JobRetryApi(ApiAuthMixin, APIView):
    """Run a failed or cancelled job again, as a new job with the same kind, target and parameters (admins)."""

    @extend_schema(
        operation_id="jobs_retry",
        tags=["jobs"],
        parameters=[SLUG, JOB_ID],
        request=None,
        responses={
            202: OpenApiResponse(JobSerializer, description="The new job."),
            409: OpenApiResponse(
                ErrorResponseSerializer,
                description="`job_already_running` (`details.job` is the running job), `not_retryable` (the job "
                "is queued, running or succeeded) or `target_gone` (what it worked on was deleted).",
            ),
        },
    )
    def post(self, request, slug, job_id):
        job = job_or_404(request.user, slug, job_id, Action.ADMINISTER)
        try:
            new_job = job_retry(job=job, user=request.user)
        except JobAlreadyRunning as exc:
            return job_conflict(exc, view=self, message=f"{job.kind} is already running again (job {exc.job.pk}).")
        except ValueError as exc:
            return _conflict("not_retryable", f"{exc} Job {job.pk} is {job.status}.")
        except (ObjectDoesNotExist, LookupError):
            gone = f"What job {job.pk} worked on ({job.target_type} {job.target_id}) no longer exists."
            return _conflict("target_gone", gone)
        return Response(job_payload(new_job, view=self), status=status.HTTP_202_ACCEPTED)


def _conflict(code: str, message: str) -> Response:
    return Response(error_body(code=code, message=message), status=status.HTTP_409_CONFLICT)
