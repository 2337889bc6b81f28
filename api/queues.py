"""Review queues for scripts and tools: list queues, claim the next item as a lease, keep it alive with
heartbeats, release or complete it; admins assign items and hand leases to someone else.

A lease answers in the `Assignment` shape wherever it appears; its `links` say where to send the
heartbeat, release and completion. Refusals use the one error shape with a stable code:
`claim_refused` (403: not a member of the queue, no role for its stage, queue paused),
`not_lease_holder` (403), `lease_not_active` and `lease_expired` (409).
"""

from django.contrib.auth import get_user_model
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import exceptions, generics, serializers, status
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from annotator.models import ItemKind
from projects.permissions import Action, get_project_or_404
from reviewer.models import Assignment, AssignmentStatus, ReviewQueue
from reviewer.queues import (
    FILTER_KEYS,
    AssignRefused,
    LeaseError,
    assignment_complete,
    assignment_heartbeat,
    assignment_item_id,
    assignment_release,
    item_path,
    queue_assign_items,
    queue_claim_next,
    queue_reassign,
    queue_stats,
    queues_for,
)

from .errors import ErrorResponseSerializer, error_body
from .fields import JsonCharField, JsonIntegerField
from .jobs import SLUG
from .mixins import ApiAuthMixin

QUEUE_ID = OpenApiParameter("queue_id", OpenApiTypes.INT, OpenApiParameter.PATH, description="The queue's id.")
ASSIGNMENT_ID = OpenApiParameter(
    "assignment_id", OpenApiTypes.INT, OpenApiParameter.PATH, description="The lease's (assignment's) id."
)
NO_SUCH_QUEUE = "No such queue in this project."
NO_SUCH_LEASE = "No such lease in this project."
_LEASE_RELATED = ("assignee", "assigned_by", "queue")
_LEASE_CODES = {"not_holder": "not_lease_holder", "not_active": "lease_not_active", "lease_expired": "lease_expired"}

_STAGES = "`annotating`, `examining` or `revising`"
_KINDS = ", ".join(f"`{k}`" for k in ItemKind.values)
_STATUSES = ", ".join(f"`{s}`" for s in AssignmentStatus.values)

LEASE_CONFLICT = OpenApiResponse(
    ErrorResponseSerializer,
    description="`lease_not_active`: the lease is already completed, released or expired; `lease_expired`: it "
    "lapsed and was marked expired (claim again).",
)
NOT_HOLDER = OpenApiResponse(
    ErrorResponseSerializer, description="`not_lease_holder`: only the person holding the lease may do this."
)


# --- lookups -------------------------------------------------------------------------------------------


def _queue_or_404(user, slug: str, queue_id: int, action: str = Action.VIEW) -> ReviewQueue:
    project = get_project_or_404(user, slug, action)
    queue = ReviewQueue.objects.filter(project=project, pk=queue_id).first()
    if queue is None:
        raise exceptions.NotFound(NO_SUCH_QUEUE)
    queue.project = project
    return queue


def _lease_or_404(user, slug: str, assignment_id: int) -> Assignment:
    project = get_project_or_404(user, slug)
    lease = Assignment.objects.filter(project=project, pk=assignment_id).select_related(*_LEASE_RELATED).first()
    if lease is None:
        raise exceptions.NotFound(NO_SUCH_LEASE)
    lease.project = project
    return lease


def _lease_refused(exc: LeaseError) -> Response:
    code = _LEASE_CODES.get(exc.code, exc.code)
    status_code = status.HTTP_403_FORBIDDEN if exc.code == "not_holder" else status.HTTP_409_CONFLICT
    return Response(error_body(code=code, message=str(exc)), status=status_code)


# --- shapes ---------------------------------------------------------------------------------------------


class ItemRefSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text=f"The item's kind: {_KINDS}.")
    id = serializers.IntegerField()
    editor_url = serializers.URLField(help_text="The page where a person works on it.")

    class Meta:
        ref_name = "ReviewItemRef"


class AssignmentLinksSerializer(serializers.Serializer):
    heartbeat = serializers.URLField(help_text="POST to renew the lease.")
    release = serializers.URLField(help_text="POST to give the item back.")
    complete = serializers.URLField(help_text="POST when the work on the item is done.")


class AssignmentSerializer(serializers.ModelSerializer):
    """A lease: one person holding one item at one stage until `lease_expires_at`, unless renewed."""

    queue = serializers.IntegerField(source="queue_id", allow_null=True, help_text="The queue it came from.")
    stage = serializers.CharField(help_text=f"The stage it is held at: {_STAGES}.")
    status = serializers.CharField(help_text=f"{_STATUSES}.")
    assignee = serializers.CharField(source="assignee.get_username")
    assigned_by = serializers.CharField(
        source="assigned_by.get_username", allow_null=True, help_text="The admin who assigned it; null when claimed."
    )
    item = serializers.SerializerMethodField()
    links = serializers.SerializerMethodField()

    class Meta:
        model = Assignment
        fields = [
            "id",
            "queue",
            "stage",
            "status",
            "assignee",
            "assigned_by",
            "leased_at",
            "lease_expires_at",
            "heartbeat_at",
            "completed_at",
            "item",
            "links",
        ]
        ref_name = "Assignment"

    @extend_schema_field(ItemRefSerializer)
    def get_item(self, lease):
        item_id = assignment_item_id(lease)
        path = item_path(kind=lease.item_kind, item_id=item_id, slug=self.context["slug"])
        return {"kind": lease.item_kind, "id": item_id, "editor_url": self.context["request"].build_absolute_uri(path)}

    @extend_schema_field(AssignmentLinksSerializer)
    def get_links(self, lease):
        def url(name):
            kwargs = {"slug": self.context["slug"], "assignment_id": lease.pk}
            return reverse(f"api:assignment-{name}", kwargs=kwargs, request=self.context["request"])

        return {"heartbeat": url("heartbeat"), "release": url("release"), "complete": url("complete")}


def _lease_payload(lease: Assignment, *, view) -> dict:
    context = {"request": view.request, "slug": view.kwargs["slug"]}
    return AssignmentSerializer(lease, context=context).data


class QueueLinksSerializer(serializers.Serializer):
    claim = serializers.URLField(help_text="POST to lease the next item (members).")
    assign = serializers.URLField(help_text="POST to assign items (admins).")


class QueueSerializer(serializers.ModelSerializer):
    stage = serializers.CharField(help_text=f"{_STAGES}.")
    item_kind = serializers.CharField(help_text=f"{_KINDS}.")
    filters = serializers.DictField(
        help_text=f"Which items belong, any of: {', '.join(f'`{k}`' for k in FILTER_KEYS)}; empty means every item "
        "of the kind at the stage."
    )
    is_member = serializers.SerializerMethodField(help_text="Whether the caller pulls from this queue.")
    depth = serializers.SerializerMethodField(help_text="Items in the queue with a free slot.")
    active_leases = serializers.SerializerMethodField()
    expired_leases = serializers.SerializerMethodField(help_text="Leases that lapsed, swept or not yet.")
    links = serializers.SerializerMethodField()

    class Meta:
        model = ReviewQueue
        fields = [
            "id",
            "name",
            "stage",
            "item_kind",
            "filters",
            "priority",
            "overlap",
            "lease_seconds",
            "is_active",
            "is_member",
            "depth",
            "active_leases",
            "expired_leases",
            "links",
        ]
        ref_name = "ReviewQueue"

    def get_is_member(self, queue) -> bool:
        return queue.pk in self.context["member_of"]

    def get_depth(self, queue) -> int:
        return self.context["stats"][queue.pk].depth

    def get_active_leases(self, queue) -> int:
        return self.context["stats"][queue.pk].active

    def get_expired_leases(self, queue) -> int:
        return self.context["stats"][queue.pk].expired

    @extend_schema_field(QueueLinksSerializer)
    def get_links(self, queue):
        kwargs = {"slug": self.context["slug"], "queue_id": queue.pk}
        request = self.context["request"]
        return {
            "claim": reverse("api:queue-claim", kwargs=kwargs, request=request),
            "assign": reverse("api:queue-assign", kwargs=kwargs, request=request),
        }


# --- queues ---------------------------------------------------------------------------------------------


class QueueListApi(ApiAuthMixin, generics.ListAPIView):
    """The project's review queues: every one for its admins, the caller's own for everyone else.

    Highest priority first, with each queue's depth and lease counts.
    """

    serializer_class = QueueSerializer

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation: no project to look up
            return ReviewQueue.objects.none()
        self.project = get_project_or_404(self.request.user, self.kwargs["slug"])
        return queues_for(project=self.project, user=self.request.user)

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        for queue in page:
            queue.project = self.project
        member_of = set(
            ReviewQueue.members.through.objects.filter(
                user=request.user, reviewqueue__in=[q.pk for q in page]
            ).values_list("reviewqueue_id", flat=True)
        )
        context = {
            "request": request,
            "slug": self.kwargs["slug"],
            "stats": queue_stats(queues=page),
            "member_of": member_of,
        }
        return self.get_paginated_response(QueueSerializer(page, many=True, context=context).data)

    @extend_schema(operation_id="queues_list", tags=["review"], parameters=[SLUG])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class QueueClaimApi(ApiAuthMixin, APIView):
    """Lease the next item of the queue to the caller (members of the queue).

    The oldest item with a free slot that the caller did not write and has not had at this stage;
    201 with the lease, or 204 when nothing is left for the caller. Renew the lease with heartbeats
    before `lease_expires_at`; an item whose lease lapses goes back to the queue.
    """

    @extend_schema(
        operation_id="queues_claim",
        tags=["review"],
        parameters=[SLUG, QUEUE_ID],
        request=None,
        responses={
            201: OpenApiResponse(AssignmentSerializer, description="The new lease."),
            204: OpenApiResponse(description="Nothing in the queue is left for the caller."),
            403: OpenApiResponse(
                ErrorResponseSerializer,
                description="`claim_refused`: not a member of the queue, no role for its stage, or the queue is "
                "paused; `permission_denied` for other refusals.",
            ),
        },
    )
    def post(self, request, slug, queue_id):
        queue = _queue_or_404(request.user, slug, queue_id)
        lease = queue_claim_next(queue=queue, user=request.user)  # ClaimRefused: 403 by api.errors
        if lease is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(_lease_payload(lease, view=self), status=status.HTTP_201_CREATED)


class AssignRefusalSerializer(serializers.Serializer):
    item_id = serializers.IntegerField(allow_null=True, help_text="Null for a lease that is not of this queue.")
    reason = serializers.CharField()

    class Meta:
        ref_name = "AssignRefusal"


class AssignOutcomeSerializer(serializers.Serializer):
    assigned = AssignmentSerializer(many=True, help_text="The new leases.")
    refused = AssignRefusalSerializer(many=True, help_text="What was not assigned, and why.")

    class Meta:
        ref_name = "AssignOutcome"


def _assignee(username: str):
    user = get_user_model().objects.filter(username=username, is_active=True).first()
    if user is None:
        raise exceptions.ValidationError({"assignee": [f"No active user named {username!r}."]})
    return user


def _outcome_payload(outcome, *, view) -> dict:
    return {
        "assigned": [_lease_payload(lease, view=view) for lease in outcome.assigned],
        "refused": [{"item_id": item_id, "reason": reason} for item_id, reason in outcome.refused],
    }


class QueueAssignApi(ApiAuthMixin, APIView):
    """Assign items of the queue to one person (admins), by the rules claim-next follows.

    Items that cannot go to that person (not at the queue's stage, written by them, already theirs,
    or already seen by `overlap` people) come back in `refused` with the reason; the rest are assigned.
    """

    class InputSerializer(serializers.Serializer):
        items = serializers.ListField(
            child=JsonIntegerField(min_value=1),
            min_length=1,
            max_length=1000,
            help_text="Ids of items of the queue's kind.",
        )
        assignee = JsonCharField(help_text="Username of a project member who may work at the queue's stage.")

        class Meta:
            ref_name = "QueueAssign"

    @extend_schema(
        operation_id="queues_assign",
        tags=["review"],
        parameters=[SLUG, QUEUE_ID],
        request=InputSerializer,
        responses={200: AssignOutcomeSerializer},
    )
    def post(self, request, slug, queue_id):
        queue = _queue_or_404(request.user, slug, queue_id, Action.ADMINISTER)
        data = QueueAssignApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        assignee = _assignee(data.validated_data["assignee"])
        try:
            outcome = queue_assign_items(
                queue=queue, items=data.validated_data["items"], assignee=assignee, by=request.user
            )
        except AssignRefused as exc:
            raise exceptions.ValidationError({"assignee": [str(exc)]}) from exc
        return Response(_outcome_payload(outcome, view=self))


# --- leases ---------------------------------------------------------------------------------------------


def _lease_action(view, request, slug, assignment_id, service):
    """One lease operation by its holder (or an admin): the service decides, refusals become 403/409."""
    lease = _lease_or_404(request.user, slug, assignment_id)
    try:
        service(assignment=lease, user=request.user)
    except LeaseError as exc:
        return _lease_refused(exc)
    return Response(_lease_payload(lease, view=view))


class AssignmentHeartbeatApi(ApiAuthMixin, APIView):
    """Renew the caller's lease for the queue's lease length from now; send one well before it lapses."""

    @extend_schema(
        operation_id="assignments_heartbeat",
        tags=["review"],
        parameters=[SLUG, ASSIGNMENT_ID],
        request=None,
        responses={200: AssignmentSerializer, 403: NOT_HOLDER, 409: LEASE_CONFLICT},
    )
    def post(self, request, slug, assignment_id):
        return _lease_action(self, request, slug, assignment_id, assignment_heartbeat)


class AssignmentReleaseApi(ApiAuthMixin, APIView):
    """Give the item back to its queue: the lease's holder, or a project admin for anyone's lease.

    The same person is not offered the item again by claim-next in this round.
    """

    @extend_schema(
        operation_id="assignments_release",
        tags=["review"],
        parameters=[SLUG, ASSIGNMENT_ID],
        request=None,
        responses={
            200: AssignmentSerializer,
            403: OpenApiResponse(
                ErrorResponseSerializer, description="`not_lease_holder`: neither the holder nor a project admin."
            ),
            409: LEASE_CONFLICT,
        },
    )
    def post(self, request, slug, assignment_id):
        return _lease_action(self, request, slug, assignment_id, assignment_release)


class AssignmentCompleteApi(ApiAuthMixin, APIView):
    """Mark the caller's lease done; a completed lease keeps its slot, so the item is not handed out again."""

    @extend_schema(
        operation_id="assignments_complete",
        tags=["review"],
        parameters=[SLUG, ASSIGNMENT_ID],
        request=None,
        responses={200: AssignmentSerializer, 403: NOT_HOLDER, 409: LEASE_CONFLICT},
    )
    def post(self, request, slug, assignment_id):
        return _lease_action(self, request, slug, assignment_id, assignment_complete)


class AssignmentReassignApi(ApiAuthMixin, APIView):
    """Hand an active lease to another person (admins); the old holder's lease is released."""

    class InputSerializer(serializers.Serializer):
        assignee = JsonCharField(help_text="Username of a project member who may work at the lease's stage.")

        class Meta:
            ref_name = "AssignmentReassign"

    @extend_schema(
        operation_id="assignments_reassign",
        tags=["review"],
        parameters=[SLUG, ASSIGNMENT_ID],
        request=InputSerializer,
        responses={
            200: OpenApiResponse(AssignmentSerializer, description="The new lease."),
            409: OpenApiResponse(
                ErrorResponseSerializer,
                description="`not_reassignable`: the lease is not active, has no queue, or cannot go to that person "
                "(the message says why).",
            ),
        },
    )
    def post(self, request, slug, assignment_id):
        get_project_or_404(request.user, slug, Action.ADMINISTER)
        lease = _lease_or_404(request.user, slug, assignment_id)
        data = AssignmentReassignApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        if lease.queue is None or lease.status != AssignmentStatus.ACTIVE:
            state = "has no queue" if lease.queue is None else f"is {lease.get_status_display().lower()}"
            return _not_reassignable(f"Lease {lease.pk} {state}; only an active lease of a queue can move.")
        lease.queue.project = lease.project
        assignee = _assignee(data.validated_data["assignee"])
        try:
            outcome = queue_reassign(queue=lease.queue, assignments=[lease], assignee=assignee, by=request.user)
        except AssignRefused as exc:
            raise exceptions.ValidationError({"assignee": [str(exc)]}) from exc
        if not outcome.assigned:
            return _not_reassignable(outcome.refused[0][1])
        return Response(_lease_payload(outcome.assigned[0], view=self))


def _not_reassignable(message: str) -> Response:
    return Response(error_body(code="not_reassignable", message=message), status=status.HTTP_409_CONFLICT)
