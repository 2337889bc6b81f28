from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticated

from .parsers import EmptyFormParser, EmptyMultiPartParser
from .schema import ApiAutoSchema


class ApiAuthMixin:
    """What every API view shares: token or session login, and documented error responses.

    Token comes first on purpose: DRF builds the `WWW-Authenticate` header from the first
    authenticator, and only with one can an anonymous caller get 401 instead of 403.

    Bodies are JSON unless a view takes a file: a form cannot say "a number", "an empty list" or
    "an object", so accepting one would make the documented types a wish (415 otherwise); an empty
    form is no body at all (api.parsers).
    """

    authentication_classes = [TokenAuthentication, SessionAuthentication]
    parser_classes = [JSONParser, EmptyFormParser, EmptyMultiPartParser]
    permission_classes = [IsAuthenticated]
    schema = ApiAutoSchema()

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        # Every query parameter takes one value; given twice, which one counts would be a guess.
        repeated = sorted(k for k, values in request.query_params.lists() if len(values) > 1)
        if repeated:
            raise ValidationError({k: ["Give this parameter once."] for k in repeated})
