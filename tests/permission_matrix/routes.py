"""Every route the project serves, read from Django's URL resolver (so a new page cannot hide from the matrix)."""

from dataclasses import dataclass

from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.resolvers import RoutePattern

# DRF's APIView defines `options` (and Django's View `head`) for every view; they answer no data.
_API_OPERATIONS = ("get", "post", "put", "patch", "delete")


@dataclass(frozen=True)
class Route:
    name: str  # "namespace:name", or the pattern when the route has no name
    pattern: str  # the full path pattern, e.g. "p/<slug:slug>/videos/<int:video_id>/"
    kwargs: frozenset[str]  # the URL's keyword arguments (defaults given by the route excluded)
    callback: object

    @property
    def api_methods(self) -> frozenset[str] | None:
        """The HTTP methods a DRF view implements (upper case); None for function views."""
        from rest_framework.views import APIView

        cls = getattr(self.callback, "cls", None)
        if not (isinstance(cls, type) and issubclass(cls, APIView)):
            return None
        return frozenset(m.upper() for m in _API_OPERATIONS if getattr(cls, m, None) is not None)


def _kwarg_names(pattern) -> set[str]:
    if isinstance(pattern, RoutePattern):
        return set(pattern.converters)
    return set(pattern.regex.groupindex)


def walk(resolver: URLResolver | None = None, prefix: str = "", namespace: str = "", kwargs=frozenset()) -> list[Route]:
    """All routes under `resolver` (the project's root by default), depth first, in resolution order."""
    resolver = resolver or get_resolver()
    routes = []
    for entry in resolver.url_patterns:
        pattern = prefix + str(entry.pattern)
        names = kwargs | _kwarg_names(entry.pattern)
        if isinstance(entry, URLResolver):
            ns = namespace
            if entry.namespace:
                ns = f"{namespace}{entry.namespace}:"
            routes += walk(entry, pattern, ns, frozenset(names))
        elif isinstance(entry, URLPattern):
            name = f"{namespace}{entry.name}" if entry.name else pattern
            routes.append(Route(name, pattern, frozenset(names - set(entry.default_args)), entry.callback))
    return routes
