"""Dataset releases for scripts: list, create (admins; built by a background job), one release with its
files and manifest, delete (admins), download (zip or tar) and statistics.

Thin over releases.services / selectors / downloads, so the browser, the command and the API cut
and delete releases one way. Members of any role read and download; refusals use the one error
shape: `validation_error` (details per input), `permission_denied`, `not_found`, and
`release_not_ready` (409) for a download of a release that is not ready.
"""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import RegexValidator
from django_filters import rest_framework as filters
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import exceptions, generics, serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from annotator.models import ItemStatus
from jobs.services import JobAlreadyRunning
from projects.permissions import Action, get_project_or_404
from releases import downloads
from releases.imports.services import IMPORT_STATUSES, ImportNotStarted, benchmark_import_start
from releases.models import DatasetRelease, ReleaseFormat, ReleaseStatus
from releases.selectors import release_get, release_list
from releases.services import FILTER_KEYS, SEED_MAX, VERSION_MAX, VERSION_RE, release_create, release_delete

from .errors import ErrorResponseSerializer, error_body
from .fields import JsonBooleanField, JsonCharField, JsonIntegerField
from .jobs import JOB_RUNNING, SLUG, JobProgressSerializer, JobSerializer, job_conflict, job_payload
from .mixins import ApiAuthMixin
from .ordering import StableOrderingFilter

RELEASE_ID = OpenApiParameter("release_id", OpenApiTypes.INT, OpenApiParameter.PATH, description="The release's id.")
ARCHIVE = OpenApiParameter(
    "archive",
    OpenApiTypes.STR,
    OpenApiParameter.QUERY,
    enum=["zip", "tar"],
    default="zip",
    description="`zip`: the stored deterministic archive (ranges supported; may redirect to object storage). "
    "`tar`: generated on the fly from the stored files, the same bytes every time.",
)
NO_SUCH_RELEASE = "No such release in this project."
_STATUSES = ", ".join(f"`{s}`" for s in ReleaseStatus.values)
_FORMATS = ", ".join(f"`{f}`" for f in ReleaseFormat.values)


def _release_or_404(user, slug: str, release_id: int, action: str = Action.VIEW) -> DatasetRelease:
    project = get_project_or_404(user, slug, action)
    release = release_get(project=project, release_id=release_id)
    if release is None:
        raise exceptions.NotFound(NO_SUCH_RELEASE)
    return release


# --- shapes ---------------------------------------------------------------------------------------------


class ReleaseJobSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField(help_text="The build job's state: `queued`, `running`, `succeeded`, `failed`.")
    progress = JobProgressSerializer(source="*")
    message = serializers.CharField()
    url = serializers.SerializerMethodField(help_text="The job in the jobs API (poll it for progress).")

    class Meta:
        ref_name = "ReleaseJob"

    def get_url(self, job) -> str:
        kwargs = {"slug": self.context["slug"], "job_id": job.pk}
        return reverse("api:job-detail", kwargs=kwargs, request=self.context["request"])


class ReleaseCountsSerializer(serializers.Serializer):
    videos = serializers.IntegerField(allow_null=True)
    items = serializers.DictField(child=serializers.IntegerField(), help_text='Items per kind, e.g. `{"mcq": 120}`.')
    qa_pairs = serializers.IntegerField(allow_null=True)
    per_split = serializers.DictField(
        child=serializers.DictField(child=serializers.IntegerField()),
        help_text='Per split: `{"videos": n, "items": n}`.',
    )

    class Meta:
        ref_name = "ReleaseCounts"


class ReleaseLinksSerializer(serializers.Serializer):
    self = serializers.URLField()
    download_zip = serializers.URLField(allow_null=True, help_text="Only when the release is ready.")
    download_tar = serializers.URLField(allow_null=True, help_text="Only when the release is ready.")
    statistics = serializers.URLField()
    page = serializers.URLField(help_text="The release's page in the browser.")

    class Meta:
        ref_name = "ReleaseLinks"


class ReleaseListItemSerializer(serializers.ModelSerializer):
    formats = serializers.ListField(child=serializers.CharField(), help_text=f"Any of {_FORMATS}.")
    status = serializers.CharField(help_text=f"{_STATUSES}.")
    counts = serializers.SerializerMethodField()
    job = serializers.SerializerMethodField(help_text="The build job; null once it has been removed.")
    created_by = serializers.CharField(source="created_by.get_username", allow_null=True, default=None)
    deleted_by = serializers.CharField(source="deleted_by.get_username", allow_null=True, default=None)
    links = serializers.SerializerMethodField()

    class Meta:
        model = DatasetRelease
        fields = [
            "id",
            "version",
            "formats",
            "status",
            "test_style",
            "seed",
            "counts",
            "job",
            "created_by",
            "created_at",
            "finished_at",
            "deleted_by",
            "deleted_at",
            "links",
        ]
        ref_name = "ReleaseListItem"

    @extend_schema_field(ReleaseCountsSerializer)
    def get_counts(self, release):
        stats = release.statistics or {}
        return {
            "videos": stats.get("videos"),
            "items": stats.get("items") or {},
            "qa_pairs": stats.get("qa_pairs"),
            "per_split": stats.get("per_split") or {},
        }

    @extend_schema_field(ReleaseJobSerializer(allow_null=True))
    def get_job(self, release):
        if release.job is None:
            return None
        return ReleaseJobSerializer(release.job, context=self.context).data

    @extend_schema_field(ReleaseLinksSerializer)
    def get_links(self, release):
        request, slug = self.context["request"], self.context["slug"]

        def url(name, **extra):
            return reverse(f"api:{name}", kwargs={"slug": slug, "release_id": release.pk}, request=request) + (
                f"?archive={extra['archive']}" if extra else ""
            )

        ready = release.status == ReleaseStatus.READY
        return {
            "self": url("release-detail"),
            "download_zip": url("release-download", archive="zip") if ready else None,
            "download_tar": url("release-download", archive="tar") if ready else None,
            "statistics": url("release-statistics"),
            "page": request.build_absolute_uri(f"/p/{slug}/releases/{release.pk}/"),
        }


class ReleaseFileSerializer(serializers.Serializer):
    path = serializers.CharField(help_text="Inside the release (and inside each archive's top folder).")
    sha256 = serializers.CharField()
    bytes = serializers.IntegerField()

    class Meta:
        ref_name = "ReleaseFile"


class ReleaseSerializer(ReleaseListItemSerializer):
    """A release with what went in (filters, split), its files with sha256, manifest and validation errors."""

    filters = serializers.DictField(help_text=f"Normalised filters: {', '.join(f'`{k}`' for k in FILTER_KEYS)}.")
    split_config = serializers.DictField(help_text='`{"ratios"|"counts": {split: n}, "stratify": bool}`, or `{}`.')
    files = ReleaseFileSerializer(many=True)
    manifest = serializers.DictField()
    validation_errors = serializers.ListField(
        child=serializers.DictField(), help_text="What failed validation, with the offending item when one is."
    )

    class Meta(ReleaseListItemSerializer.Meta):
        fields = [
            *ReleaseListItemSerializer.Meta.fields,
            "filters",
            "split_config",
            "files",
            "manifest",
            "validation_errors",
        ]
        ref_name = "Release"


def _context(view) -> dict:
    return {"request": view.request, "slug": view.kwargs["slug"]}


def release_payload(release: DatasetRelease, *, view) -> dict:
    return ReleaseSerializer(release, context=_context(view)).data


# --- list and create ------------------------------------------------------------------------------------


class ReleaseFilter(filters.FilterSet):
    status = filters.CharFilter(help_text=f"Only releases in this state: {_STATUSES}.")

    class Meta:
        model = DatasetRelease
        fields = ["status"]


class ReleaseListApi(ApiAuthMixin, generics.ListAPIView):
    """The project's releases, newest first (deleted ones too, with who deleted them and when)."""

    serializer_class = ReleaseListItemSerializer
    filter_backends = [DjangoFilterBackend, StableOrderingFilter]
    filterset_class = ReleaseFilter
    ordering_fields = ["created_at", "version", "status"]
    ordering = ["-created_at"]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation: no project to look up
            return DatasetRelease.objects.none()
        project = get_project_or_404(self.request.user, self.kwargs["slug"])
        return release_list(project=project)

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "slug": self.kwargs["slug"]}

    @extend_schema(operation_id="releases_list", tags=["releases"], parameters=[SLUG])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


# releases.services.VERSION_RE ending at the true end (`$` lets a trailing newline through, which
# the schema's pattern does not); the schema shows `\Z` as `$`.
VERSION_PATTERN = VERSION_RE.pattern.removesuffix("$") + r"\Z"


@extend_schema_field({"type": "string", "enum": ReleaseFormat.values})
class _FormatField(JsonCharField):
    """Checked by release_create with the other inputs, so one answer names every problem."""


# A pattern, not an enum: the same choices as `formats` above under a second enum name would be a
# schema warning, and the import checks the name itself.
@extend_schema_field({"type": "string", "pattern": "^(" + "|".join(ReleaseFormat.values) + r")\Z"})
class _ImportFormatField(JsonCharField):
    """Checked by benchmark_import, which names the formats it reads."""


class ReleaseCreateApi(ApiAuthMixin, APIView):
    """Cut a release (admins): checked now, built by a background job; poll `job.url` or the release.

    Sending the same request again while that release is still queued or building returns it
    instead of a second one; a version label is used once per project (a deleted release keeps it).
    """

    class InputSerializer(serializers.Serializer):
        version = JsonCharField(
            max_length=VERSION_MAX,
            trim_whitespace=False,
            validators=[RegexValidator(VERSION_PATTERN)],
            help_text="A new label, e.g. `v1.0`: letters, digits, `.`, `_`, `+`, `-`, starting with a letter or "
            "digit, no `..`.",
        )
        formats = serializers.ListField(
            child=_FormatField(),
            min_length=1,
            help_text=f"One or more of {_FORMATS}.",
        )
        filters = serializers.DictField(
            required=False,
            help_text='`statuses` (default `["accepted"]`), `categories`, `video_ids`, `accepted_from`, '
            "`accepted_to` (YYYY-MM-DD), `include_media` (default true), `clip_files` (default false), "
            "`lmms_eval` (default false: an `lmms_eval/` folder of lmms-eval tasks over the MCQ files).",
        )
        split_config = serializers.DictField(
            required=False,
            help_text='By video: `{"ratios": {"train": 0.8, "test": 0.2}}` or `{"counts": {"test": 50}}`, with '
            '`"stratify"` (default true). Empty: every video in `test`.',
        )
        seed = JsonIntegerField(
            required=False, default=0, min_value=0, max_value=SEED_MAX, help_text="Same seed and data, same bytes."
        )
        test_style = JsonBooleanField(
            required=False, default=False, help_text="Withhold answers (e.g. LongVideoBench `correct_choice`)."
        )

        class Meta:
            ref_name = "ReleaseCreate"

    @extend_schema(
        operation_id="releases_create",
        tags=["releases"],
        parameters=[SLUG],
        request=InputSerializer,
        responses={202: OpenApiResponse(ReleaseSerializer, description="The release, queued (or already building).")},
    )
    def post(self, request, slug):
        project = get_project_or_404(request.user, slug, Action.ADMINISTER)
        data = ReleaseCreateApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            release = release_create(project=project, by=request.user, **data.validated_data)
        except DjangoValidationError as exc:
            raise exceptions.ValidationError(exc.message_dict) from exc
        release.project = project
        return Response(release_payload(release, view=self), status=status.HTTP_202_ACCEPTED)


# --- one release ----------------------------------------------------------------------------------------


class ReleaseDetailApi(ApiAuthMixin, APIView):
    """One release: status and build job, what went in, files with sha256, manifest, validation errors."""

    @extend_schema(
        operation_id="releases_retrieve",
        tags=["releases"],
        parameters=[SLUG, RELEASE_ID],
        responses={200: ReleaseSerializer},
    )
    def get(self, request, slug, release_id):
        return Response(release_payload(_release_or_404(request.user, slug, release_id), view=self))


class ReleaseDeleteApi(ApiAuthMixin, APIView):
    """Delete a release (admins): its stored files go, the record stays with who deleted it and when."""

    @extend_schema(
        operation_id="releases_destroy",
        tags=["releases"],
        parameters=[SLUG, RELEASE_ID],
        responses={
            200: OpenApiResponse(ReleaseSerializer, description="The release, now `deleted`."),
            409: OpenApiResponse(
                ErrorResponseSerializer,
                description="`release_not_deletable`: already deleted, or being built right now.",
            ),
        },
    )
    def delete(self, request, slug, release_id):
        release = _release_or_404(request.user, slug, release_id, Action.ADMINISTER)
        try:
            release = release_delete(release=release, by=request.user)
        except DjangoValidationError as exc:
            return Response(
                error_body(code="release_not_deletable", message=" ".join(exc.messages)),
                status=status.HTTP_409_CONFLICT,
            )
        release = release_get(project=release.project, release_id=release.pk)
        return Response(release_payload(release, view=self))


class ReleaseDownloadApi(ApiAuthMixin, APIView):
    """The release's files as one archive (members): `zip` (stored) or `tar` (streamed)."""

    @extend_schema(
        operation_id="releases_download",
        tags=["releases"],
        parameters=[SLUG, RELEASE_ID, ARCHIVE],
        responses={
            (200, "application/zip"): OpenApiResponse(OpenApiTypes.BINARY, description="The archive."),
            (200, "application/x-tar"): OpenApiResponse(OpenApiTypes.BINARY, description="The archive."),
            302: OpenApiResponse(description="On object storage: a presigned URL of the zip that expires."),
            400: OpenApiResponse(ErrorResponseSerializer, description="`archive` is neither `zip` nor `tar`."),
            409: OpenApiResponse(
                ErrorResponseSerializer, description="`release_not_ready`: queued, building, failed or deleted."
            ),
        },
    )
    def get(self, request, slug, release_id):
        archive = request.query_params.get("archive", "zip")
        if archive not in ("zip", "tar"):
            raise exceptions.ValidationError({"archive": [f"Choose zip or tar, not {archive!r}."]})
        release = _release_or_404(request.user, slug, release_id)
        downloads.check_downloadable(release)  # NotDownloadable: 409 release_not_ready by api.errors
        if archive == "zip":
            return downloads.zip_response(request._request, release)
        return downloads.tar_response(request._request, release)


class ReleaseStatisticsSerializer(serializers.Serializer):
    videos = serializers.IntegerField(required=False)
    items = serializers.DictField(child=serializers.IntegerField(), required=False)
    qa_pairs = serializers.IntegerField(required=False)
    per_split = serializers.DictField(required=False, help_text='`{split: {"videos": n, "items": n}}`.')
    categories = serializers.DictField(required=False, help_text="`{taxonomy: {code: count}}`.")
    duration_groups = serializers.DictField(required=False, help_text="`{group: videos}`.")
    duration_histogram = serializers.DictField(required=False, help_text='`{"edges_s": [...], "counts": [...]}`.')
    qa_per_video = serializers.DictField(required=False, help_text='`{"edges": [...], "counts": [...]}`.')
    option_lengths = serializers.DictField(
        required=False, help_text='`{"edges_chars": [...], "correct": [...], "distractor": [...]}`.'
    )

    class Meta:
        ref_name = "ReleaseStatistics"


class ReleaseStatisticsApi(ApiAuthMixin, APIView):
    """What the statistics page charts: counts per split, category and duration group; histograms of
    durations, questions per video and option lengths. Empty until the build has finished."""

    @extend_schema(
        operation_id="releases_statistics",
        tags=["releases"],
        parameters=[SLUG, RELEASE_ID],
        responses={200: ReleaseStatisticsSerializer},
    )
    def get(self, request, slug, release_id):
        release = _release_or_404(request.user, slug, release_id)
        return Response(release.statistics or {})


# --- import of existing benchmark files -----------------------------------------------------------------


class BenchmarkImportApi(ApiAuthMixin, APIView):
    """Import existing benchmark files into the project (admins), all or nothing, in the background.

    Send a zip (`file`: a release's archive, or a zip of the benchmark's folder) or a `folder` on the
    server (inside `VIDEO_IMPORT_ROOTS`). The job's `result` is the report: `ok`, `counts` (mcqs,
    chains, chain_pairs, relations, cues, comments, videos_imported, videos_matched), `import_id`, the
    files read with their sha256, and `problems` (each with `file`, `record`, `record_id`, `field` and a
    `message`) when nothing was imported (the job then fails).
    """

    parser_classes = [MultiPartParser, FormParser]

    class InputSerializer(serializers.Serializer):
        # Plain text (checked by the service): an enum here would be a second name for the formats' enum.
        format = _ImportFormatField(help_text=f"One of {_FORMATS}.")
        status = serializers.ChoiceField(
            choices=IMPORT_STATUSES,
            default=ItemStatus.EXAMINING,
            help_text="The status the imported items get (default `examining`).",
        )
        file = serializers.FileField(required=False, help_text="A zip of the benchmark files.")
        folder = serializers.CharField(
            required=False, max_length=1000, help_text="Or an absolute folder on the server (VIDEO_IMPORT_ROOTS)."
        )

        class Meta:
            ref_name = "BenchmarkImport"

    @extend_schema(
        operation_id="benchmark_imports_create",
        tags=["releases"],
        parameters=[SLUG],
        request={"multipart/form-data": InputSerializer},
        responses={
            202: OpenApiResponse(JobSerializer, description="The import job; its `result` is the report."),
            400: OpenApiResponse(
                ErrorResponseSerializer,
                description="`validation_error`: no zip and no folder, both, a folder outside the allowed roots, "
                "a file that is not a zip. Nothing was queued.",
            ),
            409: JOB_RUNNING,
        },
    )
    def post(self, request, slug):
        project = get_project_or_404(request.user, slug, Action.ADMINISTER)
        data = BenchmarkImportApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        try:
            job = benchmark_import_start(
                project=project,
                format=values["format"],
                status=values["status"],
                user=request.user,
                folder=values.get("folder", "").strip(),
                upload=values.get("file"),
            )
        except JobAlreadyRunning as exc:
            return job_conflict(exc, view=self, message="A benchmark import is already running in this project.")
        except ImportNotStarted as exc:
            raise exceptions.ValidationError({"non_field_errors": [exc.message]}) from exc
        return Response(job_payload(job, view=self), status=status.HTTP_202_ACCEPTED)
