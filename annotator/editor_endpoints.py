"""The JSON protocol every editor speaks (QA chain, the links of a chain pair, MCQ): one set of helpers.

The pages' modules (static/js/autosave.js and the editors on it) post a JSON object carrying the
`version` they started from, and read back:

- 200 with the item's whole state, plus what the action adds (`restoredVersion` after an undo;
  `next`, `outcome` and `message` after a submit);
- 409 with `conflict: true`, `theirs` (the item as stored now, `savedBy` naming who saved it) and
  `yours` (what was sent) when the version is stale, so the editor can show both;
- for any refusal (projects.refusals.Refused) its status and `{"error": message, **details}`, with
  `conflict: false` on a 409 so the editor does not offer a merge: 400 for a malformed request,
  403 when the item is not this person's to edit, 422 for content that cannot be saved (`errors`,
  or `blockers` for an MCQ not ready to submit), 409 when the item has moved on.

Keys the protocol adds are camelCase, like the editors' config (the MCQ's own fields keep the names
of the model they mirror).
"""

import functools
import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.urls import reverse
from django.views.decorators.http import require_POST

from projects.refusals import Refused

from .concurrency import StaleVersion


class BadRequest(Refused):
    """The request body is not what the endpoint takes."""

    status, code = 400, "bad_request"


class NotAllowed(Refused):
    """The person may see the item but not change it (role, stage, or their own work to revise)."""

    status, code = 403, "not_allowed"


def json_body(request) -> dict:
    try:
        body = json.loads(request.body or b"{}")
    except (ValueError, UnicodeDecodeError):
        raise BadRequest("The request body is not valid JSON.") from None
    if not isinstance(body, dict):
        raise BadRequest("The request body must be a JSON object.")
    return body


def expected_version(
    body: dict,
    *,
    missing: str = "Send the version you started from as `version` (a whole number).",
    optional: bool = False,
) -> int | None:
    """The `version` the editor started from; `missing` says so in the editor's own words."""
    version = body.get("version")
    if optional and version is None:
        return None
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise BadRequest(missing)
    return version


def error(message: str, status: int, **extra) -> JsonResponse:
    return JsonResponse({"error": message, **extra}, status=status)


def refusal(exc: Refused) -> JsonResponse:
    extra = {"conflict": False} if exc.status == 409 else {}
    return error(exc.message, exc.status, **extra, **exc.details)


def saved_by(item) -> str:
    """Who saved the item's latest version ("" when nobody is recorded)."""
    record = item.history.select_related("history_user").order_by("-history_date", "-history_id").first()
    return record.history_user.get_username() if record and record.history_user else ""


def conflict(*, theirs: dict, yours, message: str) -> JsonResponse:
    """The 409 of a stale version: `theirs` is the state as stored (with `savedBy`), `yours` what was sent."""
    return error(message, 409, conflict=True, theirs=theirs, yours=yours)


def kept_message(exc: StaleVersion, *, noun: str, theirs: dict) -> str:
    """The conflict sentence of an editor that keeps the person's text for them to merge."""
    who = f" by {theirs['savedBy']}" if theirs["savedBy"] else ""
    return (
        f"This {noun} was saved{who} as version {theirs['version']} after you opened version {exc.expected}. "
        "Your text is kept: compare and merge."
    )


def saved(state: dict, **extra) -> JsonResponse:
    """The 200 of every action: the item's whole state and what the action adds."""
    return JsonResponse({**state, **extra})


def submitted_payload(request, submitted, *, noun: str, next_page: str, keep_message: bool = True) -> dict:
    """What a submit adds to the state: where the item went, a sentence saying so, and the next page.

    An editor that moves on to the next item at once keeps the sentence as a message for the page
    it lands on; one that stays says it there and keeps nothing.
    """
    message = submitted.message(noun)
    if keep_message:
        messages.success(request, message)
    return {"next": next_page, "outcome": submitted.outcome, "message": message}


def next_url(project, kind: str, item_id: int) -> str:
    return reverse("annotator:work_next", args=[project.slug]) + f"?after={kind}-{item_id}"


def editor_endpoint(view):
    """A JSON endpoint of an editor: signed in, POST only, and any refusal answered as the protocol says."""

    @functools.wraps(view)
    def endpoint(request, *args, **kwargs):
        try:
            return view(request, *args, **kwargs)
        except Refused as exc:
            return refusal(exc)

    return login_required(require_POST(endpoint))
