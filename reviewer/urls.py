"""Review queue screens under /p/<slug>/queues/ (the review pages of other parts add their own module)."""

from django.urls import path

from . import queue_views

app_name = "reviewer"

urlpatterns = [
    path("p/<slug:slug>/queues/", queue_views.queue_list, name="queues"),
    path("p/<slug:slug>/queues/next/", queue_views.claim_next, name="claim_next"),
    path("p/<slug:slug>/queues/<int:queue_id>/", queue_views.queue_detail, name="queue_detail"),
    path("p/<slug:slug>/queues/<int:queue_id>/claim/", queue_views.queue_claim, name="queue_claim"),
    path("p/<slug:slug>/queues/<int:queue_id>/assign/", queue_views.queue_assign, name="queue_assign"),
    path("p/<slug:slug>/queues/<int:queue_id>/leases/", queue_views.queue_leases, name="queue_leases"),
    path("p/<slug:slug>/leases/<int:assignment_id>/release/", queue_views.lease_release, name="lease_release"),
]

# --- who else has an item open (every editor and the examine page beat here) ---
from . import presence_views  # noqa: E402

urlpatterns += [
    path(
        "p/<slug:slug>/presence/<str:kind>/<int:item_id>/",
        presence_views.item_presence_beat,
        name="item_presence",
    ),
]

# --- quality gate and history (the LLM judge's scores, content versions and revert) ---
from . import gate_views, history_views, stuck_views  # noqa: E402 - each block imports its own views

urlpatterns += [
    path("p/<slug:slug>/scores/", gate_views.score_list, name="score_list"),
    path("p/<slug:slug>/scores/waiting/", gate_views.gate_waiting_view, name="gate_waiting"),
    path("p/<slug:slug>/stuck/", stuck_views.stuck_work_page, name="stuck_work"),
    path("p/<slug:slug>/stuck/act/", stuck_views.stuck_work_act, name="stuck_work_act"),
    path("p/<slug:slug>/scores/<int:score_id>/call/", gate_views.score_call, name="score_call"),
    path("p/<slug:slug>/scores/<str:kind>/<int:item_id>/", gate_views.item_scores_view, name="item_scores"),
    path("p/<slug:slug>/scores/<str:kind>/<int:item_id>/judge/", gate_views.item_judge_again, name="item_judge"),
    path("p/<slug:slug>/history/<str:kind>/<int:item_id>/", history_views.item_history_page, name="item_history"),
    path("p/<slug:slug>/history/<str:kind>/<int:item_id>/revert/", history_views.item_revert_view, name="item_revert"),
]

# --- dashboards (progress, throughput, timing, flag rates, judge scores, queues, agreement) ---
from . import dashboard_views  # noqa: E402

urlpatterns += [
    path("p/<slug:slug>/dashboard/", dashboard_views.dashboard, name="dashboard"),
    path("p/<slug:slug>/dashboard/refresh/", dashboard_views.dashboard_refresh, name="dashboard_refresh"),
    path("p/<slug:slug>/dashboard/<slug:panel>.csv", dashboard_views.dashboard_csv, name="dashboard_csv"),
    path("p/<slug:slug>/dashboard/<slug:panel>/rows/", dashboard_views.dashboard_rows, name="dashboard_rows"),
]

# --- examination and revision (the examiner's pass or flag, the reviser's list, reopening) ---
from . import review_views  # noqa: E402

urlpatterns += [
    path("p/<slug:slug>/examine/", review_views.examine_home, name="examine_home"),
    path("p/<slug:slug>/examine/next/", review_views.examine_next, name="examine_next"),
    path("p/<slug:slug>/examine/<str:kind>/<int:item_id>/", review_views.examine_item, name="examine_item"),
    path(
        "p/<slug:slug>/examine/<str:kind>/<int:item_id>/verdict/", review_views.examine_verdict, name="examine_verdict"
    ),
    path("p/<slug:slug>/examine/<str:kind>/<int:item_id>/reopen/", review_views.examine_reopen, name="examine_reopen"),
    path("p/<slug:slug>/revise/", review_views.revise_list, name="revise_list"),
    path("p/<slug:slug>/revise/next/", review_views.revise_next, name="revise_next"),
    path("p/<slug:slug>/revise/<str:kind>/<int:item_id>/start/", review_views.revise_start, name="revise_start"),
]
