"""An annotator rejects a video nobody can annotate (LongVideoBench: still frames, incomplete subtitles).

The flag sits on the video with its reason, note and who set it; the reasons are project data
(`project.taxonomy("unusable_reasons")`). Clearing it is an admin's decision (the view checks).
"""

from django.utils.translation import gettext as _

from projects.refusals import Refused

from .models import Video

NOTE_MAX_CHARS = 2000
# A reason that says nothing by itself needs the note to explain.
NOTE_REQUIRED_FOR = {"other"}
_FIELDS = ["unusable_reason", "unusable_note", "unusable_by", "updated_at"]


class UnusableRefused(Refused, ValueError):
    """The flag was not set: the message says why."""

    status, code = 422, "unusable_refused"


def unusable_reasons(*, project) -> list[dict]:
    return [{"code": r["code"], "name": r.get("name") or r["code"]} for r in project.taxonomy("unusable_reasons")]


def unusable_label(*, project, code: str) -> str:
    """The reason's name for display; an unknown (since removed) code shows as itself."""
    if not code:
        return ""
    return {r["code"]: r["name"] for r in unusable_reasons(project=project)}.get(code, code)


def video_flag_unusable(*, video: Video, reason: str, note: str = "", user) -> Video:
    reason = (reason or "").strip()
    note = (note or "").strip()
    reasons = unusable_reasons(project=video.project)
    codes = [r["code"] for r in reasons]
    if reason not in codes:
        names = ", ".join(f"{r['code']} ({r['name']})" for r in reasons)
        if not reason:
            raise UnusableRefused(_("Choose why the video is unusable: one of %(names)s.") % {"names": names})
        raise UnusableRefused(
            _('"%(reason)s" is not a reason this project knows; choose one of %(names)s.')
            % {"reason": reason, "names": names}
        )
    if reason in NOTE_REQUIRED_FOR and not note:
        raise UnusableRefused(_("Say in the note what makes the video unusable."))
    if len(note) > NOTE_MAX_CHARS:
        raise UnusableRefused(
            _("Keep the note under %(note_max_chars)s characters (it has %(len)s).")
            % {"note_max_chars": NOTE_MAX_CHARS, "len": len(note)}
        )
    video.unusable_reason, video.unusable_note, video.unusable_by = reason, note, user
    video.save(update_fields=_FIELDS)
    return video


def video_clear_unusable(*, video: Video) -> Video:
    video.unusable_reason, video.unusable_note, video.unusable_by = "", "", None
    video.save(update_fields=_FIELDS)
    return video
