"""Relation editor through the real views: permissions, the JSON contract, 409, query counts."""

import json

import pytest
from django.urls import reverse

from annotator.models import ChainPair, ItemStatus, QAChain, QAPair, Relation
from tests import factories

pytestmark = pytest.mark.django_db


def build(project, *, turns=3, status=ItemStatus.DRAFT, before_index=0, video=None):
    video = video or factories.VideoFactory(project=project, duration_s=600.0)
    chains = []
    for i in (before_index, before_index + 1):
        chain = factories.QAChainFactory(clip=factories.ClipFactory(video=video, index=i), status=ItemStatus.ACCEPTED)
        QAPair.objects.bulk_create(
            QAPair(
                chain=chain, index=k, question=f"Clip {i} question {k}?", answer=f"Clip {i} answer {k}.", skill="ECA"
            )
            for k in range(turns)
        )
        chains.append(chain)
    cp = ChainPair.objects.create(
        project=project,
        video=video,
        before_index=before_index,
        chain_before=chains[0],
        chain_after=chains[1],
        status=status,
    )
    return cp


def first(cp, which):
    chain = cp.chain_before if which == "before" else cp.chain_after
    return chain.pairs.order_by("index").first()


def url(cp, name="pair_editor", link=None):
    args = [cp.project.slug, cp.pk] + ([link.pk] if link is not None else [])
    return reverse(f"annotator:{name}", args=args)


def post(client, target, body):
    return client.post(target, data=json.dumps(body), content_type="application/json")


@pytest.fixture
def cp(project):
    cp = build(project)
    Relation.objects.create(
        chain_pair=cp, from_pair=first(cp, "before"), to_pair=first(cp, "after"), relation_type="event", rationale="pan"
    )
    return cp


def config_of(page):
    return json.loads(page.split('id="pair-editor-config" type="application/json">')[1].split("</script>")[0])


def test_annotator_opens_the_editor_with_both_chains_links_and_guidelines(client, people, cp):
    client.force_login(people["annotator"])
    response = client.get(url(cp))
    assert response.status_code == 200
    page = response.text
    assert "Clip 0 question 1?" in page and "Clip 1 question 2?" in page and 'id="player-video"' in page
    config = config_of(page)
    state = config["state"]
    assert state["editable"] is True and state["openCandidates"] == 1
    assert state["relations"][0]["fromNumber"] == 1 and state["relations"][0]["typeLabel"] == "Events"
    event = next(t for t in config["types"] if t["code"] == "event")
    assert event["guideline"].startswith("What happens next")
    assert config["urls"]["link"].endswith(f"/pairs/{cp.pk}/links/0/")


def test_strangers_404_examiners_read_only(client, people, cp):
    link = cp.relations.get()
    client.force_login(people["outsider"])
    assert client.get(url(cp)).status_code == 404
    assert post(client, url(cp, "pair_link_decide", link), {"version": 1, "decision": "accepted"}).status_code == 404
    client.force_login(people["examiner"])
    assert config_of(client.get(url(cp)).text)["state"]["editable"] is False
    response = post(client, url(cp, "pair_link_decide", link), {"version": 1, "decision": "accepted"})
    assert response.status_code == 403
    link.refresh_from_db()
    assert link.decision == "candidate"


def test_decide_rewrite_add_and_submit(client, people, cp):
    client.force_login(people["annotator"])
    link = cp.relations.get()
    response = post(client, url(cp, "pair_link_rewrite", link), {"version": 1, "question": "RQ?", "answer": "RA."})
    assert response.status_code == 200 and response.json()["version"] == 2
    state = post(client, url(cp, "pair_link_decide", link), {"version": 2, "decision": "accepted"}).json()
    rel = state["relations"][0]
    assert rel["decision"] == "accepted" and rel["applied"] is True
    assert rel["originalQuestion"] == "Clip 1 question 0?" and state["after"]["pairs"][0]["question"] == "RQ?"

    before, after = cp.chain_before.pairs.get(index=2), cp.chain_after.pairs.get(index=1)
    response = post(
        client, url(cp, "pair_link_add"), {"version": 3, "from": before.pk, "to": after.pk, "type": "person"}
    )
    assert response.status_code == 200
    assert response.json()["created"] == Relation.objects.get(from_pair=before).pk
    response = post(
        client, url(cp, "pair_link_add"), {"version": 4, "from": before.pk, "to": after.pk, "type": "person"}
    )
    assert response.status_code == 422 and "already linked" in response.json()["error"]

    new = Relation.objects.get(from_pair=before)
    assert post(client, url(cp, "pair_link_type", new), {"version": 4, "type": "object"}).status_code == 200
    assert post(client, url(cp, "pair_link_remove", new), {"version": 5}).status_code == 200
    response = post(client, url(cp, "pair_submit"), {"version": 6})
    assert response.status_code == 200 and response.json()["status"] == "examining"
    assert response.json()["message"] == "Links submitted and passed on to examiners."
    assert response.json()["next"].endswith(f"?after=pair-{cp.pk}")


def test_stale_action_gets_409_with_their_state(client, people, cp):
    link = cp.relations.get()
    client.force_login(people["annotator"])
    post(client, url(cp, "pair_link_decide", link), {"version": 1, "decision": "accepted"})
    client.force_login(people["admin"])
    response = post(client, url(cp, "pair_link_decide", link), {"version": 1, "decision": "rejected"})
    assert response.status_code == 409
    body = response.json()
    assert body["conflict"] is True and body["theirs"]["version"] == 2
    assert body["theirs"]["relations"][0]["decision"] == "accepted" and body["yours"]["decision"] == "rejected"
    link.refresh_from_db()
    assert link.decision == "accepted"


def test_bad_input_gets_a_message(client, people, cp):
    client.force_login(people["annotator"])
    link = cp.relations.get()
    assert (
        post(client, url(cp, "pair_link_add"), {"version": 1, "from": "x", "to": 1, "type": "event"}).status_code == 400
    )
    response = post(client, url(cp, "pair_link_decide", link), {"version": 1, "decision": "perhaps"})
    assert response.status_code == 422 and "not a decision" in response.json()["error"]
    response = post(client, url(cp, "pair_submit"), {"version": 1})
    assert response.status_code == 422 and "still a candidate" in response.json()["error"]
    gone = reverse("annotator:pair_link_decide", args=[cp.project.slug, cp.pk, 999999])
    response = post(client, gone, {"version": 1, "decision": "accepted"})
    assert response.status_code == 404 and "no longer there" in response.json()["error"]
    cp.refresh_from_db()
    assert cp.version == 1


def test_editor_query_count_does_not_grow_with_links(client, people, project, django_assert_max_num_queries):
    client.force_login(people["annotator"])
    small = build(project, turns=1)
    client.get(url(small))
    with django_assert_max_num_queries(12) as few:
        client.get(url(small))
    big = build(project, turns=8, video=factories.VideoFactory(project=project, duration_s=600.0))
    for a, b in zip(big.chain_before.pairs.all(), big.chain_after.pairs.all(), strict=True):
        Relation.objects.create(chain_pair=big, from_pair=a, to_pair=b, relation_type="action")
    with django_assert_max_num_queries(len(few.captured_queries)):
        assert client.get(url(big)).status_code == 200


def test_submitted_pair_is_read_only(client, people, cp):
    ChainPair.objects.filter(pk=cp.pk).update(status=ItemStatus.SUBMITTED)
    QAChain.objects.filter(pk=cp.chain_after_id).update(status=ItemStatus.SUBMITTED)
    client.force_login(people["annotator"])
    assert "This set of links is submitted: it can be edited only while" in client.get(url(cp)).text
    link = cp.relations.get()
    assert post(client, url(cp, "pair_link_decide", link), {"version": 1, "decision": "accepted"}).status_code == 403
