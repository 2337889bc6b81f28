"""Serializer fields that take JSON values of exactly the type the schema names.

DRF's fields coerce: `CharField` takes `0` and stores "0", `IntegerField` takes "7" and 7.0,
`BooleanField` takes "yes". That suits HTML forms, where every value is text, but a JSON body
whose schema says `string` or `integer` must be refused when it carries anything else, or the
schema lies about what the server accepts. Only for JSON bodies; query strings are text.
"""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers


class JsonCharField(serializers.CharField):
    """A JSON string, kept as sent: trimming would make "  " blank where the schema allows it."""

    def __init__(self, **kwargs):
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class JsonIntegerField(serializers.IntegerField):
    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class JsonBooleanField(serializers.BooleanField):
    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


@extend_schema_field({"type": "object", "additionalProperties": {}})
class JsonObjectField(serializers.JSONField):
    """A JSON object (in a multipart form: a part holding JSON text, sent as `application/json`)."""

    default_error_messages = {"not_an_object": "Must be a JSON object."}

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not isinstance(value, dict):
            self.fail("not_an_object")
        return value
