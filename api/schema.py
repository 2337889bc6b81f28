"""OpenAPI generation: every operation documents the error responses it can give, in one shape."""

from django.core.validators import RegexValidator
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers
from rest_framework.permissions import AllowAny

from .errors import ErrorResponseSerializer

_DESCRIPTIONS = {
    "400": "Invalid input (`validation_error`); `details` maps each field to its messages.",
    "401": "Not logged in, or the token is missing or invalid (`not_authenticated`, `authentication_failed`).",
    "403": "Logged in, but not allowed to do this (`permission_denied`).",
    "404": "No such object, or not one of yours (`not_found`); the two look the same on purpose.",
    "413": "The request body is too large (`request_too_large`).",
    "415": "The body is not in a media type this operation reads (`unsupported_media_type`).",
    "429": "Too many requests (`throttled`); `details.retry_after_s` says when to try again.",
    "500": "Unexpected error (`server_error`); no internals are revealed.",
}


NO_NUL = "^[^\\x00]*$"


class ApiAutoSchema(AutoSchema):
    """Adds the shared `ErrorResponse` for the failures each operation can actually produce."""

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        for code in self._error_codes():
            if code not in responses:
                responses[code] = self._get_response_for_code(
                    OpenApiResponse(response=ErrorResponseSerializer, description=_DESCRIPTIONS[code]),
                    code,
                    direction=direction,
                )
        return responses

    def map_parsers(self):
        # An empty form is accepted as "no body" (api.parsers), but only JSON is a documented body.
        kept = [p.media_type for p in self.view.get_parsers() if not getattr(p, "undocumented", False)]
        return list(dict.fromkeys(kept))

    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        # DRF refuses a NUL character in any text field (PostgreSQL cannot store one); say so.
        is_text = isinstance(field, serializers.CharField) and schema.get("type") == "string"
        # A field's own RegexValidator (drf-spectacular adds it later) is stricter; it stays the pattern.
        has_regex = any(isinstance(v, RegexValidator) for v in field.validators)
        if direction == "request" and is_text and not has_regex and "enum" not in schema and "pattern" not in schema:
            schema = {**schema, "pattern": NO_NUL}
        return schema

    def _error_codes(self) -> list[str]:
        view = self.view
        codes = []
        takes_body = self.method in ("POST", "PUT", "PATCH")
        # Query parameters are checked too: a value of the wrong type, or one given twice, is a 400.
        takes_query = any(p.get("in") == "query" for p in self._get_parameters())
        if takes_body or takes_query:
            codes.append("400")
        if any(not isinstance(p, AllowAny) for p in view.get_permissions()):
            codes += ["401", "403"]
        # Path parameters name something that may not exist; a page past the end is a 404 too.
        if "{" in self.path or self._is_list_view() and getattr(view, "pagination_class", None):
            codes.append("404")
        if takes_body and self.get_request_serializer() is not None:
            codes += ["413", "415"]
        if view.get_throttles():
            codes.append("429")
        codes.append("500")
        return codes
