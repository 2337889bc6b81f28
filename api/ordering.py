from rest_framework.filters import OrderingFilter


class StableOrderingFilter(OrderingFilter):
    """`?ordering=` with the primary key as last key, so pages never repeat or skip rows on ties."""

    def get_ordering(self, request, queryset, view):
        ordering = super().get_ordering(request, queryset, view)
        if ordering and not {"pk", "-pk", "id", "-id"} & set(ordering):
            ordering = [*ordering, "pk"]
        return ordering

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        fields = ", ".join(f"`{f}`" for f in view.ordering_fields)
        default = ", ".join(f"`{f}`" for f in getattr(view, "ordering", None) or [])
        for parameter in parameters:
            parameter["description"] = (
                f"Comma-separated fields to order by, `-` in front for descending: {fields}. "
                f"Default {default}. Unknown fields are ignored."
            )
        return parameters
