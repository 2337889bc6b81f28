"""Work without a model: a chain written on a bare clip, a chain pair opened to link by hand, and
where the work list, the video page and the chain editor offer them."""

import pytest
from django.urls import reverse

from annotator.models import ChainPair, ItemStatus, Origin, QAChain, ReviewEvent
from annotator.relations import NoNextChain, chain_pair_create
from annotator.selectors import chains_without_pair, clips_without_chain
from projects.models import ProjectKind
from tests import factories
from videos.models import VideoStatus

pytestmark = pytest.mark.django_db


@pytest.fixture
def video(project):
    return factories.VideoFactory(project=project, duration_s=600.0, status=VideoStatus.READY)


def clip(video, index):
    return factories.ClipFactory(video=video, index=index, start_s=index * 10.0, end_s=index * 10.0 + 9.0)


def chain_on(video, index, **kw):
    return factories.QAChainFactory(clip=clip(video, index), status=ItemStatus.ANNOTATING, **kw)


# --- services and selectors --------------------------------------------------------------------


def test_chain_pair_create_joins_the_next_clips_chain_as_human_work(project, people, video):
    before, after = chain_on(video, 0), chain_on(video, 1)
    cp = chain_pair_create(chain_before=before, user=people["annotator"])
    assert (cp.chain_before_id, cp.chain_after_id, cp.before_index) == (before.pk, after.pk, 0)
    assert (cp.status, cp.origin, cp.author, cp.human_edited) == (
        ItemStatus.ANNOTATING,
        Origin.HUMAN,
        people["annotator"],
        True,
    )
    event = ReviewEvent.objects.get(chain_pair=cp)
    assert (event.from_status, event.to_status) == ("draft", "annotating")
    # Asking again opens the same pair.
    assert chain_pair_create(chain_before=before, user=people["admin"]).pk == cp.pk
    assert ChainPair.objects.count() == 1


def test_chain_pair_create_refuses_without_a_next_chain(project, people, video):
    before = chain_on(video, 0)
    clip(video, 1)
    with pytest.raises(NoNextChain):
        chain_pair_create(chain_before=before, user=people["annotator"])
    assert not ChainPair.objects.exists()


def test_clips_without_chain_and_chains_without_pair(project, video):
    c0, c1 = chain_on(video, 0), chain_on(video, 1)
    chain_on(video, 3)
    bare = [clip(video, 2), clip(video, 4)]
    factories.ClipFactory(video=factories.VideoFactory(project=project, status=VideoStatus.PROCESSING), index=0)
    rows, count = clips_without_chain(project=project, limit=25)
    assert [r.pk for r in rows] == [c.pk for c in bare] and count == 2
    rows, count = clips_without_chain(project=project, limit=1)
    assert len(rows) == 1 and count == 2
    rows, count = chains_without_pair(project=project, limit=25)
    assert [r.pk for r in rows] == [c0.pk] and count == 1
    chain_pair_create(chain_before=c0, user=None)
    assert chains_without_pair(project=project, limit=25) == ([], 0)
    assert c1.pk  # clip 1's next clip (2) has no chain: nothing to link yet


# --- views -------------------------------------------------------------------------------------


def test_new_chain_opens_the_editor_on_an_empty_human_chain(client, project, people, video):
    bare = clip(video, 0)
    client.force_login(people["annotator"])
    response = client.post(reverse("annotator:chain_new", args=[project.slug]), {"clip": bare.pk})
    chain = QAChain.objects.get(clip=bare)
    assert response.status_code == 302
    assert response["Location"] == reverse("annotator:chain_editor", args=[project.slug, chain.pk])
    assert (chain.status, chain.origin, chain.author, chain.pairs.count()) == (
        ItemStatus.ANNOTATING,
        Origin.HUMAN,
        people["annotator"],
        0,
    )
    page = client.get(response["Location"])
    assert page.status_code == 200 and page.context["editable"]
    # A second "new chain" on the same clip opens the one there.
    again = client.post(reverse("annotator:chain_new", args=[project.slug]), {"clip": bare.pk})
    assert again["Location"] == response["Location"] and QAChain.objects.count() == 1


def test_new_chain_refusals(client, project, people, video):
    bare = clip(video, 0)
    other = factories.ClipFactory(index=0)  # another project's clip
    client.force_login(people["examiner"])
    assert client.post(reverse("annotator:chain_new", args=[project.slug]), {"clip": bare.pk}).status_code == 403
    client.force_login(people["annotator"])
    for raw in ("", "x", str(other.pk)):
        response = client.post(reverse("annotator:chain_new", args=[project.slug]), {"clip": raw})
        assert response["Location"] == reverse("annotator:work", args=[project.slug])
    assert not QAChain.objects.exists()


def test_pair_new_opens_the_relation_editor(client, project, people, video):
    before, after = chain_on(video, 0), chain_on(video, 1)
    client.force_login(people["annotator"])
    editor = client.get(reverse("annotator:chain_editor", args=[project.slug, after.pk]))
    assert editor.context["link_prev_chain"] == before.pk and editor.context["link_next_chain"] is None
    assert b'id="link-prev"' in editor.content
    response = client.post(reverse("annotator:pair_new", args=[project.slug]), {"chain": before.pk})
    cp = ChainPair.objects.get()
    assert response["Location"] == reverse("annotator:pair_editor", args=[project.slug, cp.pk])
    assert client.get(response["Location"]).status_code == 200
    editor = client.get(reverse("annotator:chain_editor", args=[project.slug, after.pk]))
    assert editor.context["pair_before"].pk == cp.pk and b'id="link-prev"' not in editor.content


def test_pair_new_without_a_next_chain_goes_back_to_the_chain(client, project, people, video):
    before = chain_on(video, 0)
    client.force_login(people["annotator"])
    response = client.post(reverse("annotator:pair_new", args=[project.slug]), {"chain": before.pk})
    assert response["Location"] == reverse("annotator:chain_editor", args=[project.slug, before.pk])
    assert not ChainPair.objects.exists()


def test_work_list_offers_bare_clips_and_unlinked_chains_to_annotators(client, project, people, video):
    assert project.kind == ProjectKind.SVBENCH
    chain_on(video, 0), chain_on(video, 1)
    bare = clip(video, 2)
    client.force_login(people["annotator"])
    target = reverse("annotator:work", args=[project.slug])
    assert b'id="work-by-hand"' in client.get(target).content  # the card loads after the page
    fragment = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "work-by-hand"}
    content = client.get(target, **fragment).content.decode()
    assert "<html" not in content and 'id="work-by-hand"' in content
    assert content.count(f'name="clip" value="{bare.pk}"') == 1 and content.count('name="clip"') == 1
    assert content.count('name="chain"') == 1  # clips 0 → 1; clip 1's next clip has no chain
    assert reverse("annotator:chain_new", args=[project.slug]) in content
    # An examiner does not annotate: nothing to start here.
    client.force_login(people["examiner"])
    assert b'id="work-by-hand"' not in client.get(target).content
    assert client.get(target, **fragment).content.strip() == b""


def test_video_page_lists_clips_with_their_chains(client, project, people, video):
    chain = chain_on(video, 0)
    clip(video, 1)
    client.force_login(people["annotator"])
    response = client.get(reverse("videos:player", args=[project.slug, video.pk]))
    content = response.content.decode()
    assert reverse("annotator:chain_editor", args=[project.slug, chain.pk]) in content
    assert reverse("annotator:chain_new", args=[project.slug]) in content


# --- a project end to end with no model --------------------------------------------------------


def test_a_project_runs_end_to_end_with_no_model(settings, project, people, video, django_capture_on_commit_callbacks):
    """No endpoint anywhere, the judge off: a chain written by hand is submitted, passed by an
    examiner, accepted, and a release builds with it. (With the judge on and no endpoint, where the
    item goes is the gate's policy, tested with the gate.)"""
    from annotator.chains import chain_create, chain_submit
    from releases.build import release_build
    from releases.models import ReleaseStatus
    from releases.services import release_create
    from reviewer.examination import verdict_submit

    settings.OPENAI_BASE_URL = ""
    project.judge_enabled = False
    project.save(update_fields=["judge_enabled"])
    turns = [
        {"question": f"What happens in step {i} of the clip?", "answer": f"The cook does step {i}.", "skill": "ECA"}
        for i in range(5)
    ]
    before = chain_create(clip=clip(video, 0), user=people["annotator"], turns=turns).chain
    after = chain_create(clip=clip(video, 1), user=people["annotator"], turns=turns).chain
    # Relations by hand between the two chains, with no drafted chain pair.
    from annotator.relations import chain_pair_submit, relation_add

    cp = chain_pair_create(chain_before=before, user=people["annotator"])
    relation_add(
        chain_pair=cp,
        from_pair_id=before.pairs.get(index=0).pk,
        to_pair_id=after.pairs.get(index=1).pk,
        relation_type="event",
        expected_version=cp.version,
        user=people["annotator"],
    )
    cp.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        for chain in (before, after):
            chain.refresh_from_db()
            chain_submit(chain=chain, user=people["annotator"], expected_version=chain.version)
        chain_pair_submit(chain_pair=cp, user=people["annotator"], expected_version=cp.version)
    for item in (before, after, cp):
        item.refresh_from_db()
        assert item.status in (ItemStatus.SUBMITTED, ItemStatus.EXAMINING), item
        outcome = verdict_submit(item=item, examiner=people["examiner"], passed=True, reasons=[])
        item.refresh_from_db()
        assert outcome.decided and item.status == ItemStatus.ACCEPTED
    release = release_create(
        project=project,
        by=people["admin"],
        version="v1",
        formats=["svbench"],
        filters={"include_media": False},
        enqueue=False,
    )
    release = release_build(release=release)
    assert release.status == ReleaseStatus.READY, release.validation_errors
    assert release.manifest["counts"]["items"]["qa_chain"] == 2
    assert release.manifest["counts"]["items"]["relation"] == 1


def test_project_home_sends_annotators_to_bare_clips(client, project, people, video):
    clip(video, 0)
    client.force_login(people["annotator"])
    page = client.get(reverse("studio:project_home", args=[project.slug])).text
    assert "Write QA chains on clips that have none" in page


def test_next_item_with_nothing_drafted_points_at_the_bare_clips(client, project, people, video):
    clip(video, 0), clip(video, 1)
    client.force_login(people["annotator"])
    response = client.get(reverse("annotator:work_next", args=[project.slug]), follow=True)
    assert "2 clips have no QA chain yet" in response.text
