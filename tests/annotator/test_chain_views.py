"""Chain editor and work list through the real views: permissions, the JSON contract, query counts."""

import json

import pytest
from django.urls import reverse

from annotator.models import ChainPair, ItemStatus, QAChain, QAPair, ReviewEvent
from reviewer.models import Assignment
from tests import factories

pytestmark = pytest.mark.django_db


def make_chain(project, *, index=0, status=ItemStatus.DRAFT, turns=3, video=None, **kw):
    video = video or factories.VideoFactory(project=project, duration_s=600.0)
    chain = factories.QAChainFactory(clip=factories.ClipFactory(video=video, index=index), status=status, **kw)
    QAPair.objects.bulk_create(
        QAPair(chain=chain, index=i, question=f"Question {i} of clip {index}?", answer=f"Answer {i}.", skill="ECA")
        for i in range(turns)
    )
    return chain


def url(chain, name="chain_editor"):
    return reverse(f"annotator:{name}", args=[chain.project.slug, chain.pk])


def post(client, target, body):
    return client.post(target, data=json.dumps(body), content_type="application/json")


def rows(chain):
    return [{"id": p.pk, "question": p.question, "answer": p.answer, "skill": p.skill} for p in chain.pairs.all()]


@pytest.fixture
def chain(project):
    return make_chain(project)


def test_login_required(client, chain):
    for target in (url(chain), url(chain, "chain_save"), reverse("annotator:work", args=[chain.project.slug])):
        response = client.get(target)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_annotator_opens_the_editor_with_the_player_and_the_turns(client, people, chain):
    client.force_login(people["annotator"])
    response = client.get(url(chain))
    assert response.status_code == 200
    page = response.text
    assert 'id="player-video"' in page and 'id="chain-editor"' in page
    assert "Question 1 of clip 0?" in page
    config = json.loads(page.split('id="chain-editor-config" type="application/json">')[1].split("</script>")[0])
    assert config["clip"] == {"index": 0, "start": 0.0, "end": 10.0}
    assert config["state"]["editable"] is True and config["state"]["version"] == 1
    assert [p["question"] for p in config["state"]["pairs"]][0] == "Question 0 of clip 0?"
    assert config["urls"]["save"] == url(chain, "chain_save")
    assert config["skills"][:2] == ["II", "PA"]
    assert "static/js/autosave.js" in page and "static/js/chain_editor.js" in page


def test_stranger_and_missing_chain_get_404(client, people, chain, project):
    client.force_login(people["outsider"])
    assert client.get(url(chain)).status_code == 404
    assert post(client, url(chain, "chain_save"), {"version": 1, "pairs": rows(chain)}).status_code == 404
    client.force_login(people["annotator"])
    other = make_chain(factories.ProjectFactory())
    # A chain of another project, asked for under this project's slug, does not exist here.
    assert client.get(reverse("annotator:chain_editor", args=[project.slug, other.pk])).status_code == 404


def test_examiner_reads_but_cannot_save(client, people, chain):
    client.force_login(people["examiner"])
    page = client.get(url(chain)).text
    assert "Read only" in page and "does not annotate: you can read this chain but not change it." in page
    response = post(client, url(chain, "chain_save"), {"version": 1, "pairs": rows(chain)[:1]})
    assert response.status_code == 403 and "does not annotate" in response.json()["error"]
    for name in ("chain_undo", "chain_submit"):
        assert post(client, url(chain, name), {"version": 1}).status_code == 403
    chain.refresh_from_db()
    assert chain.version == 1 and chain.pairs.count() == 3


def test_reviser_edits_only_what_is_being_revised_and_not_their_own(client, people, chain):
    client.force_login(people["reviser"])
    assert post(client, url(chain, "chain_save"), {"version": 1, "pairs": rows(chain)}).status_code == 403
    QAChain.objects.filter(pk=chain.pk).update(status=ItemStatus.REVISING, author=people["annotator"])
    response = post(client, url(chain, "chain_save"), {"version": 1, "pairs": rows(chain)[:2]})
    assert response.status_code == 200, response.json()
    QAChain.objects.filter(pk=chain.pk).update(author=people["reviser"])
    assert post(client, url(chain, "chain_save"), {"version": 2, "pairs": rows(chain)}).status_code == 403


def test_save_answers_with_the_new_state_hints_and_warnings(client, people, chain):
    client.force_login(people["annotator"])
    body = rows(chain)
    body[0]["question"] = "What does Mara hold while she talks to Lukas?"
    body[1]["question"] = "Why does Mara put it down?"
    body.append({"id": None, "question": "New turn?", "answer": "Yes.", "skill": "II"})
    response = post(client, url(chain, "chain_save"), {"version": 1, "pairs": body})
    assert response.status_code == 200
    state = response.json()
    assert state["version"] == 2 and state["status"] == "annotating" and state["statusLabel"] == "Annotating"
    assert [p["question"] for p in state["pairs"]][-1] == "New turn?" and state["pairs"][-1]["id"]
    assert state["pairs"][1]["hints"] == ["Mara"] and state["pairs"][0]["hints"] == []
    assert state["warnings"] == ["This project asks for 5–6 turns per chain; this one has 4."]


def test_stale_save_gets_409_with_both_versions(client, people, chain):
    client.force_login(people["annotator"])
    theirs = rows(chain)
    theirs[0]["question"] = "Their question?"
    assert post(client, url(chain, "chain_save"), {"version": 1, "pairs": theirs}).status_code == 200

    client.force_login(people["admin"])
    mine = rows(chain)
    mine[0]["question"] = "My question?"
    response = post(client, url(chain, "chain_save"), {"version": 1, "pairs": mine})
    assert response.status_code == 409
    body = response.json()
    assert body["conflict"] is True
    assert body["theirs"]["version"] == 2 and body["theirs"]["pairs"][0]["question"] == "Their question?"
    assert body["theirs"]["savedBy"] == people["annotator"].username
    assert body["yours"]["pairs"][0]["question"] == "My question?" and body["yours"]["version"] == 1
    assert "saved by" in body["error"] and "version 2" in body["error"]
    chain.refresh_from_db()
    assert chain.pairs.get(index=0).question == "Their question?"

    # Merging: the same content saved on their version goes through.
    assert post(client, url(chain, "chain_save"), {"version": 2, "pairs": mine}).status_code == 200


@pytest.mark.parametrize(
    "body, status, message",
    [
        ({"pairs": []}, 400, "Send the version"),
        ({"version": "1", "pairs": []}, 400, "Send the version"),
        ({"version": 1, "pairs": [{"id": None, "question": "", "answer": "A", "skill": ""}]}, 422, "needs a question"),
    ],
)
def test_bad_requests_say_what_is_wrong(client, people, chain, body, status, message):
    client.force_login(people["annotator"])
    response = post(client, url(chain, "chain_save"), body)
    assert response.status_code == status and message in response.json()["error"]
    if status == 422:
        assert response.json()["errors"] == [{"turn": 1, "field": "question", "message": "Turn 1 needs a question."}]
    chain.refresh_from_db()
    assert chain.version == 1


def test_malformed_json_is_400_and_get_is_405(client, people, chain):
    client.force_login(people["annotator"])
    response = client.post(url(chain, "chain_save"), data="{not json", content_type="application/json")
    assert response.status_code == 400 and "not valid JSON" in response.json()["error"]
    assert client.get(url(chain, "chain_save")).status_code == 405


def test_undo_and_submit_endpoints(client, people, chain):
    client.force_login(people["annotator"])
    assert post(client, url(chain, "chain_undo"), {"version": 1}).json()["error"].startswith("There is no earlier")
    post(client, url(chain, "chain_save"), {"version": 1, "pairs": rows(chain)[:1]})
    response = post(client, url(chain, "chain_undo"), {"version": 2})
    assert response.status_code == 200
    assert response.json()["restoredVersion"] == 1 and len(response.json()["pairs"]) == 3
    assert post(client, url(chain, "chain_submit"), {"version": 2}).status_code == 409  # stale
    response = post(client, url(chain, "chain_submit"), {"version": 3})
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "submitted" and body["editable"] is False
    assert body["next"] == reverse("annotator:work_next", args=[chain.project.slug]) + f"?after=chain-{chain.pk}"
    # Submitted: no more saves.
    response = post(client, url(chain, "chain_save"), {"version": 3, "pairs": rows(chain)})
    assert response.status_code == 403


def test_revising_chain_shows_why_it_came_back(client, people, chain):
    QAChain.objects.filter(pk=chain.pk).update(status=ItemStatus.REVISING, author=people["annotator"])
    ReviewEvent.objects.create(
        project=chain.project,
        actor=people["examiner"],
        from_status="examining",
        to_status="flagged",
        reasons=["Wrong skill on turn 2"],
        comment="Turn 3 names the chef again.",
        **ReviewEvent.ref_for(chain),
    )
    client.force_login(people["reviser"])
    page = client.get(url(chain)).text
    assert "Wrong skill on turn 2" in page and "Turn 3 names the chef again." in page


def test_editor_query_count_does_not_grow_with_turns_clips_or_links(
    client, people, project, django_assert_num_queries, django_assert_max_num_queries
):
    client.force_login(people["annotator"])
    small = make_chain(project, turns=2)
    client.get(url(small))  # warm up
    # session, user, project, membership, chain (with clip, video, neighbours), turns with link
    # counts, clips, cues (file subtitles, then the transcript when there are none), comment density,
    # and the person's lease on the chain.
    with django_assert_num_queries(11) as few:
        client.get(url(small))
    video = factories.VideoFactory(project=project, duration_s=600.0)
    chains = [make_chain(project, video=video, index=i, turns=8) for i in range(12)]
    for i in range(11):
        cp = ChainPair.objects.create(
            project=project, video=video, before_index=i, chain_before=chains[i], chain_after=chains[i + 1]
        )
        for a, b in zip(chains[i].pairs.all(), chains[i + 1].pairs.all(), strict=True):
            factories.RelationFactory(chain_pair=cp, from_pair=a, to_pair=b)
    factories.SubtitleCueFactory.create_batch(30, video=video)
    factories.CommentFactory.create_batch(30, video=video)
    with django_assert_max_num_queries(len(few.captured_queries)):
        response = client.get(url(chains[5]))
    assert response.status_code == 200 and "2 links" in response.text


# --- work list and next item ---------------------------------------------------------------------


def test_work_list_shows_mine_first_and_links_to_the_editors(client, people, project):
    video = factories.VideoFactory(project=project, duration_s=600.0, name="kitchen")
    theirs = make_chain(project, video=video, index=0, status=ItemStatus.ANNOTATING, author=people["admin"])
    draft = make_chain(project, video=video, index=1)
    mine = make_chain(project, video=video, index=2, status=ItemStatus.ANNOTATING, author=people["annotator"])
    ChainPair.objects.create(project=project, video=video, before_index=1, chain_before=draft, chain_after=mine)
    client.force_login(people["annotator"])
    page = client.get(reverse("annotator:work", args=[project.slug])).text
    assert page.index(url(mine)) < page.index(url(draft))
    assert url(theirs) not in page  # someone else's work in progress is not on my to-do list
    assert reverse("annotator:work_next", args=[project.slug]) in page
    assert "Relations between adjacent chains" in page and "1 → 2" in page
    # By status: everything at that status, whoever it belongs to.
    page = client.get(reverse("annotator:work", args=[project.slug]) + "?status=annotating").text
    assert url(theirs) in page and url(mine) in page and url(draft) not in page


def test_work_list_query_count_is_constant(client, people, project, django_assert_num_queries):
    client.force_login(people["annotator"])
    target = reverse("annotator:work", args=[project.slug])
    make_chain(project)
    client.get(target)
    with django_assert_num_queries(10) as few:
        client.get(target)
    video = factories.VideoFactory(project=project, duration_s=900.0)
    chains = [make_chain(project, video=video, index=i, turns=2) for i in range(30)]
    for i in range(29):
        ChainPair.objects.create(
            project=project, video=video, before_index=i, chain_before=chains[i], chain_after=chains[i + 1]
        )
    factories.MCQFactory.create_batch(5, project=project)
    with django_assert_num_queries(len(few.captured_queries)):
        assert client.get(target).status_code == 200


def test_next_item_goes_in_video_and_clip_order_and_skips_leased_items(client, people, project):
    from datetime import timedelta

    from django.utils import timezone

    video = factories.VideoFactory(project=project, duration_s=600.0)
    c0 = make_chain(project, video=video, index=0, status=ItemStatus.SUBMITTED)
    c1 = make_chain(project, video=video, index=1)
    c2 = make_chain(project, video=video, index=2)
    c3 = make_chain(project, video=video, index=3)
    cp = ChainPair.objects.create(project=project, video=video, before_index=0, chain_before=c0, chain_after=c1)
    now = timezone.now()
    Assignment.objects.create(
        project=project,
        stage="annotating",
        assignee=people["admin"],
        leased_at=now,
        lease_expires_at=now + timedelta(minutes=30),
        **Assignment.ref_for(c2),
    )
    client.force_login(people["annotator"])
    nxt = reverse("annotator:work_next", args=[project.slug])
    assert client.get(nxt)["Location"] == url(c1)
    assert client.get(nxt + f"?after=chain-{c1.pk}")["Location"] == url(c3)  # c2 is leased to someone else
    assert client.get(nxt + f"?after=chain-{c3.pk}")["Location"] == url(c1)  # wraps round
    # My unfinished work comes first.
    QAChain.objects.filter(pk=c3.pk).update(status=ItemStatus.ANNOTATING, author=people["annotator"])
    assert client.get(nxt)["Location"] == url(c3)
    # Chains done: the chain pair is next.
    QAChain.objects.filter(pk__in=[c1.pk, c3.pk]).update(status=ItemStatus.SUBMITTED)
    assert client.get(nxt)["Location"] == reverse("annotator:pair_editor", args=[project.slug, cp.pk])
    ChainPair.objects.filter(pk=cp.pk).update(status=ItemStatus.SUBMITTED)
    response = client.get(nxt, follow=True)
    assert response.redirect_chain[-1][0] == reverse("annotator:work", args=[project.slug])
    assert "Nothing is waiting for you" in response.text


def test_next_item_for_an_examiner_is_nothing(client, people, project):
    make_chain(project)
    client.force_login(people["examiner"])
    response = client.get(reverse("annotator:work_next", args=[project.slug]))
    assert response["Location"] == reverse("annotator:work", args=[project.slug])


def test_work_lists_give_a_judge_returned_item_to_its_author_and_a_flagged_one_to_revisers(
    client, people, project
):
    from annotator.lifecycle import item_transition

    video = factories.VideoFactory(project=project, duration_s=600.0)
    judged = make_chain(project, video=video, index=0, status=ItemStatus.SUBMITTED, author=people["annotator"])
    item_transition(item=judged, to_status=ItemStatus.REVISING, reasons=["judge_below_threshold"])
    flagged = make_chain(project, video=video, index=1, status=ItemStatus.EXAMINING, author=people["annotator"])
    item_transition(item=flagged, to_status=ItemStatus.FLAGGED, actor=people["examiner"])
    item_transition(item=flagged, to_status=ItemStatus.REVISING, actor=people["reviser"])
    mcq = factories.MCQFactory(project=project, status=ItemStatus.SUBMITTED, author=people["annotator"])
    item_transition(item=mcq, to_status=ItemStatus.REVISING, reasons=["judge_below_threshold"])
    work, nxt = reverse("annotator:work", args=[project.slug]), reverse("annotator:work_next", args=[project.slug])

    client.force_login(people["annotator"])
    page = client.get(work).text
    assert url(judged) in page and url(flagged) not in page
    assert client.get(nxt)["Location"] == url(judged)
    assert [m.pk for m in client.get(work).context["result"].mcqs] == [mcq.pk]
    mcq_next = reverse("annotator:mcq_next", args=[project.slug])
    assert client.get(mcq_next)["Location"] == reverse("annotator:mcq_editor", args=[project.slug, mcq.pk])

    client.force_login(people["reviser"])
    page = client.get(work).text
    assert url(flagged) in page and url(judged) not in page
    assert client.get(nxt)["Location"] == url(flagged)
    assert client.get(work).context["result"].mcqs == []
    assert client.get(mcq_next)["Location"] == reverse("annotator:mcq_list", args=[project.slug])
