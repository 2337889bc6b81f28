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
from . import chain_views, relation_views, work_views  # noqa: E402 - each block imports its own views

urlpatterns += [
    path("p/<slug:slug>/work/", work_views.work, name="work"),
    path("p/<slug:slug>/work/next/", work_views.work_next, name="work_next"),
    path("p/<slug:slug>/chains/new/", chain_views.chain_new, name="chain_new"),
    path("p/<slug:slug>/chains/<int:chain_id>/", chain_views.chain_editor, name="chain_editor"),
    path("p/<slug:slug>/chains/<int:chain_id>/save/", chain_views.chain_save_view, name="chain_save"),
    path("p/<slug:slug>/chains/<int:chain_id>/undo/", chain_views.chain_undo_view, name="chain_undo"),
    path("p/<slug:slug>/chains/<int:chain_id>/submit/", chain_views.chain_submit_view, name="chain_submit"),
    path("p/<slug:slug>/pairs/new/", relation_views.pair_new, name="pair_new"),
    path("p/<slug:slug>/pairs/<int:pair_id>/", relation_views.pair_editor, name="pair_editor"),
    path("p/<slug:slug>/pairs/<int:pair_id>/links/", relation_views.pair_link_add, name="pair_link_add"),
    path(
        "p/<slug:slug>/pairs/<int:pair_id>/links/<int:link_id>/decide/",
        relation_views.pair_link_decide,
        name="pair_link_decide",
    ),
    path(
        "p/<slug:slug>/pairs/<int:pair_id>/links/<int:link_id>/type/",
        relation_views.pair_link_type,
        name="pair_link_type",
    ),
    path(
        "p/<slug:slug>/pairs/<int:pair_id>/links/<int:link_id>/rewrite/",
        relation_views.pair_link_rewrite,
        name="pair_link_rewrite",
    ),
    path(
        "p/<slug:slug>/pairs/<int:pair_id>/links/<int:link_id>/remove/",
        relation_views.pair_link_remove,
        name="pair_link_remove",
    ),
    path("p/<slug:slug>/pairs/<int:pair_id>/submit/", relation_views.pair_submit, name="pair_submit"),
]

# --- MCQs and unusable videos ---
from . import mcq_views  # noqa: E402 - each block imports its own views

urlpatterns += [
    path("p/<slug:slug>/mcqs/", mcq_views.mcq_list, name="mcq_list"),
    path("p/<slug:slug>/mcqs/new/", mcq_views.mcq_new, name="mcq_new"),
    path("p/<slug:slug>/mcqs/next/", mcq_views.mcq_next_view, name="mcq_next"),
    path("p/<slug:slug>/mcqs/<int:mcq_id>/", mcq_views.mcq_editor, name="mcq_editor"),
    path("p/<slug:slug>/mcqs/<int:mcq_id>/save/", mcq_views.mcq_save_view, name="mcq_save"),
    path("p/<slug:slug>/mcqs/<int:mcq_id>/undo/", mcq_views.mcq_undo_view, name="mcq_undo"),
    path("p/<slug:slug>/mcqs/<int:mcq_id>/submit/", mcq_views.mcq_submit_view, name="mcq_submit"),
    path("p/<slug:slug>/videos/<int:video_id>/unusable/", mcq_views.video_unusable, name="video_unusable"),
]
