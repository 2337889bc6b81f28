from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response


class _PageQuery(serializers.Serializer):
    page = serializers.IntegerField(required=False, min_value=1)
    page_size = serializers.IntegerField(required=False, min_value=1)


class StandardPagination(PageNumberPagination):
    """`?page=N&page_size=M`; M defaults to REST_FRAMEWORK["PAGE_SIZE"] and is capped at 500.

    A page past the end is a 404 (`not_found`). A page or page size that is not a positive
    integer is a 400 (`validation_error`), as the schema says: a typo must not quietly return
    something else than was asked for.
    """

    page_size_query_param = "page_size"
    max_page_size = 500
    page_query_description = "A page number, from 1."
    page_size_query_description = "Number of results per page (default 50; more than 500 gives 500)."
    last_page_strings = ()

    def paginate_queryset(self, queryset, request, view=None):
        params = request.query_params
        query = _PageQuery(data={k: params[k] for k in ("page", "page_size") if k in params})
        if not query.is_valid():
            raise ValidationError(query.errors)
        return super().paginate_queryset(queryset, request, view)

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            parameter["schema"]["minimum"] = 1
        return parameters

    def get_paginated_response(self, data):
        paginator = self.page.paginator
        return Response(
            {
                "count": paginator.count,
                "page": self.page.number,
                "page_size": paginator.per_page,
                "total_pages": paginator.num_pages,
                "next": self.get_next_link(),
                "previous": self.get_previous_link(),
                "results": data,
            }
        )

    def get_paginated_response_schema(self, schema):
        return {
            "type": "object",
            "required": ["count", "page", "page_size", "total_pages", "next", "previous", "results"],
            "properties": {
                "count": {"type": "integer", "description": "Number of results on all pages.", "example": 123},
                "page": {"type": "integer", "description": "This page's number, from 1.", "example": 2},
                "page_size": {"type": "integer", "description": "Results per page.", "example": 50},
                "total_pages": {"type": "integer", "example": 3},
                "next": {
                    "type": "string",
                    "nullable": True,
                    "format": "uri",
                    "example": "http://api.example.org/api/projects/?page=3",
                },
                "previous": {
                    "type": "string",
                    "nullable": True,
                    "format": "uri",
                    "example": "http://api.example.org/api/projects/?page=1",
                },
                "results": schema,
            },
        }
