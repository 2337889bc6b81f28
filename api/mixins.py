from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.permissions import IsAuthenticated

from .schema import ApiAutoSchema


class ApiAuthMixin:
    """What every API view shares: token or session login, and documented error responses.

    Token comes first on purpose: DRF builds the `WWW-Authenticate` header from the first
    authenticator, and only with one can an anonymous caller get 401 instead of 403.
    """

    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsAuthenticated]
    schema = ApiAutoSchema()
