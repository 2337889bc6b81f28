"""Query filters whose schema states the bounds and types the server enforces."""

import django_filters
from django import forms
from drf_spectacular.utils import extend_schema_field

# django-filter's NumberFilter refuses values above 1e50 (its form field's validator); say so.
NUMBER_MAX = 1e50
# Ids are PostgreSQL bigints.
ID_MAX = 2**63 - 1


@extend_schema_field({"type": "number", "maximum": NUMBER_MAX})
class BoundedNumberFilter(django_filters.NumberFilter):
    """A decimal number up to 1e50; `NaN` and infinities are refused."""


@extend_schema_field({"type": "integer", "minimum": 1, "maximum": ID_MAX})
class IdFilter(django_filters.NumberFilter):
    """A row's id: a whole number from 1; `0.5` is refused rather than matched against integer ids."""

    field_class = forms.IntegerField

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", ID_MAX)
        super().__init__(*args, **kwargs)
