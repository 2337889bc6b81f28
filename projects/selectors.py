"""Reads of projects that several interfaces share (the API today)."""

from django.db.models import Count, Prefetch, QuerySet

from .models import Membership, Project
from .permissions import projects_for


def project_list_for(*, user) -> QuerySet[Project]:
    """The projects `user` may see, each with `video_count` and `viewer_memberships` (their own roles).

    Two queries whatever the number of projects: the rows, and the caller's memberships.
    """
    return (
        projects_for(user)
        # distinct: projects_for joins memberships, and a person may hold several roles.
        .annotate(video_count=Count("videos", distinct=True))
        .prefetch_related(
            Prefetch(
                "memberships",
                queryset=Membership.objects.filter(user_id=user.pk).order_by("role"),
                to_attr="viewer_memberships",
            )
        )
        .order_by("name", "pk")
    )
