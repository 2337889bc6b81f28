"""Writes of projects: create from a preset (or another project's settings), update, archive."""

from collections.abc import Callable

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _

from .models import Membership, Project, Role
from .permissions import Action, can, may_create_project
from .presets import PRESETS, preset_settings
from .refusals import Refused


class ProjectRefused(Refused):
    """Creating or changing a project is not allowed for this person, or contradicts itself."""

    status, code = 403, "project_refused"


class ProjectArchived(Refused):
    """The project is archived: it takes no new work until an admin unarchives it."""

    status, code = 409, "project_archived"


# What "copy settings" takes from another project: everything but its identity, text and state.
_NOT_COPIED = {"id", "name", "slug", "description", "primary_language", "archived_at", "created_at", "updated_at"}


def copied_fields() -> list[str]:
    return [f.name for f in Project._meta.concrete_fields if f.name not in _NOT_COPIED]


def archived_refusal(project: Project) -> str:
    """The one sentence every refusal of new work in an archived project says."""
    return _("%(name)s is archived and takes no new work; a project admin can unarchive it in its settings.") % {
        "name": project.name
    }


def project_refuse_if_archived(*, project: Project) -> None:
    """Raise ProjectArchived for new work (a claim, an import, a draft run) in an archived project."""
    if project.archived_at is not None:
        raise ProjectArchived(archived_refusal(project))


def _unique_slug(base: str) -> str:
    base = (slugify(base) or "project")[:70]
    slug, n = base, 2
    while Project.objects.filter(slug=slug).exists():
        slug, n = f"{base}-{n}", n + 1
    return slug


def _save_checked(project: Project) -> None:
    """Save with the model's validation; a contradiction between numbers becomes a ValidationError."""
    project.full_clean(exclude=["slug"] if project.pk else None)
    try:
        with transaction.atomic():
            project.save()
    except IntegrityError as exc:
        raise ValidationError(_("These numbers contradict each other (a minimum above its maximum).")) from exc


@transaction.atomic
def project_create(
    *,
    user,
    name: str,
    preset: str = "custom",
    slug: str = "",
    description: str = "",
    primary_language: str = "en",
    copy_from: Project | None = None,
) -> Project:
    """A new project filled from `preset` (or from `copy_from`'s settings); `user` becomes its admin.

    Raises ProjectRefused when `user` may not create projects or does not administer `copy_from`,
    ValidationError for a bad name, slug or preset.
    """
    if not may_create_project(user):
        raise ProjectRefused(_("Only site administrators and people allowed to create projects can do this."))
    if preset not in PRESETS:
        raise ValidationError({"preset": _("Unknown preset “%(key)s”.") % {"key": preset}})
    if copy_from is not None and not can(user, Action.ADMINISTER, copy_from):
        raise ProjectRefused(_("You can copy settings only from a project you administer."))
    values = preset_settings(preset)
    if copy_from is not None:
        values = {name_: getattr(copy_from, name_) for name_ in copied_fields()}
    if slug and Project.objects.filter(slug=slug).exists():
        raise ValidationError({"slug": _("Another project already uses this short name.")})
    project = Project(
        name=name.strip(),
        slug=slug or _unique_slug(name),
        description=description,
        primary_language=primary_language or "en",
        **values,
    )
    _save_checked(project)
    Membership.objects.create(project=project, user=user, role=Role.ADMIN)
    return project


# Apps above this one react to changed settings (the review app releases the items a switched-off
# quality gate held); each is called as receiver(project=, user=, changed={field: old value}).
_settings_receivers: list[Callable[..., None]] = []


def project_settings_changed_connect(receiver: Callable[..., None]) -> None:
    """Register a receiver of settings changes (once; apps call it in their AppConfig.ready)."""
    if receiver not in _settings_receivers:
        _settings_receivers.append(receiver)


def project_update(*, project: Project, user, **fields) -> Project:
    """Change settings of `project` (its admins only); the model's checks back every rule.

    The save and what the receivers do about the change commit together, or not at all.
    """
    if not can(user, Action.ADMINISTER, project):
        raise ProjectRefused(_("Only the project's admins can change its settings."))
    allowed = set(copied_fields()) | {"name", "description", "primary_language"}
    unknown = set(fields) - allowed
    if unknown:
        raise TypeError(f"project_update() got unexpected field(s) {', '.join(sorted(unknown))}")
    old = {name: getattr(project, name) for name in fields}
    for name, value in fields.items():
        setattr(project, name, value)
    changed = {name: before for name, before in old.items() if getattr(project, name) != before}
    with transaction.atomic():
        _save_checked(project)
        if changed:
            for receiver in _settings_receivers:
                receiver(project=project, user=user, changed=changed)
    return project


def project_archive(*, project: Project, user) -> Project:
    if not can(user, Action.ADMINISTER, project):
        raise ProjectRefused(_("Only the project's admins can archive it."))
    if project.archived_at is None:
        project.archived_at = timezone.now()
        project.save(update_fields=["archived_at", "updated_at"])
    return project


def project_unarchive(*, project: Project, user) -> Project:
    if not can(user, Action.ADMINISTER, project):
        raise ProjectRefused(_("Only the project's admins can unarchive it."))
    if project.archived_at is not None:
        project.archived_at = None
        project.save(update_fields=["archived_at", "updated_at"])
    return project
