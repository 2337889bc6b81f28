"""The release gate: refused at creation when the project says refuse, and a summary in every manifest."""

import pytest
from django.core.exceptions import ValidationError

from annotator.models import MCQ
from audits.models import Probe, ProbeAnswer
from releases.build import release_build
from releases.models import ReleaseStatus
from releases.services import release_create
from tests import factories
from tests.releases.release_data import build_small_project

pytestmark = pytest.mark.django_db
NO_MEDIA = {"include_media": False}


def _answer(mcq, variant, correct):
    ProbeAnswer.objects.create(
        project_id=mcq.project_id,
        mcq=mcq,
        probe=Probe.TEXT,
        variant=variant,
        model="probe-model",
        input_hash="x",
        item_version=mcq.version,
        shown_order=[0, 1, 2, 3],
        option_count=4,
        ok=True,
        chosen_index=mcq.correct_index if correct else (mcq.correct_index + 1) % 4,
        correct=correct,
    )


def _released_mcqs(project):
    return list(MCQ.objects.filter(project=project, status="accepted"))


def test_the_manifest_carries_the_audit_summary():
    small = build_small_project()
    mcqs = _released_mcqs(small.project)
    for n, mcq in enumerate(mcqs):
        _answer(mcq, "order 1", correct=n == 0)
    release = release_build(release=small.release(formats=["longvideobench"], filters=NO_MEDIA))
    audit = release.manifest["audit"]
    assert audit["gate"] == "warn"
    assert audit["mcqs_checked"] == len(mcqs)
    assert audit["mcqs_probed"] == len(mcqs)
    assert audit["blind"]["answered"] == len(mcqs) and audit["blind"]["correct"] == 1
    assert audit["blind"]["chance"] == 0.25


def test_refuse_stops_a_release_whose_blind_accuracy_is_too_high(settings):
    small = build_small_project()
    project = small.project
    admin = factories.UserFactory()
    factories.MembershipFactory(project=project, user=admin, role="admin")
    for mcq in _released_mcqs(project):
        _answer(mcq, "order 1", correct=True)
    project.audit_gate = "refuse"
    project.save()
    with pytest.raises(ValidationError) as exc:
        release_create(project=project, by=admin, version="v9", formats=["longvideobench"], filters=NO_MEDIA)
    message = " ".join(exc.value.message_dict["audit"])
    assert "Blind accuracy is 100.0 %" in message and "more than the 5.0" in message

    # Warn lets it through; the manifest says it failed.
    project.audit_gate = "warn"
    project.save()
    release = release_create(project=project, by=admin, version="v9", formats=["longvideobench"], filters=NO_MEDIA)
    release = release_build(release=release)
    assert release.status == ReleaseStatus.READY, release.validation_errors
    assert release.manifest["audit"]["passed"] is False


def test_refuse_lets_a_clean_release_through():
    small = build_small_project()
    project = small.project
    admin = factories.UserFactory()
    factories.MembershipFactory(project=project, user=admin, role="admin")
    for mcq in _released_mcqs(project):
        for k in range(4):
            _answer(mcq, f"order {k + 1}", correct=k == 0)  # exactly chance
    project.audit_gate = "refuse"
    project.save()
    release = release_build(
        release=release_create(project=project, by=admin, version="v2", formats=["longvideobench"], filters=NO_MEDIA)
    )
    assert release.manifest["audit"]["passed"] is True
    assert release.manifest["audit"]["blind"]["points_over_chance"] == 0.0


def test_the_release_page_shows_the_audit_per_probe(client):
    small = build_small_project()
    project = small.project
    admin = factories.UserFactory()
    factories.MembershipFactory(project=project, user=admin, role="admin")
    for mcq in _released_mcqs(project):
        _answer(mcq, "order 1", correct=True)
    release = release_build(release=small.release(formats=["longvideobench"], filters=NO_MEDIA))
    assert release.manifest["audit"]["probes"][0]["probe"] == "text"
    client.force_login(admin)
    from django.urls import reverse

    page = client.get(reverse("releases:detail", args=[project.slug, release.pk])).content.decode()
    assert "did not pass the release gate" in page and "above chance" in page


def test_the_gate_asks_only_for_blockers():
    """Warnings and near-duplicates never decide a release: the gate does not compute them (they are
    most of the time on thousands of templated questions)."""
    from audits.static_checks import project_static_audit

    small = build_small_project()
    ids = [m.pk for m in _released_mcqs(small.project)]
    full = project_static_audit(project=small.project, mcq_ids=ids)
    quick = project_static_audit(project=small.project, mcq_ids=ids, blockers_only=True)
    assert quick.blocked == full.blocked and quick.checked == full.checked
    assert all(f.severity == "blocker" for findings in quick.items.values() for f in findings)
    assert quick.positions == []
