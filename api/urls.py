from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView

from . import (
    audits,
    auth,
    chains,
    curation,
    docs_views,
    errors,
    evaluations,
    ingest,
    jobs,
    mcqs,
    media_data,
    people,
    projects,
    queues,
    relations,
    releases,
    videos,
)
from .method_routing import route_methods

app_name = "api"

urlpatterns = [
    path("auth/token/", auth.TokenObtainApi.as_view(), name="token-obtain"),
    path("auth/token/revoke/", auth.TokenRevokeApi.as_view(), name="token-revoke"),
    path("auth/token/status/", auth.TokenStatusApi.as_view(), name="token-status"),
    path("projects/", route_methods(projects.ProjectListApi, projects.ProjectCreateApi).as_view(), name="project-list"),
    path("projects/<slug:slug>/", projects.ProjectDetailApi.as_view(), name="project-detail"),
    path("projects/<slug:slug>/settings/", projects.ProjectSettingsApi.as_view(), name="project-settings"),
    path("projects/<slug:slug>/archive/", projects.ProjectArchiveApi.as_view(), name="project-archive"),
    path("projects/<slug:slug>/unarchive/", projects.ProjectUnarchiveApi.as_view(), name="project-unarchive"),
    path(
        "projects/<slug:slug>/videos/",
        route_methods(videos.VideoListApi, ingest.VideoUploadApi).as_view(),
        name="video-list",
    ),
    path("projects/<slug:slug>/videos/<int:video_id>/", videos.VideoDetailApi.as_view(), name="video-detail"),
    path("projects/<slug:slug>/imports/", ingest.ManifestImportApi.as_view(), name="manifest-import"),
    path(
        "projects/<slug:slug>/benchmark-imports/",
        releases.BenchmarkImportApi.as_view(),
        name="benchmark-import",
    ),
    path(
        "projects/<slug:slug>/videos/<int:video_id>/reprocess/",
        ingest.VideoReprocessApi.as_view(),
        name="video-reprocess",
    ),
    path(
        "projects/<slug:slug>/videos/<int:video_id>/transcribe/",
        ingest.VideoTranscribeApi.as_view(),
        name="video-transcribe",
    ),
    path(
        "projects/<slug:slug>/videos/<int:video_id>/complexity/",
        ingest.VideoComplexityApi.as_view(),
        name="video-complexity",
    ),
    path("projects/<slug:slug>/videos/<int:video_id>/clips/", media_data.VideoClipsApi.as_view(), name="video-clips"),
    path("projects/<slug:slug>/videos/<int:video_id>/cues/", media_data.CueListApi.as_view(), name="video-cues"),
    path(
        "projects/<slug:slug>/videos/<int:video_id>/subtitles/",
        media_data.SubtitlesImportApi.as_view(),
        name="video-subtitles",
    ),
    path(
        "projects/<slug:slug>/videos/<int:video_id>/comments/",
        route_methods(media_data.CommentWindowApi, media_data.CommentsImportApi).as_view(),
        name="video-comments",
    ),
    path(
        "projects/<slug:slug>/videos/<int:video_id>/comments/density/",
        media_data.CommentDensityApi.as_view(),
        name="video-comments-density",
    ),
    path(
        "projects/<slug:slug>/videos/<int:video_id>/curation/",
        route_methods(curation.CurationDetailApi, curation.CurationOverrideApi).as_view(),
        name="video-curation",
    ),
    path("projects/<slug:slug>/scores/", curation.ExternalScoresImportApi.as_view(), name="scores-import"),
    path("projects/<slug:slug>/audit/", audits.AuditApi.as_view(), name="audit"),
    path("projects/<slug:slug>/audit/probe-runs/", audits.ProbeRunCreateApi.as_view(), name="audit-probe-runs"),
    path("projects/<slug:slug>/audit/send-to-review/", audits.SendToReviewApi.as_view(), name="audit-send"),
    path("projects/<slug:slug>/jobs/", jobs.JobListApi.as_view(), name="job-list"),
    path("projects/<slug:slug>/jobs/<int:job_id>/", jobs.JobDetailApi.as_view(), name="job-detail"),
    path("projects/<slug:slug>/jobs/<int:job_id>/retry/", jobs.JobRetryApi.as_view(), name="job-retry"),
    path("projects/<slug:slug>/queues/", queues.QueueListApi.as_view(), name="queue-list"),
    path("projects/<slug:slug>/queues/<int:queue_id>/claim/", queues.QueueClaimApi.as_view(), name="queue-claim"),
    path("projects/<slug:slug>/queues/<int:queue_id>/assign/", queues.QueueAssignApi.as_view(), name="queue-assign"),
    path(
        "projects/<slug:slug>/assignments/<int:assignment_id>/heartbeat/",
        queues.AssignmentHeartbeatApi.as_view(),
        name="assignment-heartbeat",
    ),
    path(
        "projects/<slug:slug>/assignments/<int:assignment_id>/release/",
        queues.AssignmentReleaseApi.as_view(),
        name="assignment-release",
    ),
    path(
        "projects/<slug:slug>/assignments/<int:assignment_id>/complete/",
        queues.AssignmentCompleteApi.as_view(),
        name="assignment-complete",
    ),
    path(
        "projects/<slug:slug>/assignments/<int:assignment_id>/reassign/",
        queues.AssignmentReassignApi.as_view(),
        name="assignment-reassign",
    ),
    path(
        "projects/<slug:slug>/evaluations/",
        route_methods(evaluations.EvaluationListApi, evaluations.EvaluationCreateApi).as_view(),
        name="evaluation-list",
    ),
    path(
        "projects/<slug:slug>/evaluations/compare/",
        evaluations.EvaluationCompareApi.as_view(),
        name="evaluation-compare",
    ),
    path(
        "projects/<slug:slug>/evaluations/<int:run_id>/",
        evaluations.EvaluationDetailApi.as_view(),
        name="evaluation-detail",
    ),
    path(
        "projects/<slug:slug>/evaluations/<int:run_id>/predictions/",
        evaluations.PredictionListApi.as_view(),
        name="evaluation-predictions",
    ),
    path(
        "projects/<slug:slug>/evaluations/<int:run_id>/cancel/",
        evaluations.EvaluationCancelApi.as_view(),
        name="evaluation-cancel",
    ),
    path(
        "projects/<slug:slug>/evaluations/<int:run_id>/resume/",
        evaluations.EvaluationResumeApi.as_view(),
        name="evaluation-resume",
    ),
    path(
        "projects/<slug:slug>/releases/",
        route_methods(releases.ReleaseListApi, releases.ReleaseCreateApi).as_view(),
        name="release-list",
    ),
    path(
        "projects/<slug:slug>/releases/<int:release_id>/",
        route_methods(releases.ReleaseDetailApi, releases.ReleaseDeleteApi).as_view(),
        name="release-detail",
    ),
    path(
        "projects/<slug:slug>/releases/<int:release_id>/download/",
        releases.ReleaseDownloadApi.as_view(),
        name="release-download",
    ),
    path(
        "projects/<slug:slug>/releases/<int:release_id>/statistics/",
        releases.ReleaseStatisticsApi.as_view(),
        name="release-statistics",
    ),
    path(
        "projects/<slug:slug>/members/",
        route_methods(people.MemberListApi, people.MemberAddApi).as_view(),
        name="member-list",
    ),
    path("projects/<slug:slug>/members/<int:user_id>/", people.MemberRemoveApi.as_view(), name="member-detail"),
    path(
        "projects/<slug:slug>/members/<int:user_id>/remove-roles/",
        people.MemberRolesRemoveApi.as_view(),
        name="member-roles-remove",
    ),
    path(
        "projects/<slug:slug>/invitations/",
        route_methods(people.InvitationListApi, people.InvitationCreateApi).as_view(),
        name="invitation-list",
    ),
    path(
        "projects/<slug:slug>/invitations/<int:invitation_id>/revoke/",
        people.InvitationRevokeApi.as_view(),
        name="invitation-revoke",
    ),
    # Items: QA chains, the relations of a chain pair, MCQs.
    path(
        "projects/<slug:slug>/chains/",
        route_methods(chains.ChainListApi, chains.ChainCreateApi).as_view(),
        name="chain-list",
    ),
    path(
        "projects/<slug:slug>/chains/<int:chain_id>/",
        route_methods(chains.ChainDetailApi, chains.ChainUpdateApi).as_view(),
        name="chain-detail",
    ),
    path("projects/<slug:slug>/chains/<int:chain_id>/submit/", chains.ChainSubmitApi.as_view(), name="chain-submit"),
    path(
        "projects/<slug:slug>/chain-pairs/<int:chain_pair_id>/relations/",
        route_methods(relations.RelationListApi, relations.RelationAddApi).as_view(),
        name="relation-list",
    ),
    path(
        "projects/<slug:slug>/chain-pairs/<int:chain_pair_id>/relations/<int:relation_id>/",
        route_methods(relations.RelationUpdateApi, relations.RelationRemoveApi).as_view(),
        name="relation-detail",
    ),
    path(
        "projects/<slug:slug>/chain-pairs/<int:chain_pair_id>/submit/",
        relations.ChainPairSubmitApi.as_view(),
        name="chain-pair-submit",
    ),
    path("projects/<slug:slug>/mcqs/", route_methods(mcqs.MCQListApi, mcqs.MCQCreateApi).as_view(), name="mcq-list"),
    path(
        "projects/<slug:slug>/mcqs/<int:mcq_id>/",
        route_methods(mcqs.MCQDetailApi, mcqs.MCQUpdateApi).as_view(),
        name="mcq-detail",
    ),
    path("projects/<slug:slug>/mcqs/<int:mcq_id>/submit/", mcqs.MCQSubmitApi.as_view(), name="mcq-submit"),
    # Schema and docs are public: they describe the API, not anyone's data.
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", docs_views.swagger_ui, name="docs"),
    path("redoc/", docs_views.redoc, name="redoc"),
    # Last: any other /api/ path answers in the API's error shape.
    re_path(r"^.*$", errors.ApiNotFoundView.as_view(), name="not-found"),
]
