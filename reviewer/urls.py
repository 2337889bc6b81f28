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
