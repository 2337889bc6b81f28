"""Token login for scripts: POST username and password, get a token; revoke it when done."""

from django.contrib.auth import authenticate
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.authtoken.models import Token
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView

from config.client_address import client_ip

from .errors import ErrorResponseSerializer
from .fields import JsonCharField
from .mixins import ApiAuthMixin
from .tokens import token_revoke, token_rotate


class TokenObtainThrottle(SimpleRateThrottle):
    """Slows password guessing: per client address, in the default cache (django-axes locks accounts)."""

    scope = "token_obtain"
    rate = "20/min"

    def get_cache_key(self, request, view):
        # The address our proxies saw: a client-written X-Forwarded-For would give a fresh key per guess.
        return self.cache_format % {"scope": self.scope, "ident": client_ip(request)}


class TokenObtainApi(ApiAuthMixin, APIView):
    """Exchange a username and password for an API token.

    Each call replaces the user's previous token (rotation), so a leaked token dies at the next
    login. Send it as `Authorization: Token <token>`.
    """

    # Credentials come in the body; an old (perhaps revoked) token or a session must not get in the way.
    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes = [TokenObtainThrottle]
    # Two strings: a form says them as well as JSON does (`curl -d username=… -d password=…`).
    parser_classes = [JSONParser, FormParser, MultiPartParser]

    class InputSerializer(serializers.Serializer):
        username = JsonCharField()
        password = JsonCharField(style={"input_type": "password"}, trim_whitespace=False, write_only=True)

        class Meta:
            ref_name = "TokenObtain"

    class OutputSerializer(serializers.Serializer):
        token = serializers.CharField(source="key")
        username = serializers.CharField(source="user.get_username")
        created_at = serializers.DateTimeField(source="created")

        class Meta:
            ref_name = "Token"

    def get_authenticate_header(self, request):
        # Wrong credentials are a 401 that tells the client which scheme the API speaks.
        return "Token"

    @extend_schema(
        operation_id="auth_token_obtain",
        tags=["auth"],
        request=InputSerializer,
        responses={
            200: OutputSerializer,
            401: OpenApiResponse(
                ErrorResponseSerializer, description="Wrong username or password, or an inactive account."
            ),
        },
        auth=[],
    )
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = authenticate(request._request, **data.validated_data)
        if user is None:
            raise exceptions.AuthenticationFailed("Unable to log in with the username and password given.")
        token = token_rotate(user=user)
        return Response(self.OutputSerializer(token).data)


class TokenRevokeApi(ApiAuthMixin, APIView):
    """Delete the caller's API token; later requests with it get 401."""

    @extend_schema(operation_id="auth_token_revoke", tags=["auth"], request=None, responses={204: None})
    def post(self, request):
        token_revoke(user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokenStatusApi(ApiAuthMixin, APIView):
    """Whether the caller has an API token, and since when; the key itself is never shown again."""

    class OutputSerializer(serializers.Serializer):
        exists = serializers.BooleanField()
        created_at = serializers.DateTimeField(allow_null=True)

        class Meta:
            ref_name = "TokenStatus"

    @extend_schema(operation_id="auth_token_status", tags=["auth"], responses={200: OutputSerializer})
    def get(self, request):
        token = Token.objects.filter(user=request.user).only("created").first()
        return Response({"exists": token is not None, "created_at": token.created if token else None})
