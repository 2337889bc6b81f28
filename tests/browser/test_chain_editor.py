"""Headless Chromium edits a QA chain beside a real generated video: keyboard only, reload, conflicts."""

import re

import pytest
from playwright.sync_api import expect

from annotator.models import ChainPair, ItemStatus, QAChain, QAPair, Relation
from tests import factories
from tests.browser.helpers import login, playable_video
from videos.models import Clip
from videos.synthetic import SceneSpec, make_scene_video

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FPS = 25
SCENES = (3.0, 4.0, 3.0)  # cuts at 3 and 7 s; 10 s in all
BOUNDS = [(0.0, 3.0), (3.0, 7.0), (7.0, 10.0)]
PAD = 0.5
TURNS = [
    ("What is on screen while Mara greets the viewers?", "A test card with colour stripes.", "ECA"),
    ("Why is she still showing it?", "The camera is warming up.", "II"),
    ("What does she plan to cook?", "Romanesco pasta.", "ECA"),
]


@pytest.fixture(scope="module")
def scene_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("chain-editor") / "scenes.mp4"
    assert make_scene_video(path, [SceneSpec(d) for d in SCENES], width=320, height=180, fps=FPS) == [3.0, 7.0]
    return path


@pytest.fixture
def setup(scene_file, tmp_path):
    project = factories.ProjectFactory(name="Kitchen", slug="kitchen")
    people = factories.people_for(project)
    video = playable_video(project, scene_file, tmp_path, durations=SCENES, fps=FPS, scenes=[list(b) for b in BOUNDS])
    clips = Clip.objects.bulk_create(
        Clip(video=video, index=i, start_s=max(0.0, s - PAD), end_s=min(10.0, e + PAD), scene_start_s=s, scene_end_s=e)
        for i, (s, e) in enumerate(BOUNDS)
    )  # [0, 3.5], [2.5, 7.5], [6.5, 10]
    chains = []
    for clip, status in zip(clips, (ItemStatus.SUBMITTED, ItemStatus.DRAFT, ItemStatus.DRAFT), strict=True):
        chain = QAChain.objects.create(project=project, clip=clip, status=status)
        QAPair.objects.bulk_create(
            QAPair(chain=chain, index=i, question=q, answer=a, skill=s) for i, (q, a, s) in enumerate(TURNS)
        )
        chains.append(chain)
    return project, people, video, chains


def editor_url(live_server, chain):
    return f"{live_server.url}/p/{chain.project.slug}/chains/{chain.pk}/"


def wait_ready(page):
    page.wait_for_function(
        "() => window.VidQA && VidQA.player && VidQA.chainEditor && VidQA.player.video.readyState >= 1"
    )


def wait_saved(page, version):
    expect(page.locator("#save-status")).to_have_text(f"Saved · v{version}", timeout=10_000)


def wait_settled(page):
    """Every local change is saved: nothing pending, nothing on its way."""
    page.wait_for_function(
        "() => !VidQA.chainEditor.doc.dirty && document.getElementById('save-status').dataset.state === 'saved'",
        timeout=10_000,
    )
    return int(page.locator("#save-status").inner_text().rsplit("v", 1)[1])


def server_turns(chain):
    return [(p.question, p.answer, p.skill) for p in QAPair.objects.filter(chain=chain).order_by("index")]


def dom_turns(page):
    return page.evaluate(
        """() => Array.from(document.querySelectorAll('#turns > li.turn')).map((li) => [
            li.querySelector('.turn-q').value, li.querySelector('.turn-a').value,
            li.querySelector('.turn-skill-select').value])"""
    )


def test_keyboard_only_editing_survives_a_reload(live_server, page, setup):
    project, people, video, chains = setup
    chain = chains[1]
    login(page, live_server, people["annotator"])

    # From here on, only keys: project home → work list (w) → next item (n) opens the first draft.
    page.goto(f"{live_server.url}/p/{project.slug}/")
    page.keyboard.press("w")
    page.wait_for_url(f"**/p/{project.slug}/work/")
    page.keyboard.press("n")
    page.wait_for_url(editor_url(live_server, chain))
    wait_ready(page)

    # The clip's range plays and loops: the player starts at the clip and comes back at its end.
    page.wait_for_function("() => Math.abs(VidQA.player.currentTime - 2.5) < 0.3 || !VidQA.player.paused")
    page.evaluate("() => { VidQA.player.seek(7.3); VidQA.player.play(); }")
    page.wait_for_function(
        "() => !VidQA.player.paused && VidQA.player.currentTime >= 2.5 && VidQA.player.currentTime < 4"
    )
    page.evaluate("() => VidQA.player.pause()")

    # The first turn has the focus; j moves to the second, Enter edits its question.
    expect(page.locator("#turns > li.turn").nth(0)).to_be_focused()
    page.keyboard.press("j")
    expect(page.locator("#turns > li.turn").nth(1)).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#turns > li.turn").nth(1).locator(".turn-q")).to_be_focused()
    page.keyboard.press("Control+a")
    page.keyboard.type("Why is Mara still showing the test card?")
    page.keyboard.press("Escape")
    expect(page.locator("#turns > li.turn").nth(1)).to_be_focused()
    wait_saved(page, 2)
    # The repeated name gets the pronoun hint, from the server's answer to the autosave.
    expect(page.locator("#turns > li.turn").nth(1).locator(".turn-hint")).to_contain_text("“Mara”")

    # a adds a turn after the current one and puts the cursor in its question; Tab goes to the answer.
    page.keyboard.press("a")
    new = page.locator("#turns > li.turn").nth(2)
    expect(new.locator(".turn-q")).to_be_focused()
    page.keyboard.type("What does she add to the pan first?")
    page.keyboard.press("Tab")
    expect(new.locator(".turn-a")).to_be_focused()
    page.keyboard.type("Chopped tomatoes.")
    page.keyboard.press("Escape")
    page.keyboard.press("3")  # the third skill: Counterfactual Reasoning
    expect(new.locator(".turn-skill-select")).to_have_value("CR")
    page.keyboard.press("Alt+ArrowUp")  # move it above the edited turn
    expect(page.locator("#turns > li.turn").nth(1).locator(".turn-q")).to_have_value(
        "What does she add to the pan first?"
    )
    expect(page.locator("#turns > li.turn").nth(1)).to_be_focused()
    version = wait_settled(page)

    expected = [
        TURNS[0],
        ("What does she add to the pan first?", "Chopped tomatoes.", "CR"),
        ("Why is Mara still showing the test card?", TURNS[1][1], "II"),
        TURNS[2],
    ]
    assert server_turns(chain) == expected
    chain.refresh_from_db()
    assert chain.status == ItemStatus.ANNOTATING and chain.author == people["annotator"]
    assert chain.version == version

    page.reload()
    wait_ready(page)
    assert [tuple(t) for t in dom_turns(page)] == expected
    expect(page.locator("#save-status")).to_have_text(f"Saved · v{version}")

    # Delete (d) and undo (Ctrl+Z, outside text fields) through the server's history.
    page.keyboard.press("j")
    page.keyboard.press("d")
    wait_saved(page, version + 1)
    assert len(server_turns(chain)) == 3
    page.keyboard.press("Control+z")
    wait_saved(page, version + 2)
    expect(page.locator("#chain-message")).to_contain_text(f"back as they were in version {version}")
    assert server_turns(chain) == expected
    assert [tuple(t) for t in dom_turns(page)] == expected

    # n opens the next item: the chain of the next clip.
    page.keyboard.press("n")
    page.wait_for_url(editor_url(live_server, chains[2]))


def test_two_browsers_the_later_save_gets_the_conflict_view_and_merges(live_server, page, browser, setup):
    project, people, video, chains = setup
    chain = chains[1]
    other_context = browser.new_context(viewport={"width": 1400, "height": 900})
    other_context.set_default_timeout(15_000)
    other = other_context.new_page()
    try:
        login(page, live_server, people["annotator"])
        login(other, live_server, people["admin"])
        page.goto(editor_url(live_server, chain))
        other.goto(editor_url(live_server, chain))
        wait_ready(page)
        wait_ready(other)

        # A changes the first question and saves (v2).
        first_q = page.locator("#turns > li.turn").nth(0).locator(".turn-q")
        first_q.fill("What is on screen while she greets the viewers?")
        first_q.press("Escape")
        wait_saved(page, 2)

        # B, still on v1, changes the second answer: its save is refused and the conflict view opens.
        second_a = other.locator("#turns > li.turn").nth(1).locator(".turn-a")
        second_a.fill("Her camera needs a minute to warm up.")
        second_a.press("Escape")
        dialog = other.locator("dialog#conflict")
        expect(dialog).to_be_visible()
        expect(other.locator("#save-status")).to_have_attribute("data-state", "conflict")
        expect(dialog.locator("#conflict-message")).to_contain_text(f"saved by {people['annotator'].username}")
        rows = dialog.locator("tr.conflict-row")
        expect(rows).to_have_count(3)
        # Both texts are on screen: theirs on the right, mine on the left, already merged per field.
        expect(rows.nth(0).locator(".conflict-tq")).to_have_text("What is on screen while she greets the viewers?")
        expect(rows.nth(0).locator(".conflict-q")).to_have_value("What is on screen while she greets the viewers?")
        expect(rows.nth(0).locator(".conflict-note")).to_have_text("Only they changed this turn.")
        expect(rows.nth(1).locator(".conflict-ta")).to_have_text(TURNS[1][1])
        expect(rows.nth(1).locator(".conflict-a")).to_have_value("Her camera needs a minute to warm up.")
        expect(rows.nth(1).locator(".conflict-note")).to_have_text("Only you changed this turn.")
        # Nothing was written by the refused save.
        assert server_turns(chain)[1][1] == TURNS[1][1]

        # Nothing is lost on a reload either: the tab still holds B's text and shows the conflict again.
        other.reload()
        wait_ready(other)
        expect(dialog).to_be_visible()
        expect(dialog.locator("tr.conflict-row").nth(1).locator(".conflict-a")).to_have_value(
            "Her camera needs a minute to warm up."
        )
        dialog.locator("[data-conflict=save]").click()
        expect(dialog).to_be_hidden()
        wait_saved(other, 3)
        merged = server_turns(chain)
        assert merged[0][0] == "What is on screen while she greets the viewers?"
        assert merged[1][1] == "Her camera needs a minute to warm up."

        # Now A is stale (v2) and changes the same answer: both changed it, so it is marked, mine kept
        # by default; A takes theirs for that turn and saves.
        answer = page.locator("#turns > li.turn").nth(1).locator(".turn-a")
        answer.fill("Because the stream has not started.")
        answer.press("Escape")
        dialog_a = page.locator("dialog#conflict")
        expect(dialog_a).to_be_visible()
        clash = dialog_a.locator("tr.conflict-row.clash")
        expect(clash).to_have_count(1)
        expect(clash.locator(".conflict-a")).to_have_value("Because the stream has not started.")
        expect(clash.locator(".conflict-ta")).to_have_text("Her camera needs a minute to warm up.")
        clash.locator("[data-choose=theirs]").click()
        expect(clash.locator(".conflict-a")).to_have_value("Her camera needs a minute to warm up.")
        dialog_a.locator("[data-conflict=save]").click()
        wait_saved(page, 4)
        assert server_turns(chain) == merged
        assert page.evaluate("() => sessionStorage.getItem('vidqa:chain:' + VidQA.chainEditor.state.id)") is None
    finally:
        other_context.close()


def test_relation_editor_accepts_rejects_and_rewrites_with_keys(live_server, page, setup):
    project, people, video, chains = setup
    QAChain.objects.filter(pk__in=[c.pk for c in chains]).update(status=ItemStatus.ACCEPTED)
    cp = ChainPair.objects.create(
        project=project, video=video, before_index=0, chain_before=chains[0], chain_after=chains[1]
    )
    later = chains[1].pairs.get(index=1)
    first = Relation.objects.create(
        chain_pair=cp, from_pair=chains[0].pairs.get(index=0), to_pair=later, relation_type="event", rationale="r1"
    )
    second = Relation.objects.create(
        chain_pair=cp,
        from_pair=chains[0].pairs.get(index=2),
        to_pair=chains[1].pairs.get(index=2),
        relation_type="action",
        rationale="r2",
    )
    login(page, live_server, people["annotator"])
    page.goto(f"{live_server.url}/p/{project.slug}/pairs/{cp.pk}/")
    page.wait_for_function("() => window.VidQA && VidQA.relationEditor && VidQA.player")
    expect(page.locator("#links > li").nth(0)).to_be_focused()
    # The guideline of the link's type is beside the rewrite, with the original text.
    expect(page.locator("#guideline")).to_contain_text("What happens next")
    expect(page.locator("#original-q")).to_have_text(TURNS[1][0])

    page.keyboard.press("e")
    expect(page.locator("#rewrite-q")).to_be_focused()
    page.keyboard.type("Knowing the test card before, why is she still showing it?")
    page.keyboard.press("Tab")
    page.keyboard.type("The camera is still warming up after the test card.")
    page.keyboard.press("Escape")
    expect(page.locator("#save-status")).to_have_text("Saved · v2")
    page.keyboard.press("y")
    expect(page.locator("#save-status")).to_have_text("Saved · v3")
    expect(page.locator("#turns-after li").nth(1)).to_contain_text("Knowing the test card before")
    page.keyboard.press("j")
    page.keyboard.press("x")
    expect(page.locator("#links > li").nth(1)).to_have_class(re.compile(r"\brejected\b"))

    first.refresh_from_db()
    second.refresh_from_db()
    later.refresh_from_db()
    assert (first.decision, second.decision) == ("accepted", "rejected")
    assert (first.original_question, first.original_answer) == TURNS[1][:2]
    assert later.question == "Knowing the test card before, why is she still showing it?"

    page.keyboard.press("Control+Enter")
    # The editor stays on the submitted links, read only, and says where they went; n is the next item.
    expect(page.locator("#pair-message")).to_contain_text("Links submitted and passed on to examiners.")
    assert page.url.endswith(f"/pairs/{cp.pk}/")
    cp.refresh_from_db()
    assert cp.status == ItemStatus.EXAMINING  # links skip the LLM judge unless the project's gate covers them
    expect(page.locator("#next-item")).to_be_focused()


def test_submit_with_a_warning_asks_once_and_stays_on_the_chain(live_server, page, setup):
    project, people, video, chains = setup
    # No judge: the item's status after the submit is the editor's doing alone, not a worker's.
    type(project).objects.filter(pk=project.pk).update(judge_enabled=False)
    chain = chains[1]
    QAPair.objects.filter(chain=chain, index=2).update(skill="")  # "No skill tagged on turn 3."
    login(page, live_server, people["annotator"])
    page.goto(editor_url(live_server, chain))
    wait_ready(page)
    expect(page.locator("#chain-warnings")).to_contain_text("No skill tagged on turn 3")

    # Ctrl+Enter asks in the page; Escape goes back with nothing submitted.
    page.keyboard.press("Control+Enter")
    ask = page.locator("dialog#submit-confirm")
    expect(ask).to_be_visible()
    expect(ask).to_contain_text("No skill tagged on turn 3")
    page.keyboard.press("Escape")
    expect(ask).to_be_hidden()
    chain.refresh_from_db()
    assert chain.status == ItemStatus.DRAFT

    # A second Ctrl+Enter asks again, and Ctrl+Enter in the dialog submits.
    page.keyboard.press("Control+Enter")
    expect(ask).to_be_visible()
    page.keyboard.press("Control+Enter")
    expect(page.locator("#chain-message")).to_contain_text("Press n for the next item")
    assert page.url == editor_url(live_server, chain)
    chain.refresh_from_db()
    assert chain.status != ItemStatus.DRAFT
    expect(page.locator("#chain-status")).to_have_text(chain.get_status_display())
    expect(page.locator("#turns > li.turn").nth(0).locator(".turn-q")).to_be_disabled()
    expect(page.locator("#next-item")).to_be_focused()

    # Leaving and coming Back (back/forward cache or not) shows the chain as it is now.
    page.goto(f"{live_server.url}/p/{project.slug}/work/")
    QAChain.objects.filter(pk=chain.pk).update(status=ItemStatus.ACCEPTED)
    page.go_back()
    wait_ready(page)
    expect(page.locator("#chain-status")).to_have_text("Accepted")

    # n opens the next item.
    page.keyboard.press("n")
    page.wait_for_url(editor_url(live_server, chains[2]))


def test_a_second_browser_sees_who_has_the_chain_open(live_server, page, browser, setup):
    project, people, video, chains = setup
    chain = chains[1]
    other_context = browser.new_context(viewport={"width": 1400, "height": 900})
    other_context.set_default_timeout(15_000)
    other = other_context.new_page()
    try:
        login(page, live_server, people["annotator"])
        page.goto(editor_url(live_server, chain))
        wait_ready(page)
        expect(page.locator("[data-presence]")).to_have_attribute("data-state", "beat")
        expect(page.locator("[data-presence]")).to_be_hidden()  # nobody else has it open

        login(other, live_server, people["admin"])
        other.goto(editor_url(live_server, chain))
        who = people["annotator"].get_full_name() or people["annotator"].username
        expect(other.locator("[data-presence]")).to_be_visible()
        expect(other.locator("[data-presence]")).to_contain_text(
            re.compile(rf"Open by {re.escape(who)} since \d\d:\d\d")
        )
    finally:
        other_context.close()
