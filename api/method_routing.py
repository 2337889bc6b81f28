"""Several operations on one URL, each still written as its own view.

Django routes by path only, so `GET videos/` (list) and `POST videos/` (upload) need one view class.
Rather than merge two operations into one class, each keeps its own view (serializers, permissions,
schema) and `route_methods` builds the class the URL needs: each HTTP method comes from the one
view that defines it. drf-spectacular reads that class like any other, so both operations appear
in the schema with their own documentation.

A view that may be combined this way names its own serializers (`UploadApi.OutputSerializer`), never
`self.OutputSerializer`, which in the combined class could resolve to the other view's.
"""

from rest_framework.views import APIView

_OPERATIONS = ("get", "post", "put", "patch", "delete")


def _operations(view: type[APIView]) -> set[str]:
    return {m for m in _OPERATIONS if getattr(view, m, None) is not None}


def route_methods(*views: type[APIView]) -> type[APIView]:
    """A view class answering each method with the view that defines it; methods must not overlap."""
    seen: dict[str, type[APIView]] = {}
    for view in views:
        for method in _operations(view):
            if method in seen:
                raise TypeError(f"{method.upper()} is defined by both {seen[method].__name__} and {view.__name__}")
            seen[method] = view
    name = "".join(view.__name__.removesuffix("Api") for view in views) + "Api"
    # The first view's docstring stays the description of its operations; the others document
    # their operations on the method (drf-spectacular prefers the method's docstring).
    attrs = {"__doc__": views[0].__doc__, "__module__": views[0].__module__}
    # A body is parsed as the view that takes it says (an upload's multipart, not the list's JSON).
    takes_body = [seen[m] for m in ("post", "put", "patch") if m in seen]
    if takes_body:
        attrs["parser_classes"] = takes_body[0].parser_classes
    return type(name, views, attrs)
