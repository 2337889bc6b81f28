"""Annotation workspace and machine drafts. Each editor adds its own block of paths below."""

from django.urls import path  # noqa: F401 - used by the blocks below

app_name = "annotator"

urlpatterns: list = []

# --- drafts ---
from . import draft_views  # noqa: E402 - each block imports its own views

urlpatterns += [
    path("p/<slug:slug>/drafts/", draft_views.drafts, name="drafts"),
    path("p/<slug:slug>/drafts/start/", draft_views.draft_start, name="draft_start"),
    path("p/<slug:slug>/drafts/jobs/<int:job_id>/", draft_views.draft_job, name="draft_job"),
    path("p/<slug:slug>/drafts/seeds/", draft_views.seeds, name="seeds"),
    path("p/<slug:slug>/drafts/seeds/add/", draft_views.seed_add, name="seed_add"),
    path("p/<slug:slug>/drafts/seeds/<int:seed_id>/", draft_views.seed_change, name="seed_change"),
]

# --- chains and relations ---

# --- MCQs and unusable videos ---
from . import mcq_views  # noqa: E402 - each block imports its own views

urlpatterns += [
    path("p/<slug:slug>/mcqs/", mcq_views.mcq_list, name="mcq_list"),
    path("p/<slug:slug>/mcqs/new/", mcq_views.mcq_new, name="mcq_new"),
    path("p/<slug:slug>/mcqs/next/", mcq_views.mcq_next_view, name="mcq_next"),
    path("p/<slug:slug>/mcqs/<int:mcq_id>/", mcq_views.mcq_editor, name="mcq_editor"),
    path("p/<slug:slug>/mcqs/<int:mcq_id>/save/", mcq_views.mcq_save_view, name="mcq_save"),
    path("p/<slug:slug>/mcqs/<int:mcq_id>/submit/", mcq_views.mcq_submit_view, name="mcq_submit"),
    path("p/<slug:slug>/videos/<int:video_id>/unusable/", mcq_views.video_unusable, name="video_unusable"),
]
