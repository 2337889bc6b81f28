from pathlib import Path

import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import ValidationError

from annotator.drafts import draft_run_start
from projects.models import Membership, ProjectKind, Role
from projects.services import (
    ProjectArchived,
    ProjectRefused,
    project_archive,
    project_create,
    project_unarchive,
    project_update,
)
from reviewer.queues import ClaimRefused, project_claim_next, queue_claim_next
from tests import factories
from videos.ingest import ImportRefused, video_import

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff():
    return factories.UserFactory(is_staff=True)


def test_staff_creates_from_a_preset_and_becomes_its_admin(staff):
    project = project_create(user=staff, name="Long videos", preset="longvideobench")
    assert project.slug == "long-videos"
    assert project.kind == ProjectKind.LONGVIDEOBENCH and project.min_height_px == 720
    assert Membership.objects.filter(project=project, user=staff, role=Role.ADMIN).exists()
    again = project_create(user=staff, name="Long videos", preset="svbench")
    assert again.slug == "long-videos-2"


def test_the_add_project_permission_is_enough():
    user = factories.UserFactory()
    with pytest.raises(ProjectRefused):
        project_create(user=user, name="Nope")
    user.user_permissions.add(Permission.objects.get(codename="add_project"))
    user = type(user).objects.get(pk=user.pk)  # permissions are cached on the object
    assert project_create(user=user, name="Yes", preset="livibench").min_complexity == 3


def test_a_project_admin_without_the_permission_cannot_create(people):
    with pytest.raises(ProjectRefused):
        project_create(user=people["admin"], name="Nope")


def test_copy_settings_from_a_project_the_user_administers(staff, project):
    source = project_create(user=staff, name="Source", preset="svbench")
    project_update(project=source, user=staff, min_scenes=7, taxonomies={"skills": [{"code": "X", "name": "Ex"}]})
    copy = project_create(user=staff, name="Copy", preset="custom", copy_from=source)
    assert copy.kind == ProjectKind.SVBENCH and copy.min_scenes == 7
    assert copy.taxonomies == {"skills": [{"code": "X", "name": "Ex"}]}
    assert copy.name == "Copy" and copy.slug == "copy"
    with pytest.raises(ProjectRefused):
        project_create(user=staff, name="Other", copy_from=project)  # not one of theirs


def test_update_refuses_contradicting_numbers(staff):
    project = project_create(user=staff, name="P", preset="svbench")
    with pytest.raises(ValidationError):
        project_update(project=project, user=staff, min_scenes=20, max_scenes=10)


def test_archived_project_refuses_claims_imports_and_drafts(people, project, tmp_path):
    queue = factories.ReviewQueueFactory(project=project)
    project_archive(project=project, user=people["admin"])
    project.refresh_from_db()
    assert project.is_archived

    with pytest.raises(ImportRefused) as refused:
        video_import(project=project, source=Path(tmp_path / "x.mp4"), filename="x.mp4")
    assert refused.value.status == 409 and "archived" in refused.value.message
    with pytest.raises(ProjectArchived):
        draft_run_start(project=project, step="chains")
    with pytest.raises(ClaimRefused) as claim:
        project_claim_next(project=project, user=people["annotator"])
    assert claim.value.code == "project_archived"
    with pytest.raises(ClaimRefused):
        queue_claim_next(queue=queue, user=people["annotator"])

    project_unarchive(project=project, user=people["admin"])
    assert project_claim_next(project=project, user=people["annotator"]) is None


def test_only_admins_archive(people, project):
    with pytest.raises(ProjectRefused):
        project_archive(project=project, user=people["annotator"])
