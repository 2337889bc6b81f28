from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response


class StandardPagination(PageNumberPagination):
    """`?page=N&page_size=M`; M defaults to REST_FRAMEWORK["PAGE_SIZE"] and is capped at 500.

    A page past the end is a 404 (`not_found`); a page size that is not a positive integer falls
    back to the default rather than failing, so a script with a typo still gets data.
    """

    page_size_query_param = "page_size"
    max_page_size = 500
    page_size_query_description = "Number of results per page (default 50, at most 500)."

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
