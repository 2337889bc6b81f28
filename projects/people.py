"""Who belongs to a project: invitations by link, roles, bulk adds from a CSV, and site accounts.

Every write is a keyword-only `<entity>_<action>` function; interfaces (the studio pages and the
API) are thin over them. What happens to a person's work queue when they leave a project belongs
to the review app (reviewer.departures), which calls `member_remove` / `member_roles_remove` here.
"""

import csv
import io
import re
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from .models import Invitation, Membership, Project, Role
from .refusals import Refused

INVITATION_DAYS_DEFAULT = 7
INVITATION_DAYS_MAX = 90
_ROLE_SEPARATORS = re.compile(r"[;|,]")


class PeopleRefused(Refused):
    status = 400
    code = "people_refused"
    code_statuses = {
        "invitation_not_found": 404,
        "invitation_closed": 410,
        "not_a_member": 404,
        "last_admin": 409,
        "used": 409,
    }


# --- roles -------------------------------------------------------------------------------------------------


def roles_clean(roles) -> list[str]:
    """Role values from a list or a string separated by `;`, `|` or `,`; in Role order, without repeats."""
    if isinstance(roles, str):
        roles = _ROLE_SEPARATORS.split(roles)
    wanted = {str(r).strip().lower() for r in roles if str(r).strip()}
    unknown = wanted - set(Role.values)
    if unknown:
        raise PeopleRefused(
            _("Unknown role %(roles)s; the roles are %(known)s.")
            % {"roles": ", ".join(sorted(unknown)), "known": ", ".join(Role.values)},
            code="unknown_role",
        )
    if not wanted:
        raise PeopleRefused(_("Give at least one role."), code="no_role")
    return [r for r in Role.values if r in wanted]


def member_roles(*, project: Project, user) -> list[str]:
    return list(Membership.objects.filter(project=project, user=user).order_by("role").values_list("role", flat=True))


def member_roles_add(*, project: Project, user, roles) -> list[str]:
    """Give `user` these roles in `project` (those they hold stay); returns the roles newly given."""
    added = []
    for role in roles_clean(roles):
        _, created = Membership.objects.get_or_create(project=project, user=user, role=role)
        if created:
            added.append(role)
    user.__dict__.pop("_vidqa_roles", None)
    return added


def _check_not_last_admin(project: Project, user, removing: set[str]) -> None:
    if Role.ADMIN not in removing:
        return
    admins = Membership.objects.filter(project=project, role=Role.ADMIN)
    if admins.filter(user=user).exists() and not admins.exclude(user=user).exists():
        raise PeopleRefused(
            _("%(name)s is the only admin of this project; make someone else an admin first.")
            % {"name": user.get_username()},
            code="last_admin",
        )


def member_roles_remove(*, project: Project, user, roles) -> list[str]:
    """Take these roles from `user` in `project`; returns the roles they still hold."""
    removing = set(roles_clean(roles))
    with transaction.atomic():
        _check_not_last_admin(project, user, removing)
        Membership.objects.filter(project=project, user=user, role__in=removing).delete()
    user.__dict__.pop("_vidqa_roles", None)
    return member_roles(project=project, user=user)


def member_roles_set(*, project: Project, user, roles) -> list[str]:
    """Make `user`'s roles in `project` exactly `roles` (at least one)."""
    wanted = set(roles_clean(roles))
    with transaction.atomic():
        held = set(member_roles(project=project, user=user))
        if not held:
            raise PeopleRefused(_("That person is not a member of this project."), code="not_a_member")
        _check_not_last_admin(project, user, held - wanted)
        Membership.objects.filter(project=project, user=user).exclude(role__in=wanted).delete()
        for role in wanted - held:
            Membership.objects.create(project=project, user=user, role=role)
    user.__dict__.pop("_vidqa_roles", None)
    return sorted(wanted)


def member_remove(*, project: Project, user) -> list[str]:
    """Every role of `user` in `project` goes; their work (items, verdicts, events) stays. Returns the roles."""
    with transaction.atomic():
        held = member_roles(project=project, user=user)
        if not held:
            raise PeopleRefused(_("That person is not a member of this project."), code="not_a_member")
        _check_not_last_admin(project, user, set(held))
        Membership.objects.filter(project=project, user=user).delete()
    user.__dict__.pop("_vidqa_roles", None)
    return held


def member_get(*, project: Project, user_id) -> object | None:
    """A member of `project` by id; None for "no such person" and "not a member" alike."""
    return get_user_model().objects.filter(pk=user_id, memberships__project=project).distinct().first()


@dataclass
class MemberRow:
    user: object
    roles: list[str]


def members_of(*, project: Project) -> list[MemberRow]:
    """The project's people with their roles, by username; two queries."""
    rows: dict[int, MemberRow] = {}
    users = {
        u.pk: u for u in get_user_model().objects.filter(memberships__project=project).distinct().order_by("username")
    }
    for user_id, role in Membership.objects.filter(project=project).values_list("user_id", "role"):
        rows.setdefault(user_id, MemberRow(user=users[user_id], roles=[])).roles.append(role)
    order = {r: i for i, r in enumerate(Role.values)}
    result = sorted(rows.values(), key=lambda r: r.user.get_username())
    for row in result:
        row.roles.sort(key=order.__getitem__)
    return result


# --- mail and links ----------------------------------------------------------------------------------------


def mail_configured() -> bool:
    """Whether this deployment sends mail (the dummy backend means it does not)."""
    return bool(settings.EMAIL_BACKEND) and not settings.EMAIL_BACKEND.endswith("dummy.EmailBackend")


def password_link_path(*, user) -> str:
    """A one-time set-password link (Django's password reset token): dies once the password changes."""
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    return reverse("password_reset_confirm", kwargs={"uidb64": uid, "token": default_token_generator.make_token(user)})


def _mail(*, to: str, subject: str, body: str) -> bool:
    if not (to and mail_configured()):
        return False
    send_mail(subject, body, None, [to])
    return True


def password_link_send(*, user, link: str) -> bool:
    """Mail `link` (absolute) to `user`; False when there is no address or no mail here."""
    return _mail(
        to=user.email,
        subject=_("Set your VidQA Studio password"),
        body=_(
            "Hello %(name)s,\n\nan account was made for you. "
            "Set your password here (the link works once):\n\n%(link)s\n"
        )
        % {"name": user.get_full_name() or user.get_username(), "link": link},
    )


# --- invitations -------------------------------------------------------------------------------------------

_CLOSED_MESSAGES = {
    "used": gettext_lazy("This invitation link has already been used. Ask the project's admin for a new one."),
    "revoked": gettext_lazy("This invitation link was withdrawn. Ask the project's admin for a new one."),
    "expired": gettext_lazy("This invitation link has expired. Ask the project's admin for a new one."),
}


def invitation_create(
    *, project: Project, by, roles, expires_in_days: int = INVITATION_DAYS_DEFAULT, email: str = ""
) -> Invitation:
    roles = roles_clean(roles)
    if not 1 <= int(expires_in_days) <= INVITATION_DAYS_MAX:
        raise PeopleRefused(
            _("An invitation lasts from 1 to %(max)s days.") % {"max": INVITATION_DAYS_MAX}, code="bad_expiry"
        )
    email = (email or "").strip()
    if email:
        try:
            validate_email(email)
        except ValidationError:
            raise PeopleRefused(_("%(email)s is not an e-mail address.") % {"email": email}, code="bad_email") from None
    return Invitation.objects.create(
        project=project,
        roles=roles,
        email=email,
        created_by=by,
        expires_at=timezone.now() + timedelta(days=int(expires_in_days)),
    )


def invitation_send(*, invitation: Invitation, link: str) -> bool:
    """Mail the (absolute) link to the invitation's address; False when it has none or there is no mail here."""
    return _mail(
        to=invitation.email,
        subject=_("You are invited to %(project)s on VidQA Studio") % {"project": invitation.project.name},
        body=_(
            "You are invited to join %(project)s as %(roles)s. "
            "Open this link to accept (it expires %(when)s):\n\n%(link)s\n"
        )
        % {
            "project": invitation.project.name,
            "roles": ", ".join(invitation.roles),
            "when": invitation.expires_at.strftime("%Y-%m-%d %H:%M UTC"),
            "link": link,
        },
    )


def invitation_revoke(*, invitation: Invitation, by) -> Invitation:
    """Withdraw an unused invitation; revoking twice is not an error."""
    if invitation.used_at:
        raise PeopleRefused(_("This invitation has already been used; remove the member instead."), code="used")
    if not invitation.revoked_at:
        Invitation.objects.filter(pk=invitation.pk, used_at__isnull=True, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
        invitation.refresh_from_db()
    return invitation


def invitation_open(*, token: str, lock: bool = False) -> Invitation:
    """The invitation a link names, if it can still be used; else a refusal with the plain reason."""
    rows = Invitation.objects.select_related("project")
    if lock:
        rows = rows.select_for_update(of=("self",))
    invitation = rows.filter(token=token).first()
    if invitation is None:
        raise PeopleRefused(
            _("This invitation link is not valid. Check that it was copied whole."), code="invitation_not_found"
        )
    state = invitation.state()
    if state != "open":
        raise PeopleRefused(str(_CLOSED_MESSAGES[state]), code="invitation_closed")
    return invitation


@transaction.atomic
def invitation_accept(*, token: str, user) -> Invitation:
    """`user` takes the invitation: they get its roles in its project, and the link is used up."""
    invitation = invitation_open(token=token, lock=True)
    member_roles_add(project=invitation.project, user=user, roles=invitation.roles)
    invitation.used_at, invitation.used_by = timezone.now(), user
    invitation.save(update_fields=["used_at", "used_by"])
    return invitation


@transaction.atomic
def invitation_sign_up(*, token: str, username: str, email: str, name: str, password: str):
    """A new account through an invitation link; the password is validated by the caller's form."""
    invitation_open(token=token, lock=True)
    user = account_create(username=username, email=email, name=name, password=password)
    invitation_accept(token=token, user=user)
    return user


# --- accounts ----------------------------------------------------------------------------------------------


def _name_fields(name: str) -> dict:
    # One field for the whole name: many names (Chinese ones among them) have no "first" and "last".
    return {"first_name": (name or "").strip()[:150], "last_name": ""}


def account_check(*, username: str, email: str = "") -> None:
    """Refuse a username that is malformed or taken and an e-mail address that is not one."""
    User = get_user_model()
    username = (username or "").strip()
    if not username:
        raise PeopleRefused(_("A username is required."), code="no_username")
    try:
        User.username_validator(username)
    except ValidationError:
        raise PeopleRefused(
            _("%(username)s is not a valid username (letters, digits and @ . + - _ only).") % {"username": username},
            code="bad_username",
        ) from None
    if User.objects.filter(username__iexact=username).exists():
        raise PeopleRefused(_("The username %(username)s is taken.") % {"username": username}, code="username_taken")
    if email:
        try:
            validate_email(email)
        except ValidationError:
            raise PeopleRefused(_("%(email)s is not an e-mail address.") % {"email": email}, code="bad_email") from None


def account_create(*, username: str, email: str = "", name: str = "", password: str | None = None, is_staff=False):
    """A new person; without a password theirs is unusable until they follow a set-password link."""
    username, email = (username or "").strip(), (email or "").strip()
    account_check(username=username, email=email)
    user = get_user_model()(username=username, email=email, is_staff=is_staff, **_name_fields(name))
    if password:
        user.set_password(password)
    else:
        user.set_unusable_password()
    try:
        with transaction.atomic():
            user.save()
    except IntegrityError:
        raise PeopleRefused(
            _("The username %(username)s is taken.") % {"username": username}, code="username_taken"
        ) from None
    return user


def account_set_active(*, user, active: bool, by):
    """Deactivate (no login, no API) or reactivate an account; nobody deactivates themselves."""
    if user.pk == by.pk and not active:
        raise PeopleRefused(_("You cannot deactivate your own account."), code="self")
    user.is_active = active
    user.save(update_fields=["is_active"])
    if not active:
        from rest_framework.authtoken.models import Token

        # An inactive account's token would be refused anyway; removing it makes that plain.
        Token.objects.filter(user=user).delete()
    return user


# --- bulk add from a CSV -----------------------------------------------------------------------------------

CSV_COLUMNS = ("username", "email", "name", "roles")


@dataclass
class ImportRow:
    line: int  # the row's line in the file (the header is line 1)
    username: str
    outcome: str  # added, member (already had these roles), error
    message: str = ""
    roles: list[str] = field(default_factory=list)
    created: bool = False  # a new account was made for the row
    password_link: str = ""  # for a new account: the set-password path
    mailed: bool = False


def _csv_rows(text: str):
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    header = [h.strip().lower() for h in (reader.fieldnames or [])]
    missing = [c for c in ("username", "roles") if c not in header]
    if missing:
        raise PeopleRefused(
            _("The first line must name the columns username, email, name, roles; missing: %(missing)s.")
            % {"missing": ", ".join(missing)},
            code="bad_header",
        )
    reader.fieldnames = header
    for row in reader:
        yield reader.line_num, {k: (v or "").strip() for k, v in row.items() if k}


def members_import_csv(*, project: Project, by, text: str, link_base: str = "") -> list[ImportRow]:
    """Add the people of a CSV file (username, email, name, roles) to `project`, one row at a time.

    Each row is all or nothing, in its own savepoint: a bad row changes nothing and is reported with
    its reason; the good rows are added. A username that exists gets the roles (the account is not
    changed); a new one gets an account with an unusable password and a one-time set-password link,
    mailed to them when mail is configured. `link_base` ("https://host") makes the mailed link absolute.
    """
    report = []
    for line, row in _csv_rows(text):
        username = row.get("username", "")
        if not any(row.values()):
            continue
        try:
            with transaction.atomic():
                report.append(_import_row(project, line, row, link_base))
        except PeopleRefused as exc:
            report.append(ImportRow(line=line, username=username, outcome="error", message=exc.message))
    return report


def _import_row(project: Project, line: int, row: dict, link_base: str) -> ImportRow:
    username, email = row.get("username", ""), row.get("email", "")
    roles = roles_clean(row.get("roles", ""))
    user = get_user_model().objects.filter(username__iexact=username).first() if username else None
    if user is None:
        user = account_create(username=username, email=email, name=row.get("name", ""))
        path = password_link_path(user=user)
        mailed = password_link_send(user=user, link=link_base + path) if link_base else False
        member_roles_add(project=project, user=user, roles=roles)
        return ImportRow(line, user.username, "added", roles=roles, created=True, password_link=path, mailed=mailed)
    added = member_roles_add(project=project, user=user, roles=roles)
    if not added:
        return ImportRow(line, user.username, "member", _("Already a member with these roles."), roles=roles)
    return ImportRow(line, user.username, "added", roles=added)
