"""The examiner's and the reviser's screens (reviewer.review_views)."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from annotator.lifecycle import item_history
from annotator.models import ItemStatus, ReferredMoment, ReviewEvent
from reviewer.examination import item_reopen, verdict_submit
from reviewer.models import AssignmentStatus, ExamVerdict
from reviewer.queues import queue_claim_next
from tests import factories

pytestmark = pytest.mark.django_db

S = ItemStatus
MCQ_CHECKS = ["category_right", "referring_query_marked", "moments_stamped", "options_plausible", "one_correct"]
MCQ_CHECKS += ["needs_video", "other"]


def _submitted(item, minutes_ago: int = 5):
    type(item).objects.filter(pk=item.pk).update(submitted_at=timezone.now() - timedelta(minutes=minutes_ago))
    item.refresh_from_db()
    return item


def _mcq(project, people, status=S.SCORED, minutes_ago=5, **kwargs):
    kwargs.setdefault("author", people["annotator"])
    mcq = factories.MCQFactory(project=project, status=status, video=factories.VideoFactory(project=project), **kwargs)
    return _submitted(mcq, minutes_ago)


def _chain(project, people, status=S.SCORED):
    chain = factories.QAChainFactory(clip__video__project=project, status=status, author=people["annotator"])
    for i, (q, a) in enumerate([("Who enters?", "A chef."), ("What does she hold?", "A red pan.")]):
        factories.QAPairFactory(chain=chain, index=i, question=q, answer=a)
    return _submitted(chain)


def _pair(project, people, status=S.SCORED):
    pair = factories.ChainPairFactory(
        chain_before__clip__video__project=project, status=status, author=people["annotator"]
    )
    factories.RelationFactory(
        chain_pair=pair,
        decision="accepted",
        original_question="What is on the stove?",
        rewritten_question="What did she put on the stove she lit before?",
        rewritten_answer="The red pan.",
    )
    return _submitted(pair)


def _url(name, project, *args):
    return reverse(f"reviewer:{name}", args=[project.slug, *args])


def _messages(response) -> list[str]:
    return [str(m) for m in response.context["messages"]] if response.context else []


def _verdict(client, project, kind, item, *, decision, ok=MCQ_CHECKS, comment="", version=None, then_next="1", **extra):
    data = {"decision": decision, "ok": list(ok), "comment": comment, "version": version or item.version}
    if then_next:
        data["then_next"] = then_next
    return client.post(_url("examine_verdict", project, kind, item.pk), data, **extra)


# --- who sees what ------------------------------------------------------------------------------------


def test_pages_by_role(client, project, people):
    mcq = _mcq(project, people)
    pages = [_url("examine_home", project), _url("examine_item", project, "mcq", mcq.pk), _url("revise_list", project)]
    assert client.get(pages[0])["Location"].startswith("/accounts/login/")
    expected = {
        "outsider": [404, 404, 404],
        "annotator": [403, 403, 403],
        "examiner": [200, 200, 403],
        "reviser": [403, 403, 200],
        "admin": [200, 200, 200],
    }
    for who, codes in expected.items():
        client.force_login(people[who])
        assert [client.get(url).status_code for url in pages] == codes, who
    client.force_login(people["examiner"])
    other = factories.MCQFactory(video=factories.VideoFactory(), status=S.SCORED)  # another project's
    assert client.get(_url("examine_item", project, "mcq", other.pk)).status_code == 404
    assert client.get(_url("examine_item", project, "banana", mcq.pk)).status_code == 404
    assert client.get(_url("examine_item", project, "qa_chain", 999999)).status_code == 404
    # POSTs authorise too: a member without the role is refused, a stranger does not see the project.
    client.force_login(people["reviser"])
    assert _verdict(client, project, "mcq", mcq, decision="pass").status_code == 403
    assert client.post(_url("examine_next", project)).status_code == 403
    client.force_login(people["outsider"])
    assert client.post(_url("revise_start", project, "mcq", mcq.pk)).status_code == 404
    client.force_login(people["examiner"])
    assert client.post(_url("examine_reopen", project, "mcq", mcq.pk), {"comment": "x"}).status_code == 403
    assert client.post(_url("revise_next", project)).status_code == 403


def test_project_home_links_examine_and_revise_for_their_roles(client, project, people):
    home = reverse("studio:project_home", args=[project.slug])
    for who, examine, revise in [("examiner", True, False), ("reviser", False, True), ("annotator", False, False)]:
        client.force_login(people[who])
        page = client.get(home).text
        assert (_url("examine_home", project) in page) is examine, who
        assert (_url("revise_list", project) in page) is revise, who
    client.force_login(people["admin"])
    page = client.get(home).text
    assert 'data-key="x"' in page and 'data-key="r"' in page


# --- the examiner's page ---------------------------------------------------------------------------------


def test_an_mcq_beside_its_video_with_the_referring_query_moments_and_keys(client, project, people):
    mcq = _mcq(project, people)
    video = mcq.mcq_videos.get().video
    ReferredMoment.objects.create(mcq=mcq, video=video, time_s=12.5, frame_index=312, order=0)
    client.force_login(people["examiner"])
    response = client.get(_url("examine_item", project, "mcq", mcq.pk))
    page = response.text
    assert '<mark class="referring" title="Referring query">When the chef lifts the pan</mark>' in page
    assert "✓ correct" in page and page.count('class="correct"') == 1
    assert 'data-seek="12.5"' in page and "frame 312" in page
    assert 'id="player-video"' in page and f'data-video-id="{video.pk}"' in page
    for n, code in enumerate(MCQ_CHECKS, start=1):
        assert f'value="{code}" data-check="{n}" checked' in page
    for key in ("p", "f", "n", "c", "h"):
        assert f'data-key="{key}"' in page
    assert "js/examine.js" in page and f'name="version" value="{mcq.version}"' in page
    assert _url("item_history", project, "mcq", mcq.pk) in page
    assert "This is the item&#x27;s first submission." in page or "first submission" in page
    assert "data-lease" not in page and "js/lease.js" not in page  # no lease held


def test_a_chain_and_a_chain_pair_show_their_turns_relations_and_loops(client, project, people):
    chain, pair = _chain(project, people), _pair(project, people)
    client.force_login(people["examiner"])
    page = client.get(_url("examine_item", project, "qa_chain", chain.pk)).text
    assert "What does she hold?" in page and 'id="loop-clip"' in page
    assert "Chain is coherent" not in page and "later turns use pronouns" in page  # the chain's checklist
    assert '"loops": [{"label": "Clip 0", "start": 0.0, "end": 10.0}]' in page
    page = client.get(_url("examine_item", project, "chain_pair", pair.pk)).text
    assert "What did she put on the stove she lit before?" in page and "What is on the stove?" in page
    assert "Each accepted relation really needs the earlier clip" in page
    assert 'data-loop="1"' in page and 'data-loop="2"' in page


def test_the_lease_heartbeat_element_when_the_examiner_holds_a_lease(client, project, people):
    queue = factories.ReviewQueueFactory(project=project, members=[people["examiner"]], lease_seconds=600)
    mcq = _mcq(project, people)
    lease = queue_claim_next(queue=queue, user=people["examiner"])
    client.force_login(people["examiner"])
    page = client.get(_url("examine_item", project, "mcq", mcq.pk)).text
    assert f'data-heartbeat-url="/api/projects/{project.slug}/assignments/{lease.pk}/heartbeat/"' in page
    assert 'data-lease-seconds="600"' in page and "js/lease.js" in page


def test_the_page_shows_the_diff_against_the_previous_submission_judge_and_verdicts(client, project, people):
    mcq = _mcq(project, people)
    mcq.question, mcq.version = "When the chef lifts the pan, what colour is the lid?", 2
    mcq.save()
    for version in (1, 2):
        ReviewEvent.objects.create(
            project=project, mcq=mcq, item_kind="mcq", from_status=S.ANNOTATING, to_status=S.SUBMITTED,
            item_version=version,
        )  # fmt: skip
    factories.QualityScoreFactory(item=mcq, overall=93, comments="Options are balanced.", dimensions={"accuracy": 91})
    other = factories.UserFactory(username="ex2")
    factories.MembershipFactory(project=project, user=other, role="examiner")
    queue = factories.ReviewQueueFactory(project=project, overlap=2, members=[other, people["examiner"]])
    queue_claim_next(queue=queue, user=other)
    verdict_submit(item=mcq, examiner=other, passed=False, reasons=["one_correct"], comment="B works too.")
    client.force_login(people["examiner"])
    page = client.get(_url("examine_item", project, "mcq", mcq.pk)).text
    assert "Since the previous submission (version 1): question changed" in page
    assert "<ins>lid</ins>" in page or "<ins> lid</ins>" in page
    assert "Options are balanced." in page and "93" in page
    assert "B works too." in page and "Exactly one option is correct" in page and "ex2" in page


def test_the_author_reads_the_page_but_has_no_verdict_form(client, project, people):
    mcq = _mcq(project, people, author=people["admin"])
    client.force_login(people["admin"])
    page = client.get(_url("examine_item", project, "mcq", mcq.pk)).text
    assert "You wrote this item: someone else examines it." in page and 'id="verdict-form"' not in page
    response = _verdict(client, project, "mcq", mcq, decision="pass")
    assert response.status_code == 403 and "You wrote this item" in response.text
    # Refused before the form is read: an incomplete form gets the same answer, not a form error.
    assert _verdict(client, project, "mcq", mcq, decision="").status_code == 403
    assert not ExamVerdict.objects.exists()


# --- verdicts ---------------------------------------------------------------------------------------------------


def test_a_pass_accepts_and_opens_the_next_item(client, project, people):
    first = _mcq(project, people, minutes_ago=30)
    second = _mcq(project, people, minutes_ago=10)
    client.force_login(people["examiner"])
    response = _verdict(client, project, "mcq", first, decision="pass")
    assert response.status_code == 302 and response["Location"] == _url("examine_item", project, "mcq", second.pk)
    first.refresh_from_db()
    assert first.status == S.ACCEPTED
    verdict = ExamVerdict.objects.get()
    assert verdict.examiner == people["examiner"] and verdict.seconds_spent is None  # no page-open time sent
    page = client.get(response["Location"])
    assert "Passed: the item is accepted." in _messages(page)
    # The last one: back home, saying so.
    response = _verdict(client, project, "mcq", second, decision="pass")
    assert response["Location"] == _url("examine_home", project)
    assert _messages(client.get(response["Location"])) == [
        "Passed: the item is accepted.",
        "Nothing else is waiting for you to examine.",
    ]


def test_a_flag_takes_the_unticked_checks_as_reasons(client, project, people):
    mcq = _mcq(project, people)
    client.force_login(people["examiner"])
    ok = [c for c in MCQ_CHECKS if c not in ("category_right", "other")]
    response = _verdict(
        client, project, "mcq", mcq, decision="flag", ok=ok, comment="It is E2O, and option D is odd.", then_next=""
    )
    assert response.status_code == 302 and response["Location"] == _url("examine_home", project)
    mcq.refresh_from_db()
    assert mcq.status == S.FLAGGED
    event = item_history(item=mcq)[-1]
    assert event.reasons == ["category_right", "other"] and event.comment == "It is E2O, and option D is odd."
    assert ExamVerdict.objects.get().checklist["category_right"] is False


def test_refused_verdicts_keep_the_ticks_and_the_comment(client, project, people):
    mcq = _mcq(project, people)
    client.force_login(people["examiner"])
    response = _verdict(client, project, "mcq", mcq, decision="flag", comment="Looks off to me.")
    assert response.status_code == 422
    assert "A flag needs at least one reason" in response.text and "Looks off to me.</textarea>" in response.text
    unticked = [c for c in MCQ_CHECKS if c != "options_plausible"]
    response = _verdict(client, project, "mcq", mcq, decision="pass", ok=unticked)
    assert response.status_code == 422 and "A pass cannot leave checks failing" in response.text
    assert 'value="options_plausible" data-check="4">' in response.text  # still unticked
    response = _verdict(client, project, "mcq", mcq, decision="")
    assert response.status_code == 422 and "Choose pass (p) or flag (f)." in response.text
    mcq.refresh_from_db()
    assert mcq.status == S.SCORED and not ExamVerdict.objects.exists()


def test_a_stale_view_says_what_changed_and_keeps_the_input(client, project, people):
    mcq = _mcq(project, people)
    client.force_login(people["examiner"])
    type(mcq).objects.filter(pk=mcq.pk).update(version=2)
    response = _verdict(client, project, "mcq", mcq, decision="flag", ok=MCQ_CHECKS[1:], comment="Category?", version=1)
    assert response.status_code == 409
    assert "changed to version 2 after you opened version 1" in response.text
    assert "Your ticks and comment are kept below." in response.text and "Category?</textarea>" in response.text
    assert 'value="category_right" data-check="1">' in response.text
    assert 'name="version" value="2"' in response.text  # deciding again is about the new version
    assert not ExamVerdict.objects.exists()


def test_a_decided_item_and_a_second_verdict_are_refused_clearly(client, project, people):
    mcq = _mcq(project, people)
    client.force_login(people["examiner"])
    _verdict(client, project, "mcq", mcq, decision="pass")
    response = _verdict(client, project, "mcq", mcq, decision="pass", then_next="")
    assert response.status_code == 409 and "it has been decided already" in response.text
    assert "This item has been decided: it is accepted." in response.text and ExamVerdict.objects.count() == 1


def test_htmx_verdicts_redirect_or_swap_the_panel(client, project, people):
    mcq = _mcq(project, people)
    client.force_login(people["examiner"])
    response = _verdict(client, project, "mcq", mcq, decision="flag", HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and response["HX-Retarget"] == "#verdict-panel"
    assert response.text.lstrip().startswith('<section id="verdict-panel"') and "at least one reason" in response.text
    response = _verdict(client, project, "mcq", mcq, decision="pass", then_next="", HTTP_HX_REQUEST="true")
    assert response["HX-Redirect"] == _url("examine_home", project)


def test_the_verdict_completes_the_lease_and_counts_the_time(client, project, people):
    queue = factories.ReviewQueueFactory(project=project, members=[people["examiner"]])
    mcq = _mcq(project, people)
    lease = queue_claim_next(queue=queue, user=people["examiner"])
    type(lease).objects.filter(pk=lease.pk).update(leased_at=timezone.now() - timedelta(seconds=90))
    client.force_login(people["examiner"])
    _verdict(client, project, "mcq", mcq, decision="pass", then_next="")
    lease.refresh_from_db()
    verdict = ExamVerdict.objects.get()
    assert lease.status == AssignmentStatus.COMPLETED and verdict.assignment == lease
    assert 85 <= verdict.seconds_spent <= 600


# --- next item and home ------------------------------------------------------------------------------------------


def test_home_lists_leases_queues_and_next_item_or_says_there_is_nothing(client, project, people):
    client.force_login(people["examiner"])
    page = client.get(_url("examine_home", project)).text
    assert "Nothing to examine right now" in page and _url("revise_list", project) not in page
    assert 'data-key="n"' in page
    queue = factories.ReviewQueueFactory(project=project, name="Exam MCQs", members=[people["examiner"]])
    mcq = _mcq(project, people)
    response = client.post(_url("examine_next", project))
    assert response["Location"] == _url("examine_item", project, "mcq", mcq.pk)
    page = client.get(_url("examine_home", project)).text
    assert "Exam MCQs" in page and "Held for you" in page and _url("examine_item", project, "mcq", mcq.pk) in page
    assert queue.assignments.get().assignee == people["examiner"]


def test_home_without_queues_lists_waiting_items(client, project, people):
    mcq = _mcq(project, people)
    own = _mcq(project, people, author=people["examiner"])
    client.force_login(people["examiner"])
    page = client.get(_url("examine_home", project)).text
    assert _url("examine_item", project, "mcq", own.pk) not in page
    older_chain = _chain(project, people)
    _submitted(older_chain, minutes_ago=60)
    page = client.get(_url("examine_home", project)).text
    chain_at = page.index(_url("examine_item", project, "qa_chain", older_chain.pk))
    assert chain_at < page.index(_url("examine_item", project, "mcq", mcq.pk))  # oldest first, whatever the kind


def test_home_reads_a_fixed_number_of_queries(client, project, people, django_assert_num_queries):
    queue = factories.ReviewQueueFactory(project=project, members=[people["examiner"]])
    client.force_login(people["examiner"])

    def add(n):
        for _ in range(n):
            _mcq(project, people)
            queue_claim_next(queue=queue, user=people["examiner"])
            mcq = _mcq(project, people)
            verdict_submit(item=mcq, examiner=people["examiner"], passed=True, reasons=[])

    add(1)
    client.get(_url("examine_home", project))
    with CaptureQueriesContext(connection) as few:
        client.get(_url("examine_home", project))
    add(3)
    with django_assert_num_queries(len(few.captured_queries)):
        client.get(_url("examine_home", project))


def test_the_examine_page_reads_a_fixed_number_of_queries(client, project, people, django_assert_max_num_queries):
    mcq = _mcq(project, people)
    video = mcq.mcq_videos.get().video

    def add(n):
        for i in range(n):
            ReferredMoment.objects.create(mcq=mcq, video=video, time_s=i, frame_index=i * 25, order=i)
            factories.QualityScoreFactory(item=mcq, overall=90 + i)
            ReviewEvent.objects.create(project=project, mcq=mcq, item_kind="mcq", to_status=S.SUBMITTED, item_version=1)

    add(1)
    client.force_login(people["examiner"])
    client.get(_url("examine_item", project, "mcq", mcq.pk))
    with CaptureQueriesContext(connection) as few:
        client.get(_url("examine_item", project, "mcq", mcq.pk))
    assert len(few.captured_queries) <= 25
    add(5)
    with django_assert_max_num_queries(len(few.captured_queries)):
        page = client.get(_url("examine_item", project, "mcq", mcq.pk)).text
    assert page.count("data-seek=") == 6


# --- reopen ----------------------------------------------------------------------------------------------------


def test_admins_reopen_accepted_items_from_the_examine_page(client, project, people):
    mcq = _mcq(project, people, status=S.ACCEPTED)
    client.force_login(people["examiner"])
    assert "Reopen for revision" not in client.get(_url("examine_item", project, "mcq", mcq.pk)).text
    client.force_login(people["admin"])
    assert "Reopen for revision" in client.get(_url("examine_item", project, "mcq", mcq.pk)).text
    response = client.post(_url("examine_reopen", project, "mcq", mcq.pk), {"comment": ""}, follow=True)
    assert "Say why the item is reopened" in _messages(response)[0]
    response = client.post(_url("examine_reopen", project, "mcq", mcq.pk), {"comment": "Option B is right."})
    assert response["Location"] == _url("examine_item", project, "mcq", mcq.pk)
    mcq.refresh_from_db()
    event = item_history(item=mcq)[-1]
    assert mcq.status == S.REVISING and event.actor == people["admin"] and event.comment == "Option B is right."


# --- the reviser's list ------------------------------------------------------------------------------------------


def _flagged(project, people, *, comment="Option C gives it away."):
    mcq = _mcq(project, people)
    factories.QualityScoreFactory(item=mcq, overall=70, comments="Weak distractors.")
    verdict_submit(item=mcq, examiner=people["examiner"], passed=False, reasons=["options_plausible"], comment=comment)
    return mcq


def test_the_revise_list_shows_reasons_comments_and_keys(client, project, people):
    mcq = _flagged(project, people)
    accepted = _mcq(project, people, status=S.ACCEPTED)
    item_reopen(item=accepted, by=people["admin"], comment="Moment 2 is off.")
    client.force_login(people["reviser"])
    page = client.get(_url("revise_list", project)).text
    assert "The distractors are plausible: no option gives the answer away" in page
    assert "Option C gives it away." in page and "Weak distractors." in page
    assert "Reopened" in page and "Moment 2 is off." in page
    assert _url("revise_start", project, "mcq", mcq.pk) in page and f"/p/{project.slug}/mcqs/{accepted.pk}/" in page
    assert "data-revise-list" in page and 'data-key="n"' in page and "<kbd>j</kbd>" in page


def test_start_revising_opens_the_editor_and_refuses_the_author(client, project, people):
    mcq = _flagged(project, people)
    client.force_login(people["reviser"])
    response = client.post(_url("revise_start", project, "mcq", mcq.pk))
    assert response["Location"] == f"/p/{project.slug}/mcqs/{mcq.pk}/"
    mcq.refresh_from_db()
    assert mcq.status == S.REVISING
    response = client.post(_url("revise_start", project, "mcq", mcq.pk), follow=True)
    assert _messages(response) == [
        "You are revising this item: fix what was flagged, then submit it again.",
        "This item is already in revision: carry on in its editor.",
    ]
    own = _flagged(project, people)
    type(own).objects.filter(pk=own.pk).update(author=people["reviser"])
    assert client.post(_url("revise_start", project, "mcq", own.pk)).status_code == 403
    scored = _mcq(project, people)
    response = client.post(_url("revise_start", project, "mcq", scored.pk))
    assert response["Location"] == _url("revise_list", project)
    assert "only a flagged item" in _messages(client.get(response["Location"]))[0]


def test_revise_next_takes_the_oldest_flagged_item_into_revision(client, project, people):
    client.force_login(people["reviser"])
    response = client.post(_url("revise_next", project))
    assert response["Location"] == _url("revise_list", project)
    mcq = _flagged(project, people)
    response = client.post(_url("revise_next", project))
    assert response["Location"] == f"/p/{project.slug}/mcqs/{mcq.pk}/"
    mcq.refresh_from_db()
    assert mcq.status == S.REVISING


def test_the_revise_list_reads_a_fixed_number_of_queries(client, project, people, django_assert_num_queries):
    client.force_login(people["reviser"])
    _flagged(project, people)
    client.get(_url("revise_list", project))
    with CaptureQueriesContext(connection) as few:
        client.get(_url("revise_list", project))
    for i in range(4):
        _flagged(project, people, comment=f"flag {i}")
        chain = _chain(project, people)
        verdict_submit(item=chain, examiner=people["examiner"], passed=False, reasons=["no_duplicates"])
    with django_assert_num_queries(len(few.captured_queries)):
        page = client.get(_url("revise_list", project)).text
    assert page.count("data-row") == 9
