"""POST /p/<slug>/presence/<kind>/<id>/: an open page says it is still open and hears who else is.

Any member who can see the project may mark an item of it as open (seeing is all an open page
does); a stranger, a wrong kind and another project's item all get the same 404.
"""

from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_POST

from projects.permissions import get_project_or_404

from .gate_views import item_or_404
from .presence import item_presence, presence_clear, presence_label, presence_mark


@login_required
@require_POST
def item_presence_beat(request, slug, kind, item_id):
    """{others: [{name, since}], label} — `closed=1` (sent as the page is left) removes the mark."""
    project = get_project_or_404(request.user, slug)
    item = item_or_404(project, kind, item_id)
    if request.POST.get("closed") == "1":
        presence_clear(kind=kind, item_id=item.pk, user=request.user)
    else:
        presence_mark(kind=kind, item_id=item.pk, user=request.user)
    others = item_presence(item=item, user=request.user)
    return JsonResponse(
        {
            "others": [{"name": o["name"], "since": timezone.localtime(o["since"]).isoformat()} for o in others],
            "label": presence_label(others),
        }
    )
