"""Items through the API: QA chains, the relations of a chain pair, MCQs.

Create, read, change with a version (a stale one is a 409 naming the current version and who saved
it), submit; who may do what, as in the browser editors; lists a fixed number of queries.
"""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotator.chains import chain_save
from annotator.models import (
    MCQ,
    ItemStatus,
    Origin,
    QAChain,
    QAPair,
    ReferredMoment,
    Relation,
    RelationDecision,
    ReviewEvent,
)
from tests import factories

from .error_shape import assert_error

pytestmark = pytest.mark.django_db

S = ItemStatus
QUESTION = "When the chef lifts the pan, what colour is the sauce?"


def send(client, method, url, body=None):
    if body is None:
        return getattr(client, method)(url)
    return getattr(client, method)(url, data=json.dumps(body), content_type="application/json")


def base(project):
    return f"/api/projects/{project.slug}"


def turns(n=5, prefix="Q"):
    return [{"question": f"{prefix}{i}?", "answer": f"A{i}.", "skill": "ECA"} for i in range(n)]


@pytest.fixture
def video(project):
    return factories.VideoFactory(project=project, name="kitchen", duration_s=120.0, fps=25.0)


@pytest.fixture
def clip(video):
    return factories.ClipFactory(video=video, index=0)


@pytest.fixture
def chain(project, video):
    chain = factories.QAChainFactory(clip=factories.ClipFactory(video=video, index=3), status=S.ANNOTATING)
    QAPair.objects.bulk_create(
        QAPair(chain=chain, index=i, question=f"Q{i}?", answer=f"A{i}.", skill="ECA") for i in range(3)
    )
    return chain


# --- chains --------------------------------------------------------------------------------------------


def test_chain_create_read_update_and_submit(client, project, people, clip):
    client.force_login(people["annotator"])
    response = send(client, "post", f"{base(project)}/chains/", {"clip": clip.pk, "turns": turns(5)})
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["status"] == "annotating" and created["origin"] == "human" and created["version"] == 1
    assert created["author"] == people["annotator"].username
    assert created["clip"] == clip.pk and created["video"] == clip.video_id
    assert [t["question"] for t in created["turns"]] == [f"Q{i}?" for i in range(5)]
    assert created["warnings"] == []
    chain = QAChain.objects.get(pk=created["id"])
    assert ReviewEvent.objects.filter(qa_chain=chain, to_status="annotating", actor=people["annotator"]).exists()
    url = f"{base(project)}/chains/{chain.pk}/"

    read = client.get(url)
    assert read.status_code == 200 and read.json()["turns"] == created["turns"]

    first, *rest = created["turns"]
    new_turns = [{"id": t["id"], "question": t["question"], "answer": t["answer"], "skill": t["skill"]} for t in rest]
    new_turns.append({"question": "And then?", "answer": "It ends.", "skill": ""})
    response = send(client, "put", url, {"version": 1, "turns": new_turns})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["version"] == 2
    assert [t["question"] for t in body["turns"]] == ["Q1?", "Q2?", "Q3?", "Q4?", "And then?"]
    assert body["warnings"] == ["No skill tagged on turn 5."]
    assert not QAPair.objects.filter(pk=first["id"]).exists()

    # Someone saved since version 1: nothing is written, and the answer says who and which version.
    error = assert_error(send(client, "put", url, {"version": 1, "turns": turns(5)}), 409, "stale_version")
    assert error["details"] == {
        "current_version": 2,
        "your_version": 1,
        "saved_by": people["annotator"].username,
    }
    assert_error(send(client, "post", url + "submit/", {"version": 1}), 409, "stale_version")

    response = send(client, "post", url + "submit/", {"version": 2})
    assert response.status_code == 200, response.content
    submitted = response.json()
    # Chains go to the LLM judge when the project's gate covers them (the default).
    assert submitted["id"] == chain.pk and submitted["status"] == "submitted"
    assert submitted["outcome"] == "judge" and "LLM judge" in submitted["message"]
    # Submitted: no longer the annotator's to change.
    assert_error(send(client, "put", url, {"version": 2, "turns": new_turns}), 403, "permission_denied")


def test_chain_create_refusals(client, project, people, clip, chain):
    client.force_login(people["annotator"])
    url = f"{base(project)}/chains/"
    error = assert_error(send(client, "post", url, {"clip": chain.clip_id}), 409, "chain_exists")
    assert error["details"] == {"chain_id": chain.pk}
    other = factories.ClipFactory()  # a clip of another project
    error = assert_error(send(client, "post", url, {"clip": other.pk}), 400, "validation_error")
    assert "clip" in error["details"]
    error = assert_error(send(client, "post", url, {"clip": "one"}), 400, "validation_error")
    bad = [{"question": "Q?", "answer": "", "skill": "NOPE"}]
    error = assert_error(send(client, "post", url, {"clip": clip.pk, "turns": bad}), 422, "chain_invalid")
    assert {e["field"] for e in error["details"]["errors"]} == {"answer", "skill"}
    assert not QAChain.objects.filter(clip=clip).exists()


def test_chain_update_refuses_content_that_cannot_be_saved(client, project, people, chain):
    client.force_login(people["annotator"])
    url = f"{base(project)}/chains/{chain.pk}/"
    foreign = factories.QAPairFactory()  # a turn of another chain
    body = {"version": 1, "turns": [{"id": foreign.pk, "question": "Q?", "answer": "A.", "skill": ""}]}
    assert_error(send(client, "put", url, body), 422, "chain_invalid")
    assert_error(send(client, "put", url, {"turns": []}), 400, "validation_error")  # no version
    assert_error(send(client, "put", url, {"version": "x", "turns": []}), 400, "validation_error")
    chain.refresh_from_db()
    assert chain.version == 1 and chain.pairs.count() == 3


def test_chain_list_filters(client, project, people, video, chain):
    other_video = factories.VideoFactory(project=project)
    submitted = factories.QAChainFactory(clip=factories.ClipFactory(video=other_video, index=0), status=S.SUBMITTED)
    factories.QAChainFactory()  # another project's
    client.force_login(people["examiner"])
    url = f"{base(project)}/chains/"

    def ids(query=""):
        response = client.get(url + query)
        assert response.status_code == 200, response.content
        return [row["id"] for row in response.json()["results"]]

    assert sorted(ids()) == sorted([chain.pk, submitted.pk])
    assert ids("?status=submitted") == [submitted.pk]
    assert ids(f"?video={video.pk}") == [chain.pk]
    assert ids(f"?clip={chain.clip_id}") == [chain.pk]
    rows = client.get(url).json()["results"]
    assert [t["question"] for t in next(r for r in rows if r["id"] == chain.pk)["turns"]] == ["Q0?", "Q1?", "Q2?"]
    for query in ("?clip=abc", "?video=1.5", "?status=nope"):
        assert_error(client.get(url + query), 400, "validation_error")


def _count(client, url) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, response.content
    return len(queries)


def test_chain_list_is_a_fixed_number_of_queries(client, project, people, video, chain):
    client.force_login(people["examiner"])
    url = f"{base(project)}/chains/"
    few = _count(client, url)
    for index in range(4, 10):
        more = factories.QAChainFactory(clip=factories.ClipFactory(video=video, index=index), author=people["admin"])
        factories.QAPairFactory(chain=more, index=0)
        factories.QAPairFactory(chain=more, index=1)
    assert _count(client, url) == few
    # session, user, project, roles, count, page (with clip and author), turns
    assert few == 7


# --- chains: who may do what ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "read", "write"),
    [("annotator", 200, 200), ("admin", 200, 200), ("examiner", 200, 403), ("reviser", 200, 403)],
)
def test_chain_rights_by_role(client, project, people, clip, chain, role, read, write):
    client.force_login(people[role])
    url = f"{base(project)}/chains/{chain.pk}/"
    assert client.get(url).status_code == read
    assert client.get(f"{base(project)}/chains/").status_code == read
    body = {"version": 1, "turns": turns(3)}
    assert send(client, "put", url, body).status_code == write
    created = send(client, "post", f"{base(project)}/chains/", {"clip": clip.pk, "turns": turns(1)})
    assert created.status_code == (201 if write == 200 else 403)
    if write == 403:
        assert_error(send(client, "post", url + "submit/", {"version": 1}), 403, "permission_denied")


def test_chain_strangers_get_404_and_anonymous_401(client, project, people, clip, chain):
    url = f"{base(project)}/chains/{chain.pk}/"
    assert_error(client.get(url), 401, "not_authenticated")
    assert_error(send(client, "put", url, {"version": 1, "turns": []}), 401, "not_authenticated")
    client.force_login(people["outsider"])
    for response in (
        client.get(url),
        client.get(f"{base(project)}/chains/"),
        send(client, "put", url, {"version": 1, "turns": []}),
        send(client, "post", url + "submit/", {"version": 1}),
        send(client, "post", f"{base(project)}/chains/", {"clip": clip.pk}),
    ):
        assert_error(response, 404, "not_found")


def test_a_chain_in_revision_after_a_flag_is_the_revisers(client, project, people, chain):
    QAChain.objects.filter(pk=chain.pk).update(status=S.REVISING, author=people["annotator"])
    url = f"{base(project)}/chains/{chain.pk}/"
    body = {"version": 1, "turns": turns(2)}
    client.force_login(people["annotator"])
    assert_error(send(client, "put", url, body), 403, "permission_denied")
    client.force_login(people["reviser"])
    assert send(client, "put", url, body).status_code == 200


def test_token_authentication_works_for_items(client, project, people, chain, token_for):
    response = client.get(f"{base(project)}/chains/{chain.pk}/", headers=token_for(people["annotator"]))
    assert response.status_code == 200


# --- relations of a chain pair ------------------------------------------------------------------------------


@pytest.fixture
def cp(project, video):
    before = factories.QAChainFactory(clip=factories.ClipFactory(video=video, index=0), status=S.ACCEPTED)
    cp = factories.ChainPairFactory(chain_before=before, status=S.ANNOTATING)
    QAChain.objects.filter(pk=cp.chain_after_id).update(status=S.ACCEPTED)
    for c in (cp.chain_before, cp.chain_after):
        QAPair.objects.bulk_create(
            QAPair(chain=c, index=i, question=f"{c.pk} Q{i}?", answer=f"{c.pk} A{i}.", skill="ECA") for i in range(2)
        )
    return cp


def ends(cp, i=0, j=0):
    return cp.chain_before.pairs.get(index=i), cp.chain_after.pairs.get(index=j)


def test_relations_add_change_remove_and_submit(client, project, people, cp):
    client.force_login(people["annotator"])
    url = f"{base(project)}/chain-pairs/{cp.pk}/relations/"
    a, b = ends(cp, 0, 1)
    body = {"version": 1, "from_pair": a.pk, "to_pair": b.pk, "relation_type": "action", "rationale": "same pan"}
    response = send(client, "post", url, body)
    assert response.status_code == 201, response.content
    added = response.json()
    assert added["chain_pair"]["version"] == 2 and added["chain_pair"]["id"] == cp.pk
    relation = added["relation"]
    assert relation["decision"] == "accepted" and relation["origin"] == "human"
    assert (relation["from_turn"], relation["to_turn"]) == (1, 2)

    listed = client.get(url).json()
    assert listed["chain_pair"]["version"] == 2 and [r["id"] for r in listed["relations"]] == [relation["id"]]

    link = f"{url}{relation['id']}/"
    rewrite = {"version": 2, "rewritten_question": "After the pan, what?", "rewritten_answer": "Sauce."}
    response = send(client, "patch", link, rewrite)
    assert response.status_code == 200, response.content
    assert response.json()["chain_pair"]["version"] == 3
    b.refresh_from_db()
    assert (b.question, b.answer) == ("After the pan, what?", "Sauce.")  # accepted: the rewrite applies
    assert response.json()["relation"]["original_question"] == f"{cp.chain_after_id} Q1?"

    error = assert_error(send(client, "patch", link, {"version": 2, "decision": "rejected"}), 409, "stale_version")
    # Link writes move the chain pair's version without a history row of it: who is not always known.
    assert error["details"]["current_version"] == 3 and error["details"]["your_version"] == 2
    assert isinstance(error["details"]["saved_by"], str)
    assert_error(send(client, "patch", link, {"version": 3, "relation_type": "bogus"}), 422, "relation_invalid")
    assert_error(send(client, "patch", link, {"version": 3}), 400, "validation_error")
    assert_error(send(client, "patch", link, {"version": 3, "rewritten_question": "x"}), 400, "validation_error")

    # Two changes at once: two versions, all or nothing.
    response = send(client, "patch", link, {"version": 3, "relation_type": "event", "decision": "rejected"})
    assert response.status_code == 200, response.content
    assert response.json()["chain_pair"]["version"] == 5
    assert response.json()["relation"]["relation_type"] == "event"
    b.refresh_from_db()
    assert b.question == f"{cp.chain_after_id} Q1?"  # rejected: the original is back

    assert_error(client.delete(link), 400, "validation_error")
    assert_error(client.delete(link + "?version=4"), 409, "stale_version")
    response = client.delete(link + "?version=5")
    assert response.status_code == 200 and response.json()["chain_pair"]["version"] == 6
    assert not Relation.objects.filter(pk=relation["id"]).exists()
    assert_error(client.delete(link + "?version=6"), 404, "not_found")

    assert_error(
        send(client, "post", f"{base(project)}/chain-pairs/{cp.pk}/submit/", {"version": 5}), 409, "stale_version"
    )
    response = send(client, "post", f"{base(project)}/chain-pairs/{cp.pk}/submit/", {"version": 6})
    assert response.status_code == 200, response.content
    assert response.json()["id"] == cp.pk and response.json()["status"] in {"submitted", "examining"}


def test_machine_candidates_are_decided_not_removed(client, project, people, cp):
    a, b = ends(cp)
    candidate = Relation.objects.create(chain_pair=cp, from_pair=a, to_pair=b, relation_type="action")
    assert candidate.origin == Origin.MACHINE and candidate.decision == RelationDecision.CANDIDATE
    client.force_login(people["annotator"])
    link = f"{base(project)}/chain-pairs/{cp.pk}/relations/{candidate.pk}/"
    submit = f"{base(project)}/chain-pairs/{cp.pk}/submit/"
    error = assert_error(send(client, "post", submit, {"version": 1}), 422, "relation_invalid")
    assert "candidate" in error["message"]
    assert_error(client.delete(link + "?version=1"), 422, "relation_invalid")
    assert send(client, "patch", link, {"version": 1, "decision": "accepted"}).status_code == 200
    assert send(client, "post", submit, {"version": 2}).status_code == 200


@pytest.mark.parametrize(("role", "write"), [("annotator", 201), ("admin", 201), ("examiner", 403), ("reviser", 403)])
def test_relation_rights_by_role(client, project, people, cp, role, write):
    client.force_login(people[role])
    url = f"{base(project)}/chain-pairs/{cp.pk}/relations/"
    assert client.get(url).status_code == 200
    a, b = ends(cp)
    body = {"version": 1, "from_pair": a.pk, "to_pair": b.pk, "relation_type": "action"}
    assert send(client, "post", url, body).status_code == write


def test_relation_strangers_get_404_and_anonymous_401(client, project, people, cp):
    a, b = ends(cp)
    relation = Relation.objects.create(chain_pair=cp, from_pair=a, to_pair=b, relation_type="action")
    url = f"{base(project)}/chain-pairs/{cp.pk}/relations/"
    assert_error(client.get(url), 401, "not_authenticated")
    client.force_login(people["outsider"])
    assert_error(client.get(url), 404, "not_found")
    assert_error(
        send(client, "patch", f"{url}{relation.pk}/", {"version": 1, "decision": "rejected"}), 404, "not_found"
    )
    # A relation of another chain pair is not found through this one.
    client.force_login(people["annotator"])
    other = factories.RelationFactory()
    assert_error(send(client, "patch", f"{url}{other.pk}/", {"version": 1, "decision": "rejected"}), 404, "not_found")


# --- MCQs -----------------------------------------------------------------------------------------------


def content(video, **overrides) -> dict:
    body = {
        "question": QUESTION,
        "referring_start": 0,
        "referring_end": 27,
        "options": ["Red", "Green", "Brown", "White"],
        "correct_index": 0,
        "category": "E2O",
        "moments": [{"video_id": video.pk, "time_s": 12.5}],
    }
    return body | overrides


def test_mcq_create_read_update_and_submit(client, project, people, video):
    client.force_login(people["annotator"])
    url = f"{base(project)}/mcqs/"
    response = send(client, "post", url, {"videos": [{"video_id": video.pk, "role": "main"}]})
    assert response.status_code == 201, response.content
    empty = response.json()
    assert empty["status"] == "annotating" and empty["version"] == 1 and empty["origin"] == "human"
    assert empty["videos"] == [{"video_id": video.pk, "role": "main", "order": 0}]
    assert {b["code"] for b in empty["blockers"]} >= {"question_empty", "no_correct"}
    detail = f"{url}{empty['id']}/"

    error = assert_error(send(client, "post", detail + "submit/", {"version": 1}), 422, "not_ready")
    assert error["details"]["blockers"]

    response = send(client, "patch", detail, {"version": 1, **content(video)})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["version"] == 2 and body["question"] == QUESTION and body["blockers"] == []
    assert body["referring_query"] == QUESTION[:27] and body["level"]
    assert body["moments"] == [{"video_id": video.pk, "time_s": 12.5, "frame_index": 312}]

    # A change of one field keeps the others.
    response = send(client, "patch", detail, {"version": 2, "correct_index": 2})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["version"] == 3 and body["correct_index"] == 2 and body["options"] == ["Red", "Green", "Brown", "White"]
    assert body["moments"] and body["question"] == QUESTION

    error = assert_error(send(client, "patch", detail, {"version": 2, "correct_index": 1}), 409, "stale_version")
    assert error["details"] == {"current_version": 3, "your_version": 2, "saved_by": people["annotator"].username}
    error = assert_error(send(client, "patch", detail, {"version": 3, "correct_index": 9}), 422, "mcq_invalid")
    assert error["details"]["errors"][0]["field"] == "correct_index"
    assert client.get(detail).json()["version"] == 3

    assert_error(send(client, "post", detail + "submit/", {"version": 2}), 409, "stale_version")
    response = send(client, "post", detail + "submit/", {"version": 3})
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "examining" and response.json()["outcome"] == "examining"
    assert_error(send(client, "patch", detail, {"version": 3, "correct_index": 1}), 403, "permission_denied")


def test_mcq_create_with_content_in_one_step(client, project, people, video):
    client.force_login(people["annotator"])
    url = f"{base(project)}/mcqs/"
    body = {"videos": [{"video_id": video.pk}], **content(video)}
    response = send(client, "post", url, body)
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["version"] == 2 and created["blockers"] == [] and created["author"] == people["annotator"].username
    assert created["question"] == QUESTION

    # Refused content creates nothing.
    before = MCQ.objects.count()
    bad = {"videos": [{"video_id": video.pk}], **content(video, category="NOPE")}
    assert_error(send(client, "post", url, bad), 422, "mcq_invalid")
    foreign = factories.VideoFactory()
    error = assert_error(send(client, "post", url, {"videos": [{"video_id": foreign.pk}]}), 400, "validation_error")
    assert "videos" in error["details"]
    assert_error(send(client, "post", url, {"videos": []}), 422, "mcq_invalid")
    assert MCQ.objects.count() == before


def test_mcq_list_filters_and_queries(client, project, people, video):
    other_video = factories.VideoFactory(project=project)
    first = factories.MCQFactory(project=project, video=video, status=S.ANNOTATING)
    second = factories.MCQFactory(project=project, video=other_video, status=S.EXAMINING, category="O2E")
    factories.MCQFactory(video=factories.VideoFactory())  # another project's
    client.force_login(people["reviser"])
    url = f"{base(project)}/mcqs/"

    def ids(query=""):
        response = client.get(url + query)
        assert response.status_code == 200, response.content
        return [row["id"] for row in response.json()["results"]]

    assert ids() == [first.pk, second.pk]
    assert ids("?status=examining") == [second.pk]
    assert ids("?category=O2E") == [second.pk]
    assert ids(f"?video={video.pk}") == [first.pk]
    for query in ("?video=abc", "?status=nope"):
        assert_error(client.get(url + query), 400, "validation_error")

    few = _count(client, url)
    for _ in range(5):
        mcq = factories.MCQFactory(project=project, video=video, author=people["admin"])
        ReferredMoment.objects.create(mcq=mcq, video=video, time_s=5.0, frame_index=125)
    assert _count(client, url) == few
    # session, user, project, roles, count, page (with author), videos, moments
    assert few == 8


@pytest.mark.parametrize(("role", "write"), [("annotator", 200), ("admin", 200), ("examiner", 403), ("reviser", 403)])
def test_mcq_rights_by_role(client, project, people, video, role, write):
    mcq = factories.MCQFactory(project=project, video=video, author=people["annotator"])
    client.force_login(people[role])
    url = f"{base(project)}/mcqs/{mcq.pk}/"
    assert client.get(url).status_code == 200
    assert send(client, "patch", url, {"version": 1, "correct_index": 1}).status_code == write
    created = send(client, "post", f"{base(project)}/mcqs/", {"videos": [{"video_id": video.pk}]})
    assert created.status_code == (201 if write == 200 else 403)


def test_mcq_strangers_get_404_and_anonymous_401(client, project, people, video):
    mcq = factories.MCQFactory(project=project, video=video)
    url = f"{base(project)}/mcqs/{mcq.pk}/"
    assert_error(client.get(url), 401, "not_authenticated")
    assert_error(send(client, "post", url + "submit/", {"version": 1}), 401, "not_authenticated")
    client.force_login(people["outsider"])
    for response in (
        client.get(url),
        client.get(f"{base(project)}/mcqs/"),
        send(client, "patch", url, {"version": 1}),
        send(client, "post", url + "submit/", {"version": 1}),
        send(client, "post", f"{base(project)}/mcqs/", {"videos": [{"video_id": video.pk}]}),
    ):
        assert_error(response, 404, "not_found")


def test_mcq_of_another_project_is_not_found(client, project, people):
    other = factories.MCQFactory(video=factories.VideoFactory())
    client.force_login(people["admin"])
    assert_error(client.get(f"{base(project)}/mcqs/{other.pk}/"), 404, "not_found")


# --- the schema documents every operation ---------------------------------------------------------------


def test_item_operations_are_documented_with_their_errors():
    from drf_spectacular.generators import SchemaGenerator

    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]
    writes = {
        ("/api/projects/{slug}/chains/", "post"),
        ("/api/projects/{slug}/chains/{chain_id}/", "put"),
        ("/api/projects/{slug}/chains/{chain_id}/submit/", "post"),
        ("/api/projects/{slug}/chain-pairs/{chain_pair_id}/relations/", "post"),
        ("/api/projects/{slug}/chain-pairs/{chain_pair_id}/relations/{relation_id}/", "patch"),
        ("/api/projects/{slug}/chain-pairs/{chain_pair_id}/relations/{relation_id}/", "delete"),
        ("/api/projects/{slug}/chain-pairs/{chain_pair_id}/submit/", "post"),
        ("/api/projects/{slug}/mcqs/{mcq_id}/", "patch"),
        ("/api/projects/{slug}/mcqs/{mcq_id}/submit/", "post"),
    }
    for path, method in writes:
        responses = paths[path][method]["responses"]
        assert {"400", "401", "403", "404", "409", "422"} <= set(responses), (path, method)
        for name, parameter in ((p["name"], p) for p in paths[path][method]["parameters"] if p["in"] == "path"):
            if name != "slug":
                assert parameter["schema"]["type"] == "integer", (path, name)
    assert {"400", "401", "403", "404", "422"} <= set(paths["/api/projects/{slug}/mcqs/"]["post"]["responses"])
    for path in ("/api/projects/{slug}/chains/", "/api/projects/{slug}/mcqs/"):
        params = {p["name"]: p["schema"]["type"] for p in paths[path]["get"]["parameters"]}
        assert params["video"] == "integer" and params["page"] == "integer"


def test_a_saved_chain_reports_who_saved_it(client, project, people, chain):
    """The stale answer names whoever saved last, here the admin through the browser's own service."""
    chain_save(chain=chain, expected_version=1, pairs=turns(2), user=people["admin"])
    client.force_login(people["annotator"])
    response = send(client, "put", f"{base(project)}/chains/{chain.pk}/", {"version": 1, "turns": turns(2)})
    error = assert_error(response, 409, "stale_version")
    assert error["details"]["saved_by"] == people["admin"].username


def test_json_bodies_take_exactly_the_documented_types(client, project, people, chain, cp, video):
    """A string where the schema says integer or number, a number where it says string: 400, nothing written."""
    client.force_login(people["annotator"])
    chain_url = f"{base(project)}/chains/{chain.pk}/"
    assert_error(send(client, "put", chain_url, {"version": "1", "turns": []}), 400, "validation_error")
    bad_turn = {"question": 5, "answer": "A.", "skill": ""}
    assert_error(send(client, "put", chain_url, {"version": 1, "turns": [bad_turn]}), 400, "validation_error")
    a, b = ends(cp)
    link = {"version": 1, "from_pair": a.pk, "to_pair": b.pk, "relation_type": "action", "rationale": 5}
    assert_error(send(client, "post", f"{base(project)}/chain-pairs/{cp.pk}/relations/", link), 400, "validation_error")
    moment = {"videos": [{"video_id": video.pk}], "moments": [{"video_id": video.pk, "time_s": "12.5"}]}
    assert_error(send(client, "post", f"{base(project)}/mcqs/", moment), 400, "validation_error")
    chain.refresh_from_db()
    cp.refresh_from_db()
    assert (chain.version, cp.version, MCQ.objects.count()) == (1, 1, 0)
