"""The one base of every refusal a person is shown: `Refused`.

A domain function that will not do what it was asked raises a subclass. The subclass says once, as
class attributes, how an interface answers it: `status` (the HTTP status) and `code` (a short,
stable, machine-readable reason, the API's `error.code`). An instance carries only the plain
message, in words for the person, and `details`, any structured context worth sending along.

Each interface maps a Refused in one place: the API in api/errors.exception_handler, the editors'
JSON endpoints in annotator/editor_endpoints, browser views through `refusal_redirect` below.
Interfaces still catch a refusal themselves where their answer depends on the request (a message
naming the file that was uploaded, an error attached to one form field).

Exceptions that never reach a person as such (a task's own failure, a retry signal) are not
refusals and do not derive from this.
"""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse


class Refused(Exception):
    # Most refusals are about the state of things (the item moved on, a job already runs): 409
    # unless the subclass says otherwise (400/422 for what was sent, 403 for who sent it).
    status: int = 409
    code: str = "refused"
    # A subclass whose instances name their own code may give some codes their own status.
    code_statuses: dict[str, int] = {}

    def __init__(self, message: str = "", *, code: str | None = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.status = self.code_statuses.get(self.code, type(self).status)

    @property
    def details(self) -> dict:
        """Structured context for the answer (the API's `error.details`, extra keys of an editor's JSON)."""
        return {}


def refusal_redirect(request, exc: Refused, back: HttpResponse, *, forbidden_page: bool = True) -> HttpResponse:
    """A browser view's answer to a refusal: 403 and 404 as Django's own pages, else the message on `back`.

    `forbidden_page=False` shows a 403 refusal as a message too, where the page the person goes back
    to can say what to do about it (a queue they are not a member of, or that is paused).
    """
    if exc.status == 403 and forbidden_page:
        raise PermissionDenied(exc.message)
    if exc.status == 404:
        raise Http404(exc.message)
    messages.error(request, exc.message)
    return back
