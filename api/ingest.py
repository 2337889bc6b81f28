"""Bring videos in and run their steps: upload one file, import a manifest, reprocess, model steps.

Each endpoint is a thin interface over videos.ingest / videos.manifest / videos.model_steps, so a script
and the browser do one thing one way: a refused file leaves nothing behind, and a step that is
already running is not started twice.
"""

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.core.validators import RegexValidator
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from jobs.selectors import job_latest_for
from jobs.services import JobAlreadyRunning
from projects.permissions import Action, get_project_or_404
from videos.ingest import PROCESS_TASK, video_import, video_process_start
from videos.manifest import LOCATION_KEYS, ManifestError, manifest_import_start
from videos.model_steps import MODEL_STEPS, video_step_start

from .errors import ErrorResponseSerializer
from .fields import JsonCharField, JsonObjectField
from .jobs import JOB_RUNNING, SLUG, VIDEO_ID, JobSerializer, job_conflict, job_payload
from .lookups import video_or_404
from .mixins import ApiAuthMixin
from .videos import VideoDetailApi


@contextmanager
def _local_file(upload) -> Iterator[tuple[Path, str | None]]:
    """A path ffprobe can read, and the sha256 the upload handler computed while the bytes arrived."""
    path = getattr(upload, "temporary_file_path", None)
    if path is not None:
        yield Path(path()), getattr(upload, "sha256", None)
        return
    # Small files may stay in memory (if the upload handlers are configured so): give them a real file.
    with tempfile.NamedTemporaryFile(suffix=Path(upload.name).suffix) as tmp:
        for chunk in upload.chunks():
            tmp.write(chunk)
        tmp.flush()
        yield Path(tmp.name), None


class VideoUploadApi(ApiAuthMixin, APIView):
    parser_classes = [MultiPartParser, FormParser]

    class InputSerializer(serializers.Serializer):
        # An empty file is the service's to refuse, with the same reason the browser shows (422).
        file = serializers.FileField(allow_empty_file=True, help_text="The video file.")
        name = serializers.CharField(
            required=False,
            max_length=200,
            help_text="Name used in releases; defaults to the file name without extension (made unique).",
        )
        metadata = JsonObjectField(
            required=False,
            binary=True,
            help_text="A JSON object: `topic_category`, `view_count`, `source_url`, `language`; other keys are kept "
            "as they are.",
        )

        class Meta:
            ref_name = "VideoUpload"

    class OutputSerializer(serializers.Serializer):
        video = VideoDetailApi.OutputSerializer()
        job = JobSerializer(allow_null=True, help_text="Processing: scenes, poster, browser copy, clips, curation.")

        class Meta:
            ref_name = "VideoUploadResult"

    @extend_schema(
        operation_id="videos_upload",
        tags=["videos"],
        parameters=[SLUG],
        request={"multipart/form-data": InputSerializer},
        responses={
            201: OpenApiResponse(OutputSerializer, description="Imported; processing is queued as `job`."),
            409: OpenApiResponse(
                ErrorResponseSerializer,
                description="The same file is already in the project (`duplicate_video`); `details.existing_video_id` "
                "names it. Nothing was stored.",
            ),
            422: OpenApiResponse(
                ErrorResponseSerializer,
                description="Not a usable video (`import_refused`): empty, too large, not a video, audio only, "
                "undecodable...; the message says why. Nothing was stored.",
            ),
        },
    )
    def post(self, request, slug):
        """Upload one video file (admins): probed at once, refused with a reason or stored and queued.

        The file is streamed to a temporary file on disk, never held in memory, so multi-GB files are fine.
        """
        project = get_project_or_404(request.user, slug, Action.ADMINISTER)
        data = VideoUploadApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        # A refusal (duplicate_video 409, import_refused 422) is answered by api.errors.
        with _local_file(upload) as (path, sha256):
            video = video_import(
                project=project,
                source=path,
                filename=upload.name,
                user=request.user,
                sha256=sha256,
                name=data.validated_data.get("name"),
                metadata=data.validated_data.get("metadata"),
            )
        video.clip_count = 0
        job = job_latest_for(target=video, kind=PROCESS_TASK)
        context = {"request": request, "view": self}
        body = VideoUploadApi.OutputSerializer({"video": video, "job": job}, context=context).data
        return Response(body, status=status.HTTP_201_CREATED)


class ManifestImportApi(ApiAuthMixin, APIView):
    """Import the videos a CSV or JSONL manifest lists, in the background (admins).

    Each row names a local path (inside a folder the server allows, `VIDEO_IMPORT_ROOTS`) or an
    http(s) URL, plus metadata columns (`name`, `category`, `view_count`, `source_url`, `language`,
    anything else). Rows are imported one by one: a bad row is reported in the job's
    `result.failures` with its line and reason, and the others go on.
    """

    parser_classes = [MultiPartParser, FormParser]

    class InputSerializer(serializers.Serializer):
        file = serializers.FileField(
            help_text=f"CSV with a header naming one of {', '.join(LOCATION_KEYS)}; or JSONL, one object per line."
        )

        class Meta:
            ref_name = "ManifestImport"

    class OutputSerializer(serializers.Serializer):
        rows = serializers.IntegerField(help_text="Rows found in the manifest.")
        job = JobSerializer()

        class Meta:
            ref_name = "ManifestImportResult"

    @extend_schema(
        operation_id="imports_create",
        tags=["videos"],
        parameters=[SLUG],
        request={"multipart/form-data": InputSerializer},
        responses={
            202: OpenApiResponse(OutputSerializer, description="The manifest was read; its rows import as `job`."),
            400: OpenApiResponse(
                ErrorResponseSerializer,
                description="The manifest cannot be read (`validation_error`): `details.file` says why (not text, no "
                "path/url column, a line that is not JSON, no rows...). Nothing was imported.",
            ),
            409: JOB_RUNNING,
        },
    )
    def post(self, request, slug):
        project = get_project_or_404(request.user, slug, Action.ADMINISTER)
        data = ManifestImportApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            started = manifest_import_start(project=project, upload=data.validated_data["file"], user=request.user)
        except ManifestError as exc:
            raise exceptions.ValidationError({"file": [str(exc)]}) from exc
        except JobAlreadyRunning as exc:
            message = "A manifest import is already running in this project; wait for it."
            return job_conflict(exc, view=self, message=message)
        body = {"rows": started.rows, "job": job_payload(started.job, view=self)}
        return Response(body, status=status.HTTP_202_ACCEPTED)


_STEP_ACCEPTED = OpenApiResponse(JobSerializer, description="The job that was queued.")


class VideoReprocessApi(ApiAuthMixin, APIView):
    """Run processing again (admins): probe, scenes, poster, browser copy, clips, curation.

    Safe on any video: clips that carry annotations are never replaced (the job's message says so).
    """

    @extend_schema(
        operation_id="videos_reprocess",
        tags=["videos"],
        parameters=[SLUG, VIDEO_ID],
        request=None,
        responses={202: _STEP_ACCEPTED, 409: JOB_RUNNING},
    )
    def post(self, request, slug, video_id):
        video = video_or_404(request.user, slug, video_id, Action.ADMINISTER)
        try:
            job = video_process_start(video=video, user=request.user)
        except JobAlreadyRunning as exc:
            return job_conflict(exc, view=self, message=f"{video.name} is already being processed.")
        return Response(job_payload(job, view=self), status=status.HTTP_202_ACCEPTED)


class _ModelStepApi(ApiAuthMixin, APIView):
    """A step that calls a model endpoint (it costs money, so an admin starts it)."""

    step: str

    def check_permissions(self, request):
        super().check_permissions(request)
        # Authorise from the URL before anything reads the body, so a non-member's upload is never stored.
        video_or_404(request.user, self.kwargs["slug"], self.kwargs["video_id"], Action.ADMINISTER)

    def start(self, request, slug, video_id, *, params: dict | None = None) -> Response:
        video = video_or_404(request.user, slug, video_id, Action.ADMINISTER)
        label = MODEL_STEPS[self.step].label
        try:
            job = video_step_start(video=video, step=self.step, user=request.user, params=params)
        except JobAlreadyRunning as exc:
            return job_conflict(exc, view=self, message=f"{label} for {video.name} is already under way.")
        return Response(job_payload(job, view=self), status=status.HTTP_202_ACCEPTED)


class VideoTranscribeApi(_ModelStepApi):
    """Transcribe the audio through the speech endpoint into the cue table (source `asr`; admins).

    Replaces earlier transcript cues only; imported subtitle files are kept.
    """

    step = "transcribe"

    class InputSerializer(serializers.Serializer):
        language = JsonCharField(
            required=False,
            max_length=10,
            validators=[RegexValidator(r"^[A-Za-z0-9_-]+\Z", "A language code: letters, digits, `-` or `_`.")],
            help_text="Spoken language (ISO 639-1, e.g. `en`, `zh`); detected when omitted.",
        )

        class Meta:
            ref_name = "Transcribe"

    @extend_schema(
        operation_id="videos_transcribe",
        tags=["videos"],
        parameters=[SLUG, VIDEO_ID],
        request=InputSerializer,
        responses={
            202: _STEP_ACCEPTED,
            409: JOB_RUNNING,
            422: OpenApiResponse(ErrorResponseSerializer, description="The video has no audio track (`no_audio`)."),
        },
    )
    def post(self, request, slug, video_id):
        data = VideoTranscribeApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        language = data.validated_data.get("language")
        return self.start(request, slug, video_id, params={"language": language} if language else None)


class VideoComplexityApi(_ModelStepApi):
    """Score the video's complexity 1–10 with the LLM (LiViBench's filter; admins); curation re-runs after."""

    step = "complexity"

    @extend_schema(
        operation_id="videos_complexity",
        tags=["videos"],
        parameters=[SLUG, VIDEO_ID],
        request=None,
        responses={202: _STEP_ACCEPTED, 409: JOB_RUNNING},
    )
    def post(self, request, slug, video_id):
        return self.start(request, slug, video_id)
