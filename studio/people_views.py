"""People pages: a project's members and invitations, the invitation link, one's own page, site accounts.

Thin over projects.people (membership, invitations, accounts) and reviewer.departures (what a
person leaving a project was holding goes back to the queues).
"""

from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST
from rest_framework.authtoken.models import Token

from api.tokens import token_revoke, token_rotate
from projects import people
from projects.models import Invitation, Role
from projects.permissions import Action, get_project_or_404, may_manage_accounts
from projects.refusals import Refused, refusal_redirect
from reviewer import departures

from .people_forms import AccountForm, InvitationForm, MembersImportForm, RolesForm, SignUpForm
from .selectors import person_statistics


def _people_url(project) -> str:
    return reverse("studio:people", args=[project.slug])


def _absolute(request, path: str) -> str:
    return request.build_absolute_uri(path)


# --- a project's people ------------------------------------------------------------------------------------


@login_required
def people_page(request, slug):
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    invitations = [
        (inv, _absolute(request, reverse("studio:join", args=[inv.token])))
        for inv in Invitation.objects.filter(project=project).select_related("created_by", "used_by")[:50]
    ]
    return render(
        request,
        "studio/people.html",
        {
            "project": project,
            "members": people.members_of(project=project),
            "roles": Role.choices,
            "invitations": invitations,
            "invite_form": InvitationForm(),
            "mail": people.mail_configured(),
        },
    )


def _member_or_404(project, user_id):
    user = people.member_get(project=project, user_id=user_id)
    if user is None:
        raise Http404(_("No such member of this project."))
    return user


@login_required
@require_POST
def member_roles(request, slug, user_id):
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    user = _member_or_404(project, user_id)
    form = RolesForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Choose at least one role; to remove someone, deactivate them."))
        return redirect(_people_url(project))
    try:
        held = departures.member_roles_change(project=project, user=user, roles=form.cleaned_data["roles"])
    except Refused as exc:
        return refusal_redirect(request, exc, redirect(_people_url(project)), forbidden_page=False)
    messages.success(
        request, _("%(name)s now has the roles: %(roles)s.") % {"name": user.get_username(), "roles": ", ".join(held)}
    )
    return redirect(_people_url(project))


@login_required
@require_POST
def member_deactivate(request, slug, user_id):
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    user = _member_or_404(project, user_id)
    try:
        returned = departures.member_deactivate(project=project, user=user)
    except Refused as exc:
        return refusal_redirect(request, exc, redirect(_people_url(project)), forbidden_page=False)
    messages.success(
        request,
        _("%(name)s is no longer a member. Their work stays; %(n)s item(s) they held went back to the queues.")
        % {"name": user.get_username(), "n": returned},
    )
    return redirect(_people_url(project))


@login_required
@require_POST
def invitation_create(request, slug):
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    form = InvitationForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("The invitation needs at least one role and a lifetime of 1 to 90 days."))
        return redirect(_people_url(project))
    data = form.cleaned_data
    try:
        invitation = people.invitation_create(
            project=project, by=request.user, roles=data["roles"], expires_in_days=data["days"], email=data["email"]
        )
    except Refused as exc:
        return refusal_redirect(request, exc, redirect(_people_url(project)), forbidden_page=False)
    link = _absolute(request, reverse("studio:join", args=[invitation.token]))
    if people.invitation_send(invitation=invitation, link=link):
        messages.success(request, _("Invitation sent to %(email)s.") % {"email": invitation.email})
    else:
        messages.success(request, _("Invitation created. Copy its link below and share it by hand."))
    return redirect(_people_url(project) + f"#invitation-{invitation.pk}")


@login_required
@require_POST
def invitation_revoke(request, slug, invitation_id):
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    invitation = get_object_or_404(Invitation, pk=invitation_id, project=project)
    try:
        people.invitation_revoke(invitation=invitation, by=request.user)
    except Refused as exc:
        return refusal_redirect(request, exc, redirect(_people_url(project)), forbidden_page=False)
    messages.success(request, _("The invitation link no longer works."))
    return redirect(_people_url(project))


@login_required
def members_import(request, slug):
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    form = MembersImportForm(request.POST or None, request.FILES or None)
    report = None
    if request.method == "POST" and form.is_valid():
        try:
            report = people.members_import_csv(
                project=project, by=request.user, text=form.text(), link_base=_absolute(request, "/").rstrip("/")
            )
        except Refused as exc:
            form.add_error("file", exc.message)
    context = {"project": project, "form": form, "report": report, "mail": people.mail_configured()}
    if report is not None:
        context["counts"] = {
            outcome: sum(1 for r in report if r.outcome == outcome) for outcome in ("added", "member", "error")
        }
        for row in report:
            row.password_link = _absolute(request, row.password_link) if row.password_link else ""
    return render(request, "studio/people_import.html", context)


# --- the invitation link -----------------------------------------------------------------------------------


def join(request, token):
    """Follow an invitation: sign up (anonymous) or accept (signed in); a closed link says why, plainly."""
    try:
        invitation = people.invitation_open(token=token)
    except Refused as exc:
        return render(request, "studio/join_closed.html", {"message": exc.message}, status=exc.status)
    home = reverse("studio:project_home", args=[invitation.project.slug])
    if request.user.is_authenticated:
        if request.method == "POST":
            try:
                people.invitation_accept(token=token, user=request.user)
            except Refused as exc:
                return render(request, "studio/join_closed.html", {"message": exc.message}, status=exc.status)
            messages.success(request, _("Welcome to %(project)s.") % {"project": invitation.project.name})
            return redirect(home)
        return render(request, "studio/join.html", {"invitation": invitation, "form": None})
    form = SignUpForm(request.POST or None, initial={"email": invitation.email})
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            user = people.invitation_sign_up(
                token=token,
                username=data["username"],
                email=data["email"],
                name=data["name"],
                password=data["password1"],
            )
        except Refused as exc:
            if exc.code in ("invitation_not_found", "invitation_closed"):
                return render(request, "studio/join_closed.html", {"message": exc.message}, status=exc.status)
            form.add_error(None, exc.message)
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, _("Welcome to %(project)s.") % {"project": invitation.project.name})
            return redirect(home)
    return render(request, "studio/join.html", {"invitation": invitation, "form": form})


# --- one's own page ----------------------------------------------------------------------------------------


@login_required
def me(request):
    return render(
        request,
        "studio/me.html",
        {
            "statistics": person_statistics(user=request.user),
            "token": Token.objects.filter(user=request.user).only("created").first(),
            "new_key": request.session.pop("new_api_token", None),
        },
    )


@login_required
@require_POST
def me_token_rotate(request):
    token = token_rotate(user=request.user)
    # Shown once, on the next page, then gone from the session.
    request.session["new_api_token"] = token.key
    messages.success(request, _("A new API token was made; any older one no longer works. Copy it now."))
    return redirect("studio:me")


@login_required
@require_POST
def me_token_revoke(request):
    if token_revoke(user=request.user):
        messages.success(request, _("Your API token was revoked."))
    else:
        messages.info(request, _("You had no API token."))
    return redirect("studio:me")


# --- site accounts -----------------------------------------------------------------------------------------


def _site_admin(request) -> None:
    if not may_manage_accounts(request.user):
        raise PermissionDenied(_("Only site administrators manage accounts."))


@login_required
def accounts(request):
    _site_admin(request)
    form = AccountForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            user = people.account_create(username=data["username"], email=data["email"], name=data["name"])
        except Refused as exc:
            form.add_error(None, exc.message)
        else:
            return _password_link_answer(request, user, created=True)
    query = (request.GET.get("q") or "").strip()
    users = get_user_model().objects.order_by("username")
    if query:
        users = users.filter(username__icontains=query) | users.filter(email__icontains=query)
    return render(request, "studio/accounts.html", {"form": form, "users": users[:200], "q": query})


def _password_link_answer(request, user, *, created: bool):
    link = _absolute(request, people.password_link_path(user=user))
    mailed = people.password_link_send(user=user, link=link)
    what = _("Account %(name)s created.") if created else _("New set-password link for %(name)s.")
    messages.success(request, what % {"name": user.get_username()})
    if mailed:
        messages.info(request, _("The set-password link was mailed to %(email)s.") % {"email": user.email})
    else:
        messages.info(request, _("Share this one-time set-password link by hand: %(link)s") % {"link": link})
    return redirect("studio:accounts")


@login_required
@require_POST
def account_active(request, account_id):
    _site_admin(request)
    user = get_object_or_404(get_user_model(), pk=account_id)
    active = request.POST.get("active") == "1"
    try:
        with transaction.atomic():
            people.account_set_active(user=user, active=active, by=request.user)
            if not active:
                departures.account_leases_return(user=user)
    except Refused as exc:
        return refusal_redirect(request, exc, redirect("studio:accounts"), forbidden_page=False)
    if active:
        messages.success(request, _("%(name)s can log in again.") % {"name": user.get_username()})
    else:
        messages.success(request, _("%(name)s can no longer log in.") % {"name": user.get_username()})
    return redirect("studio:accounts")


@login_required
@require_POST
def account_password_link(request, account_id):
    _site_admin(request)
    user = get_object_or_404(get_user_model(), pk=account_id)
    return _password_link_answer(request, user, created=False)
