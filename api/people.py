"""A project's people for scripts: members and their roles, invitation links. Project admins only.

Thin over projects.people and reviewer.departures, so the people page and the API add, change and
remove people one way. Refusals use the one error shape: `validation_error` (an unknown role among
them), `permission_denied`, `not_found`, `last_admin` (409: a project keeps at least one admin),
`used` (409: revoking an invitation someone already used).
"""

from django.contrib.auth import get_user_model
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, generics, serializers, status
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from projects import people
from projects.models import Invitation, Role
from projects.permissions import Action, get_project_or_404
from reviewer import departures

from .errors import ErrorResponseSerializer
from .jobs import SLUG
from .mixins import ApiAuthMixin

USER_ID = OpenApiParameter("user_id", OpenApiTypes.INT, OpenApiParameter.PATH, description="The member's user id.")
INVITATION_ID = OpenApiParameter(
    "invitation_id", OpenApiTypes.INT, OpenApiParameter.PATH, description="The invitation's id."
)
NO_SUCH_MEMBER = gettext_lazy("No such member of this project.")
LAST_ADMIN = OpenApiResponse(
    ErrorResponseSerializer,
    description="`last_admin`: this would leave the project without an admin; make someone else an admin first.",
)


class MemberSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="user.pk")
    username = serializers.CharField(source="user.username")
    name = serializers.CharField(source="user.get_full_name")
    email = serializers.EmailField(source="user.email")
    is_active = serializers.BooleanField(source="user.is_active", help_text="False: the account cannot log in.")
    roles = serializers.ListField(child=serializers.ChoiceField(choices=Role.choices))

    class Meta:
        ref_name = "Member"


class RolesInputSerializer(serializers.Serializer):
    roles = serializers.ListField(child=serializers.ChoiceField(choices=Role.choices), allow_empty=False)

    class Meta:
        ref_name = "MemberRolesInput"


def _admin_project(request, slug):
    return get_project_or_404(request.user, slug, Action.ADMINISTER)


def _member_or_404(project, user_id):
    user = people.member_get(project=project, user_id=user_id)
    if user is None:
        raise exceptions.NotFound(NO_SUCH_MEMBER)
    return user


def _row(project, user) -> people.MemberRow:
    return people.MemberRow(user=user, roles=people.member_roles(project=project, user=user))


class MemberListApi(ApiAuthMixin, generics.ListAPIView):
    """The project's members with their roles, by username."""

    serializer_class = MemberSerializer

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation: no project, no rows
            return get_user_model().objects.none()
        return people.members_of(project=_admin_project(self.request, self.kwargs["slug"]))

    @extend_schema(operation_id="members_list", tags=["people"], parameters=[SLUG])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class MemberAddApi(ApiAuthMixin, APIView):
    class InputSerializer(RolesInputSerializer):
        username = serializers.CharField(help_text="An existing account; new people join through an invitation.")

        class Meta:
            ref_name = "MemberAddInput"

    @extend_schema(
        operation_id="members_add_roles",
        tags=["people"],
        parameters=[SLUG],
        request=InputSerializer,
        responses={200: MemberSerializer},
    )
    def post(self, request, slug):
        """Give an existing account roles in the project (roles it holds stay); it becomes a member if it was not."""
        project = _admin_project(request, slug)
        data = MemberAddApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = get_user_model().objects.filter(username__iexact=data.validated_data["username"]).first()
        if user is None:
            raise exceptions.ValidationError({"username": [_("No account has this username.")]})
        people.member_roles_add(project=project, user=user, roles=data.validated_data["roles"])
        return Response(MemberSerializer(_row(project, user)).data)


class MemberRolesRemoveApi(ApiAuthMixin, APIView):
    @extend_schema(
        operation_id="members_remove_roles",
        tags=["people"],
        parameters=[SLUG, USER_ID],
        request=RolesInputSerializer,
        responses={200: MemberSerializer, 409: LAST_ADMIN},
    )
    def post(self, request, slug, user_id):
        """Take roles from a member; leases at stages they may no longer work go back to the queues.

        A member left with no role is no longer a member (`roles` is empty in the answer).
        """
        project = _admin_project(request, slug)
        user = _member_or_404(project, user_id)
        data = RolesInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        departures.member_roles_take(project=project, user=user, roles=data.validated_data["roles"])
        return Response(MemberSerializer(_row(project, user)).data)


class MemberRemoveApi(ApiAuthMixin, APIView):
    @extend_schema(
        operation_id="members_remove",
        tags=["people"],
        parameters=[SLUG, USER_ID],
        request=None,
        responses={204: None, 409: LAST_ADMIN},
    )
    def delete(self, request, slug, user_id):
        """Remove a member (every role); what they held goes back to the queues, their work stays."""
        project = _admin_project(request, slug)
        departures.member_deactivate(project=project, user=_member_or_404(project, user_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- invitations -------------------------------------------------------------------------------------------


class InvitationSerializer(serializers.ModelSerializer):
    state = serializers.SerializerMethodField(help_text="`open`, `used`, `revoked` or `expired`.")
    created_by = serializers.CharField(source="created_by.username", allow_null=True, default=None)
    used_by = serializers.CharField(source="used_by.username", allow_null=True, default=None)
    link = serializers.SerializerMethodField(help_text="The page that signs a person up or lets them accept.")
    roles = serializers.ListField(child=serializers.ChoiceField(choices=Role.choices))

    class Meta:
        model = Invitation
        fields = [
            "id",
            "roles",
            "email",
            "state",
            "expires_at",
            "created_at",
            "created_by",
            "used_at",
            "used_by",
            "link",
        ]
        ref_name = "Invitation"

    def get_state(self, invitation) -> str:
        return invitation.state()

    def get_link(self, invitation) -> str:
        return reverse("studio:join", args=[invitation.token], request=self.context["request"])


class InvitationListApi(ApiAuthMixin, generics.ListAPIView):
    """The project's invitations, newest first, with their links."""

    serializer_class = InvitationSerializer

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation: no project, no rows
            return Invitation.objects.none()
        project = _admin_project(self.request, self.kwargs["slug"])
        return Invitation.objects.filter(project=project).select_related("created_by", "used_by").order_by("-pk")

    @extend_schema(operation_id="invitations_list", tags=["people"], parameters=[SLUG])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class InvitationCreateApi(ApiAuthMixin, APIView):
    class InputSerializer(RolesInputSerializer):
        expires_in_days = serializers.IntegerField(
            min_value=1, max_value=people.INVITATION_DAYS_MAX, default=people.INVITATION_DAYS_DEFAULT
        )
        email = serializers.EmailField(required=False, allow_blank=True, default="")

        class Meta:
            ref_name = "InvitationCreateInput"

    @extend_schema(
        operation_id="invitations_create",
        tags=["people"],
        parameters=[SLUG],
        request=InputSerializer,
        responses={201: InvitationSerializer},
    )
    def post(self, request, slug):
        """Make an invitation link with fixed roles and an expiry; mailed to `email` where mail is configured."""
        project = _admin_project(request, slug)
        data = InvitationCreateApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        invitation = people.invitation_create(project=project, by=request.user, **data.validated_data)
        body = InvitationSerializer(invitation, context={"request": request}).data
        people.invitation_send(invitation=invitation, link=body["link"])
        return Response(body, status=status.HTTP_201_CREATED)


class InvitationRevokeApi(ApiAuthMixin, APIView):
    @extend_schema(
        operation_id="invitations_revoke",
        tags=["people"],
        parameters=[SLUG, INVITATION_ID],
        request=None,
        responses={
            200: InvitationSerializer,
            409: OpenApiResponse(
                ErrorResponseSerializer, description="`used`: someone joined with it; remove the member instead."
            ),
        },
    )
    def post(self, request, slug, invitation_id):
        """Withdraw an unused invitation: its link stops working. Revoking twice is not an error."""
        project = _admin_project(request, slug)
        invitation = Invitation.objects.filter(project=project, pk=invitation_id).first()
        if invitation is None:
            raise exceptions.NotFound(_("No such invitation in this project."))
        people.invitation_revoke(invitation=invitation, by=request.user)
        return Response(InvitationSerializer(invitation, context={"request": request}).data)
