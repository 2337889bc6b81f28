"""One error shape for every API failure.

    {"error": {"code": "not_found", "message": "No such project.", "details": {}}}

`code` is stable and machine-readable, `message` is for people, `details` holds field errors for
validation (`{"field": ["message", ...]}`) and other structured context (`retry_after_s` on 429).
A domain refusal (projects.refusals.Refused) answers with its own status, code, message and details.
Unexpected exceptions become a 500 with a generic message; the traceback goes to the log only.
"""

import logging

from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.urls import Resolver404, resolve
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView, set_rollback
from rest_framework.views import exception_handler as drf_exception_handler

from config.request_errors import exception_status
from projects.refusals import Refused

logger = logging.getLogger(__name__)

# Messages people read; DRF's defaults are fine for the rest.
_VALIDATION_MESSAGE = "The request is not valid; see details."
_SERVER_ERROR_MESSAGE = "Something went wrong on our side; the error has been logged."


class ErrorBodySerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Stable machine-readable code, e.g. `not_found`, `validation_error`.")
    message = serializers.CharField(help_text="Human-readable explanation.")
    details = serializers.DictField(
        help_text="Field errors for `validation_error` (`{field: [messages]}`, `non_field_errors` for the "
        "request as a whole), `retry_after_s` for `throttled`; empty otherwise.",
    )


class ErrorResponseSerializer(serializers.Serializer):
    """The body of every 4xx/5xx response from the API."""

    error = ErrorBodySerializer()


def error_body(*, code: str, message: str, details: dict | None = None) -> dict:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def _error_code(exc: exceptions.APIException) -> str:
    if isinstance(exc, exceptions.ValidationError):
        return "validation_error"
    codes = exc.get_codes()
    # A view may raise e.g. PermissionDenied(code="role_required"); keep that, else the class default.
    return codes if isinstance(codes, str) else exc.default_code


def exception_handler(exc, context):
    """DRF's handler (headers, rollback), reshaped; Django's 404/403 are API errors too."""
    refused = exception_status(exc)
    if refused is not None:
        # A body too big, too many fields, malformed multipart: the client's mistake, not a 500.
        status, code, message = refused
        request = context.get("request")
        logger.warning("%s %s: %s", getattr(request, "method", "?"), getattr(request, "path", "?"), message)
        return Response(error_body(code=code, message=message), status=status)
    if isinstance(exc, Refused):
        set_rollback()
        return Response(error_body(code=exc.code, message=exc.message, details=exc.details), status=exc.status)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(*exc.args)
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(*exc.args)
    response = drf_exception_handler(exc, context)
    if response is None:
        # Not an API exception: a bug. Log it with the traceback, answer without one.
        request = context.get("request")
        logger.error(
            "Unhandled API error on %s %s",
            getattr(request, "method", "?"),
            getattr(request, "path", "?"),
            exc_info=exc,
        )
        set_rollback()
        return Response(error_body(code="server_error", message=_SERVER_ERROR_MESSAGE), status=500)

    details: dict = {}
    if isinstance(exc, exceptions.ValidationError):
        message = _VALIDATION_MESSAGE
        details = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
    else:
        message = str(exc.detail)
        if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
            details = {"retry_after_s": int(exc.wait + 0.999)}
    response.data = error_body(code=_error_code(exc), message=message, details=details)
    return response


@extend_schema(exclude=True)
class ApiNotFoundView(APIView):
    """Answers every unknown /api/ path, so even a typo gets the API's error shape, not an HTML page."""

    authentication_classes: list = []
    permission_classes = [AllowAny]

    def _not_found(self, request, *args, **kwargs):
        path = request.path
        if not path.endswith("/"):
            try:
                resolved = resolve(path + "/")
            except Resolver404:
                resolved = None
            if resolved is not None and getattr(resolved.func, "view_class", None) is not ApiNotFoundView:
                raise exceptions.NotFound(f"No such endpoint; did you mean {path}/ ?")
        raise exceptions.NotFound("No such endpoint.")

    get = post = put = patch = delete = head = options = _not_found
